package headless

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/event"
)

func progressEv(at time.Time, n float64, msg string) event.Event {
	return event.Event{Type: event.ToolCallProgress, Time: at, CallID: "c1", Name: "ev__long", Progress: &event.Progress{Progress: n, Total: 5, Message: msg}}
}

// Text output: progress goes to stderr only (with Progress), thinned to one line a
// second per call plus the final step; stdout stays the answer alone.
func TestTextProgressLines(t *testing.T) {
	var out, errw bytes.Buffer
	w := New(Text, &out, &errw, Options{Progress: true})
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	w.Event(event.Event{Type: event.ToolCallStarted, CallID: "c1", Name: "ev__long", Args: json.RawMessage(`{}`)})
	w.Event(progressEv(t0, 1, ""))
	w.Event(progressEv(t0.Add(100*time.Millisecond), 2, ""))                   // thinned
	w.Event(progressEv(t0.Add(1100*time.Millisecond), 3, "third\x1b]0;x\x07")) // shown, sanitized
	w.Event(progressEv(t0.Add(1200*time.Millisecond), 5, ""))                  // the end: shown
	w.Event(event.Event{Type: event.ToolCallCompleted, CallID: "c1", Name: "ev__long"})
	got := errw.String()
	for _, want := range []string{"⋯ ev__long 1/5\n", "⋯ ev__long 3/5 · third", "⋯ ev__long 5/5\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("stderr lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "2/5") || strings.Contains(got, "\x1b]") || strings.Contains(got, "\x07") {
		t.Errorf("stderr:\n%q", got)
	}
	if out.Len() != 0 {
		t.Fatalf("progress reached stdout: %q", out.String())
	}

	// Without Progress (stderr not a terminal, no -v): nothing.
	errw.Reset()
	w = New(Text, &out, &errw, Options{})
	w.Event(progressEv(t0, 1, ""))
	if errw.Len() != 0 || out.Len() != 0 {
		t.Fatalf("progress printed without -v or a terminal: %q %q", errw.String(), out.String())
	}
}

// stream-json writes progress events as they come, with the progress object.
func TestStreamWritesProgress(t *testing.T) {
	var out bytes.Buffer
	w := New(StreamJSON, &out, nil, Options{})
	w.Event(progressEv(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), 3, "Step 3 of 5"))
	var v map[string]any
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	p, _ := v["progress"].(map[string]any)
	if v["type"] != "tool_call_progress" || v["call_id"] != "c1" || p["progress"] != 3.0 || p["total"] != 5.0 || p["message"] != "Step 3 of 5" {
		t.Fatalf("line %s", out.String())
	}
}
