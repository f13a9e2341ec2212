package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/errs"
)

type fixture struct {
	home, xdg, repo, sub string
	env                  map[string]string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	base := t.TempDir()
	f := &fixture{home: filepath.Join(base, "home"), xdg: filepath.Join(base, "xdg"), repo: filepath.Join(base, "repo")}
	f.sub = filepath.Join(f.repo, "pkg", "deep")
	for _, d := range []string{f.home, f.xdg, filepath.Join(f.repo, ".git"), f.sub} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f.env = map[string]string{"HOME": f.home, "XDG_CONFIG_HOME": f.xdg}
	return f
}

func (f *fixture) write(t *testing.T, path, body string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func (f *fixture) load(t *testing.T, flags ...Override) (*Config, error) {
	t.Helper()
	return Load(Options{Cwd: f.sub, Getenv: func(k string) string { return f.env[k] }, Flags: flags})
}

// loadTrusted loads as with --trust.
func (f *fixture) loadTrusted(t *testing.T, flags ...Override) (*Config, error) {
	t.Helper()
	return Load(Options{Cwd: f.sub, Getenv: func(k string) string { return f.env[k] }, Flags: flags, Trust: true})
}

func TestPrecedence(t *testing.T) {
	f := newFixture(t)
	user := f.write(t, filepath.Join(f.xdg, "lovia", "config.yaml"), `
model: openai:gpt-4.1
preset: reviewer
max_turns: 10
models:
  "openai:gpt-4.1": {context_window: 50000}
compaction:
  compact_at: 0.8
  compact_to: 0.5
`)
	project := f.write(t, filepath.Join(f.repo, ".lovia", "config.yaml"), `
# project settings
model: anthropic:claude-sonnet-4-5
max_turns: 20
compaction:
  compact_to: 0.4
`)
	tests := []struct {
		name  string
		env   map[string]string
		flags []Override
		key   string
		want  string
		src   string
	}{
		{"user file", nil, nil, "preset", "reviewer", "user " + user + ":3"},
		{"project beats user", nil, nil, "model", "anthropic:claude-sonnet-4-5", "project " + project + ":3"},
		{"nested project key", nil, nil, "compaction.compact_to", "0.4", "project " + project + ":6"},
		{"nested user key survives merge", nil, nil, "compaction.compact_at", "0.8", "user " + user + ":8"},
		{"env beats project", map[string]string{"LOVIA_MODEL": "openai:o3"}, nil, "model", "openai:o3", "env LOVIA_MODEL"},
		{"flag beats env", map[string]string{"LOVIA_MAX_TURNS": "30"}, []Override{{"max_turns", "40", "--max-turns"}}, "max_turns", "40", "flag --max-turns"},
		{"default", nil, nil, "policy", "", "default (the preset's, else coding)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				f.env[k] = v
				defer delete(f.env, k)
			}
			c, err := f.load(t, tt.flags...)
			if err != nil {
				t.Fatal(err)
			}
			var got *Value
			for _, v := range c.Values() {
				if v.Key == tt.key {
					got = &v
				}
			}
			if got == nil || got.Value != tt.want || got.Source != tt.src {
				t.Errorf("%s = %+v, want %q from %q", tt.key, got, tt.want, tt.src)
			}
		})
	}
	c, err := f.load(t, Override{"max_turns", "40", "--max-turns"})
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxTurns != 40 || c.Compaction.CompactAt != 0.8 || c.Compaction.CompactTo != 0.4 || c.Models["openai:gpt-4.1"].ContextWindow != 50000 {
		t.Errorf("typed values: %+v", c.File)
	}
	if c.Root != f.repo || !c.InGit || len(c.Files) != 2 {
		t.Errorf("root %s git %v files %v", c.Root, c.InGit, c.Files)
	}
	if c.Home != filepath.Join(f.home, ".local", "share", "lovia") || c.DB != filepath.Join(c.Home, "lovia.db") {
		t.Errorf("home %s db %s", c.Home, c.DB)
	}
}

func TestProjectSearchStopsAtGitRoot(t *testing.T) {
	f := newFixture(t)
	// A config above the repository root is not the project's.
	f.write(t, filepath.Join(filepath.Dir(f.repo), ".lovia", "config.yaml"), "model: openai:outside\n")
	c, err := f.load(t)
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != "" || len(c.Files) != 0 {
		t.Errorf("picked up %v (model %q)", c.Files, c.Model)
	}
	// A config in a subdirectory between cwd and root is found.
	f.write(t, filepath.Join(f.repo, "pkg", ".lovia", "config.yaml"), "model: openai:inner\n")
	if c, err = f.load(t); err != nil || c.Model != "openai:inner" {
		t.Errorf("model %q err %v", c.Model, err)
	}
}

func TestDefaultModelFromKeys(t *testing.T) {
	f := newFixture(t)
	f.env["OPENAI_API_KEY"] = "sk-test"
	c, err := f.load(t)
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != "openai:gpt-4.1" || c.Source("model").Layer != LayerDefault {
		t.Errorf("model %q from %v", c.Model, c.Source("model"))
	}
}

func TestBadFiles(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string
	}{
		{"syntax error", "model: openai:x\ncompaction:\n  compact_at: [0.5\n", []string{"config.yaml:3:"}},
		{"unknown key", "model: openai:x\nmax_turn: 5\n", []string{"config.yaml:2:1", `unknown key "max_turn"`, `did you mean "max_turns"`}},
		{"unknown nested key", "compaction:\n  compact_att: 0.5\n", []string{"config.yaml:2:3", `did you mean "compact_at"`}},
		{"wrong type", "max_turns: lots\n", []string{"config.yaml:1:", "wrong type", "an integer"}},
		{"bad policy", "policy: yolo\n", []string{"unknown policy \"yolo\"", "readonly, coding or trusted"}},
		{"bad model", "model: gpt-4\n", []string{"PROVIDER:MODEL"}},
		{"bad compaction", "compaction:\n  compact_at: 0.5\n  compact_to: 0.7\n", []string{"compact_to"}},
		{"mcp server without command", "mcp:\n  servers:\n    gh: {args: [x]}\n", []string{"neither command nor url is set"}},
		{"negative price", "pricing:\n  \"openai:gpt-5\": {input: 1, cached_input: -0.1, output: 10}\n", []string{`pricing."openai:gpt-5".cached_input must be a number >= 0`, "USD per million tokens"}},
		{"price without output", "pricing:\n  acme: {input: 1}\n", []string{"pricing.acme.output is missing", "give both input and output"}},
		{"misspelt price", "pricing:\n  acme: {input: 1, output: 2, cache_writes: 1}\n", []string{`unknown key "cache_writes"`, `did you mean "cache_write"`}},
		{"empty price key", "pricing:\n  \"openai:\": {input: 1, output: 2}\n", []string{"does not name a model"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			path := f.write(t, filepath.Join(f.repo, ".lovia", "config.yaml"), tt.body)
			_, err := f.load(t)
			if err == nil {
				t.Fatal("no error")
			}
			if errs.KindOf(err) != errs.KindConfig || errs.ExitCode(err) != 2 {
				t.Errorf("kind %s", errs.KindOf(err))
			}
			full := err.Error() + " | hint: " + errs.HintOf(err)
			if !strings.Contains(full, path) {
				t.Errorf("%q does not name the file %s", full, path)
			}
			for _, w := range tt.want {
				if !strings.Contains(full, w) {
					t.Errorf("%q lacks %q", full, w)
				}
			}
		})
	}
}

func TestBadEnvAndFlags(t *testing.T) {
	f := newFixture(t)
	f.env["LOVIA_MAX_TURNS"] = "many"
	_, err := f.load(t)
	if errs.KindOf(err) != errs.KindConfig || !strings.Contains(err.Error(), "LOVIA_MAX_TURNS") {
		t.Errorf("env: %v", err)
	}
	delete(f.env, "LOVIA_MAX_TURNS")
	_, err = f.load(t, Override{"policy", "yolo", "--policy"})
	if errs.KindOf(err) != errs.KindUsage || !strings.Contains(err.Error(), "--policy") {
		t.Errorf("flag: %v", err)
	}
	_, err = Load(Options{Cwd: filepath.Join(f.repo, "missing"), Getenv: func(string) string { return "" }})
	if errs.ExitCode(err) != 2 {
		t.Errorf("missing cwd: %v", err)
	}
}

func TestHomeAndDB(t *testing.T) {
	f := newFixture(t)
	f.env["LOVIA_HOME"] = filepath.Join(f.home, "lh")
	c, err := f.load(t, Override{"db", "x.db", "--db"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Home != filepath.Join(f.home, "lh") || !filepath.IsAbs(c.DB) || filepath.Base(c.DB) != "x.db" {
		t.Errorf("home %s db %s", c.Home, c.DB)
	}
	if c.Source("db").String() != "flag --db" || c.Source("home").String() != "env LOVIA_HOME" {
		t.Errorf("sources %v %v", c.Source("db"), c.Source("home"))
	}
}

func TestPresetLayer(t *testing.T) {
	f := newFixture(t)
	c, err := f.load(t)
	if err != nil {
		t.Fatal(err)
	}
	if !c.SetPreset("policy", "readonly", "reviewer") || c.Source("policy").String() != "preset reviewer" {
		t.Errorf("preset did not apply: %v", c.Source("policy"))
	}
	c, _ = f.load(t, Override{"policy", "trusted", "--policy"})
	if c.SetPreset("policy", "readonly", "reviewer") {
		t.Error("preset overrode a flag")
	}
}

func TestSecretsAreNotShown(t *testing.T) {
	f := newFixture(t)
	f.write(t, filepath.Join(f.repo, ".lovia", "config.yaml"), `
mcp:
  servers:
    gh:
      url: https://example.invalid/mcp
      headers: {Authorization: "Bearer sk-live-123"}
    local:
      command: srv
      env: {GITHUB_TOKEN: ghp_abc, OPENAI_API_KEY: sk-x, LOG_LEVEL: debug}
`)
	c, err := f.loadTrusted(t)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, v := range c.Values() {
		seen[v.Key] = v.Value
		if strings.Contains(v.Value, "sk-") || strings.Contains(v.Value, "ghp_") {
			t.Errorf("%s shows a secret: %s", v.Key, v.Value)
		}
	}
	if seen["mcp.servers.local.env.LOG_LEVEL"] != "debug" || seen["mcp.servers.gh.headers.Authorization"] != "(redacted)" {
		t.Errorf("values %v", seen)
	}
}

func TestSandboxOverride(t *testing.T) {
	f := newFixture(t)
	f.env["LOVIA_SANDBOX"] = "off"
	c, err := f.load(t)
	if err != nil || c.Workspace.Sandbox != "off" {
		t.Fatalf("env: %v %q", err, c.Workspace.Sandbox)
	}
	c, err = f.load(t, Override{"sandbox", "required", "--sandbox"})
	if err != nil || c.Workspace.Sandbox != "required" {
		t.Fatalf("flag beats env: %v %q", err, c.Workspace.Sandbox)
	}
	_, err = f.load(t, Override{"sandbox", "maybe", "--sandbox"})
	if errs.KindOf(err) != errs.KindUsage || !strings.Contains(errs.HintOf(err), "off, auto or required") {
		t.Fatalf("bad mode: %v", err)
	}
}

// The user's own config may live in a dotfiles repository behind a link (the user is
// trusted); a project's may not lead out of the project.
func TestUserConfigMayBeALink(t *testing.T) {
	f := newFixture(t)
	dot := f.write(t, filepath.Join(f.home, "dotfiles", "lovia.yaml"), "max_turns: 7\n")
	if err := os.MkdirAll(filepath.Join(f.xdg, "lovia"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dot, filepath.Join(f.xdg, "lovia", "config.yaml")); err != nil {
		t.Fatal(err)
	}
	c, err := f.load(t)
	if err != nil || c.MaxTurns != 7 {
		t.Fatalf("linked user config: %v %+v", err, c)
	}
	if err := os.MkdirAll(filepath.Join(f.repo, ".lovia"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dot, filepath.Join(f.repo, ".lovia", "config.yaml")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.load(t); err == nil {
		t.Fatal("a project config linking out of the project was read")
	}
}

func TestPricingOverrides(t *testing.T) {
	f := newFixture(t)
	f.write(t, filepath.Join(f.xdg, "lovia", "config.yaml"), "pricing:\n  \"openai:gpt-5\": {input: 2, output: 20}\n  \"acme-*\": {input: 1, cached_input: 0, output: 1}\n")
	c, err := f.load(t)
	if err != nil {
		t.Fatal(err)
	}
	ps := c.Prices()
	// Left out, a cache read costs the input price; given as 0, it is free.
	if p, ok := ps.Lookup("openai", "gpt-5"); !ok || p.Input != 2 || p.CachedInput != 2 || p.CacheWrite != 2 || p.Output != 20 {
		t.Errorf("gpt-5 = %+v %v", p, ok)
	}
	if p, ok := ps.Lookup("openai", "acme-7b"); !ok || p.CachedInput != 0 || p.Output != 1 {
		t.Errorf("acme-7b = %+v %v", p, ok)
	}
	if p, ok := ps.Lookup("openai", "gpt-4.1"); !ok || p.Input != 2 || p.Output != 8 {
		t.Errorf("built-in gpt-4.1 = %+v %v", p, ok)
	}
}
