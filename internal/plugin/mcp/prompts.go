package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lovia-dev/lovia/internal/textutil"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/workspace"
)

// A server's prompts are the user's slash commands /<server>:<prompt> [ARGS]. ARGS
// are words (quotes group: "New York"); NAME=VALUE sets the argument NAME, other
// words fill the declared arguments in order, the last declared argument taking the
// remaining words. A missing required argument is an error naming it.

// PromptCommand is one prompt as a slash command.
type PromptCommand struct {
	Server string
	Prompt *sdk.Prompt
}

// Name is the command without its slash: server:prompt.
func (c PromptCommand) Name() string { return c.Server + ":" + c.Prompt.Name }

// ArgsHint shows the prompt's arguments: "city=… [state=…]".
func (c PromptCommand) ArgsHint() string {
	var parts []string
	for _, a := range c.Prompt.Arguments {
		if a.Required {
			parts = append(parts, a.Name+"=…")
		} else {
			parts = append(parts, "["+a.Name+"=…]")
		}
	}
	return strings.Join(parts, " ")
}

// Description is the prompt's description (or title).
func (c PromptCommand) Description() string {
	if c.Prompt.Description != "" {
		return textutil.Clip(c.Prompt.Description, 200)
	}
	return c.Prompt.Title
}

// PromptCommands lists the prompts of the servers pol does not deny them on, from
// the lists at hand (no server starts).
func (p *Plugin) PromptCommands(pol *workspace.MCPPolicy) []PromptCommand {
	var out []PromptCommand
	for _, name := range p.names {
		if pol != nil {
			if d, _ := pol.Decide(name, "", PseudoName(name, PromptsTool)); d == workspace.Deny {
				continue
			}
		}
		for _, pr := range p.servers[name].offers().Prompts {
			if pr != nil {
				out = append(out, PromptCommand{Server: name, Prompt: pr})
			}
		}
	}
	return out
}

// IsServerCommand reports whether name (without its slash) has the form
// server:prompt for a configured server; the caller then runs it as a prompt.
func (p *Plugin) IsServerCommand(name string) bool {
	server, prompt, ok := strings.Cut(name, ":")
	_, known := p.servers[server]
	return ok && known && prompt != ""
}

// GetPrompt gets the prompt name ("server:prompt") with args (the slash command's
// words) for the user and renders its messages as the text of a user message. pol
// decides (see userAllowed); the server starts if needed.
func (p *Plugin) GetPrompt(ctx context.Context, pol *workspace.MCPPolicy, name, args string) (string, []string, error) {
	server, prompt, _ := strings.Cut(name, ":")
	srv, err := p.server(server)
	if err != nil {
		return "", nil, err
	}
	if err := userAllowed(pol, server, PromptsTool, "getting prompts"); err != nil {
		return "", nil, err
	}
	c, err := srv.ensure(ctx)
	if err != nil {
		return "", nil, err
	}
	var decl *sdk.Prompt
	var names []string
	for _, pr := range srv.offers().Prompts {
		if pr == nil {
			continue
		}
		names = append(names, pr.Name)
		if pr.Name == prompt {
			decl = pr
		}
	}
	if decl == nil {
		hint := "MCP server " + server + " lists no prompts"
		if len(names) > 0 {
			hint = "its prompts: " + strings.Join(names, ", ")
		}
		return "", nil, errs.Newf(errs.KindUsage, hint+" (lovia mcp prompts "+server+")", "MCP server %s has no prompt %q", server, prompt)
	}
	values, err := PromptArgs(decl, args)
	if err != nil {
		return "", nil, errs.Wrap(errs.KindUsage, err, "/"+name, "usage: /"+name+" "+PromptCommand{Server: server, Prompt: decl}.ArgsHint())
	}
	cctx, cancel := context.WithTimeout(ctx, srv.cfg.callTimeout())
	defer cancel()
	res, err := c.session.GetPrompt(cctx, &sdk.GetPromptParams{Name: prompt, Arguments: values})
	if err != nil {
		var werr *jsonrpc.Error
		if errors.As(err, &werr) {
			err = errors.New(werr.Message)
		}
		return "", nil, errs.Wrap(errs.KindUsage, err, fmt.Sprintf("MCP server %s could not give the prompt %s", server, prompt), "check the arguments: lovia mcp prompts "+server)
	}
	text, notes := promptText(res)
	if strings.TrimSpace(text) == "" {
		return "", notes, errs.Newf(errs.KindUsage, "", "the prompt %s of MCP server %s is empty", prompt, server)
	}
	return text, notes, nil
}

// maxPromptText bounds a prompt's text (a server is not trusted to be reasonable).
const maxPromptText = MaxResultText

// promptText joins a prompt's messages: the user's as they are, the assistant's
// marked as such (a run starts from one user message); embedded text resources
// inline, binaries described.
func promptText(res *sdk.GetPromptResult) (string, []string) {
	var parts, notes []string
	for _, m := range res.Messages {
		if m == nil {
			continue
		}
		var s string
		switch v := m.Content.(type) {
		case *sdk.TextContent:
			s = v.Text
		case *sdk.EmbeddedResource:
			if r := v.Resource; r != nil {
				t, _ := ResourceText(&sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{r}}, maxPromptText)
				s = fmt.Sprintf("<mcp_resource uri=%q>\n%s\n</mcp_resource>", r.URI, t)
			}
		case *sdk.ResourceLink:
			s = "[resource link: " + v.URI + "]"
		case *sdk.ImageContent:
			s = fmt.Sprintf("[image %s, %d bytes, not attached]", v.MIMEType, len(v.Data))
			notes = append(notes, "an image of the prompt is not attached (prompts give text only)")
		case *sdk.AudioContent:
			s = fmt.Sprintf("[audio %s, %d bytes, not attached]", v.MIMEType, len(v.Data))
		}
		if m.Role == "assistant" && s != "" {
			s = "(The prompt's assistant message:)\n" + s
		}
		if s != "" {
			parts = append(parts, s)
		}
	}
	return capText(strings.Join(parts, "\n\n"), maxPromptText), notes
}

// PromptArgs maps a slash command's words to the prompt's declared arguments (see
// the package comment above); the error names missing required arguments.
func PromptArgs(decl *sdk.Prompt, args string) (map[string]string, error) {
	declared := map[string]bool{}
	for _, a := range decl.Arguments {
		declared[a.Name] = true
	}
	values := map[string]string{}
	var positional []string
	for _, w := range splitWords(args) {
		if k, v, ok := strings.Cut(w, "="); ok && declared[k] {
			values[k] = v
			continue
		}
		positional = append(positional, w)
	}
	var free []string // declared arguments not named, in order
	for _, a := range decl.Arguments {
		if _, ok := values[a.Name]; !ok {
			free = append(free, a.Name)
		}
	}
	for i, w := range positional {
		if i >= len(free) {
			if len(free) == 0 {
				return nil, fmt.Errorf("the prompt takes no more arguments, got %q", strings.Join(positional[i:], " "))
			}
			last := free[len(free)-1]
			values[last] += " " + w
			continue
		}
		values[free[i]] = w
	}
	var missing []string
	for _, a := range decl.Arguments {
		if a.Required && values[a.Name] == "" {
			missing = append(missing, a.Name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("missing required argument(s): %s", strings.Join(missing, ", "))
	}
	return values, nil
}

// splitWords splits on whitespace; double or single quotes group words.
func splitWords(s string) []string {
	var out []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}
