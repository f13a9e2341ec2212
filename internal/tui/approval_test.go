package tui

import (
	"encoding/json"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/lovia-dev/lovia/internal/event"
)

// pendingTouch starts a run and shows an approval for `touch x.txt`.
func pendingTouch(t *testing.T) *harness {
	h := newHarness(t, 100, 30)
	h.typeText("make a file")
	h.enter()
	a := ev(event.ApprovalRequired)
	a.CallID, a.Name, a.Args = "c1", "shell", json.RawMessage(`{"command":"touch x.txt"}`)
	a.Approval = &event.Approval{Kind: "command", Summary: "touch x.txt", Subcommands: []string{"touch x.txt"}, Rules: []string{"touch"}}
	h.events(toolStarted("c1", "shell", `{"command":"touch x.txt"}`), a)
	if !strings.Contains(h.view(), "Run this command?") {
		t.Fatalf("approval not shown:\n%s", h.view())
	}
	return h
}

func (h *harness) decided() bool {
	_, ok := h.run().decisions["c1"]
	return ok
}

// Typed text, however many y, a, n, m and digits it holds, goes to the prompt and
// never answers the approval; Enter then queues it as steering.
func TestTypingNeverAnswersApproval(t *testing.T) {
	h := pendingTouch(t)
	if !strings.Contains(h.view(), "Approval waiting above") {
		t.Fatalf("placeholder does not say an approval waits:\n%s", h.view())
	}
	h.advance(approvalGuard)
	const text = "hey yes and more, 1 2 3 a n m y"
	h.typeText(text)
	if h.decided() {
		t.Fatalf("typing answered the approval: %+v", h.run().decisions)
	}
	if got := h.m.input.Value(); got != text {
		t.Fatalf("prompt = %q, want %q", got, text)
	}
	h.enter()
	if h.decided() {
		t.Fatal("Enter after typing answered the approval")
	}
	if len(h.m.queued) != 1 || h.m.queued[0].text != text {
		t.Fatalf("typed text not queued as steering: %+v", h.m.queued)
	}
	if !strings.Contains(h.view(), "Run this command?") {
		t.Fatalf("approval gone:\n%s", h.view())
	}
	// Enter on an empty prompt without a selection only explains.
	h.enter()
	if h.decided() || !strings.Contains(h.view(), "choose an answer") {
		t.Fatalf("bare Enter: decided=%v\n%s", h.decided(), h.view())
	}
	// A selection right before Enter does answer, and the prompt keeps its draft.
	h.typeText("draft")
	h.key(tea.KeyDown)
	h.enter()
	if d, ok := h.run().decisions["c1"]; !ok || !d.Allow || d.Session {
		t.Fatalf("decision = %+v, %v", d, ok)
	}
	if h.m.input.Value() != "draft" {
		t.Fatalf("prompt = %q after answering", h.m.input.Value())
	}
}

// A selection is not enough during the guard after the approval appears: Enter then
// does nothing, and the same keys work once the guard (a tick message) is over.
func TestApprovalGuard(t *testing.T) {
	h := pendingTouch(t)
	h.typeText("1")
	h.enter()
	if h.decided() {
		t.Fatal("Enter within the guard answered the approval")
	}
	h.advance(approvalGuard / 2)
	h.enter()
	if h.decided() {
		t.Fatal("Enter within the guard answered the approval")
	}
	h.advance(approvalGuard / 2)
	if !strings.Contains(h.view(), "Enter confirms allow once") {
		t.Fatalf("selection not shown:\n%s", h.view())
	}
	h.enter()
	if d, ok := h.run().decisions["c1"]; !ok || !d.Allow {
		t.Fatalf("decision = %+v, %v", d, ok)
	}
}

// Each new approval has its own guard and starts with nothing selected.
func TestNextApprovalGuardedAgain(t *testing.T) {
	h := pendingTouch(t)
	a := ev(event.ApprovalRequired)
	a.CallID, a.Name = "c2", "shell"
	a.Approval = &event.Approval{Kind: "command", Summary: "rm -rf build"}
	h.events(a)
	h.choose(3)
	if d, ok := h.run().decisions["c1"]; !ok || d.Allow {
		t.Fatalf("first decision = %+v, %v", d, ok)
	}
	if !strings.Contains(h.view(), "rm -rf build") {
		t.Fatalf("second approval not shown:\n%s", h.view())
	}
	h.enter() // the selection was for the first approval
	h.typeText("1")
	h.enter() // within the second approval's guard
	if _, ok := h.run().decisions["c2"]; ok {
		t.Fatal("second approval answered without its own guard")
	}
	h.advance(approvalGuard)
	h.enter()
	if d, ok := h.run().decisions["c2"]; !ok || !d.Allow {
		t.Fatalf("second decision = %+v, %v", d, ok)
	}
}

// An ask_human question offers its suggested answers, a free answer and declining,
// through the same guarded widget.
func TestQuestionAnswers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		keys  func(h *harness)
		allow bool
		msg   string
	}{
		{"suggested", func(h *harness) { h.choose(2) }, true, "postgres"},
		{"own words", func(h *harness) { h.choose(3); h.typeText("neither, use files"); h.enter() }, true, "neither, use files"},
		{"decline", func(h *harness) { h.choose(4) }, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, 100, 30)
			h.typeText("store it")
			h.enter()
			a := ev(event.ApprovalRequired)
			a.CallID, a.Name = "q1", "ask_human"
			a.Approval = &event.Approval{Kind: "question", Summary: "Which database?", Subcommands: []string{"sqlite", "postgres"}}
			h.events(a)
			v := h.view()
			for _, want := range []string{"The agent asks you", "Which database?", "1. sqlite", "2. postgres", "3. answer in my own words", "4. decline to answer"} {
				if !strings.Contains(v, want) {
					t.Errorf("question lacks %q:\n%s", want, v)
				}
			}
			h.typeText("y")
			if _, ok := h.run().decisions["q1"]; ok {
				t.Fatal("typing answered the question")
			}
			h.m.input.Reset()
			tc.keys(h)
			d, ok := h.run().decisions["q1"]
			if !ok || d.Allow != tc.allow || d.Message != tc.msg {
				t.Fatalf("decision = %+v, %v", d, ok)
			}
		})
	}
}

// One Ctrl-C on an empty idle prompt only warns in the status line; a second within
// the window quits, and after the window (a tick message) it warns again.
func TestCtrlCTwiceToQuit(t *testing.T) {
	h := newHarness(t, 80, 24)
	ctrlC := tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	h.send(ctrlC)
	if h.m.quitting {
		t.Fatal("one Ctrl-C quit")
	}
	if !strings.Contains(h.view(), "press Ctrl-C again to quit") {
		t.Fatalf("status line does not ask for a second press:\n%s", h.view())
	}
	h.advance(quitWindow)
	if strings.Contains(h.view(), "again to quit") {
		t.Fatalf("warning outlived its window:\n%s", h.view())
	}
	h.send(ctrlC)
	if h.m.quitting {
		t.Fatal("Ctrl-C after the window expired quit at once")
	}
	h.typeText("x") // another key disarms as well
	h.send(ctrlC)   // clears the prompt
	h.send(ctrlC)   // warns
	if h.m.quitting || h.m.input.Value() != "" {
		t.Fatalf("quitting=%v prompt=%q", h.m.quitting, h.m.input.Value())
	}
	h.advance(quitWindow / 2)
	h.send(ctrlC)
	if !h.m.quitting {
		t.Fatal("second Ctrl-C within the window did not quit")
	}
}
