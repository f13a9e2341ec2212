// Package event defines the run event stream: the contract between the run loop and
// every front end (TUI, headless writers, hooks). One flat struct, discriminated by
// Type, so `stream-json` is a direct encoding of it.
package event

import (
	"encoding/json"
	"time"

	"github.com/lovia-dev/lovia/internal/usage"
)

// Type names an event; the value is its snake_case JSON name.
type Type string

const (
	RunStarted          Type = "run_started"
	TurnStarted         Type = "turn_started"
	TextDelta           Type = "text_delta"
	ReasoningDelta      Type = "reasoning_delta"
	OutputDiscarded     Type = "output_discarded"
	MessageCompleted    Type = "message_completed"
	UserMessageInjected Type = "user_message_injected"
	ToolCallStarted     Type = "tool_call_started"
	ApprovalRequired    Type = "approval_required"
	ToolCallProgress    Type = "tool_call_progress"
	ToolCallCompleted   Type = "tool_call_completed"
	ToolCallFailed      Type = "tool_call_failed"
	HandoffOccurred     Type = "handoff_occurred"
	ContextCompacted    Type = "context_compacted"
	TurnEnded           Type = "turn_ended"
	RunCompleted        Type = "run_completed"
	RunFailed           Type = "run_failed"
)

// Terminal reports whether t ends a stream.
func (t Type) Terminal() bool { return t == RunCompleted || t == RunFailed }

// Event is one item of a run's stream. Fields not used by a type stay empty.
type Event struct {
	Type  Type      `json:"type"`
	Seq   int64     `json:"seq"` // 1-based, strictly increasing within a run
	Time  time.Time `json:"time"`
	RunID string    `json:"run_id"`
	// SessionID is set on run_started and terminal events.
	SessionID string `json:"session_id,omitempty"`
	Turn      int    `json:"turn,omitempty"`
	Agent     string `json:"agent,omitempty"`

	// text_delta / reasoning_delta: the piece; message_completed: the assistant text;
	// user_message_injected: the message; output_discarded: why.
	Text string `json:"text,omitempty"`

	// run_started: the images attached to the prompt, as placeholders (never the
	// bytes; images.go).
	Images []Image `json:"images,omitempty"`

	// Tool call events.
	CallID     string          `json:"call_id,omitempty"`
	Name       string          `json:"name,omitempty"`
	Args       json.RawMessage `json:"args,omitempty"`
	Output     string          `json:"output,omitempty"`
	IsError    bool            `json:"is_error,omitempty"`
	Truncated  bool            `json:"truncated,omitempty"`
	DurationMS int64           `json:"duration_ms,omitempty"`
	// Diff (tool_call_completed) is the change the tool made to a file, for
	// in-process front ends; not part of stream-json.
	Diff string `json:"-"`

	Approval *Approval `json:"approval,omitempty"`

	// tool_call_progress: how far the running call is.
	Progress *Progress `json:"progress,omitempty"`

	// handoff_occurred
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`

	Compaction *Compaction `json:"compaction,omitempty"`

	// message_completed: this call's usage; turn_ended and terminal events: run totals.
	Usage *usage.Usage `json:"usage,omitempty"`

	// Terminal events.
	Status           string          `json:"status,omitempty"` // completed | failed | interrupted
	FinalOutput      string          `json:"final_output,omitempty"`
	StructuredOutput json.RawMessage `json:"structured_output,omitempty"`
	FinishReason     string          `json:"finish_reason,omitempty"`
	Turns            int             `json:"turns,omitempty"`
	Error            *Error          `json:"error,omitempty"`
}

// Approval describes a tool call waiting for a decision.
type Approval struct {
	// Kind is "command", "path", "network", "mcp" (an MCP tool call), "tool",
	// "question" (ask_human), "sampling" (an MCP server asks for the model), "form"
	// or "url" (an MCP server asks the person, an elicitation).
	Kind    string `json:"kind"`
	Summary string `json:"summary"`
	// Subcommands: a shell command as parsed into simple commands.
	Subcommands []string `json:"subcommands,omitempty"`
	Path        string   `json:"path,omitempty"`
	Diff        string   `json:"diff,omitempty"`
	// Rules are what "allow for this session" would add (prefix rules, never the
	// verbatim command string).
	Rules []string `json:"rules,omitempty"`
	// Form is the JSON Schema of the values an MCP server asks the person for (kind
	// "form", an elicitation; see internal/elicit).
	Form json.RawMessage `json:"form,omitempty"`
	// URL is the address an MCP server asks the person to open themselves (kind
	// "url"); front ends show it and never open it.
	URL string `json:"url,omitempty"`
	// Decision is filled on the tool_call_failed/completed that follows when it was
	// denied ("denied", "denied_by_default").
	Decision string `json:"decision,omitempty"`
}

// Compaction reports what a context-policy pass did.
type Compaction struct {
	Stages       []string `json:"stages"`
	TokensBefore int      `json:"tokens_before"`
	TokensAfter  int      `json:"tokens_after"`
	Offloaded    int      `json:"offloaded,omitempty"`
	Cleared      int      `json:"cleared,omitempty"`
	Summarized   int      `json:"summarized,omitempty"`
	Overflow     bool     `json:"overflow,omitempty"`
	Forced       bool     `json:"forced,omitempty"`
}

// Error is the serializable form of a run failure.
type Error struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
}
