package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/plugin/mcp"
)

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDoctorCommand(t *testing.T) {
	e := newStoreEnv(t)
	script := filepath.Join(e.repoA, "s.yaml")
	writeFile(t, script, "turns:\n  - text: hi\n")

	if code := e.run(e.repoA, "doctor", "-m", "script:"+script); code != 0 {
		t.Fatalf("healthy doctor exit %d\n%s%s", code, e.out, e.errb)
	}
	for _, want := range []string{"✓ config", "✓ model", "! sandbox", "off in config", "✓ database"} {
		if !strings.Contains(e.out.String(), want) {
			t.Errorf("doctor output lacks %q:\n%s", want, e.out)
		}
	}

	writeFile(t, e.dbPath(), strings.Repeat("garbage!", 1000))
	if code := e.run(e.repoA, "doctor", "-m", "script:"+script); code != 1 {
		t.Fatalf("corrupt database: exit %d, want 1\n%s", code, e.out)
	}
	if !strings.Contains(e.out.String(), "✗ database") || !strings.Contains(e.out.String(), "fix: ") {
		t.Errorf("doctor output:\n%s", e.out)
	}

	if code := e.run(e.repoA, "doctor", "--json", "-m", "script:"+script); code != 1 {
		t.Fatalf("--json exit %d", code)
	}
	var rs []struct{ Check, Status, Detail, Fix string }
	if err := json.Unmarshal(e.out.Bytes(), &rs); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, e.out)
	}
	found := false
	for _, r := range rs {
		found = found || (r.Check == "database" && r.Status == "fail" && r.Fix != "")
	}
	if !found {
		t.Errorf("no failed database check in %+v", rs)
	}
}

func TestSkillsCommand(t *testing.T) {
	e := newStoreEnv(t)
	writeFile(t, filepath.Join(e.repoA, ".lovia", "skills", "deploy", "SKILL.md"),
		"---\nname: deploy\ndescription: Deploy the service to staging.\n---\nRun make deploy.\n")
	writeFile(t, filepath.Join(e.repoA, ".lovia", "skills", "broken", "SKILL.md"), "---\nname: [oops\n---\n")
	if code := e.run(e.repoA, "skills"); code != 0 {
		t.Fatalf("exit %d\n%s", code, e.errb)
	}
	out := e.out.String()
	for _, want := range []string{"NAME", "deploy", "Deploy the service to staging.", filepath.Join(".lovia", "skills", "deploy", "SKILL.md"), "git-commit", "bundled:"} {
		if !strings.Contains(out, want) {
			t.Errorf("lovia skills lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(e.errb.String(), filepath.Join("broken", "SKILL.md")) {
		t.Errorf("the broken skill is not reported on stderr: %q", e.errb)
	}
	if code := e.run(e.repoA, "skills", "--json"); code != 0 {
		t.Fatalf("--json exit %d", code)
	}
	var rows []struct{ Name, Description, Source, Path string }
	if err := json.Unmarshal(e.out.Bytes(), &rows); err != nil {
		t.Fatal(err)
	}
	var got *struct{ Name, Description, Source, Path string }
	for i := range rows {
		if rows[i].Name == "deploy" {
			got = &rows[i]
		}
	}
	if got == nil || got.Description != "Deploy the service to staging." || !strings.HasSuffix(got.Path, "SKILL.md") {
		t.Fatalf("deploy skill in JSON: %+v", rows)
	}
}

func TestMCPCommand(t *testing.T) {
	e := newStoreEnv(t)
	if code := e.run(e.repoA, "mcp"); code != 0 || !strings.Contains(e.out.String(), "no MCP servers configured") {
		t.Fatalf("no servers: exit %d\n%s", code, e.out)
	}
	writeFile(t, filepath.Join(e.repoA, ".lovia", "config.yaml"),
		"mcp:\n  servers:\n    broken:\n      command: "+filepath.Join(e.repoA, "no-such-server")+"\n      startup_timeout: 5s\n    off:\n      command: whatever\n      disabled: true\n")
	// Untrusted, the project's servers are not started: the notice names them.
	if code := e.run(e.repoA, "mcp", "list"); code != 0 || !strings.Contains(e.errb.String(), "mcp.servers.broken") {
		t.Fatalf("untrusted project servers: exit %d\n%s%s", code, e.out, e.errb)
	}
	if code := e.run(e.repoA, "mcp", "list", "--trust"); code != 1 {
		t.Fatalf("failing server: exit %d, want 1\n%s", code, e.out)
	}
	out := e.out.String()
	for _, want := range []string{"SERVER", "broken", "failed", "no-such-server", "off", "disabled"} {
		if !strings.Contains(out, want) {
			t.Errorf("lovia mcp list lacks %q:\n%s", want, out)
		}
	}
	if code := e.run(e.repoA, "mcp", "--json", "--trust"); code != 1 {
		t.Fatalf("--json exit %d", code)
	}
	var list []struct{ Name, Status, Error string }
	if err := json.Unmarshal(e.out.Bytes(), &list); err != nil {
		t.Fatalf("%v\n%s", err, e.out)
	}
	if len(list) != 2 || list[0].Name != "broken" || list[0].Status != "failed" || list[0].Error == "" || list[1].Status != "disabled" {
		t.Fatalf("mcp --json: %+v", list)
	}
}

func TestModelAndPresetCompletion(t *testing.T) {
	e := newStoreEnv(t)
	writeFile(t, filepath.Join(e.repoA, "evals", "one.yaml"), "turns: []\n")
	writeFile(t, filepath.Join(e.home, ".config", "lovia", "presets", "docs.yaml"), "name: docs\ndescription: Writes documentation.\ninstructions: Write docs.\n")
	writeFile(t, filepath.Join(e.repoA, ".lovia", "config.yaml"), "models:\n  openai:my-finetune:\n    context_window: 32000\n")
	wd, _ := os.Getwd()
	if err := os.Chdir(e.repoA); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)

	tests := []struct {
		args    []string
		want    []string
		notWant []string
	}{
		{[]string{"__complete", "run", "--model", ""}, []string{"openai:", "anthropic:", "script:"}, []string{"openai:gpt-4.1"}},
		{[]string{"__complete", "run", "--model", "anth"}, []string{"anthropic:"}, []string{"openai:"}},
		{[]string{"__complete", "run", "-m", "anthropic:"}, []string{"anthropic:claude-sonnet-4-5"}, []string{"openai:gpt-4.1"}},
		{[]string{"__complete", "-C", e.repoA, "run", "-m", "openai:"}, []string{"openai:gpt-4.1", "openai:my-finetune"}, nil},
		{[]string{"__complete", "run", "-m", "script:ev"}, []string{"script:evals/"}, nil},
		{[]string{"__complete", "run", "-m", "script:evals/"}, []string{"script:evals/one.yaml"}, nil},
		{[]string{"__complete", "chat", "--preset", ""}, []string{"coder", "reviewer", "planner", "docs\tWrites documentation."}, nil},
		{[]string{"__complete", "--preset", "re"}, []string{"reviewer"}, []string{"coder"}},
	}
	for _, tt := range tests {
		e.run("", tt.args...)
		out := e.out.String()
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: lacks %q:\n%s", tt.args, w, out)
			}
		}
		lines := strings.Split(out, "\n")
		for _, nw := range tt.notWant {
			for _, l := range lines {
				if l == nw || strings.HasPrefix(l, nw+"\t") {
					t.Errorf("%v: offers %q:\n%s", tt.args, nw, out)
				}
			}
		}
	}
}

func TestMCPTable(t *testing.T) {
	var b strings.Builder
	list := []mcp.ServerStatus{
		{Name: "fs", Transport: "stdio", Target: "npx -y server-filesystem .", Status: "ok", Tools: []mcp.ToolInfo{
			{Name: "fs__read_file", Original: "read_file", Description: "Read a file.\nMore detail."},
			{Name: "fs__list", Original: "list", Description: "List a directory."},
		}},
		{Name: "web", Transport: "http", Target: "https://example.com/mcp", Status: "failed", Error: "connection refused\n(after 30s)"},
	}
	if err := writeMCPTable(&b, list, true); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"fs", "ok", "2", "npx -y server-filesystem .", "web", "failed: connection refused (after 30s)", "fs__read_file", "Read a file.", "fs__list"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "More detail.") {
		t.Errorf("tool descriptions should be one line:\n%s", out)
	}
	b.Reset()
	if err := writeMCPTable(&b, list, false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "fs__read_file") {
		t.Errorf("--tools=false still lists tools:\n%s", b.String())
	}
}
