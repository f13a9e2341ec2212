// Package tool defines what the model can call: a Tool is a Spec (name, description,
// JSON Schema, execution metadata) plus Invoke. New builds a Tool from a Go function
// whose typed argument struct yields the schema; model-supplied arguments are validated
// against it before the function runs.
package tool

import (
	"context"
	"encoding/json"
	"time"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/mailbox"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

// DefaultMaxOutputChars caps a tool result before it is stored (head + tail kept).
const DefaultMaxOutputChars = 200_000

// Tool is one capability the model can invoke.
type Tool interface {
	Spec() Spec
	Invoke(ctx context.Context, rc *RunContext, args json.RawMessage) (Result, error)
}

// Spec is a tool's declaration and execution metadata.
type Spec struct {
	Name        string
	Description string
	// Schema is the JSON Schema of the arguments object (as sent to providers).
	Schema json.RawMessage
	// Parallel false makes the tool an execution barrier: in-flight calls finish, it
	// runs alone, then dispatch resumes.
	Parallel bool
	// Timeout bounds one attempt (0 = none). Exceeding it yields an error result.
	Timeout time.Duration
	// Retries re-invokes after an error return (not after an error Result).
	Retries int
	// MaxOutputChars caps the result text; 0 means DefaultMaxOutputChars, <0 no cap.
	MaxOutputChars int
	// Approval decides whether a call needs a person's decision. It returns nil when
	// the call may run as is. A non-nil error becomes an error result (deny).
	Approval ApprovalFunc
	// Grant is called when a person answers "allow for this session"; it receives the
	// approval that was shown so the tool's owner can store its Rules.
	Grant func(a *event.Approval)
	// Validate, when set, replaces schema validation (e.g. tools with foreign schemas).
	Validate func(args json.RawMessage) error

	// args is the argument type of a tool built by New (nil otherwise).
	args *argsType
}

// ApprovalFunc inspects a call's (already validated) arguments.
type ApprovalFunc func(ctx context.Context, rc *RunContext, args json.RawMessage) (*event.Approval, error)

// Result is what a tool returns to the model.
type Result struct {
	Text    string
	IsError bool
	// Diff is the change the tool made to a file, as a unified diff, for front ends
	// to show (the model sees Text only).
	Diff        string
	Attachments []transcript.Attachment
	// Handoff, set only by handoff tools the run loop builds, names the target agent.
	Handoff string
}

// Decision is a person's (or a default's) answer to an approval request.
type Decision struct {
	Allow bool
	// Session: allow for the rest of the session (the tool's Grant stores the rules).
	Session bool
	// Message is passed to the model with a denial.
	Message string
}

// RunContext is the one live handle tools, hooks, guardrails, view injectors and
// dynamic instructions receive. Treat Entries as read-only.
type RunContext struct {
	RunID       string
	SessionID   string
	ParentRunID string
	// Agent is the active agent's name.
	Agent   string
	Turn    int
	Mailbox *mailbox.Mailbox
	// Deps carries application dependencies.
	Deps any
	// Cancel asks the run to stop (the loop decides when).
	Cancel func(reason string)
	// Entries returns the current transcript (system head + history + run entries).
	Entries func() []transcript.Entry
	// Usage returns the run's usage so far.
	Usage func() usage.Usage
	// AddUsage adds what a tool spent on models (an agent asked as a tool) to the
	// run's usage, so budgets and totals count it.
	AddUsage func(usage.Usage)
	// PriceUsage fills in the cost of one model call of provider:model at the run's
	// prices (nil: the call is left unpriced), so usage a tool adds keeps the run's
	// cost known.
	PriceUsage func(provider, model string, u usage.Usage) usage.Usage
	// Ask routes an approval request to the front end from inside a running tool
	// (ask_human, subagent approvals). Unanswered means denied.
	Ask func(ctx context.Context, a *event.Approval) (Decision, error)
}

// FuncTool adapts a Spec and a function to Tool.
type FuncTool struct {
	S  Spec
	Fn func(ctx context.Context, rc *RunContext, args json.RawMessage) (Result, error)
}

func (t *FuncTool) Spec() Spec { return t.S }

func (t *FuncTool) Invoke(ctx context.Context, rc *RunContext, args json.RawMessage) (Result, error) {
	return t.Fn(ctx, rc, args)
}

// Option adjusts a Spec.
type Option func(*Spec)

// Parallel sets whether the tool may run concurrently with others (default true).
func Parallel(p bool) Option { return func(s *Spec) { s.Parallel = p } }

// Timeout sets the per-attempt timeout.
func Timeout(d time.Duration) Option { return func(s *Spec) { s.Timeout = d } }

// Retries sets how often an error return is retried.
func Retries(n int) Option { return func(s *Spec) { s.Retries = n } }

// MaxOutput sets the output cap (<0 disables).
func MaxOutput(n int) Option { return func(s *Spec) { s.MaxOutputChars = n } }

// NeedsApproval makes every call ask (true) or never ask (false).
func NeedsApproval(b bool) Option {
	return func(s *Spec) {
		if !b {
			s.Approval = nil
			return
		}
		s.Approval = func(_ context.Context, _ *RunContext, args json.RawMessage) (*event.Approval, error) {
			return &event.Approval{Kind: "tool", Summary: s.Name + " " + string(args)}, nil
		}
	}
}

// ApprovalWhen sets an approval predicate.
func ApprovalWhen(f ApprovalFunc) Option { return func(s *Spec) { s.Approval = f } }

// OnGrant sets the "allow for session" callback.
func OnGrant(f func(a *event.Approval)) Option { return func(s *Spec) { s.Grant = f } }
