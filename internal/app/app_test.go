package app

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/agent"
	"github.com/lovia-dev/lovia/internal/config"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/provider/script"
	"github.com/lovia-dev/lovia/internal/runtime"
	"github.com/lovia-dev/lovia/internal/tool"
)

type fixture struct {
	dir, home string
	env       map[string]string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	base := t.TempDir()
	f := &fixture{dir: filepath.Join(base, "repo"), home: filepath.Join(base, "home")}
	os.MkdirAll(filepath.Join(f.dir, ".git"), 0o755)
	os.MkdirAll(f.home, 0o755)
	f.env = map[string]string{"HOME": f.home, "XDG_CONFIG_HOME": filepath.Join(f.home, ".config"), "LOVIA_HOME": filepath.Join(f.home, "data"),
		"LOVIA_SANDBOX": "off"}
	f.write(t, ".lovia/config.yaml", "# project settings\n")
	return f
}

func (f *fixture) write(t *testing.T, rel, body string) {
	t.Helper()
	p := filepath.Join(f.dir, rel)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) app(t *testing.T, memory bool, flags ...config.Override) *App {
	t.Helper()
	return f.appTrust(t, memory, false, flags...)
}

// appTrust builds the App with the project folder trusted (--trust) or not.
func (f *fixture) appTrust(t *testing.T, memory, trusted bool, flags ...config.Override) *App {
	t.Helper()
	a, err := New(context.Background(), Options{Cwd: f.dir, Getenv: func(k string) string { return f.env[k] },
		Flags: flags, Memory: memory, LogWriter: io.Discard, Trust: trusted})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// toolNames sets up every plugin of ag and returns the tool names it would get.
func toolNames(t *testing.T, ag *agent.Agent) []string {
	t.Helper()
	var names []string
	for _, p := range ag.Plugins {
		c, err := p.Setup(context.Background(), &tool.RunContext{RunID: "r", Agent: ag.Name})
		if err != nil {
			t.Fatalf("plugin %s: %v", p.Name(), err)
		}
		for _, tl := range c.Tools {
			names = append(names, tl.Spec().Name)
		}
		if c.Close != nil {
			c.Close(context.Background())
		}
	}
	slices.Sort(names)
	return names
}

func TestPresetsBecomeAgents(t *testing.T) {
	f := newFixture(t)
	a := f.app(t, true, config.Override{Key: "model", Value: "script:s.yaml", Flag: "--model"})

	pr, err := a.Prepare(context.Background(), RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	coder := toolNames(t, pr.Agent)
	for _, want := range []string{"read_file", "write_file", "edit_file", "shell", "todo_write", "load_skill", "spawn_subagent", "http_request", "read_page", "web_search", "ask_human"} {
		if !slices.Contains(coder, want) {
			t.Errorf("coder lacks %s: %v", want, coder)
		}
	}
	if pr.Agent.Name != "coder" || pr.Agent.Model != "script:s.yaml" || pr.Settings.Policy != "coding" {
		t.Errorf("coder: %s %s %s", pr.Agent.Name, pr.Agent.Model, pr.Settings.Policy)
	}

	pr, err = a.Prepare(context.Background(), RunOptions{Preset: "reviewer"})
	if err != nil {
		t.Fatal(err)
	}
	reviewer := toolNames(t, pr.Agent)
	for _, bad := range []string{"write_file", "edit_file", "shell", "spawn_subagent"} {
		if slices.Contains(reviewer, bad) {
			t.Errorf("reviewer may use %s: %v", bad, reviewer)
		}
	}
	if !slices.Contains(reviewer, "read_file") || pr.Settings.Policy != "readonly" {
		t.Errorf("reviewer tools %v policy %s", reviewer, pr.Settings.Policy)
	}

	pr, err = a.Prepare(context.Background(), RunOptions{Preset: "planner"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pr.Agent.Handoffs) != 1 || pr.Agent.Handoffs[0].Name != "coder" {
		t.Fatalf("planner handoffs %+v", pr.Agent.Handoffs)
	}
	if slices.Contains(toolNames(t, pr.Agent), "edit_file") || !slices.Contains(toolNames(t, pr.Agent.Handoffs[0]), "edit_file") {
		t.Errorf("planner must read only; its coder must edit")
	}
}

func TestPolicyAndModelPrecedence(t *testing.T) {
	f := newFixture(t)
	f.write(t, ".lovia/presets/fast.yaml", "description: d\ninstructions: i\nmodel: script:fast.yaml\npolicy: trusted\n")
	a := f.appTrust(t, true, true, config.Override{Key: "preset", Value: "fast", Flag: "--preset"})
	pr, err := a.Prepare(context.Background(), RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pr.Settings.Model != "script:fast.yaml" || pr.Settings.Policy != "trusted" {
		t.Errorf("preset defaults not applied: %+v", pr.Settings)
	}
	// Untrusted, the repository preset's trusted policy is ignored (coding).
	a = f.app(t, true, config.Override{Key: "preset", Value: "fast", Flag: "--preset"})
	if pr, err = a.Prepare(context.Background(), RunOptions{}); err != nil || pr.Settings.Model != "script:fast.yaml" || pr.Settings.Policy != "coding" {
		t.Errorf("untrusted repository preset: %+v %v", pr.Settings, err)
	}
	a = f.app(t, true, config.Override{Key: "preset", Value: "fast", Flag: "--preset"},
		config.Override{Key: "policy", Value: "readonly", Flag: "--policy"},
		config.Override{Key: "model", Value: "script:other.yaml", Flag: "--model"})
	pr, _ = a.Prepare(context.Background(), RunOptions{})
	if pr.Settings.Model != "script:other.yaml" || pr.Settings.Policy != "readonly" {
		t.Errorf("flags must beat the preset: %+v", pr.Settings)
	}

	pr, _ = a.Prepare(context.Background(), RunOptions{Model: "script:third.yaml", Preset: "planner"})
	if pr.Settings.Model != "script:third.yaml" || pr.Agent.Model != "script:third.yaml" || pr.Agent.Handoffs[0].Model != "script:third.yaml" {
		t.Errorf("RunOptions.Model must apply to every agent: %+v", pr.Settings)
	}

	f2 := newFixture(t)
	a = f2.app(t, true)
	if _, err := a.Prepare(context.Background(), RunOptions{}); errs.KindOf(err) != errs.KindConfig || !strings.Contains(errs.HintOf(err), "--model") {
		t.Errorf("no model: %v", err)
	}
}

func TestSettingsAndInstructions(t *testing.T) {
	f := newFixture(t)
	f.write(t, "AGENTS.md", "Always run make lint.")
	a := f.app(t, true, config.Override{Key: "model", Value: "script:s.yaml", Flag: "--model"}, config.Override{Key: "max_turns", Value: "9", Flag: "--max-turns"})
	pr, err := a.Prepare(context.Background(), RunOptions{OutputSchema: json.RawMessage(`{"type":"object"}`), Flags: map[string]any{"output": "json"}})
	if err != nil {
		t.Fatal(err)
	}
	var st Settings
	if err := json.Unmarshal(pr.Options.Settings, &st); err != nil {
		t.Fatal(err)
	}
	if st.Model != "script:s.yaml" || st.Preset != "coder" || st.Cwd != f.dir || st.Repo != f.dir || st.MaxTurns != 9 || st.Flags["output"] != "json" || string(st.OutputSchema) != `{"type":"object"}` {
		t.Errorf("settings %+v", st)
	}
	if pr.Options.MaxTurns != 9 || string(pr.Agent.OutputSchema) != `{"type":"object"}` {
		t.Errorf("options max turns %d schema %s", pr.Options.MaxTurns, pr.Agent.OutputSchema)
	}
	if !strings.Contains(pr.Options.ExtraInstructions, "Always run make lint.") || !strings.Contains(pr.Options.ExtraInstructions, f.dir) {
		t.Errorf("extra instructions:\n%s", pr.Options.ExtraInstructions)
	}
	if ov := st.Overrides(); len(ov) != 4 {
		t.Errorf("overrides %+v", ov)
	}
}

// TestRunWithScript runs a whole run through the App: the scripted model reads a file
// with the workspace tools and the result lands in the session and checkpoint.
func TestRunWithScript(t *testing.T) {
	f := newFixture(t)
	f.write(t, "notes.txt", "the answer is 42\n")
	f.write(t, "s.yaml", "turns:\n  - tool_calls: [{name: read_file, args: {path: notes.txt}}]\n  - text: 'It says 42.'\n")
	for _, memory := range []bool{true, false} {
		a := f.app(t, memory, config.Override{Key: "model", Value: "script:" + filepath.Join(f.dir, "s.yaml"), Flag: "--model"})
		h, _, err := a.Start(context.Background(), runtime.Text("what does notes.txt say?"), RunOptions{Approvals: runtime.ApprovalDenyAll})
		if err != nil {
			t.Fatal(err)
		}
		for range h.Events() {
		}
		res, err := h.Result()
		if err != nil || res.Output != "It says 42." {
			t.Fatalf("memory=%v: %v %+v", memory, err, res)
		}
		p, _ := a.Resolve(context.Background(), "script:"+filepath.Join(f.dir, "s.yaml"))
		if p.Info().Provider != script.Prefix {
			t.Errorf("provider %+v", p.Info())
		}
		snap, err := a.Checkpointer.Load(context.Background(), res.RunID)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range snap.Entries {
			found = found || (e.Type == "tool_result" && strings.Contains(e.Text, "the answer is 42"))
		}
		if !found {
			t.Errorf("memory=%v: the tool result is not in the checkpoint", memory)
		}
		hist, err := a.Session.Load(context.Background(), res.SessionID)
		if err != nil || len(hist) == 0 {
			t.Errorf("memory=%v: session %v %d", memory, err, len(hist))
		}
		if !memory {
			if _, err := os.Stat(filepath.Join(f.home, "data", "lovia.db")); err != nil {
				t.Errorf("no database: %v", err)
			}
		}
	}
}

func TestContinueUsesTheLatestSessionOfTheRepo(t *testing.T) {
	f := newFixture(t)
	f.write(t, "s.yaml", "turns:\n  - text: ok\n")
	model := config.Override{Key: "model", Value: "script:" + filepath.Join(f.dir, "s.yaml"), Flag: "--model"}
	a := f.app(t, false, model)
	h, _, err := a.Start(context.Background(), runtime.Text("one"), RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := h.Result()
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	a = f.app(t, false, model)
	pr, err := a.Prepare(context.Background(), RunOptions{Continue: true})
	if err != nil {
		t.Fatal(err)
	}
	if pr.Options.SessionID != first.SessionID {
		t.Errorf("continue picked %q, want %q", pr.Options.SessionID, first.SessionID)
	}
	mem := f.app(t, true, model)
	if _, err := mem.Prepare(context.Background(), RunOptions{Continue: true}); errs.ExitCode(err) != 2 {
		t.Errorf("continue without a database: %v", err)
	}
}

func TestWebPolicyFollowsWorkspacePolicy(t *testing.T) {
	for policy, want := range map[string]string{"readonly": "deny", "coding": "ask", "trusted": "allow", "": "ask"} {
		if got := webPolicy(policy); got != want {
			t.Errorf("webPolicy(%q) = %q, want %q", policy, got, want)
		}
	}
}

// TestChildGetsNoLooserPolicy: a subagent (or eval case) whose preset asks for a
// looser policy than its parent run's gets the parent's; a stricter one applies.
func TestChildGetsNoLooserPolicy(t *testing.T) {
	f := newFixture(t)
	cfgDir := filepath.Join(f.home, ".config", "lovia", "presets")
	os.MkdirAll(cfgDir, 0o755)
	os.WriteFile(filepath.Join(cfgDir, "yolo.yaml"), []byte("description: d\ninstructions: i\npolicy: trusted\n"), 0o644)
	a := f.app(t, true, config.Override{Key: "model", Value: "script:x.yaml", Flag: "--model"})
	policyOf := func(opts runtime.Options) string {
		var st Settings
		if err := json.Unmarshal(opts.Settings, &st); err != nil {
			t.Fatal(err)
		}
		return st.Policy
	}
	for _, tt := range []struct{ child, parent, want string }{
		{"yolo", "readonly", "readonly"},
		{"yolo", "coding", "coding"},
		{"yolo", "trusted", "trusted"},
		{"reviewer", "trusted", "readonly"},
		{"coder", "readonly", "readonly"},
	} {
		_, opts, err := a.buildChild(context.Background(), subagentsSpec(tt.child), tt.parent)
		if err != nil {
			t.Fatal(err)
		}
		if got := policyOf(opts); got != tt.want {
			t.Errorf("child %s under %s: %s, want %s", tt.child, tt.parent, got, tt.want)
		}
	}
	pr, err := a.Prepare(context.Background(), RunOptions{Preset: "yolo", PolicyCeiling: "readonly"})
	if err != nil || pr.Settings.Policy != "readonly" {
		t.Errorf("ceiling: %v %+v", err, pr.Settings)
	}
}

// TestHandoffGetsNoLooserPolicy: a handoff agent runs under the run's policy, or its
// preset's when stricter.
func TestHandoffGetsNoLooserPolicy(t *testing.T) {
	f := newFixture(t)
	cfgDir := filepath.Join(f.home, ".config", "lovia", "presets")
	os.MkdirAll(cfgDir, 0o755)
	os.WriteFile(filepath.Join(cfgDir, "lead.yaml"), []byte("description: d\ninstructions: i\npolicy: readonly\nhandoffs: [yolo, reviewer]\n"), 0o644)
	os.WriteFile(filepath.Join(cfgDir, "yolo.yaml"), []byte("description: d\ninstructions: i\npolicy: trusted\n"), 0o644)
	a := f.app(t, true, config.Override{Key: "model", Value: "script:x.yaml", Flag: "--model"})
	pr, err := a.Prepare(context.Background(), RunOptions{Preset: "lead"})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range pr.Agent.Handoffs {
		if slices.Contains(toolNames(t, h), "write_file") {
			t.Errorf("handoff %s of a readonly run may write", h.Name)
		}
	}
	// Under coding, a readonly handoff preset stays readonly.
	os.WriteFile(filepath.Join(cfgDir, "lead.yaml"), []byte("description: d\ninstructions: i\npolicy: coding\nhandoffs: [ro]\n"), 0o644)
	os.WriteFile(filepath.Join(cfgDir, "ro.yaml"), []byte("description: d\ninstructions: i\npolicy: readonly\n"), 0o644)
	a = f.app(t, true, config.Override{Key: "model", Value: "script:x.yaml", Flag: "--model"})
	if pr, err = a.Prepare(context.Background(), RunOptions{Preset: "lead"}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(toolNames(t, pr.Agent), "write_file") {
		t.Fatalf("lead under coding cannot write: %v", toolNames(t, pr.Agent))
	}
	if ro := pr.Agent.Handoffs[0]; slices.Contains(toolNames(t, ro), "write_file") {
		t.Errorf("the readonly handoff runs under coding: %v", toolNames(t, ro))
	}
}
