package app

import (
	"slices"

	"github.com/lovia-dev/lovia/internal/guardrail"
	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/plugin/hooks"
	"github.com/lovia-dev/lovia/internal/preset"
)

// outputGuardrails returns the plugin checking a top-level run's final answer with
// the preset's and the configuration's output guardrails (nil when there are none).
// Command guardrails run like hooks: through the run's workspace executor, so they
// are sandboxed like its commands, with a minimal environment.
func (a *App) outputGuardrails(p *preset.Preset, policy, model string) (plugin.Plugin, error) {
	specs := append(slices.Clone(p.OutputGuardrails), a.Config.Guardrails.Output...)
	if len(specs) == 0 {
		return nil, nil
	}
	w, err := a.Workspace(policy)
	if err != nil {
		return nil, err
	}
	r, err := hooks.NewRunner(hooks.Config{Dir: a.Config.Cwd, ProjectDir: a.Config.Root, Scrub: a.scrub.Scrub, Command: w.Command}, a.Log)
	if err != nil {
		return nil, err
	}
	return guardrail.New(specs, guardrail.Deps{Runner: r, Resolve: a.Resolve, Model: model}), nil
}
