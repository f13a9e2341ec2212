package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// agentToolsEnv writes a lead preset offering the checker preset as ask_checker.
func agentToolsEnv(t *testing.T, childScript string) *env {
	t.Helper()
	e := newEnv(t)
	dir := filepath.Join(e.home, ".config", "lovia", "presets")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("lead.yaml", "name: lead\ninstructions: \"Lead.\"\nmodel: script:"+filepath.Join(e.dir, "lead.yaml")+"\nagents_as_tools: [checker]\n")
	write("checker.yaml", "name: checker\ndescription: \"Checks a change.\"\ninstructions: \"Check.\"\nmodel: script:"+filepath.Join(e.dir, "checker.yaml")+"\n")
	e.write("lead.yaml", `
turns:
  - text: "Asking the checker."
    tool_calls:
      - name: ask_checker
        args: {input: "check the change"}
    usage: {input_tokens: 100, output_tokens: 10}
  - text: "The checker is done."
    usage: {input_tokens: 200, output_tokens: 10}
`)
	e.write("checker.yaml", childScript)
	return e
}

type runJSON struct {
	RunID  string `json:"run_id"`
	Output string `json:"output"`
	Usage  struct {
		Input  int `json:"input_tokens"`
		Output int `json:"output_tokens"`
	} `json:"usage"`
}

// TestAgentAsTool: a preset's agents_as_tools are offered as ask_<name>; the child
// runs its own preset (its own model), returns its answer as the tool result, its
// usage is added to the parent's, and `lovia runs show` lists it as a child.
func TestAgentAsTool(t *testing.T) {
	e := agentToolsEnv(t, `
turns:
  - text: "Looks good to me."
    usage: {input_tokens: 5000, output_tokens: 70}
`)
	r := e.run(nil, "run", "--preset", "lead", "--output", "json", "ship it")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var res runJSON
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if res.Usage.Input != 5300 || res.Usage.Output != 90 {
		t.Errorf("parent usage %+v: want the child's 5000/70 added to 300/20", res.Usage)
	}

	r = e.run(nil, "runs", "show", res.RunID, "--json")
	var d struct {
		Entries []struct {
			Type string `json:"type"`
			Name string `json:"name"`
			Text string `json:"text"`
		} `json:"entries"`
		Children []struct {
			ID          string `json:"run_id"`
			Agent       string `json:"agent"`
			Status      string `json:"status"`
			ParentRunID string `json:"parent_run_id"`
		} `json:"children"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		t.Fatalf("runs show --json: %v\n%s", err, r.stdout)
	}
	found := false
	for _, en := range d.Entries {
		if en.Type == "tool_result" && en.Name == "ask_checker" && strings.Contains(en.Text, "Looks good to me.") {
			found = true
		}
	}
	if !found {
		t.Errorf("no ask_checker result with the child's answer: %+v", d.Entries)
	}
	if len(d.Children) != 1 || d.Children[0].Agent != "checker" || d.Children[0].Status != "completed" || d.Children[0].ParentRunID != res.RunID {
		t.Fatalf("children: %+v", d.Children)
	}
	child := d.Children[0].ID
	r = e.run(nil, "runs", "show", res.RunID)
	if !strings.Contains(r.stdout, "children (1):") || !strings.Contains(r.stdout, child) {
		t.Errorf("runs show does not list the child:\n%s", r.stdout)
	}
	r = e.run(nil, "runs", "show", child)
	if r.code != 0 || !strings.Contains(r.stdout, res.RunID) || !strings.Contains(r.stdout, "check the change") || !strings.Contains(r.stdout, "Looks good to me.") {
		t.Errorf("the child's transcript:\n%s\n%s", r.stdout, r.stderr)
	}
}

// TestAgentAsToolApprovals: as for subagents, a child's approval requests are
// denied, even when the parent runs with --approve all; and the child's policy is
// never looser than the parent's.
func TestAgentAsToolApprovals(t *testing.T) {
	e := agentToolsEnv(t, `
turns:
  - text: "Writing."
    tool_calls:
      - name: shell
        args: {command: "touch child_ran_a_command"}
  - text: "Tried."
`)
	r := e.run(nil, "run", "--preset", "lead", "--approve", "all", "ship it")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "child_ran_a_command")); err == nil {
		t.Errorf("the child's command ran without anyone approving it")
	}

	// A readonly parent: the child (coding by default) cannot write either.
	e2 := agentToolsEnv(t, `
turns:
  - text: "Writing."
    tool_calls:
      - name: write_file
        args: {path: child.txt, content: "x"}
  - text: "Tried."
`)
	r = e2.run(nil, "run", "--preset", "lead", "--policy", "readonly", "--approve", "all", "ship it")
	if r.code != 0 {
		t.Fatalf("readonly: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e2.dir, "child.txt")); err == nil {
		t.Errorf("the child wrote under a readonly parent")
	}
}
