package workspace

import (
	"fmt"
	"path/filepath"
	"strings"
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
	if st.cwd != "" && !g.p.Inside(st.cwd) && name != "cd" && name != "pushd" {
		// Running in a directory outside the root reads it, whatever the arguments.
		g.claim(word{lit: "."}, OpRead, st, "working directory")
	}
	// The no-approval set: read-only programs whose every option is known. They
	// record their own path claims.
	u, uwhy, judged := useSafe, "", true
	switch sc := safeCmds[name]; {
	case st.funcs[ws[0].lit]:
		judged = false
	case sc != nil:
		u, uwhy = g.safeUse(name, sc, ws, st)
	case name == "find":
		u, uwhy = g.findUse(ws, st, depth)
	case name == "git":
		u, uwhy = g.gitUse(ws, st, !ruled)
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
		ok := true
		for i, w := range r.words {
			if argv[i] != w && !(i == 0 && filepath.Base(argv[0]) == w) {
				ok = false
				break
			}
		}
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
		case "timeout":
			i := skipFlags(ws, 1, set("-s", "-k", "--signal", "--kill-after"))
			ws = tail(ws, i+1) // the duration
		case "time":
			i := 1
			for i < len(ws) && !ws[i].dyn && strings.HasPrefix(ws[i].lit, "-") {
				if ws[i].lit == "-o" && i+1 < len(ws) {
					g.claim(ws[i+1], OpWrite, st, "time -o")
					i++
				} else if ws[i].lit == "-f" {
					i++
				}
				i++
			}
			ws = tail(ws, i)
		case "nice":
			ws = tail(ws, skipFlags(ws, 1, set("-n", "--adjustment")))
		case "ionice":
			ws = tail(ws, skipFlags(ws, 1, set("-c", "-n", "-p", "-P", "-u", "--class", "--classdata")))
		case "nohup", "builtin", "unbuffer", "caffeinate":
			ws = tail(ws, 1)
		case "setsid":
			ws = tail(ws, skipFlags(ws, 1, nil))
		case "exec":
			ws = tail(ws, skipFlags(ws, 1, set("-a")))
		case "stdbuf":
			ws = tail(ws, skipFlags(ws, 1, set("-i", "-o", "-e")))
		case "taskset":
			i := skipFlags(ws, 1, nil)
			ws = tail(ws, i+1) // the mask or cpu list
		case "chrt":
			i := skipFlags(ws, 1, nil)
			ws = tail(ws, i+1) // the priority
		case "flock":
			i := skipFlags(ws, 1, set("-w", "-E", "--timeout", "--conflict-exit-code"))
			if i < len(ws) {
				g.claim(ws[i], OpWrite, st, "lock file")
			}
			if i+1 < len(ws) && !ws[i+1].dyn && (ws[i+1].lit == "-c" || ws[i+1].lit == "--command") && i+2 < len(ws) {
				g.payload(ws[i+2], st, depth)
				return nil, true, kind
			}
			ws = tail(ws, i+1)
		case "command":
			if len(ws) > 1 && !ws[1].dyn && (ws[1].lit == "-v" || ws[1].lit == "-V") {
				return ws, false, kind // a lookup, runs nothing
			}
			ws = tail(ws, skipFlags(ws, 1, nil))
		case "env":
			i := 1
			for i < len(ws) {
				w := ws[i]
				if w.dyn {
					break
				}
				s := w.lit
				if s == "-u" || s == "--unset" {
					i += 2
					continue
				}
				if s == "-C" || s == "--chdir" {
					if i+1 < len(ws) {
						g.cd(ws[i+1], st)
					}
					i += 2
					continue
				}
				if s == "-S" || s == "--split-string" {
					if i+1 < len(ws) {
						g.payload(ws[i+1], st, depth)
					}
					return nil, true, kind
				}
				if strings.HasPrefix(s, "-") {
					i++
					continue
				}
				if k, _, ok := strings.Cut(s, "="); ok && k != "" && !strings.Contains(k, "/") {
					if dangerousEnv[k] {
						g.a.reason(Ask, fmt.Sprintf("setting %s changes which programs or code run", k))
					}
					i++
					continue
				}
				break
			}
			ws = tail(ws, i)
		case "sudo", "doas", "run0", "pkexec":
			g.a.reason(Ask, name+" runs the command as another user (outside the workspace policy)")
			kind = "sudo"
			i := skipFlags(ws, 1, set("-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "--user", "--group"))
			ws = tail(ws, i)
		case "xargs":
			replace := ""
			for k := 1; k < len(ws); k++ {
				if !ws[k].dyn && (ws[k].lit == "-I" || ws[k].lit == "--replace") && k+1 < len(ws) && !ws[k+1].dyn {
					replace = ws[k+1].lit
				} else if !ws[k].dyn && strings.HasPrefix(ws[k].lit, "-I") && len(ws[k].lit) > 2 {
					replace = ws[k].lit[2:]
				}
			}
			i := skipFlags(ws, 1, set("-I", "-n", "-P", "-L", "-d", "-s", "-E", "-a", "--arg-file", "--delimiter", "--max-args", "--max-procs", "--replace"))
			rest := append([]word(nil), tail(ws, i)...)
			if len(rest) == 0 {
				rest = []word{{lit: "echo"}}
			}
			// The arguments arrive on stdin: unknown to the guard.
			stdin := word{dyn: true, src: "<args from stdin>"}
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
				g.payloadWords(tail(ws, i), st, depth)
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

// shell handles sh/bash/...: -c payloads are parsed recursively; a script is a read;
// commands from stdin are unknown.
func (g *guard) shell(ws []word, st *gstate, depth int, kind string) ([]word, bool, string) {
	for i := 1; i < len(ws); i++ {
		w := ws[i]
		if w.dyn {
			g.a.reason(Ask, fmt.Sprintf("%s runs %s, only known at run time", ws[0].lit, w.src))
			return nil, true, kind
		}
		s := w.lit
		if s == "-c" || (strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "--") && strings.Contains(s, "c")) {
			if i+1 >= len(ws) {
				g.a.reason(Ask, "a shell -c without a command")
				return nil, true, kind
			}
			g.payload(ws[i+1], st, depth)
			return nil, true, kind
		}
		if s == "-o" || s == "+o" || s == "-O" || s == "+O" {
			i++
			continue
		}
		if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
			if s == "-s" || s == "-" {
				break
			}
			continue
		}
		// A script file: its commands run outside the guard's view (the sandbox
		// still applies); judged like any program, plus the read of the script.
		return ws, false, kind
	}
	g.a.reason(Ask, ws[0].lit+" reads commands from standard input, which the guard cannot see")
	return nil, true, kind
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
			if k == "--output" || k == "--out" || k == "--output-file" || k == "--log-file" {
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
	case name == "curl" || name == "wget":
		g.netUse(name, ws, st)
		return
	}
	force := fileArgs[name]
	for i := 1; i < len(ws); i++ {
		w := ws[i]
		if !w.dyn && (w.lit == "-o" || w.lit == "--output") && i+1 < len(ws) && (ws[i+1].dyn || pathLike(ws[i+1].lit)) {
			g.claim(ws[i+1], OpWrite, st, name+" "+w.lit)
			i++
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

