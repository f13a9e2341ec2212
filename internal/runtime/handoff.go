package runtime

import (
	"context"
	"fmt"
	"strings"

	"github.com/lovia-dev/lovia/internal/agent"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/tool"
)

type handoffArgs struct {
	Reason string `json:"reason,omitempty" jsonschema:"description=why the conversation is handed over (optional)"`
}

// handoffTool is transfer_to_<name>: its result asks the loop to swap the active agent
// after the turn. It always runs as a barrier, so the first handoff of a turn wins.
func handoffTool(target *agent.Agent) tool.Tool {
	desc := "Hand the conversation over to the agent " + target.Name + "."
	if d := strings.TrimSpace(target.HandoffDescription); d != "" {
		desc += " " + d
	}
	name := target.Name
	return tool.NewResult(HandoffToolName(name), desc, func(_ context.Context, _ *tool.RunContext, _ handoffArgs) (tool.Result, error) {
		return tool.Result{Text: "Transferred to " + name + ".", Handoff: name}, nil
	}, tool.Parallel(false))
}

type askArgs struct {
	Input string `json:"input" jsonschema:"description=the task or question for the agent, self-contained"`
}

// AgentTool exposes agent a as the tool "ask_<name>": each call runs a as a child run
// (ParentRunID = the caller's run) on the call's input and returns its final output.
// opts configure the child runs (RunID and IfRunExists are ignored: each call is a new
// run; Session is not used unless opts.Session is set). The child's approval requests
// are routed to the parent's approval channel. An empty description uses the agent's
// HandoffDescription.
func AgentTool(a *agent.Agent, description string, opts Options) tool.Tool {
	if strings.TrimSpace(description) == "" {
		description = strings.TrimSpace(a.HandoffDescription)
	}
	if description == "" {
		description = "Ask the agent " + a.Name + " to handle a task and return its answer."
	}
	return tool.New(toolName("ask_", a.Name), description, func(ctx context.Context, rc *tool.RunContext, args askArgs) (string, error) {
		if strings.TrimSpace(args.Input) == "" {
			return "", fmt.Errorf("input is empty: pass the task for %s in \"input\"", a.Name)
		}
		o := opts
		o.RunID = ""
		o.IfRunExists = ""
		if rc != nil {
			o.ParentRunID = rc.RunID
			if o.Deps == nil {
				o.Deps = rc.Deps
			}
		}
		if rc != nil && rc.Ask != nil && o.Approvals == ApprovalInteractive {
			// Answered below through the parent's channel.
		} else if o.Approvals == ApprovalInteractive {
			o.Approvals = ApprovalDenyAll // nobody could answer
		}
		child := Start(ctx, a, Text(args.Input), o)
		for ev := range child.Events() {
			if ev.Type != event.ApprovalRequired || ev.Approval == nil {
				continue
			}
			d, err := rc.Ask(ctx, ev.Approval)
			if err != nil {
				d = tool.Decision{}
			}
			_ = child.Approve(ev.CallID, d)
		}
		res, err := child.Result()
		if res != nil && rc != nil && rc.AddUsage != nil {
			rc.AddUsage(res.Usage)
		}
		if err != nil {
			return "", fmt.Errorf("agent %s failed (%s): %w", a.Name, errs.KindOf(err), err)
		}
		if len(res.StructuredOutput) > 0 {
			return string(res.StructuredOutput), nil
		}
		return res.Output, nil
	})
}
