// Package plugin is lovia's one extension axis. A Plugin is set up once per run (and
// once per agent on a handoff) and contributes to fixed slots of the run loop: tools,
// instructions, per-turn view injectors, hooks and guardrails. It owns no control flow.
// Built-in plugins live in subpackages.
package plugin

import (
	"context"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// Plugin contributes capabilities to a run.
type Plugin interface {
	Name() string
	Setup(ctx context.Context, rc *tool.RunContext) (*Contribution, error)
}

// Contribution is what one plugin instance adds to a run. Close (may be nil) is called
// at run end, in reverse setup order.
type Contribution struct {
	Tools            []tool.Tool
	Instructions     string
	ViewInjectors    []ViewInjector
	Hooks            []Hook
	InputGuardrails  []Guardrail
	OutputGuardrails []Guardrail
	// ToolGates are consulted in tool-call preflight (after argument validation,
	// before approval) for every call of the turn; see ToolGate.
	ToolGates []ToolGate
	// StopGates are consulted when the model gives a final answer (no tool calls);
	// see StopGate.
	StopGates []StopGate
	Close     func(ctx context.Context) error
}

// ToolGate may veto one tool call before it runs (user-configured pre_tool_use hooks
// use it). Block=true turns the call into an error result carrying Message and the
// tool never runs. A gate error is logged and the call proceeds (fail-open, like
// hooks). call is the tool_call entry (CallID, Name, Args).
type ToolGate func(ctx context.Context, rc *tool.RunContext, call transcript.Entry) (GateResult, error)

// GateResult is a ToolGate's verdict.
type GateResult struct {
	Block   bool
	Message string
	// Ask makes the call need the user's approval even when the policy would let it
	// run (a hook's "ask"): it can only tighten. Message is shown with the request.
	Ask bool
	// Args, when set, replace the call's arguments (a hook's updatedInput). They are
	// validated again and pass the same approval and policy as the model's own.
	Args []byte
}

// StopGate may refuse the end of a run (a Stop hook's block): Continue=true appends
// Message as a user message and the run goes on. active reports that an earlier stop
// of this run was already refused. The loop bounds how often this can happen.
type StopGate func(ctx context.Context, rc *tool.RunContext, final string, active bool) (StopResult, error)

// StopResult is a StopGate's verdict.
type StopResult struct {
	Continue bool
	Message  string
}

// ViewInjector returns transient entries appended to the tail of one model call's view
// only — never to the transcript or the session. Injectors are fail-open: an error is
// logged and skipped.
type ViewInjector func(ctx context.Context, rc *tool.RunContext) ([]transcript.Entry, error)

// Hook observes every event of a run as it happens. Errors are logged, never fatal.
type Hook func(ctx context.Context, ev event.Event, rc *tool.RunContext) error

// Guardrail checks the run's input (against the built transcript) or its final output.
// Tripped=true aborts the run with a guardrail error carrying Message.
type Guardrail func(ctx context.Context, rc *tool.RunContext, text string) (GuardrailResult, error)

// GuardrailResult is a guardrail's verdict.
type GuardrailResult struct {
	Tripped bool
	Message string
}

// Func adapts a setup function to Plugin.
type Func struct {
	ID string
	Fn func(ctx context.Context, rc *tool.RunContext) (*Contribution, error)
}

func (p Func) Name() string { return p.ID }

func (p Func) Setup(ctx context.Context, rc *tool.RunContext) (*Contribution, error) {
	return p.Fn(ctx, rc)
}
