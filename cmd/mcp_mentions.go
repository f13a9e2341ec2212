package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/lovia-dev/lovia/internal/app"
	"github.com/lovia-dev/lovia/internal/termtext"
	"github.com/lovia-dev/lovia/internal/tui"
)

// mcpMentions appends to prompt the MCP resources the prompt's words (args, not
// standard input: piped text is the repository's, not the user's word) mention as
// @server:uri. A slash command's words are its arguments, not mentions.
func mcpMentions(ctx context.Context, f *Factory, a *app.App, args []string, prompt string) (string, error) {
	typed := strings.Join(args, " ")
	if strings.HasPrefix(strings.TrimSpace(typed), "/") {
		return prompt, nil
	}
	out, notes, err := a.ExpandMCPMentions(ctx, typed, prompt)
	if err != nil {
		return prompt, err
	}
	for _, n := range notes {
		fmt.Fprintln(f.IO.ErrOut, "lovia: "+termtext.String(n))
	}
	return out, nil
}

var _ tui.MCPUser = (*chatBackend)(nil)

// ExpandMCPMentions implements tui.MCPUser: @server:uri in a chat message.
func (b *chatBackend) ExpandMCPMentions(ctx context.Context, typed, prompt string) (string, []string, error) {
	return b.app.ExpandMCPMentions(ctx, typed, prompt)
}

// MCPPromptCommands implements tui.MCPUser: the servers' prompts for completion,
// from the lists at hand (list_changed keeps them fresh; nothing starts).
func (b *chatBackend) MCPPromptCommands() []tui.CustomCommand {
	var out []tui.CustomCommand
	for _, c := range b.app.MCPPromptCommands() {
		out = append(out, tui.CustomCommand{Name: "/" + c.Name(), Args: c.ArgsHint(), Help: "(MCP prompt) " + c.Description()})
	}
	return out
}

// IsMCPCommand implements tui.MCPUser: /server:prompt for a configured server, even
// when its prompts are not listed yet (the server starts when it runs).
func (b *chatBackend) IsMCPCommand(name string) bool {
	p := b.app.MCP()
	return p != nil && p.IsServerCommand(strings.TrimPrefix(name, "/"))
}

// MCPResourceURIs implements tui.MCPUser: @server:uri completions from the lists at
// hand.
func (b *chatBackend) MCPResourceURIs() []string {
	p := b.app.MCP()
	if p == nil {
		return nil
	}
	var out []string
	for _, s := range p.Servers() {
		l, _ := p.Offers(s)
		for _, r := range l.Resources {
			out = append(out, "@"+s+":"+r.URI)
		}
		for _, t := range l.Templates {
			out = append(out, "@"+s+":"+t.URITemplate)
		}
	}
	return out
}
