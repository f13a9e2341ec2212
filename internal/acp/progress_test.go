package acp

import (
	"context"
	"encoding/json"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/lovia-dev/lovia/internal/event"
)

// A running call's progress reaches the client as a tool_call_update with the
// progress as its content; none follows the call's end.
func TestProgressBecomesToolCallUpdate(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	tr := newTranslator(rec, "ses_1", t.TempDir(), nil)
	name := "everything__trigger-long-running-operation"
	prog := event.Event{Type: event.ToolCallProgress, CallID: "c1", Name: name, Progress: &event.Progress{Progress: 3, Total: 5, Message: "Step 3 of 5"}}
	tr.event(ctx, prog) // before the start: unknown call, ignored
	tr.event(ctx, event.Event{Type: event.ToolCallStarted, CallID: "c1", Name: name, Args: json.RawMessage(`{"steps":5}`)})
	tr.event(ctx, prog)
	tr.event(ctx, event.Event{Type: event.ToolCallCompleted, CallID: "c1", Name: name, Output: "done"})
	tr.event(ctx, prog) // after the end: ignored
	u := rec.ups
	if len(u) != 3 || u[0].ToolCall == nil {
		t.Fatalf("updates %+v", u)
	}
	p := u[1].ToolCallUpdate
	if p == nil || p.ToolCallId != "c1" || p.Status == nil || *p.Status != sdk.ToolCallStatusInProgress ||
		len(p.Content) != 1 || p.Content[0].Content == nil || p.Content[0].Content.Content.Text.Text != "3/5 · Step 3 of 5" {
		t.Fatalf("progress update %+v", p)
	}
	if d := u[2].ToolCallUpdate; d == nil || *d.Status != sdk.ToolCallStatusCompleted {
		t.Fatalf("completion %+v", u[2])
	}
}
