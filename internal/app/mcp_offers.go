package app

import (
	"context"
	"strings"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/plugin/mcp"
	"github.com/lovia-dev/lovia/internal/workspace"
)

// What the user reaches of the MCP servers directly, outside a run: @server:uri
// mentions and /server:prompt commands. They are decided by the MCP policy of the
// configured policy (the runs' ceiling), as the user's @path mentions are.

// MCPMentionLimit caps one mentioned resource's text.
const MCPMentionLimit = 256 << 10

// mcpUser returns the MCP plugin and the policy deciding the user's own requests;
// nil when no server is configured.
func (a *App) mcpUser() (*mcp.Plugin, *workspace.MCPPolicy, error) {
	x := &a.extra
	if x.mcp == nil {
		return nil, nil, nil
	}
	policy := a.CeilingPolicy()
	w, err := a.Workspace(policy)
	if err != nil {
		return nil, nil, err
	}
	pol, err := x.mcpPolicy(a, policy, w)
	if err != nil {
		return nil, nil, err
	}
	return x.mcp, pol, nil
}

// MCP returns the MCP plugin (nil when no server is configured).
func (a *App) MCP() *mcp.Plugin { return a.extra.mcp }

// ExpandMCPMentions appends to prompt the resources of the @server:uri mentions of
// typed, the words the user typed (see mcp.Plugin.ExpandMentions); notes say what
// was attached.
func (a *App) ExpandMCPMentions(ctx context.Context, typed, prompt string) (string, []string, error) {
	p, pol, err := a.mcpUser()
	if err != nil {
		return prompt, nil, err
	}
	if p == nil {
		for _, w := range strings.Fields(typed) {
			if m, ok, looks := mcp.ParseMention(w); ok && looks {
				return prompt, nil, errs.Newf(errs.KindUsage, "add the server with lovia mcp add "+m.Server+" -- COMMAND",
					"%s names an MCP server, but none is configured", w)
			}
		}
		return prompt, nil, nil
	}
	return p.ExpandMentions(ctx, pol, typed, prompt, MCPMentionLimit)
}

// MCPPromptCommands lists the MCP servers' prompts as slash commands, from the lists
// at hand (nothing starts).
func (a *App) MCPPromptCommands() []mcp.PromptCommand {
	p, pol, err := a.mcpUser()
	if p == nil || err != nil {
		return nil
	}
	return p.PromptCommands(pol)
}

// mcpSlash runs /server:prompt ARGS: the prompt's messages become the run's prompt.
// nil when name is not of that form for a configured server.
func (a *App) mcpSlash(ctx context.Context, name, args string) (*Invocation, error) {
	if m := a.extra.mcp; m == nil || !m.IsServerCommand(name) {
		return nil, nil
	}
	p, pol, err := a.mcpUser()
	if err != nil {
		return nil, err
	}
	text, notes, err := p.GetPrompt(ctx, pol, name, args)
	if err != nil {
		return nil, err
	}
	return &Invocation{Name: name, Prompt: text, Notes: notes}, nil
}
