package workspace

import (
	"fmt"
	"path/filepath"
	"strings"
)

// safeCommands only read (their path arguments are still judged as reads) and run
// no other programs, so they do not need the shell's default "ask".
var safeCommands = set("ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "pwd",
	"echo", "printf", "true", "false", "test", "[", "stat", "file", "diff", "cmp", "tree", "du",
	"df", "which", "type", "basename", "dirname", "realpath", "readlink", "date", "whoami",
	"uname", "id", "cut", "tr", "uniq", "nl", "tac", "rev", "od", "xxd", "hexdump", "strings",
	"md5sum", "sha1sum", "sha256sum", "sha512sum", "jq", "seq", "sleep", "cd", "pushd", "popd",
	":", "exit", "return", "shift", "set", "unset", "export", "local", "wait", "column", "find",
	"command", "sed", "sort", "printenv")

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
var writeArgs = set("rm", "rmdir", "unlink", "shred", "touch", "mkdir", "truncate", "tee", "mv",
	"mkfifo", "mknod")

// modeFirst take a mode/owner first, then files they modify.
var modeFirst = set("chmod", "chown", "chgrp", "setfacl", "chattr")

// copyCmds write their last argument (or -t DIR) and read the others.
var copyCmds = set("cp", "install", "rsync", "ln", "link", "scp")

var shells = set("sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "busybox")

var interpreters = set("python", "python3", "python2", "node", "perl", "ruby", "php", "lua",
	"deno", "bun", "Rscript", "osascript", "pwsh")

// multiTools take a subcommand that belongs in a session rule ("go test", "git push").
var multiTools = set("git", "go", "npm", "npx", "pnpm", "yarn", "cargo", "docker", "podman",
	"kubectl", "make", "pip", "pip3", "uv", "poetry", "bundle", "gem", "rake", "mvn", "gradle",
	"./gradlew", "dotnet", "helm", "terraform", "apt", "apt-get", "brew", "systemctl", "gh",
	"bun", "deno", "rustup", "composer", "just", "task", "nix", "conda", "mix", "swift", "zig",
	"stack", "cabal", "tox", "nox", "pytest", "bazel", "cmake", "ninja", "sqlite3")

// gitReadOnly are git subcommands that do not modify the repository.
var gitReadOnly = set("status", "log", "diff", "show", "rev-parse", "ls-files", "blame", "grep",
	"describe", "shortlog", "cat-file", "ls-tree", "reflog", "whatchanged", "help", "version")

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
	if !ruled && safeCommands[name] && g.safeUse(name, ws) {
		d, why = Allow, ""
	}
	if st.funcs[ws[0].lit] {
		d, why = Allow, "" // a function defined in this command: its body was analyzed
		sub.Prefix = ""
	}
	if d != Allow {
		g.a.reason(d, fmt.Sprintf("%s: %s", strings.Join(prefixWords(ws, 2), " "), why))
	}

	if st.cwd != "" && !g.p.Inside(st.cwd) && name != "cd" && name != "pushd" {
		// Running in a directory outside the root reads it, whatever the arguments.
		g.claim(word{lit: "."}, OpRead, st, "working directory")
	}
	g.claims(name, ws, st, depth)
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

// safeUse rejects the options with which otherwise read-only tools run programs or write.
func (g *guard) safeUse(name string, ws []word) bool {
	for _, w := range ws[1:] {
		if w.dyn {
			continue
		}
		s := w.lit
		switch {
		case name == "rg" && (strings.HasPrefix(s, "--pre") || s == "-z" || s == "--search-zip"):
			return false
		case name == "find" && (strings.HasPrefix(s, "-exec") || strings.HasPrefix(s, "-ok") || s == "-delete" || strings.HasPrefix(s, "-fprint") || s == "-fls"):
			return false
		}
	}
	if name == "sed" {
		// Read-only only without -i and without w/W/e commands in the script.
		if hasFlagChar(ws, 'i') {
			return false
		}
		for _, w := range ws[1:] {
			if w.dyn || !strings.HasPrefix(w.lit, "-") && strings.ContainsAny(w.lit, "wWe") {
				return false
			}
		}
	}
	if name == "sort" {
		for _, w := range ws[1:] {
			if w.dyn || w.lit == "-o" || strings.HasPrefix(w.lit, "--output") || strings.HasPrefix(w.lit, "--compress") {
				return false
			}
		}
	}
	if name == "command" {
		return len(ws) > 1 && !ws[1].dyn && (ws[1].lit == "-v" || ws[1].lit == "-V")
	}
	return true
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
		for i, w := range nf {
			if i == 0 {
				continue
			}
			g.claim(w, OpWrite, st, name)
		}
		return
	case copyCmds[name]:
		g.copyClaims(name, ws, st)
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
	case name == "find":
		g.findClaims(ws, st, depth)
		return
	case name == "sed" || name == "perl" && hasFlagChar(ws, 'i'):
		g.sedClaims(name, ws, st)
		return
	case name == "git":
		g.gitClaims(ws, st)
		return
	case name == "make":
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
		g.tarClaims(ws, st)
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
		for i := 1; i < len(ws); i++ {
			w := ws[i]
			if w.dyn {
				continue
			}
			switch w.lit {
			case "-o", "--output", "-O", "--output-document", "-P", "--directory-prefix":
				if name == "curl" && w.lit == "-O" {
					g.claim(word{lit: "."}, OpWrite, st, "curl -O")
					continue
				}
				if i+1 < len(ws) {
					g.claim(ws[i+1], OpWrite, st, name+" "+w.lit)
					i++
				}
			case "-T", "--upload-file":
				if i+1 < len(ws) {
					g.claim(ws[i+1], OpRead, st, "upload")
					i++
				}
			}
		}
		if name == "wget" {
			g.claim(word{lit: "."}, OpWrite, st, "wget")
		}
		return
	case name == "sort":
		for i := 1; i < len(ws); i++ {
			if !ws[i].dyn && ws[i].lit == "-o" && i+1 < len(ws) {
				g.claim(ws[i+1], OpWrite, st, "sort -o")
				i++
				continue
			}
			g.maybePath(ws[i], st, true)
		}
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

func (g *guard) copyClaims(name string, ws []word, st *gstate) {
	var target *word
	var rest []word
	for i := 1; i < len(ws); i++ {
		w := ws[i]
		if !w.dyn && (w.lit == "-t" || w.lit == "--target-directory") && i+1 < len(ws) {
			t := ws[i+1]
			target = &t
			i++
			continue
		}
		if !w.dyn {
			if v, ok := strings.CutPrefix(w.lit, "--target-directory="); ok {
				target = &word{lit: v}
				continue
			}
		}
		if !w.dyn && strings.HasPrefix(w.lit, "-") && w.lit != "-" {
			continue
		}
		rest = append(rest, w)
	}
	if target == nil && len(rest) > 0 {
		t := rest[len(rest)-1]
		target = &t
		rest = rest[:len(rest)-1]
		if name == "ln" && len(rest) == 0 {
			// ln -s TARGET: the link is created in the current directory.
			rest = []word{t}
			target = &word{lit: "."}
		}
	}
	for _, w := range rest {
		if name == "scp" || name == "rsync" {
			if !w.dyn && strings.Contains(w.lit, ":") && !pathLike(strings.SplitN(w.lit, ":", 2)[0]) {
				continue // remote
			}
		}
		g.claim(w, OpRead, st, name)
	}
	if target != nil {
		if (name == "scp" || name == "rsync") && !target.dyn && strings.Contains(target.lit, ":") {
			return
		}
		g.claim(*target, OpWrite, st, name)
	}
}

func (g *guard) findClaims(ws []word, st *gstate, depth int) {
	var roots []word
	i := 1
	for i < len(ws) && (ws[i].dyn || !strings.HasPrefix(ws[i].lit, "-") && ws[i].lit != "(" && ws[i].lit != "!") {
		roots = append(roots, ws[i])
		i++
	}
	if len(roots) == 0 {
		roots = []word{{lit: "."}}
	}
	writes := false
	for ; i < len(ws); i++ {
		w := ws[i]
		if w.dyn {
			continue
		}
		switch w.lit {
		case "-delete":
			writes = true
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if i+1 < len(ws) {
				g.claim(ws[i+1], OpWrite, st, "find "+w.lit)
				i++
			}
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			var cmd []word
			for j < len(ws) && (ws[j].dyn || ws[j].lit != ";" && ws[j].lit != "+") {
				c := ws[j]
				if !c.dyn && strings.Contains(c.lit, "{}") {
					// Each found file: judge as the search roots (a directory claim
					// covers the files below it).
					c = roots[0]
				}
				cmd = append(cmd, c)
				j++
			}
			if len(cmd) > 0 {
				var parts []string
				for _, c := range cmd {
					parts = append(parts, c.show())
				}
				g.simple(cmd, st.copy(), depth+1, strings.Join(parts, " "))
			}
			i = j
		}
	}
	op := OpRead
	if writes {
		op = OpWrite
	}
	for _, r := range roots {
		g.claim(r, op, st, "find")
	}
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

func (g *guard) gitClaims(ws []word, st *gstate) {
	i := 1
	for i < len(ws) {
		w := ws[i]
		if w.dyn {
			break
		}
		switch {
		case w.lit == "-C" && i+1 < len(ws):
			g.cd(ws[i+1], st)
			i += 2
			continue
		case (w.lit == "--git-dir" || w.lit == "--work-tree") && i+1 < len(ws):
			g.claim(ws[i+1], OpWrite, st, "git "+w.lit)
			i += 2
			continue
		case strings.HasPrefix(w.lit, "--git-dir=") || strings.HasPrefix(w.lit, "--work-tree="):
			_, v, _ := strings.Cut(w.lit, "=")
			g.claim(word{lit: v}, OpWrite, st, "git")
			i++
			continue
		case w.lit == "-c" && i+1 < len(ws):
			g.a.reason(Ask, "git -c sets configuration that can run programs")
			i += 2
			continue
		case strings.HasPrefix(w.lit, "-"):
			i++
			continue
		}
		break
	}
	sub := ""
	if i < len(ws) && !ws[i].dyn {
		sub = ws[i].lit
	}
	op := OpWrite
	if gitReadOnly[sub] {
		op = OpRead
	}
	g.claim(word{lit: "."}, op, st, "git "+sub)
	for j := i + 1; j < len(ws); j++ {
		g.maybePath(ws[j], st, false)
	}
	if sub == "config" {
		for _, w := range ws[i:] {
			if !w.dyn && (w.lit == "--global" || w.lit == "--system") {
				g.claim(word{lit: "~/.gitconfig"}, OpWrite, st, "git config "+w.lit)
			}
		}
	}
	if sub == "clone" {
		nf := nonFlags(ws[i:])
		if len(nf) >= 2 {
			g.claim(nf[len(nf)-1], OpWrite, st, "git clone")
		}
	}
}

func (g *guard) tarClaims(ws []word, st *gstate) {
	mode := byte(0)
	var archive *word
	dir := word{lit: "."}
	var files []word
	for i := 1; i < len(ws); i++ {
		w := ws[i]
		if w.dyn {
			files = append(files, w)
			continue
		}
		s := w.lit
		switch {
		case s == "-C" || s == "--directory":
			if i+1 < len(ws) {
				dir = ws[i+1]
				i++
			}
			continue
		case strings.HasPrefix(s, "--directory="):
			dir = word{lit: strings.TrimPrefix(s, "--directory=")}
			continue
		case s == "--file" && i+1 < len(ws):
			a := ws[i+1]
			archive = &a
			i++
			continue
		case strings.HasPrefix(s, "--file="):
			archive = &word{lit: strings.TrimPrefix(s, "--file=")}
			continue
		case s == "--create" || s == "--extract" || s == "--get" || s == "--list" || s == "--append" || s == "--update":
			mode = map[string]byte{"--create": 'c', "--extract": 'x', "--get": 'x', "--list": 't', "--append": 'r', "--update": 'u'}[s]
			continue
		case strings.HasPrefix(s, "--"):
			continue
		case strings.HasPrefix(s, "-") || i == 1:
			flags := strings.TrimPrefix(s, "-")
			for k := 0; k < len(flags); k++ {
				switch flags[k] {
				case 'c', 'x', 't', 'r', 'u':
					mode = flags[k]
				case 'f':
					if k == len(flags)-1 && i+1 < len(ws) {
						a := ws[i+1]
						archive = &a
						i++
					} else if k < len(flags)-1 {
						archive = &word{lit: flags[k+1:]}
						k = len(flags)
					}
				case 'C':
					if i+1 < len(ws) {
						dir = ws[i+1]
						i++
					}
				}
			}
			continue
		}
		files = append(files, w)
	}
	switch mode {
	case 'x':
		g.claim(dir, OpWrite, st, "tar extract")
		if archive != nil {
			g.claim(*archive, OpRead, st, "tar archive")
		}
	case 'c', 'r', 'u':
		if archive != nil {
			g.claim(*archive, OpWrite, st, "tar archive")
		}
		for _, f := range files {
			g.claim(f, OpRead, st, "tar")
		}
	default:
		if archive != nil {
			g.claim(*archive, OpRead, st, "tar archive")
		}
	}
}
