package app

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/lovia-dev/lovia/internal/commands"
	"github.com/lovia-dev/lovia/internal/config"
	"github.com/lovia-dev/lovia/internal/plugin/hooks"
	"github.com/lovia-dev/lovia/internal/plugin/skills"
	"github.com/lovia-dev/lovia/internal/workspace"
	bundledskills "github.com/lovia-dev/lovia/skills"
)

// Invocation is a custom slash command (or a skill invoked as /skill-name) turned
// into a run's prompt.
type Invocation struct {
	Name   string
	Prompt string
	// Model is the command's model ("" = the run's).
	Model string
	// AllowedTools narrow the run's tools (lovia names; empty = no narrowing).
	AllowedTools []string
	// Notes are what the user should know (includes left out, a model not mapped).
	Notes []string
}

// skillDirs are the skill folders every run reads.
func (a *App) skillDirs() []string {
	dirs := skills.DirsFor(a.home(), a.Config.UserDir, a.Config.Root)
	return append(dirs, a.Config.Skills.Dirs...)
}

// Commands lists the custom slash commands and the skills the user may invoke as
// /name (a command wins a name clash). Problems do not stop the listing.
func (a *App) Commands(ctx context.Context) ([]commands.Command, []error) {
	list, problems := commands.Load(commands.Dirs(a.home(), a.Config.UserDir, a.Config.Root))
	have := map[string]bool{}
	for _, c := range list {
		have[c.Name] = true
	}
	sk, _ := skills.List(ctx, skills.Config{Bundled: bundledskills.FS, Dirs: a.skillDirs(), NoWatch: true, Repo: a.Config.Root,
		Denied: ReadDenied(a.Config, a.Config.EffectivePolicy(""))})
	for _, s := range sk {
		if have[s.Name] {
			continue
		}
		list = append(list, commands.Command{Name: s.Name, Description: s.Description, AllowedTools: s.AllowedTools,
			Body: skillPrompt(s), Path: s.Path, Scope: "skill"})
	}
	slices.SortFunc(list, func(x, y commands.Command) int { return strings.Compare(x.Name, y.Name) })
	return list, problems
}

func skillPrompt(s skills.Skill) string {
	return fmt.Sprintf("Use the skill %q (its folder: %s; read its other files with read_skill_file). Its instructions:\n\n%s", s.Name, s.Dir, strings.TrimSpace(s.Body))
}

// Slash expands text when it is "/name args" naming a custom command or a skill;
// nil when it names neither (the caller treats the text as it would otherwise).
func (a *App) Slash(ctx context.Context, text string) (*Invocation, error) {
	name, args, ok := commands.Split(text)
	if !ok {
		return nil, nil
	}
	list, problems := a.Commands(ctx)
	for _, p := range problems {
		a.warn(p.Error())
	}
	for _, c := range list {
		if c.Name != name {
			continue
		}
		inv := &Invocation{Name: name}
		body := c
		if c.Scope == "skill" && args != "" {
			body.Body += "\n\nThe task: $ARGUMENTS"
		}
		inv.Prompt, inv.Notes = body.Expand(args, a.Config.Root, a.readDenied())
		if m, note := commandModel(c.Model); note != "" {
			inv.Notes = append(inv.Notes, fmt.Sprintf("/%s: %s", name, note))
		} else {
			inv.Model = m
		}
		inv.AllowedTools = hooks.LoviaTools(c.AllowedTools)
		return inv, nil
	}
	return a.mcpSlash(ctx, name, args) // mcp_offers.go: /server:prompt
}

// commandModel maps a command's model: to lovia's PROVIDER:MODEL.
func commandModel(m string) (string, string) {
	switch {
	case m == "" || m == "inherit":
		return "", ""
	case strings.Contains(m, ":"):
		return m, ""
	case strings.HasPrefix(m, "claude-"):
		return "anthropic:" + m, ""
	}
	return "", fmt.Sprintf("model %q is not a PROVIDER:MODEL lovia knows; the run's model is used", m)
}

// readDenied says why the configured workspace policy denies reading abs ("" when it
// does not): files that instructions import and commands include pass the same
// path rules as the agent's reads. When the policy cannot be built, every such read
// is refused.
func (a *App) readDenied() func(abs string) string {
	return ReadDenied(a.Config, a.CeilingPolicy())
}

// ReadDenied is readDenied for a configuration and policy name.
func ReadDenied(cfg *config.Config, policy string) func(abs string) string {
	wc := cfg.Workspace
	wc.Root = cfg.Cwd
	wc.Policy = policy
	pol, err := workspace.NewPolicy(wc)
	if err != nil {
		return func(string) string { return "the workspace policy could not be built: " + err.Error() }
	}
	return func(abs string) string {
		if _, d, why := pol.Judge(abs, "", workspace.OpRead); d == workspace.Deny {
			return why
		}
		return ""
	}
}
