package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// A run that ends unfinished (interrupted, failed, stopped at a limit) keeps its
// entries in its checkpoint only: the session gets a segment when a run completes,
// so a run is never both in the session and resumable. A chat continues after such a
// run by carrying it: the next run of the session opens its own entries with the
// unfinished run's entries (dangling calls closed, a note saying how it ended) and
// marks that run carried, so it cannot be resumed — and appended — a second time.

// ErrorKindCarried is the checkpoint head's ErrorKind of a run that a later run of
// its session carried on.
const ErrorKindCarried = "carried"

// NotePrefix starts the note entries the runtime records for the model about how an
// earlier run ended (front ends may show them differently from typed messages).
const NotePrefix = "[lovia note] "

// endNote is the model-facing note about how a run ended, keyed by its error kind.
func endNote(kind, msg string) string {
	switch errs.Kind(kind) {
	case errs.KindCancelled, errs.KindTerminated, "":
		return NotePrefix + "The user interrupted the run here: the reply and tool calls above may be incomplete, and a tool call without a real result did not finish."
	case errs.KindMaxTurns, errs.KindBudget:
		return NotePrefix + "The run stopped here at a limit (" + msg + "): its work above is unfinished."
	}
	return NotePrefix + "The run stopped here after an error (" + msg + "): its work above is unfinished."
}

// isNote reports whether e is a note entry the runtime recorded.
func isNote(e transcript.Entry) bool {
	return e.IsUser() && strings.HasPrefix(e.Text, NotePrefix)
}

// IsNote reports whether e is a note the runtime recorded about how a run ended.
func IsNote(e transcript.Entry) bool { return isNote(e) }

// CarryEntries returns the entries a run carrying an unfinished run records: the
// unfinished run's own entries, a real error result right after the calls it left
// without one (paired by call id; providers need every call answered before the next
// message), and a note on how it ended unless one already ends its entries.
func CarryEntries(run []transcript.Entry, errorKind, errorMsg string) []transcript.Entry {
	var body []transcript.Entry
	for _, e := range run {
		if e.IsSystem() || e.Synthetic {
			continue
		}
		body = append(body, e.Clone())
	}
	if len(body) == 0 {
		return nil
	}
	out := transcript.RepairDangling(body)
	if len(out) != len(body) {
		// The repaired results become part of the record: the calls really ended
		// without a result.
		out = append([]transcript.Entry(nil), out...)
		for i := range out {
			out[i].Synthetic = false
		}
	}
	if !isNote(out[len(out)-1]) {
		n := transcript.UserInput(endNote(errorKind, errorMsg))
		if len(run) > 0 {
			n.RunID = run[0].RunID
		}
		out = append(out, n)
	}
	return out
}

// carry opens this run's entries with the unfinished run opts.CarryRunID of the same
// session. It reports the carried run's id ("" when there was nothing to carry: an
// unknown run, one of another session, one already in the session or carried, or
// one held by a live process).
func (l *loop) carry(ctx context.Context) (string, error) {
	id := l.opts.CarryRunID
	cp := l.opts.Checkpointer
	if id == "" || cp == nil || id == l.opts.RunID {
		return "", nil
	}
	snap, err := cp.Load(ctx, id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) || errs.KindOf(err) == errs.KindNotFound {
			return "", nil
		}
		return "", errs.Wrap(errs.KindStore, err, "loading run "+id+" to continue after it", "")
	}
	h := snap.Head
	switch {
	case h.SessionID != l.sessionID,
		h.Status == store.StatusCompleted,
		h.Status == store.StatusRunning, // another process works on it
		h.ErrorKind == ErrorKindCarried,
		h.ErrorKind == string(errs.KindGuardrail): // what a guardrail stopped stays out
		return "", nil
	}
	for _, e := range l.body() {
		if e.RunID == id {
			return "", nil // already in the session
		}
	}
	es := CarryEntries(snap.Entries, h.ErrorKind, h.Error)
	if len(es) == 0 {
		return "", nil
	}
	l.appendEntries(es...)
	return id, nil
}

// markCarried records in run id's checkpoint that this run carried it on. It runs
// after this run's first checkpoint holds the carried entries, so a crash in between
// can at worst leave both resumable, never lose the carried work.
func (l *loop) markCarried(ctx context.Context, id string) {
	cp := l.opts.Checkpointer
	snap, err := cp.Load(ctx, id)
	if err != nil {
		l.log.Warn("carry: reloading the carried run", "run", id, "err", err)
		return
	}
	h := snap.Head
	h.ErrorKind = ErrorKindCarried
	h.Error = fmt.Sprintf("continued by run %s of the same session", l.opts.RunID)
	h.UpdatedAt = l.now()
	if err := cp.Append(context.WithoutCancel(ctx), id, nil, h); err != nil {
		l.log.Warn("carry: marking the carried run", "run", id, "err", err)
	}
}

// carriedError refuses to resume a run that a later run carried on.
func carriedError(runID string, h store.Head) error {
	return &errs.Error{Kind: errs.KindRunConflict, Msg: fmt.Sprintf("run %q cannot be resumed: %s", runID, h.Error),
		Err: ErrCarried}
}

// ErrCarried matches (errors.Is) the error of resuming a run a later run carried on.
var ErrCarried = errors.New("run was carried on by a later run")

// ErrDifferentInput: a run id was given again with another prompt (an idempotency
// key reused by mistake). Front ends word the way out (a new id, or resuming it).
var ErrDifferentInput = errors.New("already exists with a different prompt")

// keepPartial records the reply text an error or an interrupt cut off, followed by a
// note saying so, so the user's view of the reply stays in the record. No call of the
// cut-off reply is kept: none of them ran.
func (l *loop) keepPartial(err error) {
	if len(l.partial) == 0 || !l.owns || l.active == nil {
		return
	}
	es := make([]transcript.Entry, 0, len(l.partial)+1)
	for _, e := range l.partial {
		e.RunID, e.Agent = l.opts.RunID, l.active.agent.Name
		es = append(es, e)
	}
	n := transcript.UserInput(endNote(string(errs.KindOf(err)), err.Error()))
	n.RunID = l.opts.RunID
	es = append(es, n)
	l.partial = nil
	l.appendEntries(es...)
}
