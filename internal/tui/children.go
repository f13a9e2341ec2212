package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/lovia-dev/lovia/internal/event"
)

// ChildEventMsg carries one event of a subagent run (spawn_subagent) to the TUI.
type ChildEventMsg struct {
	ID    string
	Event event.Event
}

// child is what the live region shows of one subagent.
type child struct {
	id      string
	agent   string
	turn    int
	tool    string // the tool it is running, if any
	prog    string // that tool's latest progress, if any
	started time.Time
}

// handleChild tracks a subagent: running children are drawn in the live region; a
// finished one prints one line to scrollback.
func (m *Model) handleChild(msg ChildEventMsg) {
	if m.children == nil {
		m.children = map[string]*child{}
	}
	ev := msg.Event
	c := m.children[msg.ID]
	if c == nil {
		if ev.Type.Terminal() {
			return
		}
		c = &child{id: msg.ID, started: m.now()}
		m.children[msg.ID] = c
		m.childOrder = append(m.childOrder, msg.ID)
	}
	if ev.Agent != "" {
		c.agent = ev.Agent
	}
	switch ev.Type {
	case event.TurnStarted:
		c.turn, c.tool, c.prog = ev.Turn, "", ""
	case event.ToolCallStarted:
		c.tool, c.prog = ev.Name, ""
	case event.ToolCallProgress:
		if ev.Progress != nil && ev.Name == c.tool {
			c.prog = oneLine(ev.Progress.String())
		}
	case event.ToolCallCompleted, event.ToolCallFailed:
		c.tool, c.prog = "", ""
	case event.RunCompleted, event.RunFailed:
		delete(m.children, msg.ID)
		for i, id := range m.childOrder {
			if id == msg.ID {
				m.childOrder = append(m.childOrder[:i], m.childOrder[i+1:]...)
				break
			}
		}
		m.emit('t', renderChildDone(m.theme, msg.ID, ev, m.now().Sub(c.started), m.width))
	}
}

func renderChildDone(th Theme, id string, ev event.Event, d time.Duration, w int) string {
	mark, style, what := "✓", th.OK, "finished"
	if ev.Type == event.RunFailed || ev.Status != "completed" {
		mark, style, what = "✗", th.Err, ev.Status
		if what == "" {
			what = "failed"
		}
	}
	line := fmt.Sprintf("  %s subagent %s %s · %d turns · %s", mark, id, what, ev.Turns, d.Round(100*time.Millisecond))
	return style.Render(ansi.Truncate(line, w, "…"))
}

// childLines are the live region's lines for running subagents.
func (m *Model) childLines(w int, spin string) []string {
	var out []string
	for _, id := range m.childOrder {
		c := m.children[id]
		if c == nil {
			continue
		}
		parts := []string{"subagent " + c.id}
		if c.agent != "" {
			parts = append(parts, c.agent)
		}
		if c.turn > 0 {
			parts = append(parts, fmt.Sprintf("turn %d", c.turn))
		}
		if c.tool != "" {
			parts = append(parts, c.tool)
		}
		if c.prog != "" {
			parts = append(parts, c.prog)
		}
		parts = append(parts, m.now().Sub(c.started).Round(time.Second).String())
		line := "  " + m.theme.Accent.Render(spin) + " " + m.theme.Dim.Render(strings.Join(parts, " · "))
		out = append(out, ansi.Truncate(line, w, "…"))
	}
	return out
}
