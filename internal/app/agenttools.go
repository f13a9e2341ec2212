package app

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/lovia-dev/lovia/internal/agent"
	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/plugin/subagents"
	"github.com/lovia-dev/lovia/internal/preset"
	"github.com/lovia-dev/lovia/internal/runtime"
	"github.com/lovia-dev/lovia/internal/tool"
)

// agentTools is the plugin offering a preset's agents_as_tools as ask_<name> tools.
type agentTools struct {
	tools []tool.Tool
}

func (*agentTools) Name() string { return "agents_as_tools" }

func (p *agentTools) Setup(context.Context, *tool.RunContext) (*plugin.Contribution, error) {
	return &plugin.Contribution{Tools: p.tools}, nil
}

// agentToolsPlugin builds p's ask_<name> tools. Each call runs the named preset as a
// child run, built as subagents are (buildChild): its own preset and model, the
// parent's workspace policy as its ceiling, its own checkpointed run recorded with
// the caller as parent (lovia runs show lists it). As for subagents, a child's
// approval requests are denied (nobody is asked on its behalf), and its usage is
// added to the caller's.
func (a *App) agentToolsPlugin(p *preset.Preset, policy string) (plugin.Plugin, error) {
	out := &agentTools{}
	for _, name := range p.AgentsAsTools {
		cp, err := a.Presets.Get(name)
		if err != nil {
			return nil, err
		}
		desc := strings.TrimSpace(cp.HandoffDescription)
		if desc == "" {
			desc = strings.TrimSpace(cp.Description)
		}
		if desc != "" {
			desc = "Ask the agent " + name + ": " + desc
		}
		spec := runtime.AgentTool(&agent.Agent{Name: name}, desc, runtime.Options{}).Spec()
		out.tools = append(out.tools, &tool.FuncTool{S: spec, Fn: func(ctx context.Context, rc *tool.RunContext, args json.RawMessage) (tool.Result, error) {
			cs := subagents.ChildSpec{ID: newID("ask_"), Preset: name}
			if rc != nil {
				cs.ParentRunID, cs.SessionID, cs.Deps = rc.RunID, rc.SessionID, rc.Deps
			}
			ag, opts, err := a.buildChild(ctx, cs, policy)
			if err != nil {
				return tool.Result{Text: "could not start the agent " + name + ": " + err.Error(), IsError: true}, nil
			}
			opts.Approvals = runtime.ApprovalDenyAll
			return runtime.AgentTool(ag, desc, opts).Invoke(ctx, rc, args)
		}})
	}
	return out, nil
}
