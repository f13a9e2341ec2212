// Package compaction produces each model call's view of the transcript. Compaction is
// view-only: it never rewrites the transcript or the session.
//
// The default policy, Compaction (New), is a sticky staged pipeline (SPEC §6):
//
//   - Plan/render split. Stages (offload huge tool results → clear older results →
//     incremental LLM summary of the old prefix) only add decisions to a State
//     (call_id → offloaded/cleared, summary text + covered prefix + fingerprint). The
//     pure Render(body, state) builds the view. Decisions are never undone, so between
//     bursts every view extends the previous one byte for byte (Result.StablePrefix)
//     and provider prompt caches stay warm.
//   - Watermarks on the usable window (context window − reserved output): nothing
//     happens below compact_at; above it stages run, cheapest first, until the view is
//     under compact_to. Request.Force (/compact, or CompactNext) runs every stage now;
//     Request.Overflow re-renders aggressively (target 25%, tail 10%, an oversized
//     result loses its immunity) and Result.Compacted says whether anything new was
//     decided (the loop retries only then).
//   - Tokens: UTF-8 bytes/4 per entry (memoized), flat costs for attachments, tool
//     schemas counted apart, all calibrated against the provider's reported input
//     tokens (Request.LastInputTokens: the whole prompt, cached tokens included).
//   - State travels in Result.State → the checkpoint head → the next Request.State, so
//     it survives resume; a bounded in-process cache carries it to the next run of the
//     same session (the summary is reset when the covered prefix changed).
//   - recall_tool_result (ToolSource) returns a cleared/offloaded output from the
//     ResultStore archive or the transcript. Call ids must be unique within a session
//     (providers guarantee it; decisions are keyed by call_id).
package compaction

import (
	"context"
	"encoding/json"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// Policy renders the view for one model call.
type Policy interface {
	Compact(ctx context.Context, req Request) (Result, error)
}

// Request is everything a policy may look at.
type Request struct {
	RunID     string
	SessionID string
	// Body is the conversation body: session history + this run's entries (no system
	// head). Read-only.
	Body []transcript.Entry
	// SystemTokens and ToolsTokens are the estimated sizes of the system prompt and the
	// tool schemas as sent (counted separately from the body).
	System string
	Tools  []json.RawMessage
	// ToolNames are the tools the active agent has (markers mention recall_tool_result
	// only when it is among them).
	ToolNames []string
	// ContextWindow of the model in tokens (0 = unknown: the policy uses a safe default).
	ContextWindow int
	// LastInputTokens is the provider-reported input size of the previous call (0 if
	// none), used for calibration.
	LastInputTokens int
	// State is the sticky state from the previous call (nil at run start or when the
	// policy has none); it is persisted in the checkpoint head.
	State json.RawMessage
	// Overflow: the previous attempt overflowed; render aggressively.
	Overflow bool
	// Force: a user asked for a compaction pass (/compact).
	Force bool
}

// Result is one rendered view.
type Result struct {
	View []transcript.Entry
	// StablePrefix: how many leading View entries are byte-identical to the previous
	// call's view (a cache breakpoint goes after them).
	StablePrefix int
	State        json.RawMessage
	// Compacted reports new decisions were made (the loop retries an overflow only then).
	Compacted bool
	// Info is reported as a context_compacted event when Compacted.
	Info *event.Compaction
}

// ToolSource is implemented by policies that contribute tools (recall_tool_result).
// Such tools are added last and silently shadowed by an explicit tool of the same name.
type ToolSource interface {
	Tools() []tool.Tool
}

// Noop renders the body unchanged.
type Noop struct{}

func (Noop) Compact(_ context.Context, req Request) (Result, error) {
	return Result{View: req.Body, StablePrefix: len(req.Body), State: req.State}, nil
}
