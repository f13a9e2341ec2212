package cmd

import (
	"context"
	"fmt"

	"github.com/lovia-dev/lovia/internal/app"
	"github.com/lovia-dev/lovia/internal/termtext"
	"github.com/lovia-dev/lovia/internal/tui"
)

// slashPrompt expands prompt when it is "/name args" naming a custom command or a
// skill, narrowing ro to the command's model and allowed tools.
func slashPrompt(ctx context.Context, f *Factory, a *app.App, prompt string, ro *app.RunOptions) (string, error) {
	inv, err := a.Slash(ctx, prompt)
	if err != nil || inv == nil {
		return prompt, err
	}
	for _, n := range inv.Notes {
		fmt.Fprintln(f.IO.ErrOut, "lovia: "+termtext.String(n))
	}
	if inv.Model != "" {
		ro.Model = inv.Model
	}
	ro.AllowedTools = inv.AllowedTools
	return inv.Prompt, nil
}

// CustomCommands implements tui.CustomCommander: the chat completes and runs them.
func (b *chatBackend) CustomCommands() []tui.CustomCommand {
	list, _ := b.app.Commands(context.Background())
	out := make([]tui.CustomCommand, 0, len(list))
	for _, c := range list {
		help := c.Description
		if c.Scope == "skill" {
			help = "(skill) " + help
		}
		out = append(out, tui.CustomCommand{Name: "/" + c.Name, Args: c.ArgumentHint, Help: help})
	}
	return out
}
