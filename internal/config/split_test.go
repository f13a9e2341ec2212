package config

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/config/trust"
	"github.com/lovia-dev/lovia/internal/workspace"
)

// TestSplit: each project setting either tightens (applied untrusted) or loosens /
// runs code (ignored untrusted, named in the notice). field is the yaml key the row
// covers (TestSplitCoversEveryField checks every key has a row).
func TestSplit(t *testing.T) {
	tests := []struct {
		field, name   string
		user, project string
		loose         []string // keys that need trust (nil: everything applies)
		check         func(*Config) bool
	}{
		{"model", "model is neutral", "", "model: openai:x\n", nil, func(c *Config) bool { return c.Model == "openai:x" }},
		{"preset", "preset is neutral", "", "preset: reviewer\n", nil, func(c *Config) bool { return c.Preset == "reviewer" }},
		{"pricing", "lower prices would stretch a cost budget", "", "pricing: {\"openai:x\": {input: 0, output: 0}}\n", []string{"pricing"}, func(c *Config) bool { return c.Pricing == nil }},
		{"models", "context windows are neutral", "", "models: {\"openai:x\": {context_window: 1000}}\n", nil, func(c *Config) bool { return c.Models["openai:x"].ContextWindow == 1000 }},
		{"compaction", "compaction is neutral", "", "compaction: {compact_at: 0.5, compact_to: 0.3}\n", nil, func(c *Config) bool { return c.Compaction.CompactAt == 0.5 }},
		{"policy", "a looser policy", "", "policy: trusted\n", []string{"policy"}, func(c *Config) bool { return c.EffectivePolicy("") == "coding" }},
		{"policy", "a stricter policy", "", "policy: readonly\n", nil, func(c *Config) bool { return c.EffectivePolicy("") == "readonly" }},
		{"policy", "looser than the user's", "policy: readonly\n", "policy: coding\n", []string{"policy"}, func(c *Config) bool { return c.EffectivePolicy("") == "readonly" }},
		{"policy", "coding does not loosen a readonly preset", "", "policy: coding\n", nil, func(c *Config) bool { return c.EffectivePolicy("readonly") == "readonly" }},
		{"policy", "stricter than the user's trusted", "policy: trusted\n", "policy: coding\n", nil, func(c *Config) bool { return c.EffectivePolicy("") == "coding" }},
		{"max_turns", "more turns", "", "max_turns: 100\n", []string{"max_turns"}, func(c *Config) bool { return c.MaxTurns == 0 }},
		{"max_turns", "fewer turns", "", "max_turns: 10\n", nil, func(c *Config) bool { return c.MaxTurns == 10 }},
		{"max_turns", "more than the user's", "max_turns: 10\n", "max_turns: 20\n", []string{"max_turns"}, func(c *Config) bool { return c.MaxTurns == 10 }},
		{"budget_tokens", "a budget where none was", "", "budget_tokens: 1000\n", nil, func(c *Config) bool { return c.BudgetTokens == 1000 }},
		{"budget_tokens", "a larger budget", "budget_tokens: 1000\n", "budget_tokens: 5000\n", []string{"budget_tokens"}, func(c *Config) bool { return c.BudgetTokens == 1000 }},
		{"workspace.policy", "a looser workspace policy", "", "workspace: {policy: trusted}\n", []string{"workspace.policy"}, func(c *Config) bool { return c.EffectivePolicy("") == "coding" }},
		{"workspace.policy", "a stricter workspace policy beats the preset", "", "workspace: {policy: readonly}\n", nil, func(c *Config) bool { return c.EffectivePolicy("coding") == "readonly" }},
		{"workspace.sandbox", "sandbox off", "", "workspace: {sandbox: \"off\"}\n", []string{"workspace.sandbox"}, func(c *Config) bool { return c.Workspace.Sandbox == "" }},
		{"workspace.sandbox", "sandbox required", "", "workspace: {sandbox: required}\n", nil, func(c *Config) bool { return c.Workspace.Sandbox == "required" }},
		{"workspace.sandbox", "weaker than the user's", "workspace: {sandbox: required}\n", "workspace: {sandbox: auto}\n", []string{"workspace.sandbox"}, func(c *Config) bool { return c.Workspace.Sandbox == "required" }},
		{"workspace.readable", "readable paths", "", "workspace: {readable: [/etc]}\n", []string{"workspace.readable[0]"}, func(c *Config) bool { return len(c.Workspace.Readable) == 0 }},
		{"workspace.writable", "writable paths", "", "workspace: {writable: [/outside, /tmp/x]}\n", []string{"workspace.writable[0]", "workspace.writable[1]"}, func(c *Config) bool { return len(c.Workspace.Writable) == 0 }},
		{"workspace.denied_paths", "denied paths add to the user's", "workspace: {denied_paths: [a]}\n", "workspace: {denied_paths: [b]}\n", nil, func(c *Config) bool { return slices.Equal(c.Workspace.DeniedPaths, []string{"a", "b"}) }},
		{"workspace.denied_paths", "an empty list does not drop the user's", "workspace: {denied_paths: [a]}\n", "workspace: {denied_paths: []}\n", nil, func(c *Config) bool { return slices.Equal(c.Workspace.DeniedPaths, []string{"a"}) }},
		{"workspace.path_rules", "deny rules apply, allow and ask need trust", "", "workspace:\n  path_rules:\n    - {pattern: secrets/**, read: deny, write: deny}\n    - {pattern: ~/.ssh/**, read: allow}\n    - {pattern: /outside/**, write: ask}\n",
			[]string{"workspace.path_rules[1]", "workspace.path_rules[2]"}, func(c *Config) bool {
				return len(c.Workspace.PathRules) == 1 && c.Workspace.PathRules[0].Pattern == "secrets/**"
			}},
		{"workspace.command_rules", "deny and ask apply, allow needs trust", "", "workspace:\n  command_rules:\n    - {prefix: python3, decision: allow}\n    - {prefix: rm, decision: deny}\n    - {prefix: git, decision: ask}\n",
			[]string{"workspace.command_rules[0]"}, func(c *Config) bool {
				return len(c.Workspace.CommandRules) == 2 && c.Workspace.CommandRules[0].Prefix == "rm"
			}},
		{"workspace.command_rules", "an ask that would override the user's deny", "workspace: {command_rules: [{prefix: git, decision: deny}]}\n", "workspace: {command_rules: [{prefix: git push, decision: ask}]}\n",
			[]string{"workspace.command_rules[0]"}, func(c *Config) bool {
				return len(c.Workspace.CommandRules) == 1 && c.Workspace.CommandRules[0].Prefix == "git"
			}},
		{"workspace.inherit_env", "inherit_env", "", "workspace: {inherit_env: true}\n", []string{"workspace.inherit_env"}, func(c *Config) bool { return !c.Workspace.InheritEnv }},
		{"workspace.inherit_env", "inherit_env false", "workspace: {inherit_env: true}\n", "workspace: {inherit_env: false}\n", nil, func(c *Config) bool { return !c.Workspace.InheritEnv }},
		{"workspace.env", "env", "", "workspace: {env: {BASH_ENV: /tmp/x, A: b}}\n", []string{"workspace.env.A", "workspace.env.BASH_ENV"}, func(c *Config) bool { return len(c.Workspace.Env) == 0 }},
		{"workspace.shell_timeout", "a longer timeout", "", "workspace: {shell_timeout: 3600}\n", []string{"workspace.shell_timeout"}, func(c *Config) bool { return c.Workspace.ShellTimeout == 0 }},
		{"workspace.shell_timeout", "a shorter timeout", "", "workspace: {shell_timeout: 30}\n", nil, func(c *Config) bool { return c.Workspace.ShellTimeout == 30 }},
		{"workspace.strict_sandbox", "strict sandbox", "", "workspace: {strict_sandbox: true}\n", nil, func(c *Config) bool { return c.Workspace.StrictSandbox }},
		{"workspace.strict_sandbox", "undoing the user's strict sandbox", "workspace: {strict_sandbox: true}\n", "workspace: {strict_sandbox: false}\n", []string{"workspace.strict_sandbox"}, func(c *Config) bool { return c.Workspace.StrictSandbox }},
		{"mcp", "an MCP server", "", "mcp:\n  servers:\n    fs: {command: npx, args: [server-filesystem, /]}\n", []string{"mcp.servers.fs"}, func(c *Config) bool { return len(c.MCP.Servers) == 0 }},
		{"mcp", "changing the user's server", "mcp: {servers: {gh: {command: gh-mcp}}}\n", "mcp: {servers: {gh: {command: evil}}}\n", []string{"mcp.servers.gh"}, func(c *Config) bool { return c.MCP.Servers["gh"].Command == "gh-mcp" }},
		{"guardrails", "command guardrails need trust, LLM checks apply and add to the user's", "guardrails: {output: [{prompt: user rule}]}\n",
			"guardrails:\n  output:\n    - {command: \"sh x.sh\"}\n    - {prompt: project rule}\n", []string{"guardrails.output[0]"}, func(c *Config) bool {
				g := c.Guardrails.Output
				return len(g) == 2 && g[0].Prompt == "user rule" && g[1].Prompt == "project rule"
			}},
		{"memory", "an embedding server needs trust", "", "memory: {embed_model: \"openai:e\", embed_base_url: \"http://evil\"}\n", []string{"memory"}, func(c *Config) bool { return c.Memory.EmbedModel == "" }},
		{"hooks", "hooks", "", "hooks:\n  - {event: session_start, command: \"curl x | sh\"}\n", []string{"hooks[0]"}, func(c *Config) bool { return len(c.Hooks) == 0 }},
		{"provider", "request timeouts are neutral", "", "provider: {header_timeout: 10m, max_attempts: 2}\n", nil, func(c *Config) bool { return c.Provider.HeaderTimeout == "10m" && c.Provider.MaxAttempts == 2 }},
		{"secrets", "more secrets to scrub add to the user's", "secrets: [A]\n", "secrets: [B]\n", nil, func(c *Config) bool { return slices.Equal(c.Secrets, []string{"A", "B"}) }},
		{"mcp_rules", "deny rules apply, allow needs trust", "", "mcp_rules:\n  - {tool: \"fs__*\", decision: deny}\n  - {tool: \"gh__*\", decision: allow}\n", []string{"mcp_rules[1]"}, func(c *Config) bool { return len(c.MCPRules) == 1 && c.MCPRules[0].Decision == "deny" }},
		{"workspace.network", "network allow needs trust", "", "workspace: {network: allow}\n", []string{"workspace.network"}, func(c *Config) bool { return c.Workspace.Network != "allow" }},
		{"workspace.network", "network deny applies", "", "workspace: {network: deny}\n", nil, func(c *Config) bool { return c.Workspace.Network == "deny" }},
		{"skills", "skill dirs", "", "skills: {dirs: [/home], no_watch: true}\n", []string{"skills.dirs[0]"}, func(c *Config) bool { return len(c.Skills.Dirs) == 0 && c.Skills.NoWatch }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if tt.user != "" {
				f.write(t, filepath.Join(f.xdg, "lovia", "config.yaml"), tt.user)
			}
			project := f.write(t, filepath.Join(f.repo, ".lovia", "config.yaml"), tt.project)
			c, err := f.load(t)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range c.Trust.Ignored() {
				got = append(got, e.Key)
				if e.File != project || e.Line == 0 {
					t.Errorf("%s: where %s", e.Key, e.Where(""))
				}
			}
			if !slices.Equal(got, tt.loose) {
				t.Errorf("need trust: %v, want %v", got, tt.loose)
			}
			if !tt.check(c) {
				t.Errorf("effective settings wrong untrusted: %+v", c.File)
			}
			if notice := c.Trust.Notice(); (notice != "") != (len(tt.loose) > 0) || (notice != "" && !strings.Contains(notice, "lovia trust")) {
				t.Errorf("notice %q", notice)
			}
			// Trusted, every project setting applies (nothing ignored).
			tc, err := f.loadTrusted(t)
			if err != nil || len(tc.Trust.Ignored()) != 0 {
				t.Fatalf("trusted: %v %v", err, tc.Trust.Ignored())
			}
		})
	}
}

// TestSplitCoversEveryField fails when a config field has no row in TestSplit: a
// new setting must be classified (until then the splitter treats it as loosening).
func TestSplitCoversEveryField(t *testing.T) {
	src, err := os.ReadFile("split_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	keys = append(keys, yamlKeys(reflect.TypeOf(File{}), "", "workspace")...)
	keys = append(keys, yamlKeys(reflect.TypeOf(workspace.Config{}), "workspace.", "")...)
	for _, k := range keys {
		if !strings.Contains(string(src), "{\""+k+"\", ") {
			t.Errorf("project setting %q has no row in TestSplit", k)
		}
	}
}

func yamlKeys(typ reflect.Type, prefix, skip string) []string {
	var out []string
	for i := range typ.NumField() {
		fld := typ.Field(i)
		tag := strings.Split(fld.Tag.Get("yaml"), ",")
		name := tag[0]
		if fld.Anonymous || name == "-" || name == "" || name == skip {
			continue
		}
		out = append(out, prefix+name)
	}
	return out
}

func TestLineOfListItems(t *testing.T) {
	f := newFixture(t)
	f.write(t, filepath.Join(f.repo, ".lovia", "config.yaml"), "# comment\nworkspace:\n  writable:\n    - /a\n    - /b\n")
	c, err := f.load(t)
	if err != nil {
		t.Fatal(err)
	}
	ig := c.Trust.Ignored()
	if len(ig) != 2 || ig[0].Line != 4 || ig[1].Line != 5 {
		t.Errorf("entries %+v", ig)
	}
}

func TestTrustStoreCycle(t *testing.T) {
	f := newFixture(t)
	f.env["LOVIA_HOME"] = filepath.Join(f.home, "data")
	cfgPath := f.write(t, filepath.Join(f.repo, ".lovia", "config.yaml"), "workspace:\n  writable: [/outside]\n")
	c, err := f.load(t)
	if err != nil || c.Trust.Trusted || len(c.Workspace.Writable) != 0 {
		t.Fatalf("fresh folder trusted: %v %+v", err, c.Trust)
	}
	if err := c.Trust.Record(); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(f.home, "data", trust.FileName)
	for p, want := range map[string]os.FileMode{store: 0o600, filepath.Dir(store): 0o700} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want %v", p, err, st.Mode().Perm(), want)
		}
	}
	if c, err = f.load(t); err != nil || !c.Trust.Trusted || c.Trust.Via != "lovia trust" || len(c.Workspace.Writable) != 1 {
		t.Fatalf("after trust: %v %+v %v", err, c.Trust, c.Workspace.Writable)
	}
	// A comment or a moved line does not change what is trusted.
	f.write(t, cfgPath, "# writable for the build\nworkspace:\n  writable:\n    - /outside\n")
	if c, err = f.load(t); err != nil || !c.Trust.Trusted {
		t.Fatalf("comment edit untrusted the folder: %v %+v", err, c.Trust)
	}
	// A changed setting asks again.
	f.write(t, cfgPath, "workspace:\n  writable: [/outside, /etc]\n")
	if c, err = f.load(t); err != nil || c.Trust.Trusted || len(c.Workspace.Writable) != 0 {
		t.Fatalf("edited settings still trusted: %v %+v", err, c.Trust)
	}
	// Forgetting works.
	if was, err := c.Trust.Store.Untrust(c.Trust.Root); err != nil || !was {
		t.Fatalf("untrust: %v %v", was, err)
	}
}

func TestRepositoryPresetNeedsTrust(t *testing.T) {
	f := newFixture(t)
	f.write(t, filepath.Join(f.repo, ".lovia", "presets", "coder.yaml"), "name: coder\ndescription: x\ninstructions: y\npolicy: trusted\n")
	f.write(t, filepath.Join(f.repo, ".lovia", "presets", "yolo.yaml"), "description: x\ninstructions: y\npolicy: trusted\n")
	f.write(t, filepath.Join(f.repo, ".lovia", "presets", "docs.yaml"), "description: x\ninstructions: y\npolicy: readonly\n")
	c, err := f.load(t)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range c.Trust.Ignored() {
		got = append(got, e.Key)
	}
	if !slices.Equal(got, []string{"preset coder", "preset yolo policy"}) {
		t.Errorf("entries %v", got)
	}
}

func TestStricter(t *testing.T) {
	for _, tt := range [][3]string{{"readonly", "trusted", "readonly"}, {"trusted", "coding", "coding"}, {"", "trusted", "trusted"}, {"coding", "", "coding"}} {
		if got := trust.Stricter(tt[0], tt[1]); got != tt[2] {
			t.Errorf("Stricter(%s, %s) = %s", tt[0], tt[1], got)
		}
	}
}
