package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/lovia-dev/lovia/internal/termtext"
)

// RewindPoint is one run of the session that /rewind can go back to.
type RewindPoint struct {
	RunID  string
	Prompt string
	Time   time.Time
	// Files are the files the run changed (through lovia's tools or shell); empty
	// when it changed none or they were already rewound.
	Files []string
}

// RewindRequest is what to restore: the files, the conversation or both, as they
// were before RunID.
type RewindRequest struct {
	SessionID    string
	RunID        string
	Files        bool
	Conversation bool
}

// RewindResult reports a rewind.
type RewindResult struct {
	Summary string
	// Prompt is the rewound run's message, put back into the prompt.
	Prompt string
}

// Rewinder is implemented by backends that keep checkpoints (/undo, /rewind).
type Rewinder interface {
	// RewindPoints lists the session's runs, newest first.
	RewindPoints(ctx context.Context, sessionID string) ([]RewindPoint, error)
	Rewind(ctx context.Context, req RewindRequest) (RewindResult, error)
}

type (
	rewindPointsMsg struct {
		points []RewindPoint
		undo   bool
		err    error
	}
	rewindDoneMsg struct {
		res RewindResult
		err error
	}
)

// rewindState is the chat's rewind state.
type rewindState struct {
	points []RewindPoint // the list the pickers were built from
	chosen string        // run picked in /rewind, waiting for the mode
	empty  bool          // the session has no run left to rewind
}

// rewindCommand runs /undo and /rewind.
func (m *Model) rewindCommand(name string) (tea.Cmd, bool) {
	if name != "/undo" && name != "/rewind" {
		return nil, false
	}
	rw, ok := m.backend.(Rewinder)
	if !ok {
		m.notice = "rewind is not available here"
		return nil, true
	}
	if m.busy() {
		m.notice = "a run is active: Esc to interrupt it first"
		return nil, true
	}
	if m.sessionID == "" {
		m.notice = "nothing to rewind yet"
		return nil, true
	}
	ctx, sid, undo := m.ctx, m.sessionID, name == "/undo"
	m.notice = "loading checkpoints…"
	return func() tea.Msg {
		p, err := rw.RewindPoints(ctx, sid)
		return rewindPointsMsg{points: p, undo: undo, err: err}
	}, true
}

// rewindMsg handles the rewind messages (false: not one of them).
func (m *Model) rewindMsg(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case runStartedMsg:
		if msg.err == nil {
			m.rw.empty = false // a new run can be rewound again
		}
		return nil, false
	case sessionsMsg, historyMsg:
		m.rw.empty = false
		return nil, false
	case rewindPointsMsg:
		m.notice = ""
		if msg.err != nil {
			m.notice = "rewind: " + msg.err.Error()
			return nil, true
		}
		m.rw.points = msg.points
		if len(msg.points) == 0 {
			m.rw.empty = true
			m.notice = "nothing to rewind in this session"
			return nil, true
		}
		if msg.undo {
			return m.doRewind(msg.points[0].RunID, true, true), true
		}
		p := &picker{title: "Rewind to before which message? (Enter picks, Esc cancels)", kind: "rewind"}
		for _, pt := range msg.points {
			l := oneLineTUI(pt.Prompt, 60)
			if n := len(pt.Files); n > 0 {
				l += fmt.Sprintf("  (%d file(s) changed)", n)
			}
			p.labels = append(p.labels, pt.Time.In(m.loc()).Format("15:04")+"  "+l)
			p.values = append(p.values, pt.RunID)
		}
		m.picker = p
		return nil, true
	case rewindDoneMsg:
		if msg.err != nil {
			m.notice = "not rewound: " + termtext.String(msg.err.Error())
			return nil, true
		}
		m.emit('n', m.theme.Dim.Render(renderNotice(m.theme, "⟲ "+termtext.String(msg.res.Summary), m.width)))
		if msg.res.Prompt != "" && strings.TrimSpace(m.input.Value()) == "" {
			m.input.SetValue(msg.res.Prompt)
		}
		return nil, true
	}
	return nil, false
}

// rewindPick handles the /rewind pickers (false: not a rewind picker).
func (m *Model) rewindPick(kind, v string) (tea.Cmd, bool) {
	switch kind {
	case "rewind":
		m.rw.chosen = v
		p := &picker{title: "Restore what? (Enter picks, Esc cancels)", kind: "rewind-mode",
			labels: []string{"code and conversation", "conversation only", "code only"},
			values: []string{"both", "conversation", "files"}}
		m.picker = p
		return nil, true
	case "rewind-mode":
		return m.doRewind(m.rw.chosen, v != "conversation", v != "files"), true
	}
	return nil, false
}

func (m *Model) doRewind(runID string, files, convo bool) tea.Cmd {
	rw, ok := m.backend.(Rewinder)
	if !ok {
		return nil
	}
	if convo && len(m.rw.points) > 0 && m.rw.points[len(m.rw.points)-1].RunID == runID {
		m.rw.empty = true
	}
	ctx, req := m.ctx, RewindRequest{SessionID: m.sessionID, RunID: runID, Files: files, Conversation: convo}
	m.notice = "rewinding…"
	return func() tea.Msg {
		res, err := rw.Rewind(ctx, req)
		return rewindDoneMsg{res: res, err: err}
	}
}

// rewindHint is the status line's hint when a rewind is possible.
func (m *Model) rewindHint() string {
	if _, ok := m.backend.(Rewinder); !ok || m.busy() || m.sessionID == "" || m.rw.empty {
		return ""
	}
	return "/undo · /rewind"
}

func oneLineTUI(s string, n int) string {
	s = strings.Join(strings.Fields(termtext.String(s)), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
