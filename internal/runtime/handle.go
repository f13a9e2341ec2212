package runtime

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/lovia-dev/lovia/internal/agent"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/mailbox"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// Handle is a live run: its event stream, its approval channel, its mailbox, and its
// result. All methods are safe for concurrent use.
type Handle struct {
	runID     string
	sessionID string

	cancel context.CancelCauseFunc
	mbox   *mailbox.Mailbox
	events *eventQueue

	approvalMu sync.Mutex
	approvals  map[string]chan tool.Decision

	forceCompact atomic.Bool

	done   chan struct{}
	result *Result
	err    error
}

// Start runs agent a on input in a new goroutine and returns its handle at once.
// Setup errors (unknown model, tool name conflicts, ...) surface as a run_failed event
// and from Result, never as a panic or a blocked caller.
func Start(ctx context.Context, a *agent.Agent, input []transcript.Entry, opts Options) *Handle {
	fresh := opts.RunID == "" || opts.Checkpointer == nil
	if opts.RunID == "" {
		opts.RunID = newID("run_")
	}
	if opts.IfRunExists == "" {
		opts.IfRunExists = ResumeRun
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	h := &Handle{
		runID:     opts.RunID,
		sessionID: opts.SessionID,
		cancel:    cancel,
		mbox:      &mailbox.Mailbox{},
		events:    newEventQueue(),
		approvals: map[string]chan tool.Decision{},
		done:      make(chan struct{}),
	}
	l := newLoop(h, a, input, opts)
	// A generated id names no checkpoint yet: nothing to load before the first one.
	l.newRun = fresh && opts.Checkpointer != nil
	// An existing run's session id comes from its checkpoint, and Start does no I/O:
	// when a run id was given without a session id, SessionID is known from
	// run_started on. A run that is certainly new gets its id here.
	if h.sessionID == "" && fresh {
		h.sessionID = l.sessionID
	}
	go l.run(runCtx)
	return h
}

// Resume continues the checkpointed run runID (ResumeOnly: an unknown id fails with
// errs.KindNotFound). A completed run replays its stored result without calling the
// model.
func Resume(ctx context.Context, a *agent.Agent, runID string, opts Options) *Handle {
	opts.RunID = runID
	opts.IfRunExists = ResumeOnly
	return Start(ctx, a, nil, opts)
}

// Text returns one user input entry: the usual input of a run.
func Text(s string) []transcript.Entry { return []transcript.Entry{transcript.UserInput(s)} }

// RunID is the run's id (generated when Options.RunID was empty).
func (h *Handle) RunID() string { return h.runID }

// SessionID is the run's session id. When Start was given a run id (and a
// checkpointer) but no session id, it may come from the checkpoint and is known once
// run_started was emitted; before that it is "".
func (h *Handle) SessionID() string {
	h.approvalMu.Lock()
	defer h.approvalMu.Unlock()
	return h.sessionID
}

func (h *Handle) setSessionID(id string) {
	h.approvalMu.Lock()
	h.sessionID = id
	h.approvalMu.Unlock()
}

// Events returns the run's event stream. It is closed after exactly one terminal
// event (run_completed or run_failed). Reading is optional: the run never blocks on a
// slow or absent reader (events are buffered without bound). Call it once; every call
// returns the same channel.
func (h *Handle) Events() <-chan event.Event { return h.events.channel() }

// Result waits for the run to end. The Result is non-nil even on error; the error is
// classified with errs kinds (errs.ExitCode maps it to the CLI exit code).
func (h *Handle) Result() (*Result, error) {
	<-h.done
	return h.result, h.err
}

// Done is closed when the run has ended (Result no longer blocks).
func (h *Handle) Done() <-chan struct{} { return h.done }

// Approve answers the approval_required event of callID.
func (h *Handle) Approve(callID string, d tool.Decision) error {
	h.approvalMu.Lock()
	ch, ok := h.approvals[callID]
	if ok {
		delete(h.approvals, callID)
	}
	h.approvalMu.Unlock()
	if !ok {
		return errs.Newf(errs.KindUsage, "answer only the call id of an approval_required event that is still waiting",
			"no approval is pending for call %q", callID)
	}
	ch <- d // buffered: never blocks
	return nil
}

// waitApproval registers callID and blocks until Approve answers it or ctx ends
// (unanswered = denied).
func (h *Handle) waitApproval(ctx context.Context, callID string, emit func()) (tool.Decision, error) {
	ch := make(chan tool.Decision, 1)
	h.approvalMu.Lock()
	h.approvals[callID] = ch
	h.approvalMu.Unlock()
	emit()
	select {
	case d := <-ch:
		return d, nil
	case <-ctx.Done():
		h.approvalMu.Lock()
		delete(h.approvals, callID)
		h.approvalMu.Unlock()
		return tool.Decision{}, ctx.Err()
	}
}

// Mailbox is the run's steering mailbox: messages pushed while the run is live land
// as user entries at the next turn start.
func (h *Handle) Mailbox() *mailbox.Mailbox { return h.mbox }

// Cancel stops the run. cause is classified with errs: nil or an unclassified error
// means errs.KindCancelled (status interrupted, exit 130); pass an *errs.Error of
// errs.KindTerminated for SIGTERM (exit 143). The checkpoint is left interrupted and
// resumable.
func (h *Handle) Cancel(cause error) {
	if cause == nil {
		cause = errs.New(errs.KindCancelled, "interrupted", "")
	}
	h.cancel(cause)
}

// Compact forces a context-policy pass at the next turn (/compact).
func (h *Handle) Compact() { h.forceCompact.Store(true) }

// cancelError classifies why ctx ended.
func cancelError(ctx context.Context) error {
	cause := context.Cause(ctx)
	if cause == nil {
		cause = ctx.Err()
	}
	var e *errs.Error
	if errors.As(cause, &e) && (e.Kind == errs.KindCancelled || e.Kind == errs.KindTerminated) {
		return cause
	}
	if errors.Is(cause, context.DeadlineExceeded) {
		return errs.Wrap(errs.KindCancelled, cause, "interrupted: deadline exceeded", "")
	}
	return errs.Wrap(errs.KindCancelled, cause, "interrupted", "")
}

// eventQueue is an unbounded FIFO feeding one channel, so the run loop never blocks on
// its reader. A pump goroutine starts with the first call to channel().
type eventQueue struct {
	mu      sync.Mutex
	q       []event.Event
	closed  bool
	signal  chan struct{}
	out     chan event.Event
	started bool
}

func newEventQueue() *eventQueue {
	return &eventQueue{signal: make(chan struct{}, 1), out: make(chan event.Event)}
}

func (e *eventQueue) push(ev event.Event) {
	e.mu.Lock()
	if e.closed {
		// Nothing follows the terminal event (e.g. an abandoned tool asking late).
		e.mu.Unlock()
		return
	}
	e.q = append(e.q, ev)
	e.mu.Unlock()
	select {
	case e.signal <- struct{}{}:
	default:
	}
}

func (e *eventQueue) close() {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	select {
	case e.signal <- struct{}{}:
	default:
	}
}

func (e *eventQueue) channel() <-chan event.Event {
	e.mu.Lock()
	if !e.started {
		e.started = true
		go e.pump()
	}
	e.mu.Unlock()
	return e.out
}

func (e *eventQueue) pump() {
	var batch []event.Event
	for {
		e.mu.Lock()
		batch, e.q = e.q, batch[:0]
		closed := e.closed
		e.mu.Unlock()
		for i := range batch {
			e.out <- batch[i]
			batch[i] = event.Event{}
		}
		if len(batch) == 0 {
			if closed {
				close(e.out)
				return
			}
			<-e.signal
		}
	}
}

// errorEvent is the serializable form of err for terminal events.
func errorEvent(err error) *event.Error {
	if err == nil {
		return nil
	}
	return &event.Error{Kind: string(errs.KindOf(err)), Message: err.Error(), Hint: errs.HintOf(err)}
}
