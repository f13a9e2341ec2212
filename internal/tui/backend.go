package tui

import (
	"context"
	"time"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/mailbox"
	"github.com/lovia-dev/lovia/internal/runtime"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

// Handle is a live run as the TUI drives it. *runtime.Handle satisfies it; tests use a
// fake fed with scripted events.
type Handle interface {
	RunID() string
	SessionID() string
	Events() <-chan event.Event
	Approve(callID string, d tool.Decision) error
	Mailbox() *mailbox.Mailbox
	Cancel(cause error)
	Compact()
}

// StartRequest asks the backend for a run.
type StartRequest struct {
	// SessionID continues a session ("" starts a new one).
	SessionID string
	// Prompt is the user's message (empty when resuming).
	Prompt string
	// Model overrides the configured model ("" keeps it).
	Model string
	// ResumeRunID continues an interrupted run instead of starting one.
	ResumeRunID string
	// CarryRunID is an unfinished run of the session (interrupted, failed, stopped at
	// a limit) the new run carries on: its prompt, partial reply and tool calls open
	// the new run (runtime.Options.CarryRunID).
	CarryRunID string
	// Images are attached to the prompt (pasted, Ctrl-V, @mentions; images.go).
	Images []transcript.Attachment
}

// SessionInfo is one row of the /sessions picker.
type SessionInfo struct {
	ID      string
	Title   string // first user message, shortened
	Updated time.Time
	Runs    int
	// Usage is the session's token use so far (the status line and /cost start there).
	Usage usage.Usage
}

// Backend is everything the TUI needs from the application: starting runs and
// reading sessions. Its methods may do I/O; the TUI calls them only from commands,
// never from Update.
type Backend interface {
	Start(ctx context.Context, req StartRequest) (Handle, error)
	// Sessions lists this repository's sessions, newest first.
	Sessions(ctx context.Context) ([]SessionInfo, error)
	// History loads a session's transcript.
	History(ctx context.Context, sessionID string) ([]transcript.Entry, error)
	// Models lists models offered by /model (may be empty).
	Models() []string
	// ContextWindow is the model's context window in tokens (0 = unknown).
	ContextWindow(model string) int
}

// The runtime's handle is the real implementation.
var _ Handle = (*runtime.Handle)(nil)
