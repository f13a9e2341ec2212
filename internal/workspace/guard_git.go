package workspace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// gitGlobal are git's options before the subcommand. -c and --config-env set
// configuration (core.pager, diff.external ... run programs); -p starts a pager.
var gitGlobal = sync.OnceValue(func() *optSpec {
	return opts(`+exact +posix -C=d -c=x --config-env=x --exec-path?e -p:x --paginate:x -P
	--no-pager --git-dir=G --work-tree=G --namespace= --bare --no-replace-objects
	--literal-pathspecs --glob-pathspecs --noglob-pathspecs --icase-pathspecs
	--no-optional-locks --no-lazy-fetch --no-advice --list-cmds= --attr-source= --html-path
	--man-path --info-path --version --help -v -h`)
})

// gitReadOnly are git subcommands that do not modify the repository.
var gitReadOnly = set("status", "log", "diff", "show", "rev-parse", "ls-files", "blame", "grep",
	"describe", "shortlog", "cat-file", "ls-tree", "reflog", "whatchanged", "version", "rev-list",
	"merge-base", "name-rev", "show-ref", "for-each-ref", "count-objects", "annotate")

// gitRisky are options of the read-only subcommands that write (w), read a file (r)
// or run programs (x). Git accepts unique abbreviations of long options, so any
// prefix of these names counts.
var gitRisky = map[string]byte{
	"output": 'w', "ext-diff": 'x', "textconv": 'x', "open-files-in-pager": 'x',
	"show-signature": 'x', "filters": 'x', "contents": 'r', "ignore-revs-file": 'r',
	"exclude-from": 'r', "pathspec-from-file": 'r', "orderfile": 'r', "file": 'r',
	"submodule": 'x', "recurse-submodules": 'x', "paginate": 'x', "exec": 'x',
	"batch-command": 'x', "no-index": 'n', "upload-pack": 'x',
}

// gitUse judges a git command: global options, then the subcommand. Read-only
// subcommands read the repository; their risky options write, read or run code.
func (g *guard) gitUse(ws []word, st *gstate, checkConfig bool) (use, string) {
	st = st.copy() // -C changes the directory of this command only
	u, why := useSafe, ""
	worse := func(nu use, w string) {
		if nu > u {
			u, why = nu, w
		}
	}
	p := gitGlobal().parse(ws)
	if p.unknown != "" {
		g.a.reason(Ask, fmt.Sprintf("git %s is not a global option the guard knows", p.unknown))
		worse(useCode, "unknown git option "+p.unknown)
	}
	for _, o := range p.opts {
		switch {
		case o.def.has('d'):
			g.cd(o.val, st)
		case o.def.has('x'):
			g.a.reason(Ask, fmt.Sprintf("git %s sets configuration or a pager, which can run programs", o.as))
			worse(useCode, "git "+o.as)
		case o.def.has('e') && o.hasVal:
			g.a.reason(Ask, "git --exec-path= chooses which programs git runs")
			worse(useCode, "git --exec-path")
		case o.def.has('G'):
			g.claim(o.val, OpWrite, st, "git "+o.as)
			worse(useWrites, "git "+o.as+" points git at another repository")
		}
	}
	if len(p.operands) == 0 {
		return u, why
	}
	subw := p.operands[0]
	rest := ws[p.first+1:]
	if subw.dyn {
		g.claim(word{lit: "."}, OpWrite, st, "git")
		return useCode, "the git subcommand is only known at run time"
	}
	sub := subw.lit
	if !gitReadOnly[sub] || sub == "reflog" && len(rest) > 0 && !rest[0].dyn && !strings.HasPrefix(rest[0].lit, "-") && rest[0].lit != "show" {
		g.claim(word{lit: "."}, OpWrite, st, "git "+sub)
		for _, w := range rest {
			g.maybePath(w, st, false)
		}
		if sub == "config" {
			for _, w := range rest {
				if !w.dyn && (w.lit == "--global" || w.lit == "--system") {
					g.claim(word{lit: "~/.gitconfig"}, OpWrite, st, "git config "+w.lit)
				}
			}
		}
		if sub == "clone" {
			nf := nonFlags(append([]word{subw}, rest...))
			if len(nf) >= 2 {
				g.claim(nf[len(nf)-1], OpWrite, st, "git clone")
			}
		}
		worse(useWrites, "git "+sub+" is not a read-only subcommand")
		return u, why
	}
	g.claim(word{lit: "."}, OpRead, st, "git "+sub)
	noIndex := false
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		if w.dyn {
			g.claim(w, OpRead, st, "git "+sub)
			continue
		}
		s := w.lit
		if s == "--" {
			for _, x := range rest[i+1:] {
				g.maybePath(x, st, noIndex)
			}
			break
		}
		if strings.HasPrefix(s, "--") && len(s) > 2 {
			name, val, eq := strings.Cut(s[2:], "=")
			risky, eff := "", byte(0)
			for r, e := range gitRisky {
				if len(name) >= 2 && strings.HasPrefix(r, name) && riskRank(e) > riskRank(eff) {
					risky, eff = r, e
				}
			}
			if eff != 0 {
				var v word
				has := eq
				if eq {
					v = word{lit: val, src: val}
				} else if eff == 'w' || eff == 'r' {
					if i+1 < len(rest) {
						i++
						v, has = rest[i], true
					}
				}
				switch eff {
				case 'w':
					if has {
						g.claim(v, OpWrite, st, "git "+sub+" --"+risky)
					}
					worse(useWrites, "git "+sub+" --"+risky+" writes a file")
				case 'r':
					if has {
						g.claim(v, OpRead, st, "git "+sub+" --"+risky)
					}
				case 'n':
					noIndex = true
				case 'x':
					g.a.reason(Ask, fmt.Sprintf("git %s %s runs programs (from the repository's configuration or a pager)", sub, s))
					worse(useCode, "git "+sub+" "+s)
				}
			}
			continue
		}
		if strings.HasPrefix(s, "-") && len(s) > 1 {
			// Short options that take files: -O (grep: a pager; diff/log: an order
			// file) and grep -f.
			for k := 1; k < len(s); k++ {
				c := s[k]
				if c != 'O' && !(c == 'f' && sub == "grep") {
					continue
				}
				if c == 'O' && sub == "grep" {
					g.a.reason(Ask, "git grep -O opens the files in a pager, which runs a program")
					worse(useCode, "git grep -O")
					break
				}
				v := word{lit: s[k+1:], src: s[k+1:]}
				if k+1 == len(s) && i+1 < len(rest) {
					i++
					v = rest[i]
				}
				g.claim(v, OpRead, st, "git "+sub+" -"+string(c))
				break
			}
			continue
		}
		g.maybePath(w, st, noIndex)
	}
	if u == useSafe && checkConfig {
		risk, elsewhere := gitConfigRisk(st.cwd)
		if elsewhere != "" {
			// A .git file that points elsewhere makes git read that repository.
			g.claim(word{lit: elsewhere}, OpRead, st, "the repository's .git file")
		}
		if risk != "" {
			worse(useCode, risk)
		}
	}
	return u, why
}

func riskRank(e byte) int {
	return strings.IndexByte("nrwx", e) + 1
}

// gitConfigRisk reports configuration in the repository at or above dir that makes
// read-only git commands run programs (core.fsmonitor, diff drivers, textconv,
// filters, pagers, includes ...). The repository is not trusted: its .git/config
// may come with it.
// elsewhere is the git directory a .git file points to ("" for a .git directory).
func gitConfigRisk(dir string) (risk, elsewhere string) {
	if dir == "" {
		return "git runs in a directory only known at run time", ""
	}
	for d := dir; ; d = filepath.Dir(d) {
		gd := filepath.Join(d, ".git")
		fi, err := os.Stat(gd)
		if err == nil {
			if !fi.IsDir() {
				b, err := readGitFile(gd)
				if err != nil {
					return "the repository's .git file cannot be read", ""
				}
				s := strings.TrimSpace(string(b))
				if !strings.HasPrefix(s, "gitdir:") {
					return "the repository's .git file is not a gitdir link", ""
				}
				gd = strings.TrimSpace(strings.TrimPrefix(s, "gitdir:"))
				if !filepath.IsAbs(gd) {
					gd = filepath.Join(d, gd)
				}
				// A worktree made by git worktree add links back to this .git file;
				// anything else is a repository the workspace merely points at.
				back, err := readGitFile(filepath.Join(gd, "gitdir"))
				if err != nil || filepath.Clean(strings.TrimSpace(string(back))) != filepath.Join(d, ".git") {
					elsewhere = gd
				}
				if c, err := readGitFile(filepath.Join(gd, "commondir")); err == nil {
					cd := strings.TrimSpace(string(c))
					if !filepath.IsAbs(cd) {
						cd = filepath.Join(gd, cd)
					}
					if r := configFileRisk(filepath.Join(cd, "config")); r != "" {
						return r, elsewhere
					}
				}
			}
			return gitDirRisk(gd), elsewhere
		}
		if d == "/" || d == "." {
			return "", ""
		}
	}
}

// gitDirRisk checks one git directory: its config files, the configs of its
// submodules (git status runs git in them), and the hook that a read-only command
// can trigger (post-index-change runs when git status refreshes the index).
func gitDirRisk(gd string) string {
	if _, err := os.Stat(filepath.Join(gd, "hooks", "post-index-change")); err == nil {
		return "the repository has a post-index-change hook, which git status runs"
	}
	for _, f := range []string{"config", "config.worktree"} {
		if r := configFileRisk(filepath.Join(gd, f)); r != "" {
			return r
		}
	}
	for _, pat := range []string{"modules/*/config", "modules/*/modules/*/config", "modules/*/*/config"} {
		subs, _ := filepath.Glob(filepath.Join(gd, pat))
		for _, sub := range subs {
			if r := gitDirRisk(filepath.Dir(sub)); r != "" {
				return "a submodule: " + r
			}
		}
	}
	return ""
}

// configFileRisk scans one git config file for settings that run programs.
func configFileRisk(path string) string {
	data, err := readGitFile(path)
	if errors.Is(err, errGitSpecial) {
		return "the repository's git configuration is not a regular file"
	}
	if err != nil {
		return ""
	}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.ToLower(strings.TrimSpace(sc.Text()))
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return "the repository's git configuration cannot be parsed"
			}
			head := line[1:end]
			section, _, _ = strings.Cut(head, " ")
			section, _, _ = strings.Cut(section, ".")
			switch section {
			case "include", "includeif", "filter", "pager":
				return fmt.Sprintf("the repository's git configuration has a [%s] section, which makes git read other files or run programs", section)
			}
			line = strings.TrimSpace(line[end+1:])
			if line == "" {
				continue
			}
		}
		key, _, _ := strings.Cut(line, "=")
		key = strings.TrimSpace(key)
		risky := false
		switch section {
		case "core":
			risky = key == "fsmonitor" || key == "pager" || key == "editor" || key == "sshcommand" ||
				key == "askpass" || key == "worktree" || key == "gitproxy" || key == "alternaterefscommand" ||
				key == "hookspath"
		case "diff":
			risky = key == "external" || key == "textconv" || key == "command"
		case "gpg":
			risky = key == "program"
		case "log":
			risky = key == "showsignature"
		case "interactive":
			risky = key == "difffilter"
		}
		if risky {
			return fmt.Sprintf("the repository's git configuration sets %s.%s, which runs programs", section, key)
		}
	}
	return ""
}

// errGitSpecial: a file of git's that is a FIFO, a device or a socket.
var errGitSpecial = errors.New("not a regular file")

// readGitFile reads one of git's small files (a .git file, gitdir, commondir, a
// config) for the guard. It never waits: a command (python, invisible to the
// guard) may have put a FIFO there, and a blocking open of a FIFO without a writer
// waits forever — lovia inside the guard, where nothing can cancel an open. Links
// are followed (git follows them too); at most 1 MiB is read.
func readGitFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|toolOpenFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", path, errGitSpecial)
	}
	return io.ReadAll(io.LimitReader(f, 1<<20))
}
