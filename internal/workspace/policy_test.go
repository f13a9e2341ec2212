package workspace

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestPathDecisions(t *testing.T) {
	e := newTestEnv(t)
	cases := []struct {
		path                      string
		op                        Op
		readonly, coding, trusted Decision
	}{
		{"src/main.go", OpRead, A, A, A},
		{"./src/../src/main.go", OpRead, A, A, A},
		{"/etc/passwd", OpRead, D, Q, A},
		{"~/.ssh/id_rsa", OpRead, D, D, D},
		{e.home + "/.ssh/id_rsa", OpRead, D, D, D},
		{".env", OpRead, D, D, D},
		{"src/.env.production", OpRead, D, D, D},
		{"link_out/passwd", OpRead, D, Q, A},
		{"link_out/../x", OpRead, D, Q, A}, // /etc/.. is /, not the root
		{"src/../../x", OpRead, D, Q, A},
		{"secrets/a.pem", OpRead, D, D, D},
		{"/usr/share/dict/words", OpRead, A, A, A},
		{"src/new.go", OpWrite, D, A, A},
		{"../out", OpWrite, D, D, Q},
		{"/etc/x", OpWrite, D, D, Q},
		{"link_out/x", OpWrite, D, D, Q},
		{"link_in/x.go", OpWrite, D, A, A},
		{"~/x", OpWrite, D, D, Q},
		{"~/cache/x", OpWrite, A, A, A},
		{e.tmp + "/x", OpWrite, D, A, A},
		{".env", OpWrite, D, D, D},
		{"dang", OpWrite, D, D, Q},
		{"/opt/shared/x", OpWrite, A, A, A},
		{"/dev/null", OpWrite, A, A, A},
		{"loop", OpRead, A, A, A},
		{"new/deep/dir/file", OpWrite, D, A, A},
		{"src/../../root/src/x", OpWrite, D, A, A},
		{"~/.aws/credentials", OpRead, D, D, D},
		{"~/.npmrc", OpRead, D, D, D},
		{"~/.config/gh/hosts.yml", OpWrite, D, D, D},
		{".git/config", OpWrite, D, D, Q},
		{".git/hooks/pre-commit", OpWrite, D, D, Q},
		{".git/config", OpRead, A, A, A},
		{".github/workflows/ci.yml", OpWrite, D, A, A},
	}
	for _, pol := range []string{PresetReadonly, PresetCoding, PresetTrusted} {
		p := e.policy(t, pol)
		for _, c := range cases {
			want := map[string]Decision{PresetReadonly: c.readonly, PresetCoding: c.coding, PresetTrusted: c.trusted}[pol]
			abs := p.Resolve(c.path, "")
			got, why := p.DecidePath(abs, c.op)
			if got != want {
				t.Errorf("%s: %s %s (-> %s) = %s, want %s (%s)", pol, c.op, c.path, abs, got, want, why)
			}
		}
	}
}

func TestResolve(t *testing.T) {
	e := newTestEnv(t)
	p := e.policy(t, PresetCoding)
	cases := map[string]string{
		"src/main.go":        e.root + "/src/main.go",
		"link_in/main.go":    e.root + "/src/main.go",
		"link_out/passwd":    "/etc/passwd",
		"link_out/../x":      "/x",
		"~/.ssh":             e.home + "/.ssh",
		"/a/../b":            "/b",
		"nope/../src":        e.root + "/src",
		"dang":               "/nonexistent/x",
		e.root + "/./src/..": e.root,
	}
	for in, want := range cases {
		if got := p.Resolve(in, ""); got != want {
			t.Errorf("Resolve(%q) = %q, want %q", in, got, want)
		}
	}
	if got := p.Resolve("main.go", filepath.Join(e.root, "src")); got != e.root+"/src/main.go" {
		t.Errorf("relative to cwd: %q", got)
	}
}

func TestCommandRulesWordBoundary(t *testing.T) {
	e := newTestEnv(t)
	p := e.policy(t, PresetCoding)
	cases := []struct {
		argv []string
		want Decision
	}{
		{[]string{"git", "push", "origin"}, Ask},
		{[]string{"git", "pushx"}, Allow},
		{[]string{"git", "push", "--force"}, Deny},
		{[]string{"/usr/bin/git", "push"}, Ask},
		{[]string{"gitx"}, Ask},
		{[]string{"go", "test"}, Allow},
		{[]string{"go", "testx"}, Ask},
	}
	for _, c := range cases {
		if got, why := p.DecideArgv(c.argv); got != c.want {
			t.Errorf("%v = %s, want %s (%s)", c.argv, got, c.want, why)
		}
	}
}

func TestSessionGrant(t *testing.T) {
	e := newTestEnv(t)
	p := e.policy(t, PresetCoding)
	a := p.AnalyzeCommand("make test && timeout 5 python3 -m pytest -x && cargo build", "")
	if a.Decision != Ask {
		t.Fatalf("decision %s", a.Decision)
	}
	rules := a.Rules()
	want := []string{"make test", "python3 -m pytest", "cargo build"}
	if strings.Join(rules, "|") != strings.Join(want, "|") {
		t.Fatalf("rules %q, want %q", rules, want)
	}
	for _, r := range rules {
		if strings.Contains(r, "&&") || strings.Contains(r, "-x") {
			t.Errorf("rule %q is not a prefix", r)
		}
	}
	p.Grant(rules)
	if a := p.AnalyzeCommand("make test && timeout 5 python3 -m pytest -x && cargo build", ""); a.Decision != Allow {
		t.Fatalf("after grant: %s (%s)", a.Decision, a.Explain())
	}
	// The grant is a command rule: path claims still apply.
	if a := p.AnalyzeCommand("cargo build > /etc/x", ""); a.Decision != Deny {
		t.Fatalf("grant loosened a path claim: %s", a.Decision)
	}
	if a := p.AnalyzeCommand("cargo publish", ""); a.Decision != Ask {
		t.Fatalf("grant leaked to another subcommand: %s", a.Decision)
	}
	if len(a.Subcommands) != 3 || a.Subcommands[1].Text != "timeout 5 python3 -m pytest -x" {
		t.Fatalf("subcommands %+v", a.Subcommands)
	}
}

func TestConfigErrors(t *testing.T) {
	e := newTestEnv(t)
	bad := []Config{
		{Root: e.root, Policy: "yolo"},
		{Root: e.root, CommandRules: []CommandRule{{Prefix: "git", Decision: "maybe"}}},
		{Root: e.root, CommandRules: []CommandRule{{Prefix: " ", Decision: "allow"}}},
		{Root: e.root, DeniedPaths: []string{"[unclosed"}},
		{Root: e.base + "/missing"},
	}
	for i, c := range bad {
		if _, err := NewPolicy(c); err == nil {
			t.Errorf("config %d accepted", i)
		}
	}
}

func TestCredentialStoresOverride(t *testing.T) {
	e := newTestEnv(t)
	cfg := Config{Root: e.root, Policy: PresetTrusted, PathRules: []PathRule{{Pattern: "~/.kube/config", Read: "allow"}}}
	p, err := NewPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if d, why := p.DecidePath(p.Resolve("~/.kube/config", ""), OpRead); d != Allow {
		t.Fatalf("path rule did not override: %s (%s)", d, why)
	}
	if d, _ := p.DecidePath(p.Resolve("~/.ssh/id_ed25519", ""), OpRead); d != Deny {
		t.Fatalf("ssh key readable under trusted: %s", d)
	}
	if h := p.AllowHint(OpRead, p.Resolve("~/.ssh/id_ed25519", "")); !strings.Contains(h, "path_rules") {
		t.Fatalf("hint %q", h)
	}
}

// lovia's own state outside the root (user config, data dir, a --db file) is never
// written under any policy, whatever the rules and grants say; a root inside it is the
// user working there.
func TestOwnStateNotWritable(t *testing.T) {
	e := newTestEnv(t)
	data := filepath.Join(e.base, "data")
	t.Setenv("LOVIA_HOME", data)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_DATA_HOME", "")
	for _, pol := range []string{PresetReadonly, PresetCoding, PresetTrusted} {
		cfg := e.config(pol)
		cfg.Writable = append(cfg.Writable, "~")
		cfg.PathRules = append(cfg.PathRules, PathRule{Pattern: "~/.config/**", Write: "allow"})
		cfg.LoviaDirs = []string{filepath.Join(e.base, "elsewhere.db")}
		p, err := NewPolicy(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{data + "/trust.json", data + "/lovia.db", e.home + "/.config/lovia/config.yaml",
			e.home + "/.config/lovia/MEMORY.md", e.home + "/.local/share/lovia/trust.json", e.base + "/elsewhere.db"} {
			if d, why := p.DecidePath(path, OpWrite); d != Deny {
				t.Errorf("%s: write %s = %s (%s), want deny", pol, path, d, why)
			}
		}
		if d, _ := p.DecidePath(e.home+"/.config/other/x", OpWrite); d != Allow {
			t.Errorf("%s: a neighbour of lovia's config is %s, want allow (the grant)", pol, d)
		}
	}
	cfg := e.config(PresetCoding)
	cfg.Root = e.home + "/.config/lovia"
	os.MkdirAll(cfg.Root, 0o755)
	p, err := NewPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if d, why := p.DecidePath(cfg.Root+"/presets/x.yaml", OpWrite); d != Allow {
		t.Errorf("working in ~/.config/lovia: write = %s (%s), want allow", d, why)
	}
}

// lovia's own token store ($LOVIA_HOME/mcp-auth: remote MCP servers' OAuth tokens) is
// a credential store: not read under any policy, listed for the sandbox to hide; its
// neighbours in the data directory stay readable under trusted.
func TestMCPAuthIsACredentialStore(t *testing.T) {
	e := newTestEnv(t)
	data := filepath.Join(e.base, "data")
	t.Setenv("LOVIA_HOME", data)
	t.Setenv("XDG_DATA_HOME", "")
	os.MkdirAll(data+"/mcp-auth", 0o700)
	os.WriteFile(data+"/mcp-auth/srv.json", []byte("{}"), 0o600)
	for _, pol := range []string{PresetReadonly, PresetCoding, PresetTrusted} {
		p, err := NewPolicy(e.config(pol))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{data + "/mcp-auth/srv.json", data + "/mcp-auth", e.home + "/.local/share/lovia/mcp-auth/x.json"} {
			if d, why := p.DecidePath(path, OpRead); d != Deny {
				t.Errorf("%s: read %s = %s (%s), want deny", pol, path, d, why)
			}
		}
		if !slices.Contains(p.hiddenStores(), data+"/mcp-auth") {
			t.Errorf("%s: hidden stores %v lack %s", pol, p.hiddenStores(), data+"/mcp-auth")
		}
	}
	p, _ := NewPolicy(e.config(PresetTrusted))
	if d, why := p.DecidePath(data+"/trust.json", OpRead); d != Allow {
		t.Errorf("trusted: read trust.json = %s (%s), want allow", d, why)
	}
}
