// Package store defines lovia's two persistence seams — the Session (completed runs of a
// conversation) and the Checkpointer (the in-flight run) — and in-memory versions. The
// SQLite implementation lives in store/sqlite.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

// ErrNotFound is returned (wrapped) for unknown run or session ids.
var ErrNotFound = errors.New("not found")

// Session is the append-only log of completed runs, one segment per (session, run).
type Session interface {
	// Load returns all segments' entries in append order (nil, nil for a new session).
	Load(ctx context.Context, sessionID string) ([]transcript.Entry, error)
	// Append adds run runID's entries as one segment; re-appending the same
	// (sessionID, runID) is a no-op.
	Append(ctx context.Context, sessionID, runID string, entries []transcript.Entry, meta json.RawMessage) error
}

// Checkpointer is the append-only log of one in-flight run plus its mutable head.
type Checkpointer interface {
	// Load returns the snapshot of runID, or an error matching ErrNotFound.
	Load(ctx context.Context, runID string) (*Snapshot, error)
	// Append adds entries (those since the last append; may be empty) and overwrites
	// the head, atomically.
	Append(ctx context.Context, runID string, entries []transcript.Entry, head Head) error
}

// Status of a run.
type Status string

const (
	StatusRunning     Status = "running"
	StatusInterrupted Status = "interrupted"
	StatusCompleted   Status = "completed"
	StatusFailed      Status = "failed"
)

// Head is the small mutable part of a checkpoint.
type Head struct {
	Status    Status `json:"status"`
	SessionID string `json:"session_id,omitempty"`
	// Agent is the active agent (after a handoff, the target).
	Agent string `json:"agent"`
	// EntryAgent is the agent the run started with (resume resolves Agent through its
	// handoff graph).
	EntryAgent      string          `json:"entry_agent,omitempty"`
	ParentRunID     string          `json:"parent_run_id,omitempty"`
	Usage           usage.Usage     `json:"usage"`
	Turns           int             `json:"turns"`
	LastInputTokens int             `json:"last_input_tokens,omitempty"`
	ContextState    json.RawMessage `json:"context_state,omitempty"`
	// Settings are the run's own settings (model, preset, policy, cwd, flags) as the
	// front end recorded them, so resume restores the run as it was.
	Settings json.RawMessage `json:"settings,omitempty"`
	// Result is set when Status is completed (replayed for a re-issued run id).
	Result *RunRecord `json:"result,omitempty"`
	// Error is set when Status is failed or interrupted.
	Error     string    `json:"error,omitempty"`
	ErrorKind string    `json:"error_kind,omitempty"`
	PID       int       `json:"pid,omitempty"`
	StartedAt time.Time `json:"started_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// RunRecord is a completed run's result, enough to replay it.
type RunRecord struct {
	Output           string          `json:"output"`
	StructuredOutput json.RawMessage `json:"structured_output,omitempty"`
	FinishReason     string          `json:"finish_reason"`
	FinalAgent       string          `json:"final_agent"`
}

// Snapshot is a run's persisted state: its own entries (not prior history) + head.
type Snapshot struct {
	RunID   string
	Entries []transcript.Entry
	Head    Head
}
