package headless

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/runtime"
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/usage"
)

func TestExitCodeFollowsTheTerminalEvent(t *testing.T) {
	tests := []struct {
		kind string
		want int
	}{
		{"", 0}, {"provider", 1}, {"tool", 1}, {"output", 1}, {"internal", 1}, {"config", 2}, {"usage", 2},
		{"not_found", 2}, {"run_conflict", 2}, {"max_turns", 3}, {"budget", 3}, {"guardrail", 4},
		{"cancelled", 130}, {"terminated", 143},
	}
	for _, tt := range tests {
		ev := &event.Event{Type: event.RunCompleted}
		if tt.kind != "" {
			ev = &event.Event{Type: event.RunFailed, Error: &event.Error{Kind: tt.kind, Message: "x"}}
		}
		if got := ExitCode(ev, errors.New("ignored when there is an event")); got != tt.want {
			t.Errorf("%q: exit %d, want %d", tt.kind, got, tt.want)
		}
		// Without an event the error decides, with the same mapping.
		var err error
		if tt.kind != "" {
			err = &errs.Error{Kind: errs.Kind(tt.kind)}
		}
		if got := ExitCode(nil, err); got != tt.want {
			t.Errorf("%q without event: exit %d, want %d", tt.kind, got, tt.want)
		}
	}
}

func TestJSONSummary(t *testing.T) {
	var out bytes.Buffer
	w := New(JSON, &out, nil, Options{})
	u := usage.Usage{InputTokens: 10, OutputTokens: 5, CachedInputTokens: 3, Requests: 2}
	w.Event(event.Event{Type: event.TextDelta, Text: "ignored"})
	w.Event(event.Event{Type: event.RunCompleted, RunID: "r1", SessionID: "s1", Status: "completed", FinalOutput: `{"a":1}`,
		StructuredOutput: json.RawMessage(`{"a":1}`), Usage: &u, Turns: 2, FinishReason: "stop"})
	if err := w.Finish(&runtime.Result{RunID: "r1", Status: store.StatusCompleted}, nil); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	want := map[string]any{"run_id": "r1", "session_id": "s1", "status": "completed", "output": `{"a":1}`, "cost_usd": nil,
		"structured_output": map[string]any{"a": float64(1)}, "turns": float64(2), "finish_reason": "stop",
		"usage": map[string]any{"input_tokens": float64(10), "output_tokens": float64(5), "cached_input_tokens": float64(3)}}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if string(gb) != string(wb) {
		t.Errorf("got  %s\nwant %s", gb, wb)
	}

	out.Reset()
	w = New(JSON, &out, nil, Options{})
	w.Event(event.Event{Type: event.ToolCallFailed, CallID: "c1", Name: "shell", IsError: true,
		Approval: &event.Approval{Summary: "rm -rf build", Decision: "denied_by_default"}})
	w.Event(event.Event{Type: event.ToolCallFailed, CallID: "c2", Name: "read_file", IsError: true})
	w.Event(event.Event{Type: event.RunFailed, RunID: "r2", Status: "failed", FinishReason: "max_turns",
		Error: &event.Error{Kind: "max_turns", Message: "max turns reached (1)", Hint: "raise it"}})
	w.Finish(&runtime.Result{RunID: "r2"}, errs.New(errs.KindMaxTurns, "max turns reached (1)", ""))
	if !strings.Contains(out.String(), `"kind": "max_turns"`) || !strings.Contains(out.String(), `"status": "failed"`) || strings.Contains(out.String(), "structured_output") ||
		!strings.Contains(out.String(), `"denied": [`) || !strings.Contains(out.String(), `"summary": "rm -rf build"`) || strings.Contains(out.String(), `"c2"`) {
		t.Errorf("failed summary: %s", out.String())
	}
}

func TestStreamWritesOneLinePerEvent(t *testing.T) {
	var out bytes.Buffer
	w := New(StreamJSON, &out, nil, Options{})
	for i, typ := range []event.Type{event.RunStarted, event.ToolCallStarted, event.RunCompleted} {
		w.Event(event.Event{Type: typ, Seq: int64(i + 1), RunID: "r"})
		// Each event is on stdout as soon as Event returns (deltas: within deltaFlush,
		// see TestStreamWriterFlushing).
		if n := strings.Count(out.String(), "\n"); n != i+1 {
			t.Fatalf("after %s: %d lines", typ, n)
		}
	}
}

func TestTextProgress(t *testing.T) {
	events := []event.Event{
		{Type: event.TurnStarted, Turn: 1, Agent: "coder"},
		{Type: event.ToolCallStarted, Name: "shell", Args: json.RawMessage(`{"command":"go test ./..."}`)},
		{Type: event.ToolCallFailed, Name: "shell", Output: "denied", IsError: true, Approval: &event.Approval{Summary: "go test ./...", Decision: "denied_by_default"}},
		{Type: event.ToolCallFailed, Name: "read_file", Output: "no such file\nat all", IsError: true},
		{Type: event.ToolCallCompleted, Name: "read_file", Output: "package main", DurationMS: 3},
		{Type: event.ContextCompacted, Compaction: &event.Compaction{Stages: []string{"clear"}, TokensBefore: 100, TokensAfter: 50}},
		{Type: event.HandoffOccurred, From: "planner", To: "coder"},
		{Type: event.RunCompleted, Status: "completed", FinalOutput: "All done.", Turns: 1},
	}
	tests := []struct {
		name         string
		opts         Options
		want, absent []string
	}{
		{"quiet", Options{}, nil, []string{"→", "✗"}},
		{"progress", Options{Progress: true}, []string{"→ shell {\"command\":\"go test ./...\"}", "✗ denied: go test ./... (denied_by_default; rerun with --approve all to allow)", "✗ read_file failed: no such file at all", "⇄ handoff planner → coder"}, []string{"✓", "compacted", "— turn"}},
		{"verbose", Options{Verbose: true}, []string{"— turn 1 (coder)", "✓ read_file (3 ms) package main", "context compacted 100 → 50 tokens (clear)", "· completed in 1 turns"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			w := New(Text, &out, &errb, tt.opts)
			for _, ev := range events {
				w.Event(ev)
			}
			w.Finish(&runtime.Result{Output: "All done."}, nil)
			if out.String() != "All done.\n" {
				t.Errorf("stdout %q", out.String())
			}
			for _, s := range tt.want {
				if !strings.Contains(errb.String(), s) {
					t.Errorf("stderr lacks %q:\n%s", s, errb.String())
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(errb.String(), s) {
					t.Errorf("stderr has %q:\n%s", s, errb.String())
				}
			}
		})
	}
}

func TestTextPrintsNothingOnFailureAndPrettyPrintsStructuredOutput(t *testing.T) {
	var out bytes.Buffer
	w := New(Text, &out, &bytes.Buffer{}, Options{})
	w.Event(event.Event{Type: event.RunFailed, Status: "failed", FinalOutput: "partial", Error: &event.Error{Kind: "provider", Message: "x"}})
	w.Finish(nil, errors.New("x"))
	if out.Len() != 0 {
		t.Errorf("stdout on failure: %q", out.String())
	}
	out.Reset()
	w = New(Text, &out, &bytes.Buffer{}, Options{})
	w.Event(event.Event{Type: event.RunCompleted, Status: "completed", FinalOutput: `{"a":1}`, StructuredOutput: json.RawMessage(`{"a":1}`)})
	w.Finish(nil, nil)
	if out.String() != "{\n  \"a\": 1\n}\n" {
		t.Errorf("structured: %q", out.String())
	}
}

func TestParseFormat(t *testing.T) {
	for _, s := range []string{"text", "json", "stream-json"} {
		if f, err := ParseFormat(s); err != nil || string(f) != s {
			t.Errorf("%s: %v", s, err)
		}
	}
	if _, err := ParseFormat("yaml"); errs.ExitCode(err) != 2 {
		t.Errorf("yaml: %v", err)
	}
}

func TestTextReportsDenialsWithoutProgress(t *testing.T) {
	denied := event.Event{Type: event.ToolCallFailed, CallID: "c", Name: "shell", IsError: true,
		Approval: &event.Approval{Summary: "go test ./...", Decision: "denied_by_default"}}
	for _, tt := range []struct {
		opts Options
		want string
	}{
		{Options{}, "lovia: denied 1 action(s) that needed approval (rerun with --approve all to allow): go test ./...\n"},
		{Options{Quiet: true}, ""},
		{Options{Progress: true}, "  ✗ denied: go test ./... (denied_by_default; rerun with --approve all to allow)\n"},
	} {
		var out, errb bytes.Buffer
		w := New(Text, &out, &errb, tt.opts)
		w.Event(denied)
		w.Event(event.Event{Type: event.RunCompleted, Status: "completed", FinalOutput: "done"})
		w.Finish(nil, nil)
		if errb.String() != tt.want {
			t.Errorf("%+v: stderr %q, want %q", tt.opts, errb.String(), tt.want)
		}
	}
}
