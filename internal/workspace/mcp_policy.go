package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/event"
)

// MCP tools run in another process with that process's authority, so the path and
// command checks cannot see what they do: every call is decided here, by the preset
// and the user's mcp_rules, and never by what the server says about its own tools.

// MCPRule decides the calls of MCP tools (mcp_rules in the configuration). Tool is a
// glob (path.Match syntax: *, ?, [...]) over the namespaced name <server>__<tool>;
// Server: NAME is short for Tool: "NAME__*". The most specific (longest) matching
// pattern wins; equal lengths merge most-restrictive.
type MCPRule struct {
	Tool   string `yaml:"tool,omitempty" json:"tool,omitempty"`
	Server string `yaml:"server,omitempty" json:"server,omitempty"`
	// Sampling, a glob over server names, makes the rule decide the sampling requests
	// (sampling/createMessage) of those servers instead of tool calls.
	Sampling string `yaml:"sampling,omitempty" json:"sampling,omitempty"`
	Decision string `yaml:"decision" json:"decision"`
}

// pattern is the rule's glob over namespaced tool names.
func (r MCPRule) pattern() string {
	if r.Sampling != "" {
		return r.Sampling
	}
	if r.Tool != "" {
		return r.Tool
	}
	return r.Server + "__*"
}

type mcpRule struct {
	pattern  string
	decision Decision
	// sampling: the pattern is over server names and decides sampling requests.
	sampling bool
}

// ValidateMCPRules checks mcp_rules; the error names the rule and the fix.
func ValidateMCPRules(rules []MCPRule) error {
	_, err := compileMCPRules(rules)
	return err
}

func compileMCPRules(rules []MCPRule) ([]mcpRule, error) {
	out := make([]mcpRule, 0, len(rules))
	for i, r := range rules {
		where := fmt.Sprintf("mcp_rules[%d]", i)
		switch {
		case r.Sampling != "" && (r.Tool != "" || r.Server != ""):
			return nil, errs.Newf(errs.KindConfig, `write sampling rules on their own: {sampling: SERVER, decision: allow}`, "%s: sampling is set with tool or server", where)
		case r.Tool == "" && r.Server == "" && r.Sampling == "":
			return nil, errs.Newf(errs.KindConfig, `set tool: (a glob over <server>__<tool>, e.g. "github__get_*"), server: NAME or sampling: SERVER`, "%s: neither tool, server nor sampling is set", where)
		case r.Tool != "" && r.Server != "":
			return nil, errs.Newf(errs.KindConfig, `use tool: "NAME__*" for a whole server, or server: alone`, "%s: both tool and server are set", where)
		}
		d, err := ParseDecision(r.Decision)
		if err != nil {
			return nil, errs.Newf(errs.KindConfig, "use decision: allow, ask or deny", "%s: unknown decision %q", where, r.Decision)
		}
		p := r.pattern()
		if _, err := path.Match(p, ""); err != nil {
			return nil, errs.Newf(errs.KindConfig, `write a glob such as "github__*" or "fs__read_*"`, "%s: %q is not a valid pattern", where, p)
		}
		out = append(out, mcpRule{pattern: p, decision: d, sampling: r.Sampling != ""})
	}
	return out, nil
}

// MCPPolicy decides MCP tool calls for one workspace policy, with the session's
// "allow this tool for the session" grants. It is safe for concurrent use.
type MCPPolicy struct {
	preset string
	def    Decision
	rules  []mcpRule

	mu      sync.Mutex
	granted map[string]bool
}

// NewMCPPolicy compiles rules under the named preset. Defaults: readonly denies every
// MCP tool; coding and trusted ask (as Claude Code does): a server is code outside the
// policy's reach, so only the user's rules, not the preset, allow its tools.
func NewMCPPolicy(preset string, rules []MCPRule) (*MCPPolicy, error) {
	rs, err := compileMCPRules(rules)
	if err != nil {
		return nil, err
	}
	if preset == "" {
		preset = PresetCoding
	}
	def := Ask
	switch preset {
	case PresetReadonly:
		def = Deny
	case PresetCoding, PresetTrusted:
	default:
		return nil, errs.Newf(errs.KindConfig, "use readonly, coding or trusted", "unknown policy %q", preset)
	}
	return &MCPPolicy{preset: preset, def: def, rules: rs, granted: map[string]bool{}}, nil
}

// Preset is the name of the policy the decisions follow.
func (p *MCPPolicy) Preset() string { return p.preset }

// MCPPolicy returns a decision API for MCP tools under this workspace's policy.
// Build it once per workspace so session grants last as long as the workspace.
func (w *Workspace) MCPPolicy(rules []MCPRule) (*MCPPolicy, error) {
	return NewMCPPolicy(w.policy.name, rules)
}

// MCPCall is one call of an MCP tool.
type MCPCall struct {
	Server string
	// Tool is the server's own name of the tool; Name the namespaced one the model sees.
	Tool string
	Name string
	Args json.RawMessage
	// ReadOnlyHint is the server's claim that the tool changes nothing: shown to the
	// person, never trusted.
	ReadOnlyHint bool
}

// Decide returns the decision for a tool and why. Rules match the namespaced name
// (and <server>__<tool> with the server's own tool name, when they differ).
func (p *MCPPolicy) Decide(server, tool, name string) (Decision, string) {
	names := []string{name}
	if alt := server + "__" + tool; tool != "" && alt != name {
		names = append(names, alt)
	}
	return p.decide(false, func(pattern string) bool {
		for _, n := range names {
			if ok, _ := path.Match(pattern, n); ok {
				return true
			}
		}
		return false
	}, "the "+p.preset+" policy's default for MCP tools", "mcp_rules", name)
}

// decide applies the tool rules (or, with sampling, the sampling rules) whose
// pattern matches: the longest pattern wins, the stricter decision on a tie, else
// the preset's default (defWhy). A session grant under grantKey turns anything but
// a deny into an allow.
func (p *MCPPolicy) decide(sampling bool, matches func(pattern string) bool, defWhy, label, grantKey string) (Decision, string) {
	best, bestLen, why := p.def, -1, defWhy
	for _, r := range p.rules {
		if r.sampling != sampling || !matches(r.pattern) {
			continue
		}
		if l := len(r.pattern); l > bestLen || (l == bestLen && r.decision > best) {
			best, bestLen = r.decision, l
			why = fmt.Sprintf("%s %q: %s", label, r.pattern, r.decision)
		}
	}
	if best != Deny {
		p.mu.Lock()
		g := p.granted[grantKey]
		p.mu.Unlock()
		if g {
			return Allow, "allowed for this session"
		}
	}
	return best, why
}

// DeniesServer reports whether every tool of server is denied whatever its name (the
// preset denies and no rule could match one of its tools with anything else), so the
// server need not start at all.
func (p *MCPPolicy) DeniesServer(server string) bool {
	if p.def != Deny {
		return false
	}
	for _, r := range p.rules {
		if r.decision == Deny || r.sampling {
			continue
		}
		// A pattern that can match some name of this server: its prefix up to the
		// first wildcard must agree with "<server>__".
		lit := r.pattern
		if i := strings.IndexAny(lit, "*?[\\"); i >= 0 {
			lit = lit[:i]
		}
		prefix := server + "__"
		if strings.HasPrefix(prefix, lit) || strings.HasPrefix(lit, prefix) {
			return false
		}
	}
	return true
}

// maxApprovalArgs bounds the arguments shown in an approval.
const maxApprovalArgs = 2000

// Approval is the tool approval predicate of an MCP tool: nil to run, an error to
// refuse (deny), or the approval to ask for. The approval names the server, the tool
// and the arguments; "allow for this session" allows this one tool (Grant).
func (p *MCPPolicy) Approval(c MCPCall) (*event.Approval, error) {
	d, why := p.Decide(c.Server, c.Tool, c.Name)
	switch d {
	case Allow:
		return nil, nil
	case Deny:
		hint := "An mcp_rules entry in the user's config decides this."
		if p.def == Deny {
			hint = "The " + p.preset + " policy runs no MCP tools unless an mcp_rules entry allows them; the user can switch with --policy coding."
		}
		return nil, fmt.Errorf("MCP tool %s of server %s is not allowed (%s). %s", c.Tool, c.Server, why, hint)
	}
	args := strings.TrimSpace(string(c.Args))
	if args == "" {
		args = "{}"
	}
	if len(args) > maxApprovalArgs {
		cut := maxApprovalArgs
		for cut > 0 && !utf8.RuneStart(args[cut]) {
			cut--
		}
		args = args[:cut] + "…"
	}
	sum := fmt.Sprintf("MCP server %s, tool %s, arguments %s", c.Server, c.Tool, args)
	if c.ReadOnlyHint {
		sum += " (the server says this tool only reads; not verified)"
	}
	return &event.Approval{Kind: "mcp", Summary: sum, Rules: []string{"mcp:" + c.Name}}, nil
}

// Grant stores "allow this tool for the session" from an approval Approval built.
func (p *MCPPolicy) Grant(a *event.Approval) {
	if a == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range a.Rules {
		if name, ok := strings.CutPrefix(r, "mcp:"); ok && name != "" {
			p.granted[name] = true
		}
		if server, ok := strings.CutPrefix(r, samplingGrant); ok && server != "" {
			p.granted[samplingGrant+server] = true
		}
	}
}

// MinimalEnv is the environment MCP servers and hooks start with: the variables
// commands get by default (PATH, HOME, USER, LOGNAME, LANG, LANGUAGE, LC_*, TERM,
// TMPDIR, SHELL, TZ), never workspace.inherit_env or provider keys, then extra
// ("NAME=value", later wins) on top.
func MinimalEnv(extra ...string) []string {
	m := keptEnv()
	if _, ok := m["PATH"]; !ok {
		m["PATH"] = "/usr/local/bin:/usr/bin:/bin"
	}
	for _, kv := range extra {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			m[k] = v
		}
	}
	list := make([]string, 0, len(m))
	for k, v := range m {
		list = append(list, k+"="+v)
	}
	sort.Strings(list)
	return list
}

// Command prepares (does not start) argv through the workspace's shell executor, so
// hooks run like commands: in the Landlock sandbox when it is on, writing only where
// the policy lets commands write. env is the process's whole environment.
func (w *Workspace) Command(ctx context.Context, argv []string, dir string, env []string) (*exec.Cmd, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("empty command")
	}
	p, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, err
	}
	if dir == "" {
		dir = w.policy.root
	}
	if sb, ok := w.executor.(*SandboxExecutor); ok {
		if err := sb.ready(); err != nil {
			return nil, err
		}
	}
	return w.executor.Command(ctx, ExecRequest{Path: p, Args: argv, Dir: dir, Env: env})
}
