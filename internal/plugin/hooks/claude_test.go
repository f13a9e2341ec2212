package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/mailbox"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
)

func claudeGate(t *testing.T, rc *tool.RunContext, dir, matcher, command, name, args string) (res struct {
	Block, Ask bool
	Message    string
	Args       string
}) {
	t.Helper()
	p, err := New(Config{Hooks: []Hook{{Event: "PreToolUse", Matcher: matcher, Command: command, Claude: true}}, Dir: dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.Setup(context.Background(), rc)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.ToolGates) != 1 {
		t.Fatalf("gates = %d", len(c.ToolGates))
	}
	g, err := c.ToolGates[0](context.Background(), rc, transcript.ToolCall("c1", name, json.RawMessage(args)))
	if err != nil {
		t.Fatal(err)
	}
	res.Block, res.Ask, res.Message, res.Args = g.Block, g.Ask, g.Message, string(g.Args)
	return res
}

// TestClaudeInput: a Claude Code hook sees Claude Code's tool names, field names and
// absolute paths, and CLAUDE_PROJECT_DIR.
func TestClaudeInput(t *testing.T) {
	dir := t.TempDir()
	rc := &tool.RunContext{SessionID: "ses_1"}
	claudeGate(t, rc, dir, "Edit|Write", `cat > in.json; echo "$CLAUDE_PROJECT_DIR" > pd.txt`, "edit_file", `{"path":"a/b.go","old_string":"x","new_string":"y"}`)
	data, err := os.ReadFile(filepath.Join(dir, "in.json"))
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		Event     string         `json:"hook_event_name"`
		ToolName  string         `json:"tool_name"`
		ToolInput map[string]any `json:"tool_input"`
		Session   string         `json:"session_id"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		t.Fatal(err)
	}
	if in.Event != "PreToolUse" || in.ToolName != "Edit" || in.ToolInput["file_path"] != filepath.Join(dir, "a/b.go") || in.ToolInput["old_string"] != "x" || in.Session != "ses_1" {
		t.Fatalf("input = %s", data)
	}
	pd, _ := os.ReadFile(filepath.Join(dir, "pd.txt"))
	if strings.TrimSpace(string(pd)) != dir {
		t.Fatalf("CLAUDE_PROJECT_DIR = %q, want %q", pd, dir)
	}
}

func TestClaudeMatchers(t *testing.T) {
	for _, tc := range []struct {
		matcher, tool string
		want          bool
	}{
		{"Bash", "shell", true},
		{"Edit|Write", "write_file", true},
		{"Edit|Write", "read_file", false},
		{"MultiEdit", "edit_file", true},
		{"mcp__github__.*", "github__create_issue", true},
		{"mcp__github__create_issue", "github__create_issue", true},
		{"*", "grep_files", true},
		{"", "list_files", true},
		{"Grep", "grep_files", true},
		{"Glob", "list_files", true},
		{"Task", "spawn_subagent", true},
		{"WebFetch", "read_page", true},
	} {
		got := claudeGate(t, nil, t.TempDir(), tc.matcher, "exit 2", tc.tool, `{}`).Block
		if got != tc.want {
			t.Errorf("matcher %q on %s: matched=%v, want %v", tc.matcher, tc.tool, got, tc.want)
		}
	}
}

func TestClaudeJSONOutput(t *testing.T) {
	dir := t.TempDir()
	t.Run("deny with reason", func(t *testing.T) {
		r := claudeGate(t, nil, dir, "Bash", `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no curl"}}'`, "shell", `{"command":"curl x"}`)
		if !r.Block || r.Message != "no curl" {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("ask tightens", func(t *testing.T) {
		r := claudeGate(t, nil, dir, "Bash", `echo '{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"touches prod"}}'`, "shell", `{"command":"ls"}`)
		if r.Block || !r.Ask || r.Message != "touches prod" {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("allow loosens nothing", func(t *testing.T) {
		r := claudeGate(t, nil, dir, "Bash", `echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'`, "shell", `{"command":"ls"}`)
		if r.Block || r.Ask || r.Args != "" {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("updatedInput in Claude Code's names", func(t *testing.T) {
		r := claudeGate(t, nil, dir, "Write", `echo '{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"file_path":"b.txt","content":"clean"}}}'`, "write_file", `{"path":"a.txt","content":"x"}`)
		var args map[string]any
		if err := json.Unmarshal([]byte(r.Args), &args); err != nil || args["path"] != "b.txt" || args["content"] != "clean" {
			t.Fatalf("args = %s", r.Args)
		}
	})
	t.Run("continue false stops the run", func(t *testing.T) {
		var reason string
		rc := &tool.RunContext{Cancel: func(r string) { reason = r }}
		r := claudeGate(t, rc, dir, "", `echo '{"continue":false,"stopReason":"build is broken"}'`, "shell", `{"command":"ls"}`)
		if !r.Block || !strings.Contains(reason, "build is broken") {
			t.Fatalf("%+v reason=%q", r, reason)
		}
	})
	t.Run("additionalContext reaches the model", func(t *testing.T) {
		mb := &mailbox.Mailbox{}
		rc := &tool.RunContext{Mailbox: mb}
		claudeGate(t, rc, dir, "", `echo '{"hookSpecificOutput":{"additionalContext":"the repo uses tabs"}}'`, "shell", `{"command":"ls"}`)
		msgs := mb.Drain()
		if len(msgs) != 1 || !strings.Contains(msgs[0].Text, "the repo uses tabs") {
			t.Fatalf("msgs = %+v", msgs)
		}
	})
}

func TestClaudeStopGate(t *testing.T) {
	dir := t.TempDir()
	p, err := New(Config{Dir: dir, Hooks: []Hook{{Event: "Stop", Claude: true,
		Command: `python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if d["stop_hook_active"] else 2)' || { echo "keep going" >&2; exit 2; }`}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.Setup(context.Background(), &tool.RunContext{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.StopGates) != 1 {
		t.Fatalf("stop gates = %d", len(c.StopGates))
	}
	v, _ := c.StopGates[0](context.Background(), &tool.RunContext{}, "done", false)
	if !v.Continue || !strings.Contains(v.Message, "keep going") {
		t.Fatalf("first stop: %+v", v)
	}
	v, _ = c.StopGates[0](context.Background(), &tool.RunContext{}, "done", true)
	if v.Continue {
		t.Fatalf("second stop (stop_hook_active): %+v", v)
	}
}
