package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// noPathArgs never treat their arguments as files.
var noPathArgs = set("echo", "printf", "true", "false", ":", "exit", "return", "shift", "set",
	"unset", "export", "local", "sleep", "seq", "date", "whoami", "id", "uname", "basename",
	"dirname", "kill", "expr", "let", "alias", "type", "which", "hash", "read", "printenv",
	"yes", "wait", "trap", "umask", "jobs", "cd", "pushd", "popd")

// fileArgs treat every non-flag argument as a path (not only path-looking ones).
var fileArgs = set("cat", "head", "tail", "less", "more", "wc", "sort", "uniq", "cut", "diff",
	"cmp", "file", "stat", "ls", "du", "od", "xxd", "hexdump", "strings", "md5sum", "sha1sum",
	"sha256sum", "sha512sum", "base64", "nl", "tac", "rev", "fold", "fmt", "source", ".",
	"bat", "tree", "readlink", "realpath", "column", "paste", "join", "comm", "split")

// writeArgs write every non-flag argument.
var writeArgs = set("rm", "rmdir", "unlink", "shred", "touch", "mkdir", "truncate", "tee",
	"mkfifo", "mknod")

// modeFirst take a mode/owner first, then files they modify.
var modeFirst = set("chmod", "chown", "chgrp", "setfacl", "chattr")

// copyCmds write their last argument (or -t DIR) and read the others.
var copyCmds = set("cp", "mv", "install", "rsync", "ln", "link", "scp")

var shells = set("sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "busybox")

var interpreters = set("python", "python3", "python2", "node", "perl", "ruby", "php", "lua",
	"deno", "bun", "Rscript", "osascript", "pwsh")

// multiTools take a subcommand that belongs in a session rule ("go test", "git push").
var multiTools = set("git", "go", "npm", "npx", "pnpm", "yarn", "cargo", "docker", "podman",
	"kubectl", "make", "pip", "pip3", "uv", "poetry", "bundle", "gem", "rake", "mvn", "gradle",
	"./gradlew", "dotnet", "helm", "terraform", "apt", "apt-get", "brew", "systemctl", "gh",
	"bun", "deno", "rustup", "composer", "just", "task", "nix", "conda", "mix", "swift", "zig",
	"stack", "cabal", "tox", "nox", "pytest", "bazel", "cmake", "ninja", "sqlite3")

func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// simple analyzes one simple command given as words (wrappers included).
func (g *guard) simple(ws []word, st *gstate, depth int, text string) {
	prev := g.a.Decision
	g.a.Decision = Allow
	sub := Subcommand{Text: text}
	record := true
	reasonsBefore := len(g.a.Reasons)
	defer func() {
		sub.Decision = g.a.Decision
		if sub.Decision != Allow && reasonsBefore <= len(g.a.Reasons) {
			sub.Reasons = append([]string(nil), g.a.Reasons[reasonsBefore:]...)
		}
		g.a.Decision = most(prev, g.a.Decision)
		if record {
			g.a.Subcommands = append(g.a.Subcommands, sub)
		}
	}()
	if depth > maxDepth {
		g.a.reason(Ask, "the command nests too deeply to analyze")
		return
	}

	ws, inner, kind := g.unwrap(ws, st, depth)
	if inner {
		// The payload was analyzed as its own subcommands.
		record = false
		return
	}
	if len(ws) == 0 {
		return
	}
	if ws[0].dyn {
		g.a.reason(Ask, fmt.Sprintf("the command name %s is only known at run time", ws[0].src))
		for _, w := range ws[1:] {
			g.maybePath(w, st, false)
		}
		return
	}
	name := filepath.Base(ws[0].lit)
	sub.Prefix = prefixFor(ws)
	if kind == "sudo" {
		sub.Prefix = ""
	}

	// The command rules.
	argv := make([]string, len(ws))
	for i, w := range ws {
		if w.dyn {
			argv[i] = "\x00"
		} else {
			argv[i] = w.lit
		}
	}
	d, why, ruled := g.p.decideArgv(argv)
	g.network(ws, ruled, d)
	if launchers[name] {
		g.a.reason(Ask, name+" runs commands the guard cannot see, or outside this command's lifetime and sandbox")
	}
	if st.cwd != "" && !g.p.Inside(st.cwd) && name != "cd" && name != "pushd" {
		// Running in a directory outside the root reads it, whatever the arguments.
		g.claim(word{lit: "."}, OpRead, st, "working directory")
	}
	// The no-approval set: read-only programs whose every option is known. They
	// record their own path claims.
	u, uwhy, judged := useSafe, "", true
	switch sc := safeCmds()[name]; {
	case st.funcs[ws[0].lit]:
		judged = false
	case !g.trustedProgram(ws[0].lit, st):
		// ./ls or /tmp/ls: a program the agent could have written is not the
		// read-only tool its name suggests.
		u, judged = useCode, false
	case sc != nil:
		u, uwhy = g.safeUse(name, sc, ws, st)
	case name == "find":
		u, uwhy = g.findUse(ws, st, depth)
	case name == "git":
		u, uwhy = g.gitUse(ws, st, !ruled)
		g.gitCreates(ws, st)
	case safeBuiltins[name]:
		if name == "command" && !(len(ws) > 1 && !ws[1].dyn && (ws[1].lit == "-v" || ws[1].lit == "-V")) {
			u, uwhy = useCode, "command runs another command"
		}
		judged = false
	default:
		u, judged = useCode, false
	}
	switch {
	case st.funcs[ws[0].lit]:
		d, why = Allow, "" // a function defined in this command: its body was analyzed
		sub.Prefix = ""
	case u == useSafe:
		if !ruled {
			d, why = Allow, ""
		}
	case u == useCode && judged:
		// Running code or an option the guard does not know: an "allow for this
		// session" given for another use of the program does not cover it.
		d, why, _ = g.p.decideConfigured(argv)
	}
	if d != Allow {
		if uwhy != "" {
			why += " (" + uwhy + ")"
		}
		g.a.reason(d, fmt.Sprintf("%s: %s", strings.Join(prefixWords(ws, 2), " "), why))
	}
	if !judged {
		g.claims(name, ws, st, depth)
	}
}

// trustedProgram reports whether a command name resolves to a program the agent
// cannot have written: a name looked up in PATH (whose entries are not writable by
// the agent), or an absolute path it may not write without approval.
func (g *guard) trustedProgram(name string, st *gstate) bool {
	if !strings.Contains(name, "/") {
		if !g.pathDone {
			// Once per analysis: the PATH entries the agent can write (or relative).
			g.pathDone = true
			for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
				if dir == "" || !filepath.IsAbs(dir) || g.p.agentWritable(filepath.Clean(dir)) {
					g.pathRisky = append(g.pathRisky, dir)
				}
			}
		}
		for _, dir := range g.pathRisky {
			if dir == "" || !filepath.IsAbs(dir) {
				if st.cwd == "" {
					return false
				}
				dir = filepath.Join(st.cwd, dir)
			}
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				return false
			}
		}
		return true
	}
	if !filepath.IsAbs(name) {
		return false
	}
	d, _ := g.p.DecidePath(g.p.Resolve(name, st.cwd), OpWrite)
	return d != Allow
}

// agentWritable reports (lexically: PATH entries are not resolved on every command)
// whether the agent may write in dir without approval.
func (p *Policy) agentWritable(dir string) bool {
	if within(p.root, dir) || p.tmp != "" && within(p.tmp, dir) {
		return true
	}
	for _, w := range p.writable {
		if within(w, dir) {
			return true
		}
	}
	return false
}

// within is under without allocating: abs is dir or below it.
func within(dir, abs string) bool {
	if !strings.HasPrefix(abs, dir) {
		return false
	}
	return len(abs) == len(dir) || strings.HasSuffix(dir, "/") || abs[len(dir)] == '/'
}

// decideConfigured is decideArgv without the session's "allow for this session"
// grants: the configured command rules, or the preset's default.
func (p *Policy) decideConfigured(argv []string) (Decision, string, bool) {
	if p.name == PresetReadonly {
		return Deny, "the readonly policy runs no commands", false
	}
	best, bestLen, why := p.preset.Shell, 0, fmt.Sprintf("commands %s by default under the %s policy", p.preset.Shell.phrasePlural(), p.name)
	for _, r := range p.cmdRules {
		if len(r.words) > len(argv) || len(r.words) < bestLen {
			continue
		}
		ok := r.matches(argv)
		if ok && (len(r.words) > bestLen || r.decision > best) {
			best, bestLen = r.decision, len(r.words)
			why = fmt.Sprintf("%s rule %q says %s", r.source, strings.Join(r.words, " "), r.decision)
		}
	}
	return best, why, bestLen > 0
}

func prefixWords(ws []word, n int) []string {
	var out []string
	for i, w := range ws {
		if i >= n {
			break
		}
		out = append(out, w.show())
	}
	return out
}

// prefixFor derives the session rule for a command: the program, plus its subcommand
// for multi-command tools, or the mode for interpreters (never the whole string).
func prefixFor(ws []word) string {
	if len(ws) == 0 || ws[0].dyn {
		return ""
	}
	name := ws[0].lit
	base := filepath.Base(name)
	if multiTools[base] || multiTools[name] {
		for _, w := range ws[1:] {
			if w.dyn {
				return name
			}
			if strings.HasPrefix(w.lit, "-") {
				return name // global flags first: keep the rule coarse but honest
			}
			if isPlainWord(w.lit) {
				return name + " " + w.lit
			}
			return name
		}
		return name
	}
	if interpreters[base] || shells[base] {
		if len(ws) > 1 && !ws[1].dyn {
			a := ws[1].lit
			if a == "-m" && len(ws) > 2 && !ws[2].dyn {
				return name + " -m " + ws[2].lit
			}
			return name + " " + a
		}
	}
	return name
}

func isPlainWord(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == ':') {
			return false
		}
	}
	return true
}

// unwrap strips wrappers (timeout, env, nice, sudo, xargs, ...) and analyzes shell
// payloads (bash -c, eval). inner=true means the payload was analyzed separately.
func (g *guard) unwrap(ws []word, st *gstate, depth int) (rest []word, inner bool, kind string) {
	for guardN := 0; len(ws) > 0 && guardN < 16; guardN++ {
		if ws[0].dyn {
			return ws, false, kind
		}
		name := filepath.Base(ws[0].lit)
		switch name {
		case "timeout", "nice", "stdbuf", "ionice", "setsid", "time", "chrt", "taskset":
			rest, ok := g.wrapper(name, ws, st)
			if !ok {
				return ws, false, kind // not running a command (chrt -p)
			}
			ws = rest
		case "nohup", "builtin", "unbuffer", "caffeinate", "busybox":
			ws = tail(ws, 1)
		case "exec":
			ws = tail(ws, skipFlags(ws, 1, set("-a")))
		case "flock":
			i := skipFlags(ws, 1, set("-w", "-E", "--timeout", "--conflict-exit-code"))
			if i < len(ws) {
				g.claim(ws[i], OpWrite, st, "lock file")
			}
			if i+1 < len(ws) && !ws[i+1].dyn && (ws[i+1].lit == "-c" || ws[i+1].lit == "--command") && i+2 < len(ws) {
				g.childPayload(ws[i+2], st, depth)
				return nil, true, kind
			}
			ws = tail(ws, i+1)
		case "command":
			if len(ws) > 1 && !ws[1].dyn && (ws[1].lit == "-v" || ws[1].lit == "-V") {
				return ws, false, kind // a lookup, runs nothing
			}
			ws = tail(ws, skipFlags(ws, 1, nil))
		case "env":
			p := wrapperSpecs()["env"].parse(ws)
			if p.unknown != "" {
				g.a.reason(Ask, fmt.Sprintf("env %s is not an option the guard knows", p.unknown))
			}
			for _, o := range p.opts {
				switch {
				case o.def.name == "-P":
					g.a.reason(Ask, "env -P chooses the directories programs are found in")
				case o.def.has('d'):
					g.cd(o.val, st)
				case o.def.has('x'):
					g.childPayload(o.val, st, depth)
					return nil, true, kind
				}
			}
			i := 0
			for i < len(p.operands) {
				w := p.operands[i]
				if w.dyn {
					break
				}
				if w.lit == "-" && i == 0 {
					i++ // "env -" is env -i
					continue
				}
				if k, _, ok := strings.Cut(w.lit, "="); ok && k != "" && !strings.Contains(k, "/") {
					if DangerousVar(k) {
						g.a.reason(Ask, fmt.Sprintf("setting %s changes which programs or code run", k))
					}
					i++
					continue
				}
				break
			}
			ws = p.operands[i:]
		case "sudo", "doas", "run0", "pkexec":
			g.a.reason(Ask, name+" runs the command as another user (outside the workspace policy)")
			kind = "sudo"
			i := skipFlags(ws, 1, set("-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "--user", "--group"))
			ws = tail(ws, i)
		case "xargs":
			p := wrapperSpecs()["xargs"].parse(ws)
			if p.unknown != "" {
				g.a.reason(Ask, fmt.Sprintf("xargs %s is not an option the guard knows", p.unknown))
			}
			replace := ""
			for _, o := range p.opts {
				switch {
				case o.def.has('I'):
					replace = "{}"
					if o.hasVal {
						if o.val.dyn {
							g.a.reason(Ask, "the xargs replacement string is only known at run time")
						}
						replace = o.val.lit
					}
				case o.def.has('r') && o.hasVal:
					g.claim(o.val, OpRead, st, "xargs "+o.as)
				}
			}
			rest := append([]word(nil), p.operands...)
			if len(rest) == 0 {
				rest = []word{{lit: "echo"}}
			}
			// The arguments arrive on stdin: unknown to the guard.
			stdin := word{dyn: true, src: "<args from stdin>", unseen: true}
			if len(rest) > 0 && (rest[0].dyn || safeCmds()[filepath.Base(rest[0].lit)] == nil) {
				// The program may write what arrives on stdin: the paths the command
				// names are judged as writes (echo ~/x | xargs touch).
				g.hidden = true
			}
			if replace != "" {
				for k := range rest {
					if !rest[k].dyn && strings.Contains(rest[k].lit, replace) {
						rest[k] = stdin
					}
				}
			} else {
				rest = append(rest, stdin)
			}
			ws = rest
		case "watch":
			i := skipFlags(ws, 1, set("-n", "-d", "--interval"))
			if i < len(ws) {
				g.unchecked++ // watch runs it with sh -c
				g.payloadWords(tail(ws, i), st, depth)
				g.unchecked--
			}
			return nil, true, kind
		case "eval":
			g.payloadWords(tail(ws, 1), st, depth)
			return nil, true, kind
		default:
			if shells[name] {
				return g.shell(ws, st, depth, kind)
			}
			return ws, false, kind
		}
	}
	return ws, false, kind
}

// launchers run commands the guard cannot follow: later (at, crontab), as a service
// (systemd-run), in a terminal multiplexer, from their own argument syntax
// (parallel, script -c, su -c). They ask under every policy.
var launchers = set("at", "batch", "crontab", "systemd-run", "tmux", "screen", "parallel", "script",
	"su", "runuser", "expect", "daemonize", "start-stop-daemon", "nsenter", "unshare", "chroot",
	"firejail", "bwrap", "ssh-agent", "dbus-launch", "xdg-open", "open")

// wrapperSpecs are the options of programs that run another command.
var wrapperSpecs = sync.OnceValue(func() map[string]*optSpec {
	return map[string]*optSpec{
		"timeout": opts("+posix -k= --kill-after= -s= --signal= -v --verbose --foreground --preserve-status -p --help --version"),
		"nice":    opts("+posix +num -n= --adjustment= --help --version"),
		"stdbuf":  opts("+posix -i= -o= -e= --input= --output= --error= --help --version"),
		"ionice":  opts("+posix -c= -n= -p= -P= -u= -t --class= --classdata= --pid= --pgid= --uid= --ignore --help --version"),
		"setsid":  opts("+posix -c -f -w --ctty --fork --wait --help --version"),
		"time":    opts("+posix -o=w --output=w -a --append -f= --format= -p --portability -v --verbose -q --quiet --help --version"),
		"chrt":    opts("+posix -a -b -d -e -f -i -m -o -p -r -R -v -T= -P= -D= --all-tasks --batch --deadline --ext --fifo --idle --max --other --pid --rr --reset-on-fork --verbose --sched-runtime= --sched-period= --sched-deadline= --help --version"),
		"taskset": opts("+posix -a -c -p --all-tasks --cpu-list --pid --help --version"),
		"env": opts(`+posix -i --ignore-environment -0 --null -u= --unset= -C=d --chdir=d -S=x --split-string=x
		-v --debug --block-signal? --default-signal? --ignore-signal? --list-signal-handling -P=
		--help --version`),
		"xargs": opts(`+posix -0 --null -a=r --arg-file=r -d= --delimiter= -E= -e? --eof? -I=I --replace?I
		-i?I -L= --max-lines? -l? -n= --max-args= -o --open-tty -P= --max-procs= -p --interactive
		--process-slot-var= -r --no-run-if-empty -s= --max-chars= --show-limits -t --verbose -x
		--exit --help --version`),
	}
})

// wrapperArgs are how many operands a wrapper takes before the command.
var wrapperArgs = map[string]int{"timeout": 1, "chrt": 1, "taskset": 1}

// wrapper strips a wrapper's options (and its own operands, such as timeout's
// duration), returning the command it runs.
func (g *guard) wrapper(name string, ws []word, st *gstate) ([]word, bool) {
	p := wrapperSpecs()[name].parse(ws)
	if p.unknown != "" {
		g.a.reason(Ask, fmt.Sprintf("%s %s is not an option the guard knows, so where the command starts is unclear", name, p.unknown))
	}
	for _, o := range p.opts {
		if o.def.has('w') && o.hasVal {
			g.claim(o.val, OpWrite, st, name+" "+o.as)
		}
	}
	n := wrapperArgs[name]
	for _, o := range p.opts {
		if (name == "chrt" || name == "taskset") && (o.def.name == "-p" || o.def.name == "--pid") {
			return nil, false
		}
	}
	if len(p.operands) <= n {
		return nil, true
	}
	return p.operands[n:], true
}

// shell handles sh/bash/...: the -c payload (the first word after the options,
// wherever -c appears among them) is parsed recursively; a script is a read;
// commands from stdin are unknown. A child shell is a separate process: its inner
// commands are not re-checked at run time, so what the guard cannot see there asks.
func (g *guard) shell(ws []word, st *gstate, depth int, kind string) ([]word, bool, string) {
	cmdMode, stdin := false, false
	i := 1
options:
	for ; i < len(ws); i++ {
		w := ws[i]
		if w.dyn {
			g.a.reason(Ask, fmt.Sprintf("%s runs %s, only known at run time", ws[0].lit, w.src))
			return nil, true, kind
		}
		s := w.lit
		switch {
		case s == "--" || s == "-":
			i++
			break options
		case strings.HasPrefix(s, "--"):
			switch s {
			case "--rcfile", "--init-file":
				if i+1 < len(ws) {
					i++
					g.claim(ws[i], OpRead, st, ws[0].lit+" "+s)
				}
			case "--norc", "--noprofile", "--login", "--posix", "--restricted", "--verbose",
				"--noediting", "--debugger", "--dump-strings", "--dump-po-strings", "--help",
				"--version", "--pretty-print":
			default:
				g.a.reason(Ask, fmt.Sprintf("%s %s is not an option the guard knows", ws[0].lit, s))
			}
		case len(s) > 1 && (s[0] == '-' || s[0] == '+'):
			for k := 1; k < len(s); k++ {
				switch s[k] {
				case 'c':
					cmdMode = true
				case 's':
					stdin = true
				case 'o', 'O':
					i++ // the option name
				}
			}
		default:
			break options
		}
	}
	if cmdMode {
		if i >= len(ws) {
			g.a.reason(Ask, "a shell -c without a command")
			return nil, true, kind
		}
		// The words after the script are its $0, $1 ...: the script's uses of them
		// are dynamic claims, so each is judged here as what the script might do
		// with it — a write (bash -c 'cp x "$0"/' ~).
		g.childPayload(ws[i], st, depth)
		for _, w := range ws[i+1:] {
			if !w.dyn && pathLooking(w.lit) {
				g.claim(w, OpWrite, st, ws[0].lit+" -c argument")
			}
		}
		return nil, true, kind
	}
	if stdin || i >= len(ws) {
		g.a.reason(Ask, ws[0].lit+" reads commands from standard input, which the guard cannot see")
		return nil, true, kind
	}
	// A script file: its commands run outside the guard's view (the sandbox still
	// applies); judged like any program, plus the read of the script.
	return ws, false, kind
}

// childPayload analyzes a script another process runs (bash -c, env -S, flock -c):
// its commands are not re-checked at run time, so what it leaves dynamic asks.
func (g *guard) childPayload(w word, st *gstate, depth int) {
	g.unchecked++
	g.payload(w, st, depth)
	g.unchecked--
}

func (g *guard) payloadWords(ws []word, st *gstate, depth int) {
	var parts []string
	for _, w := range ws {
		if w.dyn {
			g.a.reason(Ask, fmt.Sprintf("eval of %s, only known at run time", w.src))
			return
		}
		parts = append(parts, w.lit)
	}
	g.payload(word{lit: strings.Join(parts, " ")}, st, depth)
}

// payload parses a command string (bash -c, eval) and analyzes it in place.
func (g *guard) payload(w word, st *gstate, depth int) {
	if w.dyn {
		g.a.reason(Ask, fmt.Sprintf("the script %s is only known at run time", w.src))
		return
	}
	if depth+1 > maxDepth {
		g.a.reason(Ask, "the command nests too deeply to analyze")
		return
	}
	f, err := g.p.parse(w.lit)
	if err != nil {
		g.a.reason(Ask, "an embedded script could not be parsed ("+err.Error()+")")
		g.a.Parsed = false
		return
	}
	outer := g.src
	g.src = w.lit
	g.stmts(f.Stmts, st.copy(), depth+1)
	g.src = outer
}

func tail(ws []word, i int) []word {
	if i >= len(ws) {
		return nil
	}
	return ws[i:]
}

// skipFlags returns the index of the first non-flag word from i; valued lists the
// flags that take a separate value.
func skipFlags(ws []word, i int, valued map[string]bool) int {
	for i < len(ws) {
		w := ws[i]
		if w.dyn || !strings.HasPrefix(w.lit, "-") || w.lit == "-" {
			return i
		}
		if w.lit == "--" {
			return i + 1
		}
		if valued[w.lit] {
			i += 2
			continue
		}
		i++
	}
	return i
}

func (g *guard) cd(w word, st *gstate) {
	if w.dyn || w.lit == "-" || st.cwd == "" && !filepath.IsAbs(w.lit) {
		st.cwd = ""
		return
	}
	st.cwd = g.p.Resolve(w.lit, st.cwd)
}

// writeKeys are long options of programs the guard has no table for whose value
// is (most likely) a path written.
var writeKeys = set("--output", "--out", "--output-file", "--log-file", "--output-dir", "--outdir",
	"--out-dir", "--target-dir", "--target-directory", "--prefix", "--install-dir", "--dest",
	"--destination", "--log", "--outfile", "--output-document", "--directory-prefix", "--temp-dir",
	"--tmpdir", "--backup-dir", "--cache-dir", "--build-dir", "--dump", "--save")

// pathLike reports whether an argument names a file: anything with a slash, a
// leading dot or tilde.
func pathLike(s string) bool {
	if s == "" || strings.Contains(s, "://") {
		return false
	}
	return strings.Contains(s, "/") || strings.HasPrefix(s, ".") || strings.HasPrefix(s, "~")
}

// maybePath claims w as a read when it looks like a path (or always when force).
func (g *guard) maybePath(w word, st *gstate, force bool) {
	if w.dyn {
		g.claim(w, OpRead, st, "argument")
		return
	}
	s := w.lit
	if strings.HasPrefix(s, "-") {
		if k, v, ok := strings.Cut(s, "="); ok && strings.HasPrefix(k, "--") && pathLike(v) {
			op := OpRead
			if writeKeys[k] {
				op = OpWrite
			}
			g.claim(word{lit: v}, op, st, k)
		}
		return
	}
	outside := st.cwd != "" && !g.p.Inside(st.cwd)
	if force || pathLike(s) || outside {
		g.claim(w, OpRead, st, "argument")
	}
}

// nonFlags returns the arguments after the command that are not options.
func nonFlags(ws []word) []word {
	var out []word
	dashdash := false
	for _, w := range ws[1:] {
		if !dashdash && !w.dyn && w.lit == "--" {
			dashdash = true
			continue
		}
		if !dashdash && !w.dyn && strings.HasPrefix(w.lit, "-") && w.lit != "-" {
			continue
		}
		out = append(out, w)
	}
	return out
}

// claims records the path claims of one (unwrapped) simple command.
func (g *guard) claims(name string, ws []word, st *gstate, depth int) {
	switch {
	case name == "cd" || name == "pushd":
		if len(ws) == 1 {
			st.cwd = g.p.home
		} else {
			g.cd(nonFlagOr(ws, ws[len(ws)-1]), st)
		}
		return
	case name == "popd":
		st.cwd = ""
		return
	case noPathArgs[name]:
		return
	case writeArgs[name]:
		for _, w := range nonFlags(ws) {
			g.claim(w, OpWrite, st, name)
		}
		return
	case modeFirst[name]:
		nf := nonFlags(ws)
		ref := false // --reference=FILE replaces the mode operand
		for _, w := range ws[1:] {
			ref = ref || !w.dyn && strings.HasPrefix(w.lit, "--ref")
		}
		for i, w := range nf {
			if i == 0 && !ref {
				continue
			}
			g.claim(w, OpWrite, st, name)
		}
		return
	case copyCmds[name]:
		g.copyUse(name, ws, st)
		return
	case name == "dd":
		for _, w := range ws[1:] {
			if w.dyn {
				g.claim(w, OpWrite, st, "dd")
				continue
			}
			if v, ok := strings.CutPrefix(w.lit, "of="); ok {
				g.claim(word{lit: v}, OpWrite, st, "dd of=")
			} else if v, ok := strings.CutPrefix(w.lit, "if="); ok {
				g.claim(word{lit: v}, OpRead, st, "dd if=")
			}
		}
		return
	case name == "perl" && hasFlagChar(ws, 'i'):
		g.sedClaims(name, ws, st)
		return
	case name == "make":
		st = st.copy() // -C changes the directory of make only
		i := 1
		for i < len(ws) {
			w := ws[i]
			if !w.dyn && (w.lit == "-C" || w.lit == "--directory") && i+1 < len(ws) {
				g.cd(ws[i+1], st)
				i += 2
				continue
			}
			if !w.dyn && w.lit == "-f" && i+1 < len(ws) {
				g.claim(ws[i+1], OpRead, st, "makefile")
				i += 2
				continue
			}
			i++
		}
		g.claim(word{lit: "."}, OpWrite, st, "make")
		return
	case name == "tar":
		g.tarUse(ws, st)
		return
	case name == "zip":
		g.zipUse(ws, st)
		return
	case name == "unzip":
		dir := word{lit: "."}
		for i := 1; i < len(ws); i++ {
			if !ws[i].dyn && ws[i].lit == "-d" && i+1 < len(ws) {
				dir = ws[i+1]
			}
		}
		g.claim(dir, OpWrite, st, "unzip")
	case name == "awk" || name == "gawk" || name == "mawk" || name == "nawk":
		g.awkUse(name, ws, st)
		return
	case inPlace()[name] != nil:
		g.inPlaceUse(name, ws, st)
		return
	case name == "curl" || name == "wget":
		g.netUse(name, ws, st)
		return
	}
	force := fileArgs[name]
	for i := 1; i < len(ws); i++ {
		w := ws[i]
		if !w.dyn && (w.lit == "-o" || writeKeys[w.lit]) && i+1 < len(ws) && (ws[i+1].dyn || pathLike(ws[i+1].lit)) {
			g.claim(ws[i+1], OpWrite, st, name+" "+w.lit)
			i++
			continue
		}
		if !w.dyn && strings.HasPrefix(w.lit, "-o") && !strings.HasPrefix(w.lit, "--") && pathLike(w.lit[2:]) {
			g.claim(word{lit: w.lit[2:]}, OpWrite, st, name+" -o") // -o/path
			continue
		}
		g.maybePath(w, st, force)
	}
}

func nonFlagOr(ws []word, def word) word {
	nf := nonFlags(ws)
	if len(nf) == 0 {
		return def
	}
	return nf[0]
}

func hasFlagChar(ws []word, c byte) bool {
	for _, w := range ws[1:] {
		if !w.dyn && strings.HasPrefix(w.lit, "-") && !strings.HasPrefix(w.lit, "--") && strings.IndexByte(w.lit, c) > 0 {
			return true
		}
		if !w.dyn && strings.HasPrefix(w.lit, "--in-place") {
			return true
		}
	}
	return false
}

func (g *guard) sedClaims(name string, ws []word, st *gstate) {
	inPlace := hasFlagChar(ws, 'i')
	script := true
	for i := 1; i < len(ws); i++ {
		w := ws[i]
		if !w.dyn && (w.lit == "-e" || w.lit == "--expression") {
			script = false
			i++
			continue
		}
		if !w.dyn && (w.lit == "-f" || w.lit == "--file") && i+1 < len(ws) {
			script = false
			g.claim(ws[i+1], OpRead, st, name+" script")
			i++
			continue
		}
		if !w.dyn && strings.HasPrefix(w.lit, "-") && w.lit != "-" {
			if strings.HasPrefix(w.lit, "-") && !strings.HasPrefix(w.lit, "--") && strings.ContainsAny(w.lit, "e") && name == "perl" {
				script = true
			}
			continue
		}
		if script {
			script = false
			continue
		}
		op := OpRead
		if inPlace {
			op = OpWrite
		}
		g.claim(w, op, st, name)
	}
}

// gitCreates judges the directory git init and git clone create as a write (git init
// ~/x plants a repository, hooks included, wherever it points).
func (g *guard) gitCreates(ws []word, st *gstate) {
	i := 1
	for i < len(ws) && !ws[i].dyn && strings.HasPrefix(ws[i].lit, "-") {
		if ws[i].lit == "-C" || ws[i].lit == "-c" {
			i++
		}
		i++
	}
	if i >= len(ws) || ws[i].dyn || (ws[i].lit != "init" && ws[i].lit != "clone") {
		return
	}
	sub := ws[i].lit
	var operands []word
	for _, w := range ws[i+1:] {
		if !w.dyn && strings.HasPrefix(w.lit, "-") {
			continue
		}
		operands = append(operands, w)
	}
	if len(operands) == 0 || sub == "clone" && len(operands) < 2 {
		return
	}
	g.claim(operands[len(operands)-1], OpWrite, st, "git "+sub+" creates")
}
