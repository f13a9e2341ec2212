package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/lovia-dev/lovia/internal/elicit"
)

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// View draws the live region only: what is streaming or waiting now, the prompt and
// the status line. Everything finished is already in the terminal's scrollback, so
// the cost of a frame does not grow with the session.
func (m *Model) View() tea.View {
	if m.quitting {
		return tea.NewView("")
	}
	content, inputRow := m.render()
	m.frames.note(time.Now(), strings.Count(content, "\n")+1)
	v := tea.NewView(content)
	if m.picker == nil && inputRow >= 0 {
		if c := m.input.Cursor(); c != nil {
			c.Y += inputRow
			v.Cursor = c
		}
	}
	return v
}

// render returns the frame and the row where the input box starts.
func (m *Model) render() (string, int) {
	w, h := m.width, m.height
	th := m.theme
	spin := spinnerFrames[m.spin%len(spinnerFrames)]

	// Bottom: completion, prompt, status; always shown.
	var bottom []string
	if m.comp != nil {
		bottom = append(bottom, m.renderCompletion(w)...)
	}
	bottom = append(bottom, th.Border.Render(strings.Repeat("─", w)))
	inputAt := len(bottom)
	inputView := m.input.View()
	bottom = append(bottom, strings.Split(inputView, "\n")...)
	bottom = append(bottom, m.statusLine(w, spin))

	// Top: everything live, newest last, trimmed from the top to fit.
	var fixed []string
	if m.picker != nil {
		fixed = append(fixed, m.renderPicker(w, max(3, h-len(bottom)-2))...)
	}
	for _, id := range m.toolOrder {
		c := m.tools[id]
		if c == nil || c.Done || (len(m.approvals) > 0 && m.approvals[0] == id) {
			continue
		}
		fixed = append(fixed, toolHeader(th, c, w, m.now(), spin))
	}
	if len(m.approvals) > 0 {
		if c := m.tools[m.approvals[0]]; c != nil && c.Approval != nil && c.Approval.Kind == elicit.Kind {
			fixed = append(fixed, strings.Split(m.renderForm(th, c, w, len(m.approvals)-1), "\n")...)
		} else if c != nil && c.Approval != nil {
			fixed = append(fixed, strings.Split(renderApproval(th, c, w, len(m.approvals)-1, m.apSel, m.apArmed), "\n")...)
			if m.denyMsg {
				fixed = append(fixed, th.Warn.Render("  message to the model (Enter denies with it, Esc goes back):"))
			}
		}
	}
	fixed = append(fixed, m.childLines(w, spin)...)
	for _, q := range m.queued {
		fixed = append(fixed, th.Queued.Render("  ⧗ queued: ")+ansi.Truncate(oneLine(q.text), max(8, w-14), "…"))
	}
	if m.notice != "" {
		fixed = append(fixed, th.Dim.Render(ansi.Truncate("  "+m.notice, w, "…")))
	}

	room := h - 1 - len(bottom) - len(fixed)
	var live []string
	if m.reasoning.Len() > 0 {
		n := 3
		if m.showReasoning {
			n = max(3, room/2)
		}
		live = append(live, strings.Split(liveReasoning(th, m.reasoning.String(), w, n), "\n")...)
	}
	if tailRoom := room - len(live); m.stream.Len() > m.stream.settled && tailRoom > 0 {
		if t := m.stream.renderTail(&m.md, th, w, tailRoom); t != "" {
			live = append(live, strings.Split(t, "\n")...)
		}
	} else if m.run != nil && len(live) == 0 && len(m.toolOrder) == 0 && len(fixed) == 0 {
		live = append(live, "  "+th.Accent.Render(spin)+th.Dim.Render(" working…"))
	}
	top := append(live, fixed...)
	if len(top) > 0 {
		top = append([]string{""}, top...)
	}
	if max0 := h - 1 - len(bottom); len(top) > max0 {
		top = top[len(top)-max(0, max0):]
	}
	lines, row := clampFrame(append(top, bottom...), h, len(top)+inputAt)
	return strings.Join(lines, "\n"), row
}

func (m *Model) renderCompletion(w int) []string {
	c := m.comp
	th := m.theme
	const shown = 8
	start := 0
	if c.sel >= shown {
		start = c.sel - shown + 1
	}
	var out []string
	// The help column starts at the same place on every row (names padded to the
	// longest shown).
	col := 0
	for i := start; i < len(c.items) && i < start+shown; i++ {
		col = max(col, ansi.StringWidth(oneLine(c.items[i])))
	}
	col = min(col, max(8, w/2))
	for i := start; i < len(c.items) && i < start+shown; i++ {
		// File names and skill descriptions come from the repository.
		item := oneLine(c.items[i])
		line := "  " + item
		if i < len(c.help) && c.help[i] != "" {
			h := c.help[i]
			lead := strings.Repeat(" ", len(h)-len(strings.TrimLeft(h, " "))) // an empty argument column
			line += strings.Repeat(" ", max(0, col-ansi.StringWidth(item))) + "  " + th.Dim.Render(lead+oneLine(h))
		}
		if i == c.sel {
			line = th.Selected.Render("▸ "+item) + strings.TrimPrefix(line, "  "+item)
		}
		out = append(out, ansi.Truncate(line, w, "…"))
	}
	return out
}

func (m *Model) renderPicker(w, maxRows int) []string {
	p := m.picker
	th := m.theme
	out := []string{th.ToolName.Render("  " + p.title)}
	rows := min(len(p.labels), max(1, maxRows-1))
	start := 0
	if p.sel >= rows {
		start = p.sel - rows + 1
	}
	for i := start; i < start+rows && i < len(p.labels); i++ {
		label := oneLine(p.labels[i])
		l := "    " + label
		if i == p.sel {
			l = th.Selected.Render("  ▸ " + label)
		}
		out = append(out, ansi.Truncate(l, w, "…"))
	}
	return out
}

// statusLine: model, session, turn, tokens in/out/cached, cost, context use; what Esc
// does while a run is live.
func (m *Model) statusLine(w int, spin string) string {
	th := m.theme
	u := m.usage.Add(m.runUsage)
	parts := []string{}
	if m.model != "" {
		parts = append(parts, m.model)
	}
	if m.sessionID != "" {
		parts = append(parts, "session "+m.sessionID)
	} else {
		parts = append(parts, "new session")
	}
	if m.turn > 0 {
		parts = append(parts, fmt.Sprintf("turn %d", m.turn))
	}
	tok := fmt.Sprintf("↑%s ↓%s", fmtTokens(u.InputTokens), fmtTokens(u.OutputTokens))
	if u.CachedInputTokens > 0 {
		tok += fmt.Sprintf(" (%s cached)", fmtTokens(u.CachedInputTokens))
	}
	parts = append(parts, tok)
	if c, ok := runCost(m.model, u); ok {
		parts = append(parts, fmt.Sprintf("$%.3f", c))
	}
	if win := m.contextWindow(); win > 0 && m.lastContext > 0 {
		parts = append(parts, fmt.Sprintf("ctx %d%%", min(100, m.lastContext*100/win)))
	}
	left := strings.Join(parts, " · ")
	right := ""
	switch {
	case m.quitArmed:
		right = "press Ctrl-C again to quit"
	case m.run != nil && len(m.approvals) > 0:
		right = "approval needed"
	case m.run != nil:
		right = spin + " esc interrupts"
	case m.starting:
		right = spin + " starting"
	case m.rewindHint() != "":
		right = m.rewindHint()
	}
	if right != "" {
		room := w - ansi.StringWidth(right) - 3
		left = ansi.Truncate(left, max(0, room), "…")
		gap := max(1, w-ansi.StringWidth(left)-ansi.StringWidth(right))
		return th.Status.Render(left + strings.Repeat(" ", gap) + right)
	}
	return th.Status.Render(ansi.Truncate(left, w, "…"))
}

func (m *Model) contextWindow() int {
	if m.backend == nil {
		return 0
	}
	return m.backend.ContextWindow(m.model)
}
