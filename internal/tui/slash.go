package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/usage"
)

// ---- commands ----

func (m *Model) command(text string) (tea.Cmd, bool) {
	name, arg, _ := strings.Cut(text, " ")
	arg = strings.TrimSpace(arg)
	if cmd, ok := m.rewindCommand(name); ok {
		return cmd, true
	}
	switch name {
	case "/quit", "/exit", "/q":
		return m.quit(), true
	case "/help", "/?":
		m.emit('n', m.helpText())
		return nil, true
	case "/new":
		if m.busy() {
			m.notice = "a run is active: Esc to interrupt it first"
			return nil, true
		}
		m.sessionID = ""
		m.usage = usage.Usage{}
		m.lastContext = 0
		m.todos = nil
		m.interrupted, m.carry = "", ""
		m.emit('n', m.theme.Dim.Render(rule("new session", m.width)))
		return nil, true
	case "/sessions":
		if m.busy() {
			m.notice = "a run is active: Esc to interrupt it first"
			return nil, true
		}
		b, ctx := m.backend, m.ctx
		m.notice = "loading sessions…"
		return func() tea.Msg {
			l, err := b.Sessions(ctx)
			return sessionsMsg{list: l, err: err}
		}, true
	case "/resume":
		if m.busy() {
			m.notice = "a run is active"
			return nil, true
		}
		id := arg
		if id == "" {
			id = m.interrupted
		}
		if id == "" {
			m.notice = "nothing to resume: no interrupted run in this chat (use /resume RUN_ID)"
			return nil, true
		}
		m.emit('n', m.theme.Dim.Render(renderNotice(m.theme, "↻ resuming run "+id, m.width)))
		m.interrupted = ""
		return m.start(StartRequest{SessionID: m.sessionID, ResumeRunID: id, Model: m.model}), true
	case "/continue":
		return m.continueRun(arg), true
	case "/model":
		if arg != "" {
			return m.chooseModel(arg), true
		}
		models := m.backend.Models()
		if len(models) == 0 {
			m.notice = "model: " + m.model + " (switch with /model PROVIDER:MODEL)"
			return nil, true
		}
		p := &picker{title: "Switch model (Enter picks, Esc cancels)", kind: "model"}
		for i, mo := range models {
			p.values = append(p.values, mo)
			l := mo
			if mo == m.model {
				l += "  (current)"
				p.sel = i
			}
			p.labels = append(p.labels, l)
		}
		m.picker = p
		return nil, true
	case "/compact":
		return m.compactNow(), true
	case "/todo":
		if t := renderTodos(m.theme, m.todos); t != "" {
			m.emit('n', "  "+m.theme.ToolName.Render("Todo")+"\n"+t)
		} else {
			m.emit('n', renderNotice(m.theme, "no todo list yet", m.width))
		}
		return nil, true
	case "/cost":
		m.emit('n', m.costText())
		return nil, true
	}
	return nil, false
}

func (m *Model) setModel(mo string) {
	m.model = mo
	m.notice = "model: " + mo + " (from the next run)"
}

func (m *Model) quit() tea.Cmd {
	m.quitting = true
	if m.run != nil {
		m.run.Cancel(errs.New(errs.KindCancelled, "interrupted: the TUI was closed", ""))
	}
	return tea.Quit
}

func (m *Model) helpText() string {
	th := m.theme
	var b strings.Builder
	b.WriteString("  " + th.ToolName.Render("Commands") + "\n")
	for _, c := range slashCommands {
		b.WriteString(fmt.Sprintf("    %-10s %-18s %s\n", c.Name, c.Args, th.Dim.Render(c.Help)))
	}
	b.WriteString("  " + th.ToolName.Render("Keys") + "\n")
	keys := [][2]string{
		{"enter", "send (while the agent works: queue a steering message)"},
		{"ctrl+j, shift+enter", "new line"},
		{"esc", "interrupt the run · twice: clear the prompt"},
		{"up / down", "prompt history"},
		{"tab", "complete /commands and @files"},
		{"ctrl+g", "edit the prompt in $EDITOR"},
		{"ctrl+o", "show or collapse reasoning"},
		{"↑↓ or 1-4, enter", "approvals: choose an answer, then confirm (typing goes to the prompt)"},
		{"ctrl+c", "interrupt · clear · twice on an empty prompt: quit"},
	}
	for i, k := range keys {
		b.WriteString(fmt.Sprintf("    %-20s %s", k[0], th.Dim.Render(k[1])))
		if i < len(keys)-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func (m *Model) costText() string {
	u := m.usage.Add(m.runUsage)
	th := m.theme
	var b strings.Builder
	b.WriteString("  " + th.ToolName.Render("Usage this session") + "\n")
	fmt.Fprintf(&b, "    input %s (cached %s) · output %s · requests %d", fmtTokens(u.InputTokens),
		fmtTokens(u.CachedInputTokens), fmtTokens(u.OutputTokens), u.Requests)
	if c := costLabel(m.model, u); c != "" {
		fmt.Fprintf(&b, "\n    cost %s (list prices; pricing: in config overrides them)", c)
	} else {
		fmt.Fprintf(&b, "\n    cost unknown: no price known for %s (add it under pricing: in lovia's config)", m.model)
	}
	return b.String()
}

func rule(title string, width int) string {
	t := "── " + title + " "
	return t + strings.Repeat("─", max(0, width-ansi.StringWidth(t)))
}
