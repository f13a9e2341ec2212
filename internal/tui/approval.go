package tui

import (
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/lovia-dev/lovia/internal/elicit"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/tool"
)

// Approvals are answered only by an explicit choice: a selection (arrow keys or a
// digit) confirmed with Enter, and not within approvalGuard of the approval
// appearing. Everything else typed while an approval waits goes to the prompt, so a
// sentence that happens to contain "y" or "a" can never allow a command.
const (
	approvalGuard = 400 * time.Millisecond
	quitWindow    = time.Second

	approvalPlaceholder = "Approval waiting above: ↑/↓ or a digit, then Enter · typing here steers"
)

// approvalArmMsg ends the guard of the approval shown at generation gen.
type approvalArmMsg struct{ gen int }

// quitDisarmMsg ends the window for the second Ctrl-C.
type quitDisarmMsg struct{ gen int }

// approvalOpt is one answer the widget offers.
type approvalOpt struct {
	label    string
	decision tool.Decision
	text     bool // the answer's message is typed in the prompt first
	danger   bool
}

// approvalOptions lists the answers for a: the usual four for tools, commands,
// paths and MCP tools; the suggested answers, a free answer and "decline" for an
// ask_human question.
func approvalOptions(a *event.Approval) []approvalOpt {
	if a != nil && a.Kind == elicit.URLKind {
		// The URL is shown, never opened by lovia.
		return []approvalOpt{
			{label: "I opened it and finished there (accept)", decision: tool.Decision{Allow: true, Message: elicit.AcceptMessage}},
			{label: "decline", decision: tool.Decision{}, danger: true},
			{label: "cancel", decision: tool.Decision{Message: elicit.CancelMessage}, danger: true},
		}
	}
	if a != nil && a.Kind == "question" {
		var opts []approvalOpt
		for _, o := range a.Subcommands {
			o = oneLine(o)
			opts = append(opts, approvalOpt{label: o, decision: tool.Decision{Allow: true, Message: o}})
		}
		opts = append(opts,
			approvalOpt{label: "answer in my own words", decision: tool.Decision{Allow: true}, text: true},
			approvalOpt{label: "decline to answer", decision: tool.Decision{Allow: false}, danger: true})
		return opts
	}
	session := "allow for session"
	if a != nil && a.Kind == "mcp" {
		session = "allow this tool for the session"
	} else if a != nil && len(a.Rules) > 0 {
		session += " (" + strings.Join(a.Rules, ", ") + ")"
	}
	return []approvalOpt{
		{label: "allow once", decision: tool.Decision{Allow: true}},
		{label: session, decision: tool.Decision{Allow: true, Session: true}},
		{label: "deny", decision: tool.Decision{Allow: false}, danger: true},
		{label: "deny with message", decision: tool.Decision{Allow: false}, text: true, danger: true},
	}
}

// headApproval is the approval on screen, if any.
func (m *Model) headApproval() *event.Approval {
	if len(m.approvals) == 0 {
		return nil
	}
	if c := m.tools[m.approvals[0]]; c != nil {
		return c.Approval
	}
	return nil
}

// syncApproval notices a new approval at the head of the queue: it clears the
// selection and starts the guard, timed by a message so tests control the clock.
// It also keeps the prompt's placeholder honest about what Enter does.
func (m *Model) syncApproval() tea.Cmd {
	if len(m.approvals) == 0 {
		m.apHead, m.apSel, m.apArmed = "", -1, false
		if m.input.Placeholder == approvalPlaceholder {
			if m.run != nil {
				m.input.Placeholder = busyPlaceholder
			} else {
				m.input.Placeholder = idlePlaceholder
			}
		}
		return nil
	}
	m.input.Placeholder = approvalPlaceholder
	if m.approvals[0] == m.apHead {
		return nil
	}
	m.apHead, m.apSel, m.apArmed = m.approvals[0], -1, false
	m.apGen++
	gen := m.apGen
	return m.tick(approvalGuard, func(time.Time) tea.Msg { return approvalArmMsg{gen: gen} })
}

// approvalKey handles k while an approval waits; handled=false sends it on to the
// prompt. Selecting takes ↑/↓ or a digit (a digit only on an empty prompt or right
// after another selection, so numbers in a sentence stay text); Enter confirms a
// selection once the guard is over. Any other key clears the selection, so Enter
// after typing queues the text as steering instead of answering.
func (m *Model) approvalKey(k tea.KeyPressMsg) (cmd tea.Cmd, handled bool) {
	if a := m.headApproval(); a != nil && a.Kind == elicit.Kind {
		return m.formKey(k)
	}
	opts := approvalOptions(m.headApproval())
	s := k.String()
	switch s {
	case "up", "shift+tab":
		if m.comp != nil {
			return nil, false
		}
		if m.apSel <= 0 {
			m.apSel = 0
		} else {
			m.apSel--
		}
		return nil, true
	case "down", "tab":
		if m.comp != nil {
			return nil, false
		}
		if m.apSel < 0 {
			m.apSel = 0
		} else if m.apSel < len(opts)-1 {
			m.apSel++
		}
		return nil, true
	case "enter":
		if m.apSel < 0 || m.apSel >= len(opts) {
			if strings.TrimSpace(m.input.Value()) == "" {
				m.notice = "choose an answer with ↑/↓ or 1–" + strconv.Itoa(len(opts)) + ", then press Enter"
				return nil, true
			}
			return nil, false // the prompt's text is queued as steering
		}
		if !m.apArmed {
			return nil, true // too soon after the approval appeared
		}
		m.choose(opts[m.apSel])
		return nil, true
	case "esc":
		if m.comp != nil {
			return nil, false
		}
		// Refusing is always safe, so Esc needs no selection.
		m.answer(tool.Decision{Allow: false})
		return nil, true
	}
	if len(s) == 1 && s[0] >= '1' && s[0] <= '9' && (m.input.Value() == "" || m.apSel >= 0) {
		if n := int(s[0] - '1'); n < len(opts) {
			m.apSel = n
			return nil, true
		}
	}
	m.apSel = -1
	return nil, false
}

// choose applies the selected answer.
func (m *Model) choose(o approvalOpt) {
	if !o.text {
		m.answer(o.decision)
		return
	}
	m.denyMsg = true
	m.textAllow = o.decision.Allow
	m.denyDraft = m.input.Value() // the prompt's draft comes back afterwards
	m.input.Reset()
	if o.decision.Allow {
		m.notice = "type your answer, Enter sends it, Esc goes back"
	} else {
		m.notice = "type the message for the model, Enter sends the denial, Esc goes back"
	}
}

// ctrlC on an empty, idle prompt quits only when pressed twice within quitWindow.
func (m *Model) ctrlCQuit() tea.Cmd {
	if m.quitArmed {
		return m.quit()
	}
	m.quitArmed = true
	m.quitGen++
	gen := m.quitGen
	return m.tick(quitWindow, func(time.Time) tea.Msg { return quitDisarmMsg{gen: gen} })
}
