// Package provider defines the model seam: one streaming call per model turn. The
// request carries the rendered view (not the transcript); the reply streams back as
// deltas, ending with the canonical entries the run loop appends.
package provider

import (
	"context"
	"encoding/json"
	"iter"

	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

// Provider streams one model reply.
//
// Contract for Stream:
//   - Text and Reasoning deltas are for live display only.
//   - The reply itself is the sequence of Entry deltas (assistant_text, reasoning with
//     its opaque provider data, tool_call with complete JSON args), emitted in reply
//     order, typically at the end. The loop appends exactly these.
//   - One Usage delta (may come last) and one Finish delta.
//   - A Discard delta means everything streamed so far is void (a retry restarted the
//     stream); consumers drop partial output and emit output_discarded.
//   - An error ends the sequence (yield(Delta{}, err) then return). Errors that callers
//     branch on are *HTTPError (status, retry-after, overflow) or *errs.Error.
type Provider interface {
	Stream(ctx context.Context, req Request) iter.Seq2[Delta, error]
	Info() Info
}

// Info describes a resolved provider+model.
type Info struct {
	Provider string // registry prefix, e.g. "openai"
	Model    string
	// ContextWindow in tokens (0 = unknown; callers use a safe default).
	ContextWindow int
	// MaxOutputTokens the model accepts (0 = provider default).
	MaxOutputTokens int
	// NativeSchema: the provider enforces a JSON Schema on the final answer itself.
	NativeSchema bool
	// Vision: whether the model takes image input (vision.go).
	Vision Vision
}

// Request is one model call.
type Request struct {
	Model string
	// System is the rendered system head.
	System string
	// Entries is the rendered view of the conversation body (never includes system
	// input entries; those are folded into System).
	Entries []transcript.Entry
	Tools   []ToolDef
	// OutputSchema, when set and Info().NativeSchema, asks for a structured final answer.
	OutputSchema json.RawMessage
	OutputName   string
	// MaxOutputTokens caps the reply (0 = provider default).
	MaxOutputTokens int
	// StablePrefix is the number of leading Entries that are byte-stable from the
	// previous call (compaction decides); providers with explicit prompt caching put a
	// cache breakpoint after them.
	StablePrefix int
	// ToolChoice: "" (auto), "none", "required".
	ToolChoice string
}

// ToolDef is a tool as the model sees it.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"parameters"`
}

// DeltaKind discriminates deltas.
type DeltaKind uint8

const (
	DeltaText DeltaKind = iota + 1
	DeltaReasoning
	// DeltaToolCall announces a call (CallID, Name) as soon as it starts streaming.
	DeltaToolCall
	DeltaEntry
	DeltaUsage
	DeltaFinish
	DeltaDiscard
)

// Delta is one streamed piece of a reply.
type Delta struct {
	Kind   DeltaKind
	Text   string // text/reasoning piece; discard reason
	CallID string
	Name   string
	Entry  *transcript.Entry
	Usage  *usage.Usage
	// FinishReason: "stop", "tool_calls", "length", "content_filter", ...
	FinishReason string
}
