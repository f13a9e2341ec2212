package acp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/transcript"
)

type recorder struct {
	mu  sync.Mutex
	ups []sdk.SessionUpdate
}

func (r *recorder) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ups = append(r.ups, n.Update)
	return nil
}

func TestTranslatorStream(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	file := filepath.Join(root, "a.txt")
	if err := os.WriteFile(file, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	tr := newTranslator(rec, "ses_1", root, nil)
	args := json.RawMessage(`{"path":"a.txt","old_string":"one","new_string":"two"}`)

	tr.event(ctx, event.Event{Type: event.ReasoningDelta, Text: "hmm"})
	tr.event(ctx, event.Event{Type: event.TextDelta, Text: "Hi"})
	tr.event(ctx, event.Event{Type: event.MessageCompleted, Text: "Hi"}) // streamed: not repeated
	tr.event(ctx, event.Event{Type: event.MessageCompleted, Text: "Unstreamed"})
	// The gate runs before the tool; the tool then writes; the events trail.
	if _, err := tr.before.gate(ctx, nil, transcript.ToolCall("c1", "edit_file", args)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr.event(ctx, event.Event{Type: event.ToolCallStarted, CallID: "c1", Name: "edit_file", Args: args})
	if ap := tr.event(ctx, event.Event{Type: event.ApprovalRequired, CallID: "c1", Name: "edit_file",
		Approval: &event.Approval{Kind: "path", Summary: "edit a.txt", Rules: []string{"write a.txt"}}}); ap == nil {
		t.Fatal("approval_required gave no permission request")
	} else {
		if ap.call.Title == nil || *ap.call.Title != "edit a.txt" || ap.call.Status == nil || *ap.call.Status != sdk.ToolCallStatusPending {
			t.Errorf("permission tool call: %+v", ap.call)
		}
		if len(ap.call.Content) == 0 || ap.call.Content[0].Diff == nil || *ap.call.Content[0].Diff.OldText != "one\n" || ap.call.Content[0].Diff.NewText != "two\n" {
			t.Errorf("permission request shows no diff: %+v", ap.call.Content)
		}
	}
	tr.event(ctx, event.Event{Type: event.ToolCallCompleted, CallID: "c1", Name: "edit_file", Output: "--- a.txt"})
	todoArgs := json.RawMessage(`{"todos":[{"content":"x","status":"in_progress"}]}`)
	tr.event(ctx, event.Event{Type: event.ToolCallStarted, CallID: "c2", Name: "todo_write", Args: todoArgs})
	tr.event(ctx, event.Event{Type: event.ToolCallCompleted, CallID: "c2", Name: "todo_write", Output: "ok"})
	tr.event(ctx, event.Event{Type: event.ToolCallStarted, CallID: "c3", Name: "shell", Args: json.RawMessage(`{"command":"make"}`)})
	tr.event(ctx, event.Event{Type: event.ToolCallFailed, CallID: "c3", Name: "shell",
		Approval: &event.Approval{Summary: "make", Decision: "denied"}})

	u := rec.ups
	if len(u) != 10 {
		t.Fatalf("%d updates, want 10: %+v", len(u), u)
	}
	if u[0].AgentThoughtChunk == nil || u[1].AgentMessageChunk == nil || u[2].AgentMessageChunk.Content.Text.Text != "Unstreamed" {
		t.Errorf("text updates: %+v %+v %+v", u[0], u[1], u[2])
	}
	if tc := u[3].ToolCall; tc == nil || tc.Kind != sdk.ToolKindEdit || tc.Title != "Edit a.txt" || len(tc.Locations) != 1 {
		t.Errorf("tool_call: %+v", u[3].ToolCall)
	}
	tu := u[4].ToolCallUpdate
	if tu == nil || *tu.Status != sdk.ToolCallStatusCompleted || len(tu.Content) != 1 || tu.Content[0].Diff == nil ||
		*tu.Content[0].Diff.OldText != "one\n" || tu.Content[0].Diff.NewText != "two\n" || tu.Content[0].Diff.Path != file {
		t.Errorf("edit update: %+v", tu)
	}
	if u[5].ToolCall == nil || u[5].ToolCall.Kind != sdk.ToolKindThink || u[6].ToolCallUpdate == nil {
		t.Errorf("todo call: %+v %+v", u[5], u[6])
	}
	if p := u[7].Plan; p == nil || len(p.Entries) != 1 || p.Entries[0].Content != "x" {
		t.Errorf("plan: %+v", u[7])
	}
	if f := u[9].ToolCallUpdate; f == nil || *f.Status != sdk.ToolCallStatusFailed || f.Content[0].Content.Content.Text.Text != "denied: make" {
		t.Errorf("denied call: %+v", u[9])
	}
	if _, ok := tr.before.take("c1", false); ok {
		t.Error("the edit's snapshot outlived its call")
	}
}

func TestReplay(t *testing.T) {
	root := t.TempDir()
	rec := &recorder{}
	entries := []transcript.Entry{
		transcript.SystemInput("system prompt"),
		transcript.UserInput("do it"),
		transcript.Reasoning("thinking"),
		transcript.AssistantText("ok"),
		transcript.ToolCall("c1", "edit_file", json.RawMessage(`{"path":"a.txt","old_string":"x","new_string":"y"}`)),
		transcript.ToolResult("c1", "edit_file", "diff", false),
		transcript.ToolCall("c2", "shell", json.RawMessage(`{"command":"make"}`)),
		transcript.ToolResult("c2", "shell", "denied", true),
		transcript.ToolCall("c3", "todo_write", json.RawMessage(`{"todos":[{"content":"x","status":"completed"}]}`)),
		transcript.ToolResult("c3", "todo_write", "ok", false),
	}
	if err := replay(context.Background(), rec, "ses_1", root, entries); err != nil {
		t.Fatal(err)
	}
	u := rec.ups
	if len(u) != 10 {
		t.Fatalf("%d updates, want 10", len(u))
	}
	if u[0].UserMessageChunk == nil || u[0].UserMessageChunk.Content.Text.Text != "do it" {
		t.Errorf("first update is not the user's message (the system prompt is not replayed): %+v", u[0])
	}
	if u[1].AgentThoughtChunk == nil || u[2].AgentMessageChunk == nil {
		t.Errorf("reasoning/text: %+v %+v", u[1], u[2])
	}
	if d := u[4].ToolCallUpdate.Content[0].Diff; d == nil || *d.OldText != "x" || d.NewText != "y" || d.Path != filepath.Join(root, "a.txt") {
		t.Errorf("replayed edit diff: %+v", u[4].ToolCallUpdate.Content)
	}
	if *u[6].ToolCallUpdate.Status != sdk.ToolCallStatusFailed {
		t.Errorf("failed call replayed as %v", *u[6].ToolCallUpdate.Status)
	}
	if u[9].Plan == nil || u[9].Plan.Entries[0].Status != sdk.PlanEntryStatusCompleted {
		t.Errorf("plan: %+v", u[9])
	}
}
