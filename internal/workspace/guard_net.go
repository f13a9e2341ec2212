package workspace

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Network modes (workspace.network).
const (
	NetworkDeny  = "deny"
	NetworkAsk   = "ask"
	NetworkAllow = "allow"
)

// defaultNetwork is each preset's network mode when workspace.network is not set:
// readonly runs no commands anyway; coding asks for the commands known to need the
// network; trusted already runs any command without asking.
func defaultNetwork(preset string) string {
	switch preset {
	case PresetReadonly:
		return NetworkDeny
	case PresetTrusted:
		return NetworkAllow
	}
	return NetworkAsk
}

// netSubcommands are the subcommands that reach the network, per program; a program
// mapped to nil always does.
var netSubcommands = map[string][]string{
	"curl": nil, "wget": nil, "ssh": nil, "scp": nil, "sftp": nil, "nc": nil, "ncat": nil,
	"netcat": nil, "telnet": nil, "ftp": nil, "socat": nil, "aria2c": nil, "http": nil,
	"git":   {"fetch", "pull", "push", "clone", "ls-remote", "remote update", "submodule update"},
	"go":    {"get", "mod download", "install"},
	"npm":   {"install", "i", "ci", "publish", "update", "add"},
	"pnpm":  {"install", "i", "add", "update", "publish"},
	"yarn":  {"install", "add", "upgrade", "publish"},
	"bun":   {"install", "add", "update"},
	"pip":   {"install", "download"},
	"pip3":  {"install", "download"},
	"uv":    {"pip install", "sync", "add", "lock"},
	"cargo": {"fetch", "install", "update", "publish"},
	"gem":   {"install", "update"},
	"rsync": nil, // only with a host: argument, see needsNetwork
}

// needsNetwork reports whether argv (wrappers already removed) is a command known to
// reach the network, and names it ("git fetch") for the reason shown.
func needsNetwork(ws []word) (string, bool) {
	if len(ws) == 0 || ws[0].dyn {
		return "", false
	}
	name := filepath.Base(ws[0].lit)
	subs, ok := netSubcommands[name]
	if !ok {
		return "", false
	}
	if name == "rsync" {
		for _, w := range ws[1:] {
			if w.dyn || strings.Contains(w.lit, ":") && !strings.HasPrefix(w.lit, "-") && !strings.HasPrefix(w.lit, "/") && !strings.HasPrefix(w.lit, ".") {
				return "rsync", true
			}
		}
		return "", false
	}
	if subs == nil {
		return name, true
	}
	// The operands after the program's options: `git -C dir fetch`, `go mod download`.
	var args []string
	for _, w := range ws[1:] {
		if w.dyn {
			args = append(args, "\x00")
			continue
		}
		args = append(args, w.lit)
	}
	var ops []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			if name == "git" && (a == "-C" || a == "-c") {
				i++
			}
			continue
		}
		ops = append(ops, a)
	}
	for _, s := range subs {
		sw := strings.Fields(s)
		if len(ops) >= len(sw) && strings.Join(ops[:len(sw)], " ") == s {
			if name == "go" && s == "install" && !installsRemote(ops[1:]) {
				continue // go install ./cmd/x builds locally
			}
			return name + " " + s, true
		}
	}
	return "", false
}

// installsRemote: `go install pkg@version` downloads; `go install ./...` does not.
func installsRemote(ops []string) bool {
	for _, o := range ops {
		if strings.Contains(o, "@") {
			return true
		}
	}
	return false
}

// network is the guard's hook for commands that reach the network: it marks the
// analysis (the sandbox then runs the command outside its network namespace once it
// passed) and asks or denies per workspace.network. A command rule or session grant
// that allows the command at least as specifically as the network use ("git fetch",
// "curl"; not a broad "git") counts as the approval.
func (g *guard) network(ws []word, ruled bool, d Decision) {
	what, ok := needsNetwork(ws)
	if !ok {
		return
	}
	if ruled && d == Allow {
		argv := make([]string, len(ws))
		for i, w := range ws {
			argv[i] = w.lit
			if w.dyn {
				argv[i] = "\x00"
			}
		}
		ruled = g.p.allowRuleLen(argv) >= len(strings.Fields(what))
	}
	g.a.Network = true
	switch g.p.network {
	case NetworkAllow:
	case NetworkDeny:
		g.a.reason(Deny, fmt.Sprintf("%s needs the network, which workspace.network: deny forbids", what))
	default:
		if !(ruled && d == Allow) {
			g.a.reason(Ask, fmt.Sprintf("%s needs the network", what))
		}
	}
}

// Network returns the workspace.network mode in force.
func (p *Policy) Network() string { return p.network }

// NetworkMode is the workspace.network mode cfg puts in force (its preset's default
// when unset).
func NetworkMode(cfg Config) string {
	if cfg.Network != "" {
		return cfg.Network
	}
	name := cfg.Policy
	if name == "" {
		name = PresetCoding
	}
	return defaultNetwork(name)
}

// allowRuleLen is the length of the longest allow rule (configured or granted for
// the session) matching argv, 0 when none does.
func (p *Policy) allowRuleLen(argv []string) int {
	best := 0
	consider := func(rules []compiledCmdRule) {
		for _, r := range rules {
			if r.decision != Allow || len(r.words) > len(argv) || len(r.words) <= best {
				continue
			}
			ok := r.matches(argv)
			if ok {
				best = len(r.words)
			}
		}
	}
	consider(p.cmdRules)
	p.mu.RLock()
	consider(p.granted)
	p.mu.RUnlock()
	return best
}
