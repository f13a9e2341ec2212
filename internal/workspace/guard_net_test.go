package workspace

import (
	"strings"
	"testing"
)

func TestGuardNetwork(t *testing.T) {
	e := newTestEnv(t)
	cases := []struct {
		cmd string
		net bool
	}{
		{"curl -s https://example.com", true},
		{"wget https://example.com/x", true},
		{"timeout 10 curl https://example.com", true},
		{"bash -c 'curl https://example.com'", true},
		{"git fetch origin", true},
		{"git -C sub pull", true},
		{"git push origin main", true},
		{"git clone https://example.com/r.git", true},
		{"git ls-remote origin", true},
		{"go get example.com/m@v1", true},
		{"go mod download", true},
		{"go install example.com/cmd@latest", true},
		{"npm install", true},
		{"npm ci", true},
		{"pip install requests", true},
		{"cargo fetch", true},
		{"ssh host true", true},
		{"scp a host:b", true},
		{"rsync -a src/ host:dst/", true},
		{"nc 127.0.0.1 80", true},
		{"git status", false},
		{"git commit -m x", false},
		{"go test ./...", false},
		{"go install ./cmd/x", false},
		{"go mod tidy", false},
		{"npm test", false},
		{"rsync -a src/ dst/", false},
		{"ls", false},
	}
	for _, mode := range []string{NetworkAsk, NetworkDeny, NetworkAllow} {
		cfg := e.config(PresetCoding)
		cfg.Network = mode
		p, err := NewPolicy(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			a := p.AnalyzeCommand(c.cmd, "")
			if a.Network != c.net {
				t.Errorf("%s: %s: network %v, want %v", mode, c.cmd, a.Network, c.net)
			}
			says := strings.Contains(a.Explain(), "needs the network")
			switch {
			case !c.net && says:
				t.Errorf("%s: %s: %q", mode, c.cmd, a.Explain())
			case c.net && mode == NetworkDeny && (a.Decision != Deny || !says):
				t.Errorf("deny: %s: %s %q", c.cmd, a.Decision, a.Explain())
			case c.net && mode == NetworkAsk && (a.Decision < Ask || !says):
				t.Errorf("ask: %s: %s %q", c.cmd, a.Decision, a.Explain())
			case c.net && mode == NetworkAllow && says:
				t.Errorf("allow: %s: %q", c.cmd, a.Explain())
			}
		}
	}
	// A command rule that allows the command is the approval (asked once, then
	// "allow for this session" stores it).
	p := e.policy(t, PresetCoding)
	p.Grant([]string{"git fetch"})
	if a := p.AnalyzeCommand("git fetch origin", ""); a.Decision != Allow || !a.Network {
		t.Errorf("granted git fetch: %s %q", a.Decision, a.Explain())
	}
	// The presets' defaults.
	for preset, want := range map[string]string{PresetCoding: NetworkAsk, PresetTrusted: NetworkAllow, PresetReadonly: NetworkDeny} {
		if got := e.policy(t, preset).Network(); got != want {
			t.Errorf("%s: network %s, want %s", preset, got, want)
		}
	}
}
