package todo

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		items   []Item
		wantErr string
	}{
		{"empty list", nil, ""},
		{"one in progress", []Item{{"a", Completed}, {"b", InProgress}, {"c", Pending}}, ""},
		{"two in progress", []Item{{"a", InProgress}, {"b", InProgress}}, "2 items are in_progress"},
		{"bad status", []Item{{"a", "done"}}, `status "done"`},
		{"empty content", []Item{{"  ", Pending}}, "empty content"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(tc.items)
			if tc.wantErr == "" && err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestToolSchemaAndInvoke(t *testing.T) {
	tl := Tool()
	s := tl.Spec()
	if s.Parallel {
		t.Fatal("todo_write must be a barrier so two writes in one turn cannot interleave")
	}
	if err := s.Validate(json.RawMessage(`{"todos":[{"content":"x","status":"bogus"}]}`)); err == nil {
		t.Fatal("schema accepted an unknown status")
	}
	res, err := tl.Invoke(context.Background(), &tool.RunContext{}, json.RawMessage(`{"todos":[{"content":"write code","status":"in_progress"},{"content":"test","status":"pending"}]}`))
	if err != nil || res.IsError {
		t.Fatalf("invoke: %+v %v", res, err)
	}
	if !strings.Contains(res.Text, "[>] write code\n[ ] test") {
		t.Fatalf("result text lacks the list: %q", res.Text)
	}
	res, _ = tl.Invoke(context.Background(), &tool.RunContext{}, json.RawMessage(`{"todos":[{"content":"a","status":"in_progress"},{"content":"b","status":"in_progress"}]}`))
	if !res.IsError || !strings.Contains(res.Text, "exactly one in_progress") {
		t.Fatalf("want validation error result, got %+v", res)
	}
}

func call(id, args string) transcript.Entry {
	return transcript.ToolCall(id, ToolName, json.RawMessage(args))
}

func TestCurrentAndReminder(t *testing.T) {
	entries := []transcript.Entry{
		transcript.UserInput("do it"),
		call("c1", `{"todos":[{"content":"one","status":"in_progress"}]}`),
		transcript.ToolResult("c1", ToolName, "ok", false),
		call("c2", `{"todos":[{"content":"one","status":"completed"},{"content":"two","status":"in_progress"}]}`),
		transcript.ToolResult("c2", ToolName, "ok", false),
		// A failed write does not change the list.
		call("c3", `{"todos":[{"content":"x","status":"in_progress"},{"content":"y","status":"in_progress"}]}`),
		transcript.ToolResult("c3", ToolName, "bad", true),
		// A call without a result yet (still running) does not count either.
		call("c4", `{"todos":[]}`),
	}
	rc := &tool.RunContext{Entries: func() []transcript.Entry { return entries }}
	items := Items(rc)
	if len(items) != 2 || items[1].Content != "two" || items[1].Status != InProgress {
		t.Fatalf("items = %+v", items)
	}
	got, err := Reminder(context.Background(), rc)
	if err != nil || len(got) != 1 {
		t.Fatalf("reminder = %+v, %v", got, err)
	}
	e := got[0]
	if !e.Synthetic || !e.IsUser() || !strings.Contains(e.Text, "[x] one\n[>] two") {
		t.Fatalf("reminder entry = %+v", e)
	}

	// All completed: no reminder.
	entries = append(entries, transcript.ToolResult("c4", ToolName, "ok", false),
		call("c5", `{"todos":[{"content":"one","status":"completed"}]}`),
		transcript.ToolResult("c5", ToolName, "ok", false))
	if got, _ := Reminder(context.Background(), rc); len(got) != 0 {
		t.Fatalf("reminder with nothing open: %+v", got)
	}
	// No list at all: no reminder.
	entries = entries[:1]
	if got, _ := Reminder(context.Background(), rc); len(got) != 0 {
		t.Fatalf("reminder without list: %+v", got)
	}
}

// BenchmarkReminder measures the per-turn cost of the reminder over a long transcript
// (it rescans the entries each turn).
func BenchmarkReminder(b *testing.B) {
	var entries []transcript.Entry
	for i := range 5000 {
		id := fmt.Sprintf("c%d", i)
		if i%50 == 0 {
			entries = append(entries, call(id, `{"todos":[{"content":"a","status":"in_progress"},{"content":"b","status":"pending"}]}`), transcript.ToolResult(id, ToolName, "ok", false))
			continue
		}
		entries = append(entries, transcript.ToolCall(id, "read_file", json.RawMessage(`{"path":"x.go"}`)), transcript.ToolResult(id, "read_file", "package x", false))
	}
	rc := &tool.RunContext{Entries: func() []transcript.Entry { return entries }}
	b.ReportAllocs()
	for b.Loop() {
		if es, _ := Reminder(context.Background(), rc); len(es) != 1 {
			b.Fatal("no reminder")
		}
	}
}
