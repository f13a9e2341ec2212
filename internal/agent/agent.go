// Package agent holds the declarative Agent: configuration only, no conversation
// state, so one value serves any number of concurrent runs.
package agent

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/tool"
)

// Fragment produces a dynamic part of the instructions at run setup.
type Fragment func(ctx context.Context, rc *tool.RunContext) (string, error)

// Limits bound a run. Zero values mean the defaults.
type Limits struct {
	MaxTurns int // default 50
	// BudgetTokens caps input+output tokens over the run (0 = none).
	BudgetTokens int
	// MaxToolOutputChars caps every tool result (0 = tool.DefaultMaxOutputChars, <0 none).
	MaxToolOutputChars int
}

// Agent is a declarative agent configuration.
type Agent struct {
	Name         string
	Instructions string
	Fragments    []Fragment
	// Model is "provider:model".
	Model    string
	Tools    []tool.Tool
	Plugins  []plugin.Plugin
	Handoffs []*Agent
	// HandoffDescription tells other agents when to transfer to this one.
	HandoffDescription string
	// OutputSchema, when set, makes the final answer a JSON value validated against it.
	OutputSchema json.RawMessage
	OutputName   string
	// OutputRepairTurns is how many repair turns a structured-output failure gets:
	// 0 means the default (1), negative disables repair.
	OutputRepairTurns int
	Limits            Limits
	Hooks             []plugin.Hook
	InputGuardrails   []plugin.Guardrail
	OutputGuardrails  []plugin.Guardrail
}

// DefaultMaxTurns is the max_turns default (SPEC §3).
const DefaultMaxTurns = 50

// Clone returns a copy sharing no mutable state (slices are copied; tools, plugins and
// handoff targets are shared values, which are immutable by contract).
func (a *Agent) Clone() *Agent {
	c := *a
	c.Fragments = slices.Clone(a.Fragments)
	c.Tools = slices.Clone(a.Tools)
	c.Plugins = slices.Clone(a.Plugins)
	c.Handoffs = slices.Clone(a.Handoffs)
	c.OutputSchema = slices.Clone(a.OutputSchema)
	c.Hooks = slices.Clone(a.Hooks)
	c.InputGuardrails = slices.Clone(a.InputGuardrails)
	c.OutputGuardrails = slices.Clone(a.OutputGuardrails)
	return &c
}

// With returns a clone modified by f (agent.clone(model=...) of the seed).
func (a *Agent) With(f func(*Agent)) *Agent {
	c := a.Clone()
	f(c)
	return c
}

// MaxTurns returns the effective turn limit.
func (a *Agent) MaxTurns() int {
	if a.Limits.MaxTurns > 0 {
		return a.Limits.MaxTurns
	}
	return DefaultMaxTurns
}

// Find returns the agent named name in a's handoff graph (a included), or nil.
func (a *Agent) Find(name string) *Agent {
	seen := map[*Agent]bool{}
	var walk func(x *Agent) *Agent
	walk = func(x *Agent) *Agent {
		if x == nil || seen[x] {
			return nil
		}
		seen[x] = true
		if x.Name == name {
			return x
		}
		for _, h := range x.Handoffs {
			if r := walk(h); r != nil {
				return r
			}
		}
		return nil
	}
	return walk(a)
}
