package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

func (m *Model) onSessions(msg sessionsMsg) tea.Cmd {
	m.notice = ""
	if msg.err != nil {
		m.emitError(msg.err)
		return nil
	}
	if len(msg.list) == 0 {
		m.notice = "no sessions yet in this repository"
		return nil
	}
	p := &picker{title: "Sessions (Enter switches, Esc cancels)", kind: "session"}
	for i, s := range msg.list {
		label := fmt.Sprintf("%s  %s  %s", s.ID, s.Updated.In(m.loc()).Format("Jan 02 15:04"), oneLine(s.Title))
		if s.ID == m.sessionID {
			label += "  (current)"
			p.sel = i
		}
		p.labels = append(p.labels, label)
		p.values = append(p.values, s.ID)
		p.usage = append(p.usage, s.Usage)
	}
	m.picker = p
	return nil
}

func (m *Model) switchSession(id string) tea.Cmd {
	if m.busy() {
		m.notice = "a run is active: Esc to interrupt it first"
		return nil
	}
	m.sessionID = id
	m.usage = usage.Usage{}
	m.lastContext = 0
	m.todos = nil
	m.interrupted, m.carry = "", ""
	return m.loadHistory(id)
}

func (m *Model) loadHistory(id string) tea.Cmd {
	b, ctx := m.backend, m.ctx
	return func() tea.Msg {
		e, err := b.History(ctx, id)
		return historyMsg{id: id, entries: e, err: err}
	}
}

// historyShown bounds how much of a session is re-printed when switching to it.
const historyShown = 200

func (m *Model) onHistory(msg historyMsg) tea.Cmd {
	m.printHistory(msg)
	if check := m.checkLastRun(msg.id); check != nil {
		return check // an initial prompt follows the answer (onLastRun)
	}
	if p := m.pendingPrompt; p != "" {
		m.pendingPrompt = ""
		return m.submit(p)
	}
	return nil
}

func (m *Model) printHistory(msg historyMsg) {
	if msg.err != nil {
		m.emitError(msg.err)
		return
	}
	m.emit('n', m.theme.Dim.Render(rule("session "+msg.id, m.width)))
	entries := msg.entries
	if len(entries) > historyShown {
		m.emit('n', m.theme.Dim.Render(renderNotice(m.theme,
			fmt.Sprintf("… %d earlier entries (lovia sessions show %s)", len(entries)-historyShown, msg.id), m.width)))
		entries = entries[len(entries)-historyShown:]
	}
	results := map[string]transcript.Entry{}
	for _, e := range msg.entries {
		if e.Type == transcript.TypeToolResult {
			results[e.CallID] = e
		}
		if e.Type == transcript.TypeToolCall && e.Name == "todo_write" {
			m.todos = e.Args
		}
	}
	for _, e := range entries {
		switch e.Type {
		case transcript.TypeInput:
			if e.IsUser() && !m.historyNote(e) {
				m.emit('u', renderUser(m.theme, e.Text, m.width, imageChips(e.Attachments)))
			}
		case transcript.TypeAssistantText:
			if strings.TrimSpace(e.Text) != "" {
				m.emit('a', m.md.render(sanitize(e.Text), m.theme, m.width))
			}
		case transcript.TypeReasoning:
			if strings.TrimSpace(e.Text) != "" {
				m.emit('r', renderReasoning(m.theme, e.Text, 0, m.width, m.showReasoning))
			}
		case transcript.TypeToolCall:
			c := &toolCall{ID: e.CallID, Name: e.Name, Args: e.Args, Done: true}
			if r, ok := results[e.CallID]; ok {
				c.Output, c.IsError, c.Trunc = r.Text, r.IsError, r.Truncated
			} else {
				c.Output, c.IsError = "no result recorded", true
			}
			m.emit('t', renderTool(m.theme, c, m.width))
		}
	}
}
