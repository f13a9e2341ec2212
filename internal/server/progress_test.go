package server

import (
	"encoding/json"
	"testing"

	"github.com/lovia-dev/lovia/internal/event"
)

// A running call's progress reaches the run's event stream (SSE frames) as
// tool_call_progress with the progress object, in order with the call's events.
func TestProgressReachesTheEventStream(t *testing.T) {
	r := &Run{ID: "run_x"}
	r.append(event.Event{Type: event.ToolCallStarted, Seq: 1, RunID: "run_x", CallID: "c1", Name: "ev__long", Args: json.RawMessage(`{}`)}, 10)
	r.append(event.Event{Type: event.ToolCallProgress, Seq: 2, RunID: "run_x", Turn: 1, CallID: "c1", Name: "ev__long",
		Progress: &event.Progress{Progress: 3, Total: 5, Message: "Step 3 of 5"}}, 10)
	r.append(event.Event{Type: event.ToolCallCompleted, Seq: 3, RunID: "run_x", CallID: "c1", Name: "ev__long", Output: "done"}, 10)
	frames, _, _, _ := r.since(1)
	if len(frames) != 2 {
		t.Fatalf("%d frames after seq 1", len(frames))
	}
	var ev event.Event
	if err := json.Unmarshal(frames[0].data, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Type != event.ToolCallProgress || ev.CallID != "c1" || ev.Progress == nil || ev.Progress.String() != "3/5 · Step 3 of 5" {
		t.Fatalf("frame %s", frames[0].data)
	}
}
