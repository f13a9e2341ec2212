package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/lovia-dev/lovia/internal/tool"
)

// ---- keys ----

func (m *Model) onKey(k tea.KeyPressMsg) tea.Cmd {
	s := k.String()
	if s != "ctrl+c" {
		m.quitArmed = false
	}
	if s == "ctrl+c" {
		switch {
		case m.run != nil && m.interrupting:
			// The run did not stop yet: a second ctrl+c leaves anyway (the run is
			// cancelled; its checkpoint stays resumable).
			return m.quit()
		case m.run != nil:
			m.interrupt()
		case m.input.Value() != "":
			m.input.Reset()
			m.comp = nil
		default:
			return m.ctrlCQuit()
		}
		return nil
	}
	if s == "ctrl+d" && m.input.Value() == "" && m.run == nil {
		return m.quit()
	}
	if m.picker != nil {
		return m.pickerKey(s)
	}
	if len(m.approvals) > 0 && !m.denyMsg {
		if cmd, handled := m.approvalKey(k); handled {
			return cmd
		}
	}
	if m.denyMsg {
		switch s {
		case "enter":
			msg := strings.TrimSpace(m.expandPastes(m.input.Value()))
			m.denyMsg = false
			m.input.SetValue(m.denyDraft)
			m.answer(tool.Decision{Allow: m.textAllow, Message: msg})
			return nil
		case "esc":
			m.denyMsg = false
			m.input.SetValue(m.denyDraft)
			m.apSel = -1 // going back chooses afresh
			return nil
		}
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(k)
		return cmd
	}
	if m.comp != nil {
		switch s {
		case "up", "ctrl+p":
			m.comp.sel = (m.comp.sel + len(m.comp.items) - 1) % len(m.comp.items)
			return nil
		case "down", "ctrl+n":
			m.comp.sel = (m.comp.sel + 1) % len(m.comp.items)
			return nil
		case "esc":
			m.comp = nil
			return nil
		case "tab":
			m.acceptCompletion()
			return nil
		case "enter":
			kind := m.comp.kind
			m.acceptCompletion()
			if kind == '@' {
				return nil
			}
			// a slash command: run it at once
		}
	}
	switch s {
	case "esc":
		if m.run != nil || m.starting {
			m.interrupt()
			return nil
		}
		if m.input.Value() == "" {
			m.escArmed = false
			m.notice = ""
			return nil
		}
		if m.escArmed {
			m.input.Reset()
			m.escArmed = false
			m.notice = ""
			return nil
		}
		m.escArmed = true
		m.notice = "press Esc again to clear the prompt"
		return nil
	case "enter":
		text := m.input.Value()
		if strings.TrimSpace(text) == "" {
			return nil
		}
		m.input.Reset()
		m.comp = nil
		m.escArmed = false
		m.notice = ""
		return m.submit(m.expandPastes(text))
	case "ctrl+g":
		return m.openEditor()
	case "ctrl+v":
		return m.pasteClipboardImage() // images.go
	case "ctrl+o":
		m.showReasoning = !m.showReasoning
		if m.showReasoning {
			m.notice = "reasoning: shown in full"
		} else {
			m.notice = "reasoning: collapsed"
		}
		return nil
	case "up":
		if m.input.Line() == 0 && len(m.history) > 0 {
			if m.histPos == len(m.history) {
				m.histDraft = m.input.Value()
			}
			if m.histPos > 0 {
				m.histPos--
				m.input.SetValue(m.history[m.histPos])
			}
			return nil
		}
	case "down":
		if m.input.Line() == m.input.LineCount()-1 && m.histPos < len(m.history) {
			m.histPos++
			if m.histPos == len(m.history) {
				m.input.SetValue(m.histDraft)
			} else {
				m.input.SetValue(m.history[m.histPos])
			}
			return nil
		}
	}
	m.escArmed = false
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	m.updateCompletion()
	return cmd
}

// currentWord is the whitespace-delimited word before the cursor.
func (m *Model) currentWord() string {
	lines := strings.Split(m.input.Value(), "\n")
	row := m.input.Line()
	if row >= len(lines) {
		return ""
	}
	runes := []rune(lines[row])
	col := min(m.input.Column(), len(runes))
	start := col
	for start > 0 && runes[start-1] != ' ' && runes[start-1] != '\t' {
		start--
	}
	return string(runes[start:col])
}

func (m *Model) updateCompletion() {
	m.comp = nil
	w := m.currentWord()
	switch {
	case strings.HasPrefix(w, "/") && m.input.Line() == 0 && strings.HasPrefix(m.input.Value(), w) && !strings.Contains(m.input.Value(), " "):
		m.comp = completeSlash(w, m.customCommands()...)
	case strings.HasPrefix(w, "@") && m.mcpResourceCompletion(w) != nil: // mcp.go
		m.comp = m.mcpResourceCompletion(w)
	case strings.HasPrefix(w, "@") && m.files != nil:
		m.comp = completeFile(w, m.files, 8)
	case strings.HasPrefix(m.input.Value(), "/model ") && m.input.Line() == 0 && m.backend != nil:
		c := &completion{kind: 'm', word: w}
		for _, mo := range m.backend.Models() {
			if strings.HasPrefix(mo, w) && mo != w {
				c.items = append(c.items, mo)
			}
		}
		if len(c.items) > 0 {
			m.comp = c
		}
	}
}

// acceptCompletion replaces the word before the cursor by the selected item.
func (m *Model) acceptCompletion() {
	c := m.comp
	m.comp = nil
	if c == nil || len(c.items) == 0 {
		return
	}
	for range []rune(c.word) {
		m.input, _ = m.input.Update(tea.KeyPressMsg{Code: tea.KeyBackspace})
	}
	item := c.items[c.sel]
	if c.kind == '@' {
		item += " "
	}
	m.input.InsertString(item)
}

// answer decides the first pending approval.
func (m *Model) answer(d tool.Decision) {
	if len(m.approvals) == 0 {
		return
	}
	id := m.approvals[0]
	m.approvals = m.approvals[1:]
	m.notice = ""
	if c := m.tools[id]; c != nil {
		c.Approval = nil
		c.Started = m.now()
	}
	if m.run != nil {
		if err := m.run.Approve(id, d); err != nil {
			m.notice = "approval: " + err.Error()
		}
	}
}

func (m *Model) pickerKey(s string) tea.Cmd {
	p := m.picker
	if p.kind == "curate" && m.curateKey(s) {
		return nil
	}
	switch s {
	case "up", "ctrl+p", "k":
		if p.sel > 0 {
			p.sel--
		}
	case "down", "ctrl+n", "j":
		if p.sel < len(p.values)-1 {
			p.sel++
		}
	case "esc", "q":
		m.picker = nil
		if p.kind == "curate" {
			return m.keepCurated("none")
		}
	case "enter":
		m.picker = nil
		if len(p.values) == 0 {
			return nil
		}
		v := p.values[p.sel]
		if cmd, ok := m.rewindPick(p.kind, v); ok {
			return cmd
		}
		switch p.kind {
		case "session":
			cmd := m.switchSession(v)
			if p.sel < len(p.usage) && m.sessionID == v {
				m.usage = p.usage[p.sel]
			}
			return cmd
		case "model":
			return m.chooseModel(v)
		case "curate":
			return m.keepCurated(v)
		}
	}
	return nil
}

// ---- editor ----

func (m *Model) openEditor() tea.Cmd {
	text := m.input.Value()
	editor := m.editor
	return func() tea.Msg {
		f, err := createTemp(text)
		if err != nil {
			return editorMsg{err: err}
		}
		return editorStartMsg{path: f, editor: editor}
	}
}
