package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/mailbox"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
)

func TestNewRunnerValidation(t *testing.T) {
	tests := []struct {
		hook Hook
		want string
	}{
		{Hook{Event: "before_tool", Command: "true"}, "unknown hook event"},
		{Hook{Event: PreToolUse, Command: " "}, "command is empty"},
		{Hook{Event: PreToolUse, Command: "true", Matcher: "("}, "not a valid regular expression"},
		{Hook{Event: PreToolUse, Command: "true", Timeout: -1}, "negative timeout"},
	}
	for _, tc := range tests {
		_, err := NewRunner(Config{Hooks: []Hook{tc.hook}}, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || errs.KindOf(err) != errs.KindConfig || errs.HintOf(err) == "" {
			t.Errorf("%+v: err = %v, want config error %q with a hint", tc.hook, err, tc.want)
		}
	}
}

func setup(t *testing.T, hooks ...Hook) (*Plugin, string) {
	t.Helper()
	dir := t.TempDir()
	p, err := New(Config{Hooks: hooks, Dir: dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p, dir
}

func gate(t *testing.T, p *Plugin, rc *tool.RunContext, name, args string) (bool, string) {
	t.Helper()
	c, err := p.Setup(context.Background(), rc)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.ToolGates) != 1 {
		t.Fatalf("want one tool gate, got %d", len(c.ToolGates))
	}
	res, err := c.ToolGates[0](context.Background(), rc, transcript.ToolCall("call_1", name, json.RawMessage(args)))
	if err != nil {
		t.Fatal(err)
	}
	return res.Block, res.Message
}

func TestPreToolUse(t *testing.T) {
	rc := &tool.RunContext{RunID: "run_1", SessionID: "ses_1", Agent: "coder", Turn: 3}
	t.Run("block with stderr", func(t *testing.T) {
		p, _ := setup(t, Hook{Event: PreToolUse, Matcher: "shell", Command: `echo "no rm -rf here" >&2; exit 2`})
		block, msg := gate(t, p, rc, "shell", `{"command":"rm -rf /"}`)
		if !block || !strings.Contains(msg, "no rm -rf here") {
			t.Fatalf("block=%v msg=%q", block, msg)
		}
	})
	t.Run("matcher skips other tools", func(t *testing.T) {
		p, _ := setup(t, Hook{Event: PreToolUse, Matcher: "shell", Command: `exit 2`})
		if block, _ := gate(t, p, rc, "shell_output", `{}`); block {
			t.Fatal("anchored matcher 'shell' matched shell_output")
		}
	})
	t.Run("allow and stdin payload", func(t *testing.T) {
		p, dir := setup(t, Hook{Event: PreToolUse, Matcher: "write_file|edit_file", Command: `cat > input.json`})
		if block, msg := gate(t, p, rc, "edit_file", `{"path":"a.go"}`); block {
			t.Fatalf("blocked: %s", msg)
		}
		data, err := os.ReadFile(filepath.Join(dir, "input.json"))
		if err != nil {
			t.Fatal(err)
		}
		var in map[string]any
		if err := json.Unmarshal(data, &in); err != nil {
			t.Fatalf("stdin is not JSON: %q", data)
		}
		want := map[string]any{"hook_event_name": "pre_tool_use", "session_id": "ses_1", "run_id": "run_1", "tool_name": "edit_file", "tool_use_id": "call_1", "cwd": dir, "agent": "coder"}
		for k, v := range want {
			if in[k] != v {
				t.Errorf("stdin %s = %v, want %v", k, in[k], v)
			}
		}
		if ti, _ := in["tool_input"].(map[string]any); ti["path"] != "a.go" {
			t.Errorf("tool_input = %v", in["tool_input"])
		}
	})
	for _, out := range []string{
		`{"decision":"block","reason":"use the formatter first"}`,
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"use the formatter first"}}`,
		`{"continue":false,"stopReason":"use the formatter first"}`,
	} {
		t.Run("json decision "+out[:12], func(t *testing.T) {
			p, _ := setup(t, Hook{Event: PreToolUse, Command: `echo '` + out + `'`})
			if block, msg := gate(t, p, rc, "x", `{}`); !block || msg != "use the formatter first" {
				t.Fatalf("block=%v msg=%q", block, msg)
			}
		})
	}
	t.Run("json allow", func(t *testing.T) {
		p, _ := setup(t, Hook{Event: PreToolUse, Command: `echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'`})
		if block, _ := gate(t, p, rc, "x", `{}`); block {
			t.Fatal("allow decision blocked")
		}
	})
	t.Run("other exit code is a warning, not a block", func(t *testing.T) {
		p, _ := setup(t, Hook{Event: PreToolUse, Command: `echo oops >&2; exit 1`})
		if block, _ := gate(t, p, rc, "x", `{}`); block {
			t.Fatal("exit 1 blocked")
		}
	})
	t.Run("timeout kills the process group and does not block", func(t *testing.T) {
		p, _ := setup(t, Hook{Event: PreToolUse, Command: `sleep 30 | cat; exit 2`, Timeout: 0.3})
		start := time.Now()
		block, _ := gate(t, p, rc, "x", `{}`)
		if block {
			t.Fatal("timed-out hook blocked")
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("timeout took %v", d)
		}
	})
}

func TestOtherEvents(t *testing.T) {
	p, dir := setup(t,
		Hook{Event: SessionStart, Command: `echo "Branch: main"`},
		Hook{Event: UserPromptSubmit, Command: `grep -q secret && { echo "prompt mentions a secret" >&2; exit 2; }; exit 0`},
		Hook{Event: PostToolUse, Matcher: "write_file", Command: `echo "run gofmt on the file" >&2; exit 2`},
		Hook{Event: Stop, Command: `cat > stop.json`},
	)
	mb := &mailbox.Mailbox{}
	entries := []transcript.Entry{transcript.ToolCall("c1", "write_file", json.RawMessage(`{"path":"x.go"}`))}
	rc := &tool.RunContext{RunID: "r", Mailbox: mb, Entries: func() []transcript.Entry { return entries }}
	c, err := p.Setup(context.Background(), rc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.Instructions, "Branch: main") {
		t.Fatalf("session_start stdout missing from instructions: %q", c.Instructions)
	}
	ctx := context.Background()
	res, _ := c.InputGuardrails[0](ctx, rc, "here is my secret token")
	if !res.Tripped || !strings.Contains(res.Message, "prompt mentions a secret") {
		t.Fatalf("guardrail = %+v", res)
	}
	if res, _ := c.InputGuardrails[0](ctx, rc, "hello"); res.Tripped {
		t.Fatal("harmless prompt blocked")
	}
	c.Hooks[0](ctx, event.Event{Type: event.ToolCallCompleted, CallID: "c1", Name: "write_file", Output: "wrote"}, rc)
	c.Hooks[0](ctx, event.Event{Type: event.ToolCallCompleted, CallID: "c2", Name: "read_file", Output: "x"}, rc)
	msgs := mb.Drain()
	if len(msgs) != 1 || !strings.Contains(msgs[0].Text, "run gofmt on the file") || !strings.Contains(msgs[0].Text, "write_file") {
		t.Fatalf("mailbox = %+v", msgs)
	}
	c.Hooks[0](ctx, event.Event{Type: event.RunCompleted, Status: "completed", FinalOutput: "done"}, rc)
	data, _ := os.ReadFile(filepath.Join(dir, "stop.json"))
	if !strings.Contains(string(data), `"hook_event_name":"stop"`) || !strings.Contains(string(data), `"final_output":"done"`) {
		t.Fatalf("stop input = %s", data)
	}
}
