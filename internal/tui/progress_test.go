package tui

import (
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/event"
)

// A running tool's line shows its latest progress; the finished call does not keep it.
func TestRunningToolShowsProgress(t *testing.T) {
	h := newHarness(t, 100, 24)
	h.typeText("go")
	h.enter()
	name := "everything__trigger-long-running-operation"
	h.events(toolStarted("c1", name, `{"duration":10,"steps":5}`))
	prog := func(n float64, msg string) event.Event {
		e := ev(event.ToolCallProgress)
		e.CallID, e.Name, e.Progress = "c1", name, &event.Progress{Progress: n, Total: 5, Message: msg}
		return e
	}
	h.events(prog(2, ""))
	if v := h.view(); !strings.Contains(v, name+"  2/5") {
		t.Fatalf("progress missing from the running line:\n%s", v)
	}
	h.events(prog(3, "Step 3 of 5\x1b[31m"))
	v := h.view()
	if !strings.Contains(v, name+"  3/5 · Step 3 of 5") || strings.Contains(v, "2/5") {
		t.Fatalf("latest progress not shown:\n%s", v)
	}
	if strings.Contains(v, "\x1b[31m") {
		t.Fatal("the progress message reached the terminal unsanitized")
	}
	h.events(toolDone("c1", name, "Long running operation completed.", 10000, false))
	if sb := h.scrollback(); strings.Contains(sb, "3/5") || !strings.Contains(sb, "✓ "+name) {
		t.Fatalf("finished call:\n%s", sb)
	}
	// A late progress event of a finished call changes nothing.
	h.events(prog(4, ""))
	if v := h.view(); strings.Contains(v, "4/5") {
		t.Fatalf("progress after completion shown:\n%s", v)
	}
}

// A subagent's running tool shows its progress on the subagent's line.
func TestSubagentToolProgress(t *testing.T) {
	h := newHarness(t, 100, 30)
	child := func(ev event.Event) { h.send(ChildEventMsg{ID: "run_1.sub1", Event: ev}) }
	child(event.Event{Type: event.RunStarted, Agent: "coder"})
	child(event.Event{Type: event.ToolCallStarted, Name: "ev__long"})
	child(event.Event{Type: event.ToolCallProgress, Name: "ev__long", Progress: &event.Progress{Progress: 2, Total: 4, Message: "copying"}})
	if v := h.view(); !strings.Contains(v, "ev__long · 2/4 · copying") {
		t.Fatalf("subagent line lacks the progress:\n%s", v)
	}
	child(event.Event{Type: event.ToolCallCompleted, Name: "ev__long"})
	if v := h.view(); strings.Contains(v, "2/4") {
		t.Fatalf("progress kept after the call:\n%s", v)
	}
}
