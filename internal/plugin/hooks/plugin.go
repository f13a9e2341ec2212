package hooks

import (
	"context"
	"log/slog"
	"strings"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/mailbox"
	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// maxContextChars bounds what session_start hooks may add to the instructions.
const maxContextChars = 10_000

// Plugin wires a Runner into a run's plugin slots.
type Plugin struct {
	r *Runner
}

// New validates cfg and returns the hooks plugin. logger may be nil.
func New(cfg Config, logger *slog.Logger) (*Plugin, error) {
	r, err := NewRunner(cfg, logger)
	if err != nil {
		return nil, err
	}
	return &Plugin{r: r}, nil
}

// Name implements plugin.Plugin.
func (*Plugin) Name() string { return "hooks" }

// WithCommand returns the plugin with its hooks prepared by command: the run's
// workspace executor, so hooks run sandboxed like the run's commands.
func (p *Plugin) WithCommand(command CommandFunc) *Plugin {
	return &Plugin{r: p.r.WithCommand(command)}
}

func base(rc *tool.RunContext, ev Event) Input {
	in := Input{HookEventName: ev}
	if rc != nil {
		in.SessionID, in.RunID, in.ParentRunID, in.Agent, in.Turn = rc.SessionID, rc.RunID, rc.ParentRunID, rc.Agent, rc.Turn
	}
	return in
}

// Setup implements plugin.Plugin.
func (p *Plugin) Setup(ctx context.Context, rc *tool.RunContext) (*plugin.Contribution, error) {
	r := p.r
	c := &plugin.Contribution{}
	if r.Has(SessionStart) {
		out := r.Run(ctx, base(rc, SessionStart))
		if s := strings.TrimSpace(out.Stdout); s != "" {
			s, _ = tool.Truncate(s, maxContextChars)
			c.Instructions = "## Context from session_start hooks\n" + s
		}
	}
	if r.Has(PreToolUse) {
		c.ToolGates = append(c.ToolGates, func(ctx context.Context, rc *tool.RunContext, call transcript.Entry) (plugin.GateResult, error) {
			in := base(rc, PreToolUse)
			in.ToolName, in.ToolUseID, in.ToolInput = call.Name, call.CallID, call.Args
			out := r.Run(ctx, in)
			if !out.Blocked {
				return plugin.GateResult{}, nil
			}
			return plugin.GateResult{Block: true, Message: out.Message}, nil
		})
	}
	if r.Has(UserPromptSubmit) {
		c.InputGuardrails = append(c.InputGuardrails, func(ctx context.Context, rc *tool.RunContext, text string) (plugin.GuardrailResult, error) {
			in := base(rc, UserPromptSubmit)
			in.Prompt = text
			out := r.Run(ctx, in)
			if !out.Blocked {
				return plugin.GuardrailResult{}, nil
			}
			return plugin.GuardrailResult{Tripped: true, Message: "blocked by the user_prompt_submit hook: " + out.Message}, nil
		})
	}
	if r.Has(PostToolUse) || r.Has(Stop) || r.Has(PreCompact) {
		c.Hooks = append(c.Hooks, func(ctx context.Context, ev event.Event, rc *tool.RunContext) error {
			switch ev.Type {
			case event.ToolCallCompleted, event.ToolCallFailed:
				if !r.Has(PostToolUse) {
					return nil
				}
				in := base(rc, PostToolUse)
				in.ToolName, in.ToolUseID, in.ToolInput = ev.Name, ev.CallID, ev.Args
				if len(in.ToolInput) == 0 {
					in.ToolInput = callArgs(rc, ev.CallID)
				}
				in.ToolResponse = &ToolResponse{Output: ev.Output, IsError: ev.IsError || ev.Type == event.ToolCallFailed}
				out := r.Run(ctx, in)
				if out.Blocked && rc != nil && rc.Mailbox != nil {
					// The result is already recorded; the feedback reaches the model as a
					// steering message at the next turn boundary.
					rc.Mailbox.Push(mailbox.Message{Source: "hook:post_tool_use", Text: "Feedback from the post_tool_use hook on " + ev.Name + " (call " + ev.CallID + "): " + out.Message})
				}
			case event.ContextCompacted:
				if !r.Has(PreCompact) {
					return nil
				}
				in := base(rc, PreCompact)
				if ev.Compaction != nil {
					in.Compaction = ev.Compaction
				}
				r.Run(ctx, in)
			case event.RunCompleted, event.RunFailed:
				if !r.Has(Stop) {
					return nil
				}
				in := base(rc, Stop)
				in.Status, in.FinalOutput = ev.Status, ev.FinalOutput
				if ev.Error != nil {
					in.Error = ev.Error.Message
				}
				r.Run(ctx, in)
			}
			return nil
		})
	}
	return c, nil
}

func callArgs(rc *tool.RunContext, callID string) []byte {
	if rc == nil || rc.Entries == nil {
		return nil
	}
	es := rc.Entries()
	for i := len(es) - 1; i >= 0; i-- {
		if es[i].Type == transcript.TypeToolCall && es[i].CallID == callID {
			return es[i].Args
		}
	}
	return nil
}
