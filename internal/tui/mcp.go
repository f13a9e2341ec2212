package tui

import (
	"context"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// MCPUser is implemented by backends with MCP servers: @server:uri mentions attach
// a server's resource, /server:prompt runs a server's prompt (the backend expands it
// like a custom command). Every method but ExpandMCPMentions answers from lists at
// hand (no I/O), so completion may call them on each key.
type MCPUser interface {
	// ExpandMCPMentions appends the resources typed mentions to prompt; an error
	// (unknown server, denied or unreadable resource) names the cause and the fix.
	ExpandMCPMentions(ctx context.Context, typed, prompt string) (string, []string, error)
	// MCPPromptCommands are the servers' prompts as commands (Name with the slash).
	MCPPromptCommands() []CustomCommand
	// IsMCPCommand reports that name ("/server:prompt") is for a configured server.
	IsMCPCommand(name string) bool
	// MCPResourceURIs are completions of @server:uri (templates as their uriTemplate).
	MCPResourceURIs() []string
}

// mcpCommands are the servers' prompts known now, for completion and /help.
func mcpCommands(b Backend) []slashCommand {
	u, ok := b.(MCPUser)
	if !ok {
		return nil
	}
	var out []slashCommand
	for _, c := range u.MCPPromptCommands() {
		out = append(out, slashCommand{Name: c.Name, Args: c.Args, Help: c.Help})
	}
	return out
}

// mcpCommand sends text as a prompt when its first word is /server:prompt of a
// configured server whose prompts are not listed yet (the backend starts it).
func (m *Model) mcpCommand(text string) (tea.Cmd, bool) {
	u, ok := m.backend.(MCPUser)
	first := strings.Fields(text)[0]
	if !ok || !u.IsMCPCommand(first) {
		return nil, false
	}
	if m.run != nil || m.starting {
		m.notice = first + " starts a run of its own: send it when the agent is done"
		m.input.SetValue(text)
		return nil, true
	}
	m.emit('u', renderUser(m.theme, text, m.width, ""))
	return m.start(StartRequest{SessionID: m.sessionID, Prompt: text, Model: m.model}), true
}

// expandMCP attaches the @server:uri mentions the user typed (not those of attached
// files, nor of a slash command, whose words are its arguments) to req.Prompt. On
// failure it returns the message that shows the error and puts the typed text back
// in the input, so nothing typed is lost.
func expandMCP(ctx context.Context, b Backend, typed string, req *StartRequest) ([]string, tea.Msg) {
	u, ok := b.(MCPUser)
	if !ok || req.ResumeRunID != "" || strings.HasPrefix(strings.TrimSpace(typed), "/") {
		return nil, nil
	}
	out, notes, err := u.ExpandMCPMentions(ctx, typed, req.Prompt)
	if err != nil {
		return nil, applyMsg(func(m *Model) tea.Cmd {
			m.starting = false
			m.emitError(err)
			if m.input.Value() == "" {
				m.input.SetValue(typed)
			} else {
				m.input.SetValue(typed + "\n\n" + m.input.Value())
			}
			m.notice = "the message was not sent; it is back in the prompt"
			m.restoreQueued(nil)
			return nil
		})
	}
	req.Prompt = out
	return notes, nil
}

// isCommand reports text is a slash command (/server:prompt, a custom command).
func isCommand(text string) bool {
	f := strings.Fields(text)
	return len(f) > 0 && strings.HasPrefix(f[0], "/") && strings.Count(f[0], "/") == 1
}

// keepTyped shows a command's failure (a missing prompt argument, an unknown
// prompt) and puts the command back in the input to be fixed.
func keepTyped(typed string, msg runStartedMsg) tea.Msg {
	return applyMsg(func(m *Model) tea.Cmd {
		cmd := m.onRunStarted(msg)
		if m.input.Value() == "" {
			m.input.SetValue(typed)
		} else {
			m.input.SetValue(typed + "\n\n" + m.input.Value())
		}
		m.notice = "the command failed; it is back in the prompt"
		return cmd
	})
}

// completeMCPResource completes @server:… from the servers' resources.
func completeMCPResource(word string, uris []string, limit int) *completion {
	c := &completion{kind: '@', word: word}
	sort.Strings(uris)
	for _, u := range uris {
		if strings.HasPrefix(u, word) && u != word {
			c.items = append(c.items, u)
			if len(c.items) == limit {
				break
			}
		}
	}
	if len(c.items) == 0 {
		return nil
	}
	return c
}

// mcpResourceCompletion completes w when it is @server:… of a server with listed
// resources; nil otherwise (file completion then applies).
func (m *Model) mcpResourceCompletion(w string) *completion {
	u, ok := m.backend.(MCPUser)
	if !ok || !strings.Contains(w, ":") {
		return nil
	}
	return completeMCPResource(w, u.MCPResourceURIs(), 8)
}
