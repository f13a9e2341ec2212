package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
)

// CustomCommand is a user-defined /command (a .claude/commands or .lovia/commands
// file, or a skill) the backend runs: the TUI completes it and sends "/name args"
// as the prompt, which the backend expands.
type CustomCommand struct {
	Name string // with the slash
	Args string
	Help string
}

// CustomCommander is implemented by backends that offer custom commands. It may
// read files; the TUI asks once, when the program starts.
type CustomCommander interface {
	CustomCommands() []CustomCommand
}

// loadCustom asks the backend for its custom commands: called once before the
// program starts (Update does no I/O).
func loadCustom(b Backend) []slashCommand {
	out := []slashCommand{}
	if cc, ok := b.(CustomCommander); ok {
		for _, c := range cc.CustomCommands() {
			out = append(out, slashCommand{Name: c.Name, Args: c.Args, Help: c.Help})
		}
	}
	return out
}

// customCommands lists the backend's commands, as loaded at start.
func (m *Model) customCommands() []slashCommand {
	return append(m.custom[:len(m.custom):len(m.custom)], mcpCommands(m.backend)...) // mcp.go
}

// customCommand runs text when its first word names a custom command: it is sent
// as a prompt (queued while a run is going, like any message).
func (m *Model) customCommand(text string) (tea.Cmd, bool) {
	first := strings.Fields(text)[0]
	for _, c := range m.customCommands() {
		if c.Name != first {
			continue
		}
		if m.run != nil || m.starting {
			m.notice = first + " starts a run of its own: send it when the agent is done"
			m.input.SetValue(text)
			return nil, true
		}
		m.emit('u', renderUser(m.theme, text, m.width, ""))
		return m.start(StartRequest{SessionID: m.sessionID, Prompt: text, Model: m.model}), true
	}
	return m.mcpCommand(text) // mcp.go: /server:prompt
}
