// Package runtime runs agents: RunLoop is the only place a run's mutable state lives.
// Front ends use one surface: Start a run, read its events, answer approvals, push
// mailbox messages, cancel, and take the Result.
package runtime

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/lovia-dev/lovia/internal/compaction"
	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

// IfRunExists says what Start does when Options.RunID already has a checkpoint.
type IfRunExists string

const (
	// ResumeRun (default): an unfinished run resumes; a completed run replays its
	// stored result without calling the model.
	ResumeRun IfRunExists = "resume"
	// RestartRun discards the old checkpoint's progress and starts over with the input.
	RestartRun IfRunExists = "restart"
	// FailRun returns an error (errs.KindRunConflict) if the run id exists.
	FailRun IfRunExists = "fail"
	// ResumeOnly requires an existing checkpoint (errs.KindNotFound otherwise).
	ResumeOnly IfRunExists = "resume_only"
)

// ApprovalMode says how `ask` decisions are answered.
type ApprovalMode int

const (
	// ApprovalInteractive: an approval_required event is emitted and the loop waits
	// for Handle.Approve (or cancellation).
	ApprovalInteractive ApprovalMode = iota
	// ApprovalDenyAll: every ask is denied at once (headless default); the denial is
	// reported to the model and in the events.
	ApprovalDenyAll
	// ApprovalAllowAll: every ask is allowed (headless --approve all).
	ApprovalAllowAll
)

// Options configure one run.
type Options struct {
	// Resolve turns an agent's "provider:model" into a Provider.
	Resolve func(ctx context.Context, model string) (provider.Provider, error)

	Session   store.Session // nil: no session history, no append
	SessionID string
	// NewSession: SessionID names a session created for this run, so it has no
	// history to load (a run that resumes a checkpoint of another session loads that).
	NewSession bool

	Checkpointer store.Checkpointer // nil: no checkpoints (no resume)
	RunID        string             // generated when empty
	IfRunExists  IfRunExists
	ParentRunID  string

	// CarryRunID continues the conversation after an unfinished (interrupted, failed,
	// limit-stopped) run of the same session: a new run opens its own entries with
	// that run's entries — dangling calls closed with an error result, a note on how
	// it ended — and marks it carried (it can no longer be resumed). Ignored when
	// resuming, and when that run is unknown, completed, of another session, live in
	// another process, or already carried.
	CarryRunID string

	// ContextPolicy renders each call's view (nil: compaction.Noop).
	ContextPolicy compaction.Policy

	Approvals ApprovalMode

	// Plugins are added to every agent of the run (workspace, front-end plugins).
	Plugins []plugin.Plugin

	// ExtraInstructions are appended to every agent's system prompt (also after a
	// handoff).
	ExtraInstructions string

	// MaxTurns / BudgetTokens override the agent's limits when > 0.
	MaxTurns     int
	BudgetTokens int
	// MaxBudgetUSD stops the run once its cost reaches this many dollars (0: no
	// limit). A run with a cost budget refuses to start on a model without a price.
	MaxBudgetUSD float64

	// Prices price every model call (nil: the built-in table); the cost rides in
	// the usage of events, results and checkpoints.
	Prices *usage.Prices

	// Settings are stored in the checkpoint head verbatim (model, preset, policy, cwd,
	// flags) so a resume can restore them.
	Settings json.RawMessage

	// Scrub, when set, is applied to every tool result's text before it is recorded:
	// the model, the transcript, the checkpoint and the events see only its output
	// (secret scrubbing: provider keys become [redacted]).
	Scrub func(string) string

	Deps   any
	Logger *slog.Logger // nil: discard
	Now    func() time.Time
}

// Result is a finished run. On failure Result() still returns a non-nil Result with
// what is known (run id, usage, turns, entries so far) alongside the error.
type Result struct {
	RunID            string
	SessionID        string
	Status           store.Status
	Output           string
	StructuredOutput json.RawMessage
	Usage            usage.Usage
	Turns            int
	// FinishReason: "stop", "max_turns", "budget", "cancelled", "guardrail", "error".
	FinishReason string
	FinalAgent   string
	// Entries is this run's own transcript contribution (not prior history).
	Entries []transcript.Entry
	// Replayed is true when a completed run id was re-issued and nothing was called.
	Replayed bool
}
