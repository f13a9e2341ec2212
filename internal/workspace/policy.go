package workspace

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/lovia-dev/lovia/internal/errs"
)

// Decision is the three-valued verdict of the policy. Larger is more restrictive, so
// merging decisions is max().
type Decision int

const (
	Allow Decision = iota
	Ask
	Deny
)

func (d Decision) String() string {
	switch d {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	}
	return fmt.Sprintf("Decision(%d)", int(d))
}

// ParseDecision accepts "allow", "ask" or "deny".
func ParseDecision(s string) (Decision, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "allow":
		return Allow, nil
	case "ask":
		return Ask, nil
	case "deny":
		return Deny, nil
	}
	return Deny, errs.Newf(errs.KindConfig, "use one of allow, ask, deny", "unknown decision %q", s)
}

// MarshalText / UnmarshalText let Decision appear in YAML and JSON as a word.
func (d Decision) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

func (d *Decision) UnmarshalText(b []byte) error {
	v, err := ParseDecision(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// phrase is the verdict as a sentence predicate ("is not allowed").
func (d Decision) phrase() string {
	switch d {
	case Allow:
		return "is allowed"
	case Ask:
		return "needs the user's approval"
	}
	return "is not allowed"
}

func (d Decision) phrasePlural() string {
	switch d {
	case Allow:
		return "are allowed"
	case Ask:
		return "need the user's approval"
	}
	return "are not allowed"
}

func most(a, b Decision) Decision {
	if a > b {
		return a
	}
	return b
}

// Op is what a path is used for.
type Op int

const (
	OpRead Op = iota
	OpWrite
)

func (o Op) String() string {
	if o == OpWrite {
		return "write"
	}
	return "read"
}

// Preset names (SPEC §7).
const (
	PresetReadonly = "readonly"
	PresetCoding   = "coding"
	PresetTrusted  = "trusted"
)

// preset is one row of the SPEC §7 table.
type preset struct {
	WriteInside  Decision
	ReadOutside  Decision
	WriteOutside Decision
	Shell        Decision // the default for a command no rule matches
	// TempWritable treats the system temp dir like a writable grant.
	TempWritable bool
}

var presets = map[string]preset{
	PresetReadonly: {WriteInside: Deny, ReadOutside: Deny, WriteOutside: Deny, Shell: Deny},
	PresetCoding:   {WriteInside: Allow, ReadOutside: Ask, WriteOutside: Deny, Shell: Ask, TempWritable: true},
	PresetTrusted:  {WriteInside: Allow, ReadOutside: Allow, WriteOutside: Ask, Shell: Allow, TempWritable: true},
}

// credentialStores are never read or written by the agent's own operations unless a
// path rule allows it. (Programs such as git or ssh still use them internally.) The
// other coding agents whose configuration lovia reads keep provider keys too: Codex
// an OpenAI API key in ~/.codex/auth.json, Claude Code its OAuth tokens in
// ~/.claude/.credentials.json.
var credentialStores = []string{"~/.ssh", "~/.aws", "~/.gnupg", "~/.netrc", "~/.git-credentials",
	"~/.config/gh", "~/.config/gcloud", "~/.azure", "~/.docker/config.json", "~/.kube/config",
	"~/.pypirc", "~/.npmrc", "~/.password-store", "~/.config/lovia/credentials*",
	"~/.codex/auth.json", "~/.claude/.credentials.json"}

// PathRule is one configured rule over paths. Pattern forms:
//   - absolute ("/etc/**") or home-relative ("~/.ssh/**"): matched against the resolved path;
//   - containing a "/" ("secrets/*.pem", "/build" is absolute so use "build/"): relative to the root;
//   - bare ("*.key", ".env*"): gitignore-style, matches the base name at any depth.
//
// Read and Write are the decisions for that use; empty means "not decided by this rule".
type PathRule struct {
	Pattern string `yaml:"pattern" json:"pattern"`
	Read    string `yaml:"read,omitempty" json:"read,omitempty"`
	Write   string `yaml:"write,omitempty" json:"write,omitempty"`
}

// CommandRule decides commands by word-boundary prefix: "git push" matches
// "git push origin" but not "git pushx". The longest matching prefix wins; equal
// lengths merge most-restrictive.
type CommandRule struct {
	Prefix   string `yaml:"prefix" json:"prefix"`
	Decision string `yaml:"decision" json:"decision"`
}

// Config is the workspace section of lovia's configuration (`workspace:` in
// .lovia/config.yaml or ~/.config/lovia/config.yaml). Zero values mean defaults.
type Config struct {
	// Root is the workspace root (default: the current directory). Not read from YAML:
	// the front end sets it from -C/--cwd.
	Root string `yaml:"-" json:"-"`
	// Policy is the preset: readonly, coding (default) or trusted.
	Policy string `yaml:"policy,omitempty" json:"policy,omitempty"`
	// Sandbox is off, auto (default: Landlock when the kernel has it) or required.
	Sandbox string `yaml:"sandbox,omitempty" json:"sandbox,omitempty"`
	// Readable are extra paths (with everything below them) readable without asking.
	Readable []string `yaml:"readable,omitempty" json:"readable,omitempty"`
	// Writable are extra paths writable (and readable) without asking; the sandbox
	// lets child processes write there too.
	Writable []string `yaml:"writable,omitempty" json:"writable,omitempty"`
	// DeniedPaths are never read or written (patterns as in PathRule).
	DeniedPaths []string `yaml:"denied_paths,omitempty" json:"denied_paths,omitempty"`
	// PathRules override the preset for matching paths.
	PathRules []PathRule `yaml:"path_rules,omitempty" json:"path_rules,omitempty"`
	// CommandRules decide commands by prefix (before path claims are merged in).
	CommandRules []CommandRule `yaml:"command_rules,omitempty" json:"command_rules,omitempty"`
	// InheritEnv passes lovia's whole environment to commands (default: PATH, HOME,
	// locale and TERM only, so secrets in the environment stay out of reach).
	InheritEnv bool `yaml:"inherit_env,omitempty" json:"inherit_env,omitempty"`
	// Env adds variables to the commands' environment.
	Env map[string]string `yaml:"env,omitempty" json:"env,omitempty"`
	// Network decides whether sandboxed commands reach the network: deny, ask (commands
	// known to need it ask, and run with the network once approved; others run
	// without) or allow. Default: ask under coding, allow under trusted, deny under
	// readonly.
	Network string `yaml:"network,omitempty" json:"network,omitempty"`
	// ShellTimeout is the default timeout of the shell tool in seconds (default 300).
	ShellTimeout int `yaml:"shell_timeout,omitempty" json:"shell_timeout,omitempty"`
	// StrictSandbox keeps tool caches (~/.cache, the Go module cache, ~/.npm, ~/.cargo
	// registry, ...) read-only in the sandbox; by default builds may write them.
	StrictSandbox bool `yaml:"strict_sandbox,omitempty" json:"strict_sandbox,omitempty"`
	// SandboxHelper is the argv prefix that re-executes lovia as the sandbox helper
	// (default: [os.Executable(), "__sandbox-exec"]). Not read from YAML.
	SandboxHelper []string `yaml:"-" json:"-"`
	// LoviaDirs are more directories of lovia's own state (the data directory the
	// front end chose, e.g. with --db's directory); lovia's default user config and
	// data directories are always included. Not read from YAML.
	LoviaDirs []string `yaml:"-" json:"-"`
	// KernelCheck says whether the kernel lets this user create the sandbox's
	// namespaces (default: sandbox.ProbeKernel); tests replace it. Not read from YAML.
	KernelCheck func() error `yaml:"-" json:"-"`
	// SandboxStart, when set, holds back the start of the sandbox helper (auto mode)
	// until it is closed — a front end closes it once the first model request is on
	// its way, so the helper's start-up does not compete with it for the CPU — or
	// until the first command needs it. Nil: the helper starts at once. Not read from
	// YAML.
	SandboxStart <-chan struct{} `yaml:"-" json:"-"`
}

// Policy is a compiled Config plus the session's "allow for this session" rules.
// It is safe for concurrent use.
type Policy struct {
	name   string
	preset preset
	root   string // resolved, absolute
	home   string
	tmp    string // resolved temp dir ("" when not writable by default)
	// network is the workspace.network mode (guard_net.go).
	network string
	// win: Windows path semantics (pathsem.go); nil on Unix.
	win *winPaths

	credentials []pathPattern // built-in: credential stores (path_rules may override)
	// own are lovia's own state outside the root (user config, data dir: trust store,
	// database, global notes): never written by the agent's tools or commands.
	own      []string
	readable []string // resolved absolute prefixes
	writable []string
	denied   []pathPattern
	rules    []compiledPathRule
	cmdRules []compiledCmdRule

	parsers sync.Pool // *syntax.Parser

	mu              sync.RWMutex
	granted         []compiledCmdRule // session grants
	sessionReadable []string
	sessionWritable []string
}

type pathPattern struct {
	raw     string
	kind    int // 0 absolute, 1 root-relative, 2 bare
	pat     string
	literal bool // no glob characters: a prefix test suffices
	win     bool // Windows path semantics: pat and the paths matched are canonical
	// lead is a prefix every path pat matches has (globLead): the walk's quick
	// test rejects most patterns with it without running the matcher.
	lead string
}

type compiledPathRule struct {
	pathPattern
	read, write *Decision
}

type compiledCmdRule struct {
	words    []string
	decision Decision
	source   string
}

// NewPolicy compiles cfg for the root (already resolved by the caller or resolved here).
func NewPolicy(cfg Config) (*Policy, error) {
	name := cfg.Policy
	if name == "" {
		name = PresetCoding
	}
	pr, ok := presets[name]
	if !ok {
		return nil, errs.Newf(errs.KindConfig, "set policy to readonly, coding or trusted (--policy)", "unknown workspace policy %q", cfg.Policy)
	}
	home, _ := userHome()
	root := cfg.Root
	if root == "" {
		root = "."
	}
	root, err := filepath.Abs(expandHome(root, home))
	if err != nil {
		return nil, fmt.Errorf("workspace root: %w", err)
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	} else {
		return nil, errs.Wrap(errs.KindConfig, err, "workspace root "+root+" is not accessible", "run lovia inside an existing directory or pass -C DIR")
	}
	p := &Policy{name: name, preset: pr, root: root, home: home, network: defaultNetwork(name)}
	switch cfg.Network {
	case "":
	case NetworkDeny, NetworkAsk, NetworkAllow:
		p.network = cfg.Network
	default:
		return nil, errs.Newf(errs.KindConfig, "set workspace.network to deny, ask or allow", "unknown workspace.network %q", cfg.Network)
	}
	if pr.TempWritable {
		p.tmp = resolveLoose(tempDir())
	}
	for _, r := range cfg.Readable {
		p.readable = append(p.readable, p.resolveConfigPath(r))
	}
	for _, w := range cfg.Writable {
		p.writable = append(p.writable, p.resolveConfigPath(w))
	}
	p.own = loviaDirs(home, cfg.LoviaDirs)
	stores := credentialStores
	for _, d := range p.own {
		// lovia's own credential store: the OAuth tokens of remote MCP servers
		// ($LOVIA_HOME/mcp-auth/NAME.json), which never reach a transcript
		// (docs/mcp.md) — read_file under trusted would put them there.
		stores = append(stores[:len(stores):len(stores)], filepath.Join(d, MCPAuthDir))
	}
	for _, d := range stores {
		pp, err := compilePattern(d, home)
		if err != nil {
			return nil, err
		}
		p.credentials = append(p.credentials, pp)
	}
	for _, d := range cfg.DeniedPaths {
		pp, err := compilePattern(d, home)
		if err != nil {
			return nil, err
		}
		p.denied = append(p.denied, pp)
	}
	for i, r := range cfg.PathRules {
		pp, err := compilePattern(r.Pattern, home)
		if err != nil {
			return nil, err
		}
		cr := compiledPathRule{pathPattern: pp}
		if r.Read != "" {
			d, err := ParseDecision(r.Read)
			if err != nil {
				return nil, fmt.Errorf("path_rules[%d].read: %w", i, err)
			}
			cr.read = &d
		}
		if r.Write != "" {
			d, err := ParseDecision(r.Write)
			if err != nil {
				return nil, fmt.Errorf("path_rules[%d].write: %w", i, err)
			}
			cr.write = &d
		}
		p.rules = append(p.rules, cr)
	}
	for i, r := range cfg.CommandRules {
		d, err := ParseDecision(r.Decision)
		if err != nil {
			return nil, fmt.Errorf("command_rules[%d] (%q): %w", i, r.Prefix, err)
		}
		words := strings.Fields(r.Prefix)
		if len(words) == 0 {
			return nil, errs.Newf(errs.KindConfig, "give each command rule a prefix such as \"git push\"", "command_rules[%d] has an empty prefix", i)
		}
		p.cmdRules = append(p.cmdRules, compiledCmdRule{words: words, decision: d, source: "config"})
	}
	if runtime.GOOS == "windows" {
		p.useWindowsPaths(hostWinPaths())
	}
	return p, nil
}

// loviaDirs are lovia's own directories outside any workspace, resolved: the user
// config directory ($XDG_CONFIG_HOME/lovia or ~/.config/lovia) and the data directory
// ($LOVIA_HOME, else $XDG_DATA_HOME/lovia or ~/.local/share/lovia), as the config
// package finds them, plus extra (the front end's choices).
func loviaDirs(home string, extra []string) []string {
	cfgBase := os.Getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(cfgBase) {
		cfgBase = filepath.Join(home, ".config")
	}
	dirs := []string{filepath.Join(cfgBase, "lovia"), filepath.Join(home, ".config", "lovia"), filepath.Join(home, ".local", "share", "lovia")}
	if d := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		dirs = append(dirs, filepath.Join(d, "lovia"))
	}
	if d := os.Getenv("LOVIA_HOME"); d != "" {
		if a, err := filepath.Abs(d); err == nil {
			dirs = append(dirs, a)
		}
	}
	dirs = append(dirs, extra...)
	var out []string
	for _, d := range dirs {
		if filepath.IsAbs(d) {
			out = append(out, resolveLoose(filepath.Clean(d)))
		}
	}
	return out
}

// ownState reports the directory (or file) of lovia's own state that holds abs. A
// root inside one is the user working on it deliberately: it is not protected then.
func (p *Policy) ownState(abs string) (string, bool) {
	if p.win != nil {
		abs = winLoose(abs)
	}
	for _, d := range p.own {
		if under(d, abs) && !under(d, p.root) {
			return d, true
		}
	}
	return "", false
}

// Name returns the preset name.
func (p *Policy) Name() string { return p.name }

// Root returns the resolved workspace root.
func (p *Policy) Root() string { return p.root }

func (p *Policy) resolveConfigPath(s string) string {
	s = expandHome(s, p.home)
	if !filepath.IsAbs(s) {
		s = filepath.Join(p.root, s)
	}
	return resolveLoose(s)
}

func compilePattern(raw, home string) (pathPattern, error) {
	s := strings.TrimSpace(raw)
	pp := pathPattern{raw: raw}
	switch {
	case s == "":
		return pp, errs.New(errs.KindConfig, "empty path pattern", "remove the empty entry or give a pattern such as .env*")
	case strings.HasPrefix(s, "~"):
		pp.kind, pp.pat = 0, filepath.Clean(expandHome(s, home))
	case filepath.IsAbs(s):
		pp.kind, pp.pat = 0, filepath.Clean(s)
	case strings.Contains(strings.TrimSuffix(s, "/"), "/"):
		pp.kind, pp.pat = 1, strings.TrimPrefix(filepath.ToSlash(filepath.Clean(s)), "./")
	default:
		pp.kind, pp.pat = 2, strings.TrimSuffix(s, "/")
	}
	if !doublestar.ValidatePattern(pp.pat) {
		return pp, errs.Newf(errs.KindConfig, "check the brackets and braces of the glob", "invalid path pattern %q", raw)
	}
	pp.literal = !strings.ContainsAny(pp.pat, "*?[{\\")
	pp.lead = globLead(pp.pat)
	return pp, nil
}

// match reports whether the resolved absolute path abs (or one of its parent
// directories, so a rule on a directory covers everything below it) matches.
func (pp pathPattern) match(abs, root string) bool {
	if pp.win {
		// Callers outside DecidePath pass paths as the system spells them.
		abs, root = winLoose(abs), winLoose(root)
	}
	switch pp.kind {
	case 0:
		if pp.literal {
			return under(pp.pat, abs)
		}
		// A parent lacks the lead when abs does (globLead).
		if !pp.win && !strings.HasPrefix(abs, pp.lead) {
			return false
		}
		for q := abs; ; q = pp.parentDir(q) {
			if doublestar.MatchUnvalidated(pp.pat, q) {
				return true
			}
			if q == "/" || q == "." || pp.parentDir(q) == q {
				return false
			}
		}
	case 1:
		rel, ok := relInside(root, abs)
		if !ok || !pp.win && !strings.HasPrefix(rel, pp.lead) {
			return false
		}
		for q := rel; q != "." && q != ""; q = relDir(q) {
			if doublestar.MatchUnvalidated(pp.pat, filepath.ToSlash(q)) {
				return true
			}
		}
		return false
	default:
		// gitignore-style: any component of the path (so .env* also covers files in a
		// directory named .envrc.d) — but only components below "/".
		for q := abs; q != "/" && q != "." && pp.parentDir(q) != q; q = pp.parentDir(q) {
			if b := path.Base(q); (pp.win || strings.HasPrefix(b, pp.lead)) && doublestar.MatchUnvalidated(pp.pat, b) {
				return true
			}
		}
		return false
	}
}

// relInside returns abs relative to root when abs is root or below it.
func relInside(root, abs string) (string, bool) {
	if abs == root {
		return ".", true
	}
	// root+"/" is a prefix of abs, tested without building it (walks call this
	// for every entry).
	n := len(root)
	if !strings.HasSuffix(root, "/") {
		if len(abs) <= n || abs[n] != '/' {
			return "", false
		}
		n++
	}
	if strings.HasPrefix(abs, root) {
		return abs[n:], true
	}
	return "", false
}

func under(dir, abs string) bool {
	_, ok := relInside(dir, abs)
	return ok
}

// Inside reports whether the resolved path abs is in the workspace root.
func (p *Policy) Inside(abs string) bool { return under(p.root, abs) }

// specialWritable are device files every program may write. Only these exact names
// are special: no prefix (/dev/fd/, /proc/self/fd/) is, since "/dev/fd/../.." is a
// path like any other.
var specialWritable = map[string]bool{"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true, "/dev/tty": true}

// protectedWrite reports a root-relative path whose content runs code later,
// outside any sandbox, or changes what lovia itself trusts: a git directory itself
// (or a .git file, which points git at another one), its config (also
// config.worktree, and those of submodules and linked worktrees below it) and its
// hooks — core.fsmonitor, core.pager, aliases and hooks run on the user's next git
// command — in the root or any nested repository; and any .lovia directory.
// Normal git work (objects, index, refs, HEAD, logs) is not protected.
func protectedWrite(rel string) (string, bool) {
	const gitWhy = "git runs hooks and configured programs (core.fsmonitor, core.pager, aliases) from it on the next git command, outside any sandbox"
	// Case-folded: on macOS (and Windows) .GIT/hooks is .git/hooks, and on a
	// case-sensitive file system nobody needs to write .GIT/config.
	parts := strings.Split(strings.ToLower(rel), "/")
	for i, c := range parts {
		if c == ".lovia" {
			return "it holds lovia's own configuration, which decides what lovia trusts on its next run", true
		}
		if c != ".git" {
			continue
		}
		tail := parts[i+1:]
		if len(tail) == 0 {
			return gitWhy, true
		}
		// commondir names the directory git takes its config (and hooks) from: a
		// commondir pointing at a repository directory with a config of the agent's
		// own runs its core.fsmonitor on the user's next git status.
		if last := tail[len(tail)-1]; last == "config" || last == "config.worktree" || last == "commondir" {
			return gitWhy, true
		}
		for _, t := range tail {
			if t == "hooks" {
				return gitWhy, true
			}
		}
	}
	return "", false
}

// DecidePath judges a resolved absolute path for op, returning the decision and why.
// Order: denied_paths (deny) > path_rules (override; most restrictive among matches) >
// grants (readable/writable, temp dir) > preset (reads inside the root always allow).
func (p *Policy) DecidePath(abs string, op Op) (Decision, string) {
	abs, err := p.judged(abs)
	if err != nil {
		return Deny, err.Error()
	}
	for _, d := range p.denied {
		if d.match(abs, p.root) {
			return Deny, fmt.Sprintf("%s matches denied_paths %q", abs, d.raw)
		}
	}
	if op == OpWrite {
		if d, ok := p.ownState(abs); ok {
			// Before path_rules and grants, under every policy: these files decide
			// what lovia trusts (trust.json, the user's config with its hooks and MCP
			// servers, the global notes) and are read outside any sandbox.
			return Deny, fmt.Sprintf("%s is lovia's own state (%s): its configuration, trust store and database decide what later runs trust, so neither tools nor commands write it", abs, d)
		}
		if rel, ok := relInside(p.root, abs); ok {
			if why, ok := protectedWrite(rel); ok {
				// Before path_rules and grants: a rule in a repository's own config must not
				// open them, and under coding nothing does.
				d := Deny
				if p.name == PresetTrusted {
					d = Ask
				}
				return d, fmt.Sprintf("writing %s %s under the %s policy: %s", rel, d.phrase(), p.name, why)
			}
		}
	}
	var ruled *Decision
	var why string
	for _, r := range p.rules {
		dp := r.read
		if op == OpWrite {
			dp = r.write
		}
		if dp == nil || !r.match(abs, p.root) {
			continue
		}
		if ruled == nil || *dp > *ruled {
			v := *dp
			ruled = &v
			why = fmt.Sprintf("path rule %q says %s for %ss", r.raw, v, op)
		}
	}
	if ruled != nil {
		return *ruled, why
	}
	for _, c := range p.credentials {
		if c.match(abs, p.root) {
			return Deny, fmt.Sprintf("%s holds credentials (%s); a workspace.path_rules entry can allow it", abs, c.raw)
		}
	}
	if op == OpWrite && specialWritable[abs] {
		return Allow, "standard stream"
	}
	for _, w := range p.writable {
		if under(w, abs) {
			return Allow, "writable grant " + w
		}
	}
	p.mu.RLock()
	for _, g := range p.sessionWritable {
		if g == abs {
			p.mu.RUnlock()
			return Allow, "allowed for this session"
		}
	}
	if op == OpRead {
		for _, g := range p.sessionReadable {
			if g == abs {
				p.mu.RUnlock()
				return Allow, "allowed for this session"
			}
		}
	}
	p.mu.RUnlock()
	if p.tmp != "" && under(p.tmp, abs) {
		return Allow, "temp dir"
	}
	inside := p.Inside(abs)
	if op == OpRead {
		if inside {
			return Allow, "inside the workspace"
		}
		for _, r := range p.readable {
			if under(r, abs) {
				return Allow, "readable grant " + r
			}
		}
		return p.preset.ReadOutside, fmt.Sprintf("reading outside the workspace (%s) %s under the %s policy", abs, p.preset.ReadOutside.phrase(), p.name)
	}
	if inside {
		return p.preset.WriteInside, fmt.Sprintf("writing inside the workspace %s under the %s policy", p.preset.WriteInside.phrase(), p.name)
	}
	return p.preset.WriteOutside, fmt.Sprintf("writing outside the workspace (%s) %s under the %s policy", abs, p.preset.WriteOutside.phrase(), p.name)
}

// DecideArgv judges a simple command's words by the command rules (config and session
// grants; the longest word-boundary prefix wins, ties most restrictive) or the
// preset's shell default.
func (p *Policy) DecideArgv(argv []string) (Decision, string) {
	d, why, _ := p.decideArgv(argv)
	return d, why
}

// decideArgv also reports whether a rule matched (false: the preset's default).
func (p *Policy) decideArgv(argv []string) (Decision, string, bool) {
	if len(argv) == 0 {
		return Allow, "", false
	}
	best, bestLen, why := p.preset.Shell, 0, fmt.Sprintf("commands %s by default under the %s policy", p.preset.Shell.phrasePlural(), p.name)
	if p.name == PresetReadonly {
		why = "the readonly policy runs no commands"
	}
	consider := func(rules []compiledCmdRule) {
		for _, r := range rules {
			if len(r.words) > len(argv) || len(r.words) < bestLen {
				continue
			}
			ok := r.matches(argv)
			if !ok {
				continue
			}
			if len(r.words) > bestLen || r.decision > best {
				best, bestLen = r.decision, len(r.words)
				why = fmt.Sprintf("%s rule %q says %s", r.source, strings.Join(r.words, " "), r.decision)
			}
		}
	}
	consider(p.cmdRules)
	p.mu.RLock()
	consider(p.granted)
	p.mu.RUnlock()
	if p.name == PresetReadonly && best != Deny {
		// readonly runs no shell at all: not even a configured rule loosens it.
		return Deny, "the readonly policy runs no commands", bestLen > 0
	}
	return best, why, bestLen > 0
}

// Grant stores "allow for this session" prefix rules (in memory only).
func (p *Policy) Grant(prefixes []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pr := range prefixes {
		words := strings.Fields(pr)
		if len(words) == 0 {
			continue
		}
		p.granted = append(p.granted, compiledCmdRule{words: words, decision: Allow, source: "session"})
	}
}

// Grants returns the session's prefix rules, sorted.
func (p *Policy) Grants() []string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	var out []string
	for _, g := range p.granted {
		out = append(out, strings.Join(g.words, " "))
	}
	sort.Strings(out)
	return out
}

// WritableRoots are the directories child processes may write to under the sandbox.
func (p *Policy) WritableRoots() []string {
	var out []string
	if p.preset.WriteInside == Allow {
		out = append(out, p.root)
	}
	if p.tmp != "" {
		out = append(out, p.tmp)
	}
	return append(out, p.writable...)
}

// GrantPath allows op on exactly abs for the rest of the session ("allow for this
// session" on a path approval).
func (p *Policy) GrantPath(abs string, op Op) {
	if c, err := p.judged(abs); err == nil {
		abs = c
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if op == OpWrite {
		p.sessionWritable = append(p.sessionWritable, abs)
	} else {
		p.sessionReadable = append(p.sessionReadable, abs)
	}
}

// matches reports whether the rule's words are a prefix of argv (the program may be
// named by its path: /usr/bin/git matches "git"). The caller checks the length.
func (r compiledCmdRule) matches(argv []string) bool {
	if r.matchWords(argv) {
		return true
	}
	// A rule that denies or asks also matches git with its global options left out:
	// "git push" must not let "git -C . push" or "git --no-pager push" through. An
	// allow rule does not ("git status" must not allow "git -c core.fsmonitor=…
	// status", which the guard asks about).
	if r.decision != Allow {
		if sub := gitWithoutGlobals(argv); sub != nil && r.matchWords(sub) {
			return true
		}
		// Other programs' global options are not in a table: a restricting rule
		// "npm publish" also matches after leading words that are options or could
		// be their values ("npm --prefix dir publish", "cargo +nightly publish",
		// "kubectl --context prod delete"). Matching more only makes it stricter.
		if len(r.words) > 1 {
			value := false // the previous word was an option that may take this one
			for j := 1; j < len(argv); j++ {
				a := argv[j]
				switch {
				case a == "--":
					return false
				case len(a) > 1 && (a[0] == '-' || a[0] == '+'):
					value = !strings.Contains(a, "=")
				case value:
					value = false
				default:
					return false
				}
				if r.matchWords(append([]string{argv[0]}, argv[j+1:]...)) {
					return true
				}
			}
		}
	}
	return false
}

func (r compiledCmdRule) matchWords(argv []string) bool {
	if len(r.words) > len(argv) {
		return false
	}
	for i, w := range r.words {
		if argv[i] != w && !(i == 0 && filepath.Base(argv[0]) == w) {
			return false
		}
	}
	return true
}

// gitWithoutGlobals is a git command line without the global options before its
// subcommand (nil: not git, none to leave out, or options the guard does not know).
func gitWithoutGlobals(argv []string) []string {
	if len(argv) < 3 || filepath.Base(argv[0]) != "git" {
		return nil
	}
	ws := make([]word, len(argv))
	for i, a := range argv {
		ws[i] = word{lit: a}
	}
	p := gitGlobal().parse(ws)
	if p.unknown != "" || len(p.operands) == 0 || p.first <= 1 {
		return nil
	}
	return append([]string{argv[0]}, argv[p.first:]...)
}
