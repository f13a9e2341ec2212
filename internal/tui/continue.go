package tui

import (
	"context"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/runtime"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// Nothing a user saw is dropped: a run that ends interrupted, failed or at its turn
// limit is carried on by the next message of the chat (StartRequest.CarryRunID), so
// the model gets its prompt, its partial reply and its finished tool calls. In chat
// the turn limit is a per-message budget: /continue, or any message, carries on.

// LastRun is how a session's latest run ended, for the notice `chat -c` / `-s` show.
type LastRun struct {
	ID string
	// Status is "interrupted" or "failed" ("" or "completed": nothing to offer).
	Status string
	// Error is what stopped a failed run (shown as is).
	Error string
	// ErrorKind is the errs kind of Error.
	ErrorKind string
}

// LastRunner is implemented by backends that can tell how a session's latest run
// ended; without it, `chat -c` offers no /resume for a run interrupted earlier.
type LastRunner interface {
	// LastRun returns the session's latest run when it can be resumed or carried on
	// (nil when there is none).
	LastRun(ctx context.Context, sessionID string) (*LastRun, error)
}

type lastRunMsg struct {
	session string
	run     *LastRun
}

// checkLastRun asks the backend how the session's latest run ended.
func (m *Model) checkLastRun(sessionID string) tea.Cmd {
	lr, ok := m.backend.(LastRunner)
	if !ok || sessionID == "" {
		return nil
	}
	ctx := m.ctx
	return func() tea.Msg {
		r, err := lr.LastRun(ctx, sessionID)
		if err != nil {
			return lastRunMsg{session: sessionID}
		}
		return lastRunMsg{session: sessionID, run: r}
	}
}

// onLastRun offers to resume or carry on the session's unfinished latest run.
func (m *Model) onLastRun(msg lastRunMsg) tea.Cmd {
	m.offerLastRun(msg)
	if p := m.pendingPrompt; p != "" {
		m.pendingPrompt = ""
		return m.submit(p)
	}
	return nil
}

func (m *Model) offerLastRun(msg lastRunMsg) {
	r := msg.run
	if r == nil || msg.session != m.sessionID || m.busy() || r.ID == "" {
		return
	}
	m.carry = r.ID
	if r.ErrorKind != string(errs.KindMaxTurns) && r.ErrorKind != string(errs.KindBudget) {
		m.interrupted = r.ID // a resume would stop at the same limit at once
	}
	if r.Status == "interrupted" || r.ErrorKind == string(errs.KindCancelled) || r.ErrorKind == string(errs.KindTerminated) {
		m.emit('n', m.theme.Warn.Render(renderNotice(m.theme,
			"⏹ the last run of this session ("+r.ID+") was interrupted · /resume continues it · or just type to carry on", m.width)))
		return
	}
	what := "stopped"
	if r.Error != "" {
		what = "stopped: " + oneLine(r.Error)
	}
	m.emit('n', m.theme.Warn.Render(renderNotice(m.theme,
		"✗ the last run of this session ("+r.ID+") "+what+" · "+chatHint(r.ErrorKind, ""), m.width)))
}

// chatHint words what works in chat after a run ended with kind (the core's hint,
// coreHint, is kept when chat has nothing better to say).
func chatHint(kind, coreHint string) string {
	switch errs.Kind(kind) {
	case errs.KindMaxTurns:
		return "the turn limit applies per message: /continue (or any message) carries on from here"
	case errs.KindBudget:
		return "/continue (or any message) carries on from here with a fresh budget"
	case errs.KindProvider, errs.KindOverflow, errs.KindTool, errs.KindStore, errs.KindInternal:
		h := "/resume retries this run · or type to carry on"
		if coreHint != "" && !strings.Contains(coreHint, "lovia ") && !strings.Contains(coreHint, "--") {
			h = coreHint + " · " + h
		}
		return h
	}
	if strings.Contains(coreHint, "lovia ") {
		return "" // shell wording does not work here
	}
	return coreHint
}

// noteUnfinished remembers a run that ended unfinished: the next message carries it.
func (m *Model) noteUnfinished(ev event.Event) {
	if ev.Error != nil && ev.Error.Kind == string(errs.KindGuardrail) {
		return // what a guardrail stopped is not carried on
	}
	m.carry = ev.RunID
	if ev.Error != nil && ev.Error.Kind != string(errs.KindMaxTurns) && ev.Error.Kind != string(errs.KindBudget) {
		m.interrupted = ev.RunID // /resume retries it (a limit would stop a resume at once)
	}
}

// continueRun is /continue [TEXT]: a new run carrying on the unfinished one.
func (m *Model) continueRun(arg string) tea.Cmd {
	if m.busy() {
		m.notice = "a run is active"
		return nil
	}
	if m.carry == "" {
		m.notice = "nothing to continue: the last run finished (type a message)"
		return nil
	}
	text := arg
	if text == "" {
		text = "continue"
	}
	m.emit('u', renderUser(m.theme, text, m.width, ""))
	return m.start(StartRequest{SessionID: m.sessionID, Prompt: text, Model: m.model, CarryRunID: m.carry})
}

// historyNote renders a runtime note (how an earlier run ended) as a notice rather
// than as a message the user typed. ok is false for other entries.
func (m *Model) historyNote(e transcript.Entry) bool {
	if !runtime.IsNote(e) {
		return false
	}
	m.emit('n', m.theme.Dim.Render(renderNotice(m.theme, "⏹ "+strings.TrimPrefix(e.Text, runtime.NotePrefix), m.width)))
	return true
}
