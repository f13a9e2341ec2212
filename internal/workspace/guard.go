package workspace

import (
	"fmt"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// MaxCommandLen is the longest command the guard analyzes; longer ones always ask.
const MaxCommandLen = 10_000

// maxDepth bounds nested payloads (bash -c 'bash -c ...', eval, find -exec).
const maxDepth = 6

// Claim is a path a command reads or writes, as the guard saw it.
type Claim struct {
	// Path as written ("" when Dynamic).
	Path string `json:"path,omitempty"`
	// Abs is where it resolves ("" when Dynamic).
	Abs     string   `json:"abs,omitempty"`
	Op      Op       `json:"op"`
	Dynamic bool     `json:"dynamic,omitempty"`
	Verdict Decision `json:"decision"`
	Why     string   `json:"why,omitempty"`
}

// Subcommand is one simple command of a (compound) command line.
type Subcommand struct {
	// Text is the simple command as written (wrappers included).
	Text string `json:"text"`
	// Prefix is the rule "allow for this session" stores for it ("" when none is
	// safe to store, e.g. a dynamic command name).
	Prefix   string   `json:"prefix,omitempty"`
	Decision Decision `json:"decision"`
	Reasons  []string `json:"reasons,omitempty"`
}

// Analysis is the guard's verdict on a command line.
type Analysis struct {
	Decision    Decision     `json:"decision"`
	Parsed      bool         `json:"parsed"`
	Subcommands []Subcommand `json:"subcommands,omitempty"`
	Claims      []Claim      `json:"claims,omitempty"`
	// Reasons explain every non-allow verdict (deduplicated, in order).
	Reasons []string   `json:"reasons,omitempty"`
	levels  []Decision // the verdict of each reason
	// Network: a command known to reach the network (guard_net.go); once it passed,
	// the sandbox runs it outside its network namespace.
	Network bool `json:"network,omitempty"`
}

// Texts returns the subcommands as written.
func (a *Analysis) Texts() []string {
	out := make([]string, 0, len(a.Subcommands))
	for _, s := range a.Subcommands {
		out = append(out, s.Text)
	}
	return out
}

// Rules returns the distinct prefix rules "allow for this session" would add.
func (a *Analysis) Rules() []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range a.Subcommands {
		if s.Prefix != "" && !seen[s.Prefix] {
			seen[s.Prefix] = true
			out = append(out, s.Prefix)
		}
	}
	return out
}

func (a *Analysis) reason(d Decision, r string) {
	a.Decision = most(a.Decision, d)
	if d == Allow || r == "" {
		return
	}
	for i, x := range a.Reasons {
		if x == r {
			a.levels[i] = most(a.levels[i], d)
			return
		}
	}
	a.Reasons = append(a.Reasons, r)
	a.levels = append(a.levels, d)
}

// Explain is a one-paragraph explanation for the model.
// Only the reasons of the final verdict are given: a denial names what is denied.
func (a *Analysis) Explain() string {
	var out []string
	for i, r := range a.Reasons {
		if i < len(a.levels) && a.levels[i] == a.Decision {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		out = a.Reasons
	}
	return strings.Join(out, "; ")
}

// word is one argument after brace expansion: literal when known statically.
type word struct {
	lit string
	dyn bool
	src string
	// pipe: a process substitution, which the shell turns into a pipe of its own.
	pipe bool
	// tree: the program reads everything below this path (find -exec's "{}").
	tree bool
	// unseen: known only inside another process, where nothing checks it again
	// (the arguments xargs reads from stdin).
	unseen bool
}

func (w word) show() string {
	if w.dyn {
		return w.src
	}
	return w.lit
}

// gstate is what the guard tracks through a command list.
type gstate struct {
	cwd   string // "" = unknown (after cd to a dynamic place)
	funcs map[string]bool
}

func (s *gstate) copy() *gstate {
	c := *s
	return &c
}

type guard struct {
	p   *Policy
	a   *Analysis
	src string
	// dotglob: the command may make wildcards match dot files (shopt -s dotglob,
	// GLOBIGNORE).
	dotglob bool
	// unchecked > 0 while analyzing a script a child process runs (bash -c ...):
	// the run-time check does not see its expansions.
	unchecked int
	// literals are the path-looking literal words of the whole command (arguments,
	// assignment values, here-strings); hidden is set when some of the command's
	// paths reach a program in a way the guard cannot follow (xargs' stdin, a child
	// shell's script or positional arguments). See sweepLiterals.
	literals []string
	hidden   bool
	// pathRisky are the PATH entries the agent can write (computed once).
	pathRisky []string
	pathDone  bool
	// stores are the protected stores' patterns (computed once).
	stores []string
	// treeNames: the recursive reader lists names only (rg --files);
	// treeNoHidden: it skips hidden files (rg without --hidden).
	treeNames, treeNoHidden, treeGitignore bool
}

func mayDotglob(s string) bool {
	return strings.Contains(s, "dotglob") || strings.Contains(s, "GLOBIGNORE")
}

// AnalyzeCommand is the static guard: it parses cmd, splits it into simple commands,
// and merges the command rules with the path claims (most restrictive wins).
// A command that does not parse, or is longer than MaxCommandLen, is never allowed.
func (p *Policy) AnalyzeCommand(cmd, cwd string) *Analysis {
	a := &Analysis{}
	if cwd == "" {
		cwd = p.root
	}
	if p.name == PresetReadonly {
		a.reason(Deny, "the readonly policy runs no commands")
	}
	if len(cmd) > MaxCommandLen {
		a.Subcommands = []Subcommand{{Text: cmd[:200] + "…", Decision: Ask}}
		a.reason(Ask, fmt.Sprintf("the command is %d characters long, too long to analyze (limit %d)", len(cmd), MaxCommandLen))
		return a
	}
	f, err := p.parse(cmd)
	if err != nil {
		a.Subcommands = []Subcommand{{Text: cmd, Decision: Ask}}
		a.reason(Ask, "the command could not be parsed ("+err.Error()+")")
		return a
	}
	a.Parsed = true
	g := &guard{p: p, a: a, src: cmd, dotglob: mayDotglob(cmd)}
	st := &gstate{cwd: cwd, funcs: map[string]bool{}}
	g.stmts(f.Stmts, st, 0)
	g.sweepLiterals(cwd)
	if p.name == PresetReadonly {
		a.reason(Deny, "the readonly policy runs no commands")
	}
	return a
}

// AnalyzeArgv judges one expanded simple command at execution time.
func (p *Policy) AnalyzeArgv(argv []string, cwd string) *Analysis {
	a := &Analysis{Parsed: true}
	g := &guard{p: p, a: a}
	ws := make([]word, len(argv))
	for i, s := range argv {
		ws[i] = word{lit: s}
		g.dotglob = g.dotglob || mayDotglob(s)
	}
	g.simple(ws, &gstate{cwd: cwd, funcs: map[string]bool{}}, 0, strings.Join(argv, " "))
	if p.name == PresetReadonly {
		a.reason(Deny, "the readonly policy runs no commands")
	}
	return a
}

// nodeText is the source text of n (cheap: a slice of what was parsed).
func (g *guard) nodeText(n syntax.Node) string {
	start, end := n.Pos(), n.End()
	if start.IsValid() && end.IsValid() && int(end.Offset()) <= len(g.src) && start.Offset() <= end.Offset() {
		return strings.TrimSpace(g.src[start.Offset():end.Offset()])
	}
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, n); err != nil {
		return "?"
	}
	return strings.TrimSpace(b.String())
}

// parse parses bash with a pooled parser (parsers are large to allocate).
func (p *Policy) parse(src string) (*syntax.File, error) {
	ps, _ := p.parsers.Get().(*syntax.Parser)
	if ps == nil {
		ps = syntax.NewParser(syntax.Variant(syntax.LangBash))
	}
	defer p.parsers.Put(ps)
	return ps.Parse(strings.NewReader(src), "")
}

func (g *guard) stmts(ss []*syntax.Stmt, st *gstate, depth int) {
	for _, s := range ss {
		g.stmt(s, st, depth)
	}
}

func (g *guard) stmt(s *syntax.Stmt, st *gstate, depth int) {
	if s == nil {
		return
	}
	if s.Background {
		st = st.copy()
	}
	for _, r := range s.Redirs {
		g.redirect(r, st, depth)
	}
	g.command(s.Cmd, st, depth)
}

func (g *guard) redirect(r *syntax.Redirect, st *gstate, depth int) {
	if r.Hdoc != nil {
		g.nested(r.Hdoc, st, depth)
	}
	if r.Word == nil {
		return
	}
	g.nested(r.Word, st, depth)
	switch r.Op {
	case syntax.WordHdoc:
		g.word(r.Word) // a here-string's text can name a path a reader then opens
		return
	case syntax.Hdoc, syntax.DashHdoc:
		return
	case syntax.DplIn, syntax.DplOut:
		if lit := r.Word.Lit(); lit == "-" || isDigits(lit) {
			return // fd duplication, not a file
		}
	}
	op := OpWrite
	if r.Op == syntax.RdrIn {
		op = OpRead
	}
	w := g.word(r.Word)
	g.claim(w, op, st, "redirect")
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// nested analyzes command and process substitutions anywhere inside n.
func (g *guard) nested(n syntax.Node, st *gstate, depth int) {
	if n == nil {
		return
	}
	if w, ok := n.(*syntax.Word); ok && w == nil {
		return
	}
	syntax.Walk(n, func(x syntax.Node) bool {
		switch x := x.(type) {
		case *syntax.CmdSubst:
			g.stmts(x.Stmts, st.copy(), depth+1)
			return false
		case *syntax.ProcSubst:
			g.stmts(x.Stmts, st.copy(), depth+1)
			return false
		}
		return true
	})
}

func (g *guard) command(c syntax.Command, st *gstate, depth int) {
	if depth > maxDepth {
		g.a.reason(Ask, "the command nests too deeply to analyze")
		return
	}
	switch c := c.(type) {
	case nil:
	case *syntax.CallExpr:
		g.call(c, st, depth)
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.Pipe, syntax.PipeAll:
			g.stmt(c.X, st.copy(), depth)
			g.stmt(c.Y, st.copy(), depth)
		default:
			g.stmt(c.X, st, depth)
			g.stmt(c.Y, st, depth)
		}
	case *syntax.Block:
		g.stmts(c.Stmts, st, depth)
	case *syntax.Subshell:
		g.stmts(c.Stmts, st.copy(), depth)
	case *syntax.IfClause:
		for ic := c; ic != nil; ic = ic.Else {
			g.stmts(ic.Cond, st, depth)
			g.stmts(ic.Then, st, depth)
		}
	case *syntax.WhileClause:
		g.stmts(c.Cond, st, depth)
		g.stmts(c.Do, st, depth)
	case *syntax.ForClause:
		g.nested(c.Loop, st, depth)
		g.stmts(c.Do, st, depth)
	case *syntax.CaseClause:
		g.nested(c.Word, st, depth)
		for _, it := range c.Items {
			g.stmts(it.Stmts, st.copy(), depth)
		}
	case *syntax.FuncDecl:
		if c.Name != nil {
			st.funcs[c.Name.Value] = true
			if callsItself(c) {
				// The embedded shell runs functions as goroutines in lovia itself, out of
				// the sandbox's process limit: `:(){ :|:& };:` would exhaust lovia.
				g.a.reason(Ask, fmt.Sprintf("the function %s calls itself, which can multiply without bound in lovia's own shell", c.Name.Value))
			}
		}
		// The body runs with unknown arguments: its claims on "$1" are dynamic.
		g.stmt(c.Body, st.copy(), depth)
	case *syntax.TimeClause:
		g.stmt(c.Stmt, st, depth)
	case *syntax.CoprocClause:
		g.stmt(c.Stmt, st.copy(), depth)
	case *syntax.DeclClause:
		for _, as := range c.Args {
			g.assign(as, st, depth)
		}
	default:
		// ArithmCmd, TestClause, LetClause, TestDecl: only substitutions can act.
		g.nested(c, st, depth)
	}
}

// dangerousEnv are variables that change which code a command runs (or which
// configuration, with its pagers and hooks, a program reads).
var dangerousEnv = map[string]bool{
	"PATH": true, "LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "LD_AUDIT": true,
	"BASH_ENV": true, "ENV": true, "PROMPT_COMMAND": true, "IFS": true,
	"GIT_SSH_COMMAND": true, "GIT_EXEC_PATH": true, "PYTHONPATH": true, "PYTHONSTARTUP": true,
	"NODE_OPTIONS": true, "PERL5OPT": true, "RUBYOPT": true, "DYLD_INSERT_LIBRARIES": true,
	"PAGER": true, "EDITOR": true, "VISUAL": true, "LESSOPEN": true, "LESSCLOSE": true,
	"MANPAGER": true, "SSH_ASKPASS": true, "HOME": true, "XDG_CONFIG_HOME": true,
	"TAR_OPTIONS": true, "RIPGREP_CONFIG_PATH": true, "GREP_OPTIONS": true, "PS1": true,
	"PS2": true, "PS4": true, "SHELLOPTS": true, "BASHOPTS": true, "GLOBIGNORE": true,
	"CDPATH": true, "POSIXLY_CORRECT": true, "PERL5LIB": true, "RUBYLIB": true, "NODE_PATH": true, "JQ_LIBRARY_PATH": true,
}

// DangerousVar reports variables whose value changes which code a command runs:
// the list above, every GIT_* variable (GIT_EXTERNAL_DIFF, GIT_PAGER, GIT_CONFIG_*,
// GIT_DIR ...) and exported bash functions (BASH_FUNC_*).
func DangerousVar(name string) bool {
	return dangerousEnv[name] || strings.HasPrefix(name, "GIT_") || strings.HasPrefix(name, "BASH_FUNC_") ||
		strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "DYLD_")
}

func (g *guard) assign(as *syntax.Assign, st *gstate, depth int) {
	if as == nil {
		return
	}
	if as.Value != nil {
		g.nested(as.Value, st, depth)
		if !as.Naked {
			g.word(as.Value) // records a literal path assigned (f=~/.ssh/id_rsa; cat $f)
		}
	}
	if as.Array != nil {
		g.nested(as.Array, st, depth)
	}
	if as.Name != nil && DangerousVar(as.Name.Value) && !as.Naked {
		g.a.reason(Ask, fmt.Sprintf("setting %s changes which programs or code run", as.Name.Value))
	}
	if as.Naked && as.Value != nil {
		// export "$X=y", export GIT_PAGER=x written as one word: the name is in the word.
		w := g.word(as.Value)
		k, _, _ := strings.Cut(w.lit, "=")
		if w.dyn {
			g.a.reason(Ask, fmt.Sprintf("%s sets a variable whose name is only known at run time", w.src))
		} else if DangerousVar(k) {
			g.a.reason(Ask, fmt.Sprintf("setting %s changes which programs or code run", k))
		}
	}
}

func (g *guard) call(c *syntax.CallExpr, st *gstate, depth int) {
	for _, as := range c.Assigns {
		g.assign(as, st, depth)
	}
	text := g.nodeText(c)
	var ws []word
	for _, w := range c.Args {
		g.nested(w, st, depth)
		if !syntax.SplitBraces(w) {
			ws = append(ws, g.word(w))
			continue
		}
		n := 0
		for bw, err := range expand.BracesSeq(nil, w) {
			if n++; err != nil || n > 256 {
				ws = append(ws, word{dyn: true, src: text})
				break
			}
			ws = append(ws, g.word(bw))
		}
	}
	if len(ws) == 0 {
		return
	}
	g.simple(ws, st, depth, text)
}

// word converts a syntax word into its literal value when it has one.
func (g *guard) word(w *syntax.Word) word {
	src := g.nodeText(w)
	// A lone process substitution is a /dev/fd pipe, not a file the user names.
	if len(w.Parts) == 1 {
		if _, ok := w.Parts[0].(*syntax.ProcSubst); ok {
			return word{lit: "/dev/fd/63", src: src, pipe: true}
		}
	}
	var b strings.Builder
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := p.Value
			if i == 0 && strings.HasPrefix(v, "~") {
				if v == "~" || strings.HasPrefix(v, "~/") {
					v = expandHome(v, g.p.home)
				} else {
					return word{dyn: true, src: src} // ~user
				}
			}
			b.WriteString(unescapeLit(v))
		case *syntax.SglQuoted:
			if p.Dollar {
				return word{dyn: true, src: src}
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, dp := range p.Parts {
				l, ok := dp.(*syntax.Lit)
				if !ok {
					return word{dyn: true, src: src}
				}
				b.WriteString(unescapeDbl(l.Value))
			}
		default:
			return word{dyn: true, src: src}
		}
	}
	lit := b.String()
	if pathLooking(lit) {
		g.literals = append(g.literals, lit)
	}
	return word{lit: lit, src: src}
}

// pathLooking: a word that names a file as written (not a URL or an option).
func pathLooking(s string) bool {
	return s != "" && s[0] != '-' && !strings.Contains(s, "://") && (strings.Contains(s, "/") || strings.HasPrefix(s, "."))
}

// sweepLiterals judges the literal paths a command mentions anywhere, whatever
// position the analysis gave them: a path in a credential store is denied however it
// is used (echo it into xargs, pass it as bash -c's $0, assign it in a script), and
// when some paths reach a program the guard cannot follow, each literal path is
// judged as a write too — what a hidden consumer does with it is unknown.
func (g *guard) sweepLiterals(cwd string) {
	seen := map[string]bool{}
	for _, lit := range g.literals {
		if seen[lit] {
			continue
		}
		seen[lit] = true
		abs, d, _ := g.p.Judge(lit, cwd, OpRead)
		if abs == "" {
			continue
		}
		for _, c := range g.p.credentials {
			if c.match(abs, g.p.root) && d == Deny {
				g.a.reason(Deny, fmt.Sprintf("the command names %s, which holds credentials", lit))
			}
		}
		if !g.hidden {
			continue
		}
		if _, dw, why := g.p.Judge(lit, cwd, OpWrite); dw != Allow {
			g.a.reason(dw, fmt.Sprintf("%s reaches a program the guard cannot follow (xargs input, a child shell), which may write it: %s", lit, why))
		}
	}
}

func unescapeLit(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func unescapeDbl(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

const globMeta = "*?["

// claim records a path use and merges its decision.
func (g *guard) claim(w word, op Op, st *gstate, what string) {
	if w.tree {
		w.tree = false
		g.claimTree(w, op, st, what, false)
		return
	}
	c := Claim{Op: op}
	if w.pipe || !w.dyn && isStream(w.lit) {
		c.Path, c.Abs = w.lit, w.lit
		g.a.Claims = append(g.a.Claims, c)
		return
	}
	if w.dyn || st.cwd == "" && !filepath.IsAbs(w.lit) && !strings.HasPrefix(w.lit, "~") {
		c.Dynamic = true
		c.Verdict = g.p.dynamicDecision(op)
		c.Why = fmt.Sprintf("the %s target %s is only known at run time", what, w.show())
		if st.cwd == "" && !w.dyn {
			c.Why = fmt.Sprintf("%s is relative to a directory only known at run time", w.lit)
		}
		if op == OpRead && c.Verdict == Allow {
			c.Why = ""
		}
		if (w.unseen || g.unchecked > 0) && c.Verdict < Ask {
			c.Verdict = Ask
			c.Why = fmt.Sprintf("the %s target %s is only known inside a child process, where the guard cannot check it again", what, w.show())
		}
	} else {
		p := w.lit
		if i := strings.IndexAny(p, globMeta); i >= 0 {
			// Judge a glob by the directory it lists.
			p = p[:i]
			if j := strings.LastIndexByte(p, '/'); j >= 0 {
				p = p[:j+1]
			} else {
				p = "."
			}
		}
		if p == "" {
			p = "."
		}
		if p != w.lit {
			// A glob can name a credential store its directory part does not show
			// (~/.ss*/id_rsa): judge the stores it may match.
			g.globStores(w.lit, p, op, st)
		}
		c.Path = w.lit
		c.Abs, c.Verdict, c.Why = g.p.Judge(p, st.cwd, op)
		if c.Verdict != Allow {
			c.Why = fmt.Sprintf("%s %s: %s", op, w.lit, c.Why)
		}
	}
	g.a.Claims = append(g.a.Claims, c)
	g.a.reason(c.Verdict, c.Why)
}

// dynamicDecision is the verdict on a path known only at run time: the worst case,
// but capped at ask unless even a path inside the root would be denied (the run-time
// check still sees the real path).
func (p *Policy) dynamicDecision(op Op) Decision {
	if op == OpRead {
		return p.preset.ReadOutside
	}
	if p.preset.WriteInside == Deny {
		return Deny
	}
	if p.preset.WriteOutside == Allow {
		return Allow
	}
	return Ask
}

// isStream reports the exact names that stand for the process's own streams, not
// files. No prefix is special: /dev/fd/N and /proc/self/fd/N are judged (and
// refused, being magic links) like any other path, or "/dev/fd/../.." would reach
// any file.
func isStream(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty", "-":
		return true
	}
	return false
}

// callsItself reports whether a function's body calls the function (directly, by a
// literal name), the shape of a shell fork bomb.
func callsItself(fd *syntax.FuncDecl) bool {
	name := fd.Name.Value
	found := false
	syntax.Walk(fd.Body, func(n syntax.Node) bool {
		if found {
			return false
		}
		if ce, ok := n.(*syntax.CallExpr); ok && len(ce.Args) > 0 {
			if lit := ce.Args[0].Lit(); lit == name {
				found = true
				return false
			}
		}
		return true
	})
	return found
}
