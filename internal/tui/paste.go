package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// A long paste is shown in the prompt as one short token ("[pasted 50 lines]") and
// sent in full: the prompt stays a few rows high, and the message holds every line.
const (
	pasteFoldLines = 4    // a paste of more lines than this is folded
	pasteFoldChars = 1000 // so is one longer than this
)

// pastes maps the tokens in the prompt to the text they stand for.
type pastes map[string]string

// onPaste inserts a bracketed paste into the prompt, folded when it is long.
func (m *Model) onPaste(msg tea.PasteMsg) tea.Cmd {
	if m.picker != nil {
		return nil
	}
	text := strings.ReplaceAll(strings.ReplaceAll(msg.Content, "\r\n", "\n"), "\r", "\n")
	if cmd, ok := m.pastedImagePath(text); ok { // images.go
		return cmd
	}
	lines := strings.Count(strings.TrimRight(text, "\n"), "\n") + 1
	if lines <= pasteFoldLines && len(text) <= pasteFoldChars {
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(tea.PasteMsg{Content: text})
		m.updateCompletion()
		return cmd
	}
	var label string
	if lines > 1 {
		label = fmt.Sprintf("pasted %d lines", lines)
	} else {
		label = fmt.Sprintf("pasted %d chars", len([]rune(text)))
	}
	token := "[" + label + "]"
	cur := m.input.Value()
	for n := 2; strings.Contains(cur, token); n++ {
		token = fmt.Sprintf("[%s #%d]", label, n)
	}
	if m.pastes == nil {
		m.pastes = pastes{}
	}
	m.pastes[token] = strings.TrimRight(text, "\n")
	m.input.InsertString(token)
	m.comp = nil
	return nil
}

// expandPastes replaces the paste tokens still in text by what they stand for, and
// forgets them. A token the user edited is no longer a token and stays as typed.
func (m *Model) expandPastes(text string) string {
	if len(m.pastes) == 0 {
		return text
	}
	// One pass: a pasted text that happens to contain another token stays as pasted.
	var pairs []string
	for token, full := range m.pastes {
		pairs = append(pairs, token, full)
	}
	m.pastes = nil
	return strings.NewReplacer(pairs...).Replace(text)
}
