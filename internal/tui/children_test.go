package tui

import (
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/event"
)

// Running subagents are drawn in the live region with their turn and tool; a finished
// one leaves the live region and prints one line to scrollback.
func TestSubagentChildrenShown(t *testing.T) {
	h := newHarness(t, 100, 30)
	child := func(id string, ev event.Event) { h.send(ChildEventMsg{ID: id, Event: ev}) }
	child("run_1.sub1", event.Event{Type: event.RunStarted, Agent: "coder"})
	child("run_1.sub1", event.Event{Type: event.TurnStarted, Turn: 2})
	child("run_1.sub1", event.Event{Type: event.ToolCallStarted, Name: "grep_files"})
	child("run_1.sub2", event.Event{Type: event.RunStarted, Agent: "reviewer"})
	v := h.view()
	for _, want := range []string{"subagent run_1.sub1", "coder", "turn 2", "grep_files", "subagent run_1.sub2", "reviewer"} {
		if !strings.Contains(v, want) {
			t.Fatalf("live region lacks %q:\n%s", want, v)
		}
	}
	child("run_1.sub1", event.Event{Type: event.RunCompleted, Status: "completed", Turns: 3})
	child("run_1.sub2", event.Event{Type: event.RunFailed, Status: "failed", Turns: 1})
	v = h.view()
	if strings.Contains(v, "subagent run_1.sub") {
		t.Fatalf("finished children still in the live region:\n%s", v)
	}
	sb := h.scrollback()
	if !strings.Contains(sb, "✓ subagent run_1.sub1 finished · 3 turns") || !strings.Contains(sb, "✗ subagent run_1.sub2 failed · 1 turns") {
		t.Fatalf("scrollback lacks the children's outcomes:\n%s", sb)
	}
	// A late event of a finished child does not bring it back.
	child("run_1.sub1", event.Event{Type: event.RunCompleted, Status: "completed"})
	if strings.Count(h.scrollback(), "run_1.sub1") != 1 {
		t.Fatalf("finished child printed twice:\n%s", h.scrollback())
	}
}
