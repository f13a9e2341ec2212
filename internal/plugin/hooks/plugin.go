package hooks

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"

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
		in := base(rc, SessionStart)
		in.Source, in.match = "startup", "startup"
		out := r.Run(ctx, in)
		if s := strings.TrimSpace(joinNonEmpty(out.Stdout, out.Context)); s != "" {
			s, _ = tool.Truncate(s, maxContextChars)
			c.Instructions = "## Context from session_start hooks\n" + s
		}
	}
	if r.Has(PreToolUse) {
		c.ToolGates = append(c.ToolGates, func(ctx context.Context, rc *tool.RunContext, call transcript.Entry) (plugin.GateResult, error) {
			in := base(rc, PreToolUse)
			in.ToolName, in.ToolUseID, in.ToolInput = call.Name, call.CallID, call.Args
			out := r.Run(ctx, in)
			steer(rc, "pre_tool_use", call.Name, out.Context)
			if out.Stop {
				cancel(rc, out.StopReason)
			}
			if out.Blocked {
				return plugin.GateResult{Block: true, Message: out.Message}, nil
			}
			// "allow" is no answer here: a hook never loosens the policy (see
			// docs/compat.md); "ask" and updatedInput only tighten or re-enter the
			// same checks.
			return plugin.GateResult{Ask: out.Ask, Message: out.AskReason, Args: out.UpdatedInput}, nil
		})
	}
	if r.Has(UserPromptSubmit) {
		c.InputGuardrails = append(c.InputGuardrails, func(ctx context.Context, rc *tool.RunContext, text string) (plugin.GuardrailResult, error) {
			in := base(rc, UserPromptSubmit)
			in.Prompt = text
			out := r.Run(ctx, in)
			if out.Blocked || out.Stop {
				msg := joinNonEmpty(out.Message, out.StopReason)
				return plugin.GuardrailResult{Tripped: true, Message: "blocked by the user_prompt_submit hook: " + msg}, nil
			}
			// As in Claude Code, what the hook prints is context for the prompt.
			if s := strings.TrimSpace(joinNonEmpty(out.Stdout, out.Context)); s != "" && rc != nil && rc.Mailbox != nil {
				s, _ = tool.Truncate(s, maxContextChars)
				rc.Mailbox.Push(mailbox.Message{Source: "hook:user_prompt_submit", Text: "Context from the user_prompt_submit hook:\n" + s})
			}
			return plugin.GuardrailResult{}, nil
		})
	}
	// nativeGated: lovia's own stop hooks already passed this run's final answer at
	// the stop gate, so the run-completed observer does not run them a second time.
	// The contribution is per run, and so is this flag.
	var nativeGated atomic.Bool
	if r.Has(Stop) || r.Has(SubagentStop) {
		c.StopGates = append(c.StopGates, func(ctx context.Context, rc *tool.RunContext, final string, active bool) (plugin.StopResult, error) {
			ev := Stop
			if rc != nil && rc.ParentRunID != "" {
				ev = SubagentStop
			}
			in := base(rc, ev)
			in.StopHookActive, in.FinalOutput, in.Status = active, final, "completed"
			if ev == Stop && r.hasNative(Stop) {
				// lovia's stop hooks may keep a top-level run going too (exit 2 or
				// {"decision":"block"}); subagents' ends are observed only.
				out := r.runNative(ctx, in)
				if out.Blocked && !out.Stop {
					return plugin.StopResult{Continue: true, Message: out.Message}, nil
				}
				nativeGated.Store(true)
			}
			if !r.hasClaude(ev) {
				return plugin.StopResult{}, nil
			}
			out := r.runClaude(ctx, in)
			if out.Blocked && !out.Stop {
				return plugin.StopResult{Continue: true, Message: out.Message}, nil
			}
			return plugin.StopResult{}, nil
		})
	}
	if r.Has(PostToolUse) || r.Has(Stop) || r.Has(PreCompact) || r.Has(SessionEnd) || r.Has(Notification) {
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
				steer(rc, "post_tool_use", ev.Name, out.Context)
				if out.Stop {
					cancel(rc, out.StopReason)
				}
			case event.ApprovalRequired:
				if !r.Has(Notification) {
					return nil
				}
				in := base(rc, Notification)
				in.Message = "lovia needs your permission to use " + ClaudeToolName(ev.Name)
				in.match = "permission_prompt"
				r.Run(ctx, in)
			case event.ContextCompacted:
				if !r.Has(PreCompact) {
					return nil
				}
				in := base(rc, PreCompact)
				in.match = "auto"
				if ev.Compaction != nil {
					in.Compaction = ev.Compaction
				}
				r.Run(ctx, in)
			case event.RunCompleted, event.RunFailed:
				if r.Has(Stop) && !(ev.Type == event.RunCompleted && nativeGated.Load()) {
					// lovia's own stop hooks observe the end of every run they did not
					// already pass at the stop gate; Claude Code's ran only at the gate.
					in := base(rc, Stop)
					in.Status, in.FinalOutput = ev.Status, ev.FinalOutput
					if ev.Error != nil {
						in.Error = ev.Error.Message
					}
					r.runNative(ctx, in)
				}
				if r.Has(SessionEnd) {
					in := base(rc, SessionEnd)
					in.Status, in.FinalOutput, in.Reason = ev.Status, ev.FinalOutput, "other"
					if ev.Error != nil {
						in.Error = ev.Error.Message
					}
					r.Run(ctx, in)
				}
			}
			return nil
		})
	}
	return c, nil
}

// steer hands a hook's additionalContext to the model at the next turn.
func steer(rc *tool.RunContext, ev, toolName, text string) {
	if text == "" || rc == nil || rc.Mailbox == nil {
		return
	}
	text, _ = tool.Truncate(text, maxContextChars)
	rc.Mailbox.Push(mailbox.Message{Source: "hook:" + ev, Text: "Context from the " + ev + " hook on " + toolName + ":\n" + text})
}

// cancel stops the run for a hook's continue:false.
func cancel(rc *tool.RunContext, reason string) {
	if rc == nil || rc.Cancel == nil {
		return
	}
	if reason == "" {
		reason = "a hook asked to stop"
	}
	rc.Cancel("stopped by a hook: " + reason)
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
