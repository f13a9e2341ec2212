package tui

import (
	"context"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/runtime"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

func failed(kind, msg string) event.Event {
	f := ev(event.RunFailed)
	f.Status = "failed"
	f.Error = &event.Error{Kind: kind, Message: msg}
	return f
}

// After Esc, the next typed message carries on the interrupted run.
func TestTypingAfterEscCarriesTheRun(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeText("first")
	h.enter()
	h.events(textDelta("half an ans"))
	h.esc()
	f := ev(event.RunFailed)
	f.Status = "interrupted"
	f.Error = &event.Error{Kind: "cancelled", Message: "interrupted"}
	h.events(f)
	h.typeText("next")
	h.enter()
	if n := len(h.b.reqs); n != 2 || h.b.reqs[1].CarryRunID != "run_a" || h.b.reqs[1].Prompt != "next" {
		t.Fatalf("requests %+v", h.b.reqs)
	}
	// Carried once: the message after that carries nothing.
	h.events(completed(usage.Usage{}))
	h.typeText("third")
	h.enter()
	if r := h.b.reqs[2]; r.CarryRunID != "" {
		t.Fatalf("third request carries %q", r.CarryRunID)
	}
}

// After the turn limit, the hint names /continue (never a flag) and /continue carries
// the run on.
func TestContinueAfterTurnLimit(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeText("loop")
	h.enter()
	h.events(failed("max_turns", "max turns reached (2)"))
	sb := h.scrollback()
	if !strings.Contains(sb, "max turns reached (2)") || !strings.Contains(sb, "/continue") || strings.Contains(sb, "--max-turns") {
		t.Fatalf("limit hint:\n%s", sb)
	}
	h.typeText("/continue")
	h.enter()
	if n := len(h.b.reqs); n != 2 || h.b.reqs[1].CarryRunID != "run_a" || h.b.reqs[1].Prompt != "continue" {
		t.Fatalf("requests %+v", h.b.reqs)
	}
	h.events(completed(usage.Usage{}))
	h.typeText("/continue")
	h.enter()
	if len(h.b.reqs) != 2 || !strings.Contains(h.m.notice, "nothing to continue") {
		t.Fatalf("continue after a completed run: %d requests, notice %q", len(h.b.reqs), h.m.notice)
	}
}

// A shell hint from the core is not shown in chat.
func TestChatHintDropsShellWording(t *testing.T) {
	if h := chatHint("provider", "then `lovia resume run_x`"); strings.Contains(h, "lovia ") || !strings.Contains(h, "/resume") {
		t.Fatalf("provider hint %q", h)
	}
	if h := chatHint("config", "lovia doctor explains"); h != "" {
		t.Fatalf("config hint %q", h)
	}
}

type lastRunBackend struct {
	*fakeBackend
	last *LastRun
}

func (b lastRunBackend) LastRun(context.Context, string) (*LastRun, error) { return b.last, nil }

// chat -c / -s: an interrupted last run is offered for /resume; history notes show as
// notices.
func TestContinueSessionOffersResume(t *testing.T) {
	h := newHarness(t, 80, 24)
	b := lastRunBackend{fakeBackend: h.b, last: &LastRun{ID: "run_old", Status: "interrupted"}}
	h.m.backend = b
	h.m.sessionID = "ses_x"
	note := transcript.UserInput(runtime.NotePrefix + "The user interrupted the run here.")
	h.send(historyMsg{id: "ses_x", entries: []transcript.Entry{transcript.UserInput("hello"), note}})
	sb := h.scrollback()
	if !strings.Contains(sb, "run_old") || !strings.Contains(sb, "/resume continues") {
		t.Fatalf("no /resume offer:\n%s", sb)
	}
	if strings.Contains(sb, runtime.NotePrefix) || !strings.Contains(sb, "The user interrupted the run here.") {
		t.Fatalf("note not shown as a notice:\n%s", sb)
	}
	h.typeText("/resume")
	h.enter()
	if n := len(h.b.reqs); n != 1 || h.b.reqs[0].ResumeRunID != "run_old" {
		t.Fatalf("requests %+v", h.b.reqs)
	}
}

// After a failure, /resume retries the run itself.
func TestResumeAfterFailure(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeText("work")
	h.enter()
	h.events(failed("provider", "model call failed: 503"))
	if sb := h.scrollback(); !strings.Contains(sb, "/resume retries this run") {
		t.Fatalf("failure hint:\n%s", sb)
	}
	h.typeText("/resume")
	h.enter()
	if n := len(h.b.reqs); n != 2 || h.b.reqs[1].ResumeRunID != "run_a" {
		t.Fatalf("requests %+v", h.b.reqs)
	}
}
