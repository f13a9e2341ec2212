package runtime

import (
	"context"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// resume continues a checkpointed run: the snapshot entries follow the history; calls
// left without results are re-executed within the same turn; a reply that already
// answered without calls is parsed as the final output.
func (l *loop) resume(ctx context.Context, snap *store.Snapshot) error {
	for _, e := range snap.Entries {
		if e.IsSystem() {
			continue
		}
		if e.Type == transcript.TypeToolCall {
			l.callIDs[e.CallID] = true
		}
		l.appendEntries(e)
	}
	l.saved = len(snap.Entries)
	l.owns = true
	h := snap.Head
	// A turn interrupted before its reply was saved left its number in the head; the
	// resumed run redoes that turn, so it must not count twice against max turns.
	l.turns = min(h.Turns, countReplies(snap.Entries))
	l.mu.Lock()
	l.usage = h.Usage
	l.mu.Unlock()
	l.lastInputTokens = h.LastInputTokens
	l.contextState = h.ContextState
	l.rc.Store(l.newRC(l.active.agent.Name, l.turns))
	if err := l.checkpoint(ctx, store.StatusRunning); err != nil {
		return err
	}

	run := l.runEntries()
	if pending := transcript.Pending(run); len(pending) > 0 {
		l.log.Info("resume: re-executing calls without results", "run", l.opts.RunID, "calls", len(pending))
		if err := l.toolPhase(ctx, pending); err != nil {
			return err
		}
		l.emit(ctx, event.Event{Type: event.TurnEnded, Turn: l.turns, Usage: ptr(l.currentUsage())})
		if err := l.applyHandoff(ctx); err != nil {
			return err
		}
	} else if reply := lastReply(run); reply != nil {
		done, err := l.finalOutput(ctx, reply)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
	} else if len(run) == 0 {
		return errs.Newf(errs.KindStore, "start a new run", "the checkpoint of run %q holds no entries", l.opts.RunID)
	}
	return l.turnsLoop(ctx)
}

// lastReply returns the trailing model reply of run if the run ends with a reply that
// called no tools (a crash between the reply's checkpoint and finalization).
func lastReply(run []transcript.Entry) []transcript.Entry {
	i := len(run)
	for i > 0 && (run[i-1].Type == transcript.TypeAssistantText || run[i-1].Type == transcript.TypeReasoning) {
		i--
	}
	if i == len(run) {
		return nil
	}
	return run[i:]
}

// sameInput reports whether input (empty: a plain resume) is what the run started
// with: the run's first user entries, in order.
func sameInput(run, input []transcript.Entry) bool {
	var want []string
	for _, e := range input {
		if e.IsUser() {
			want = append(want, e.Text)
		}
	}
	if len(want) == 0 {
		return true
	}
	i := 0
	for _, e := range run {
		if i == len(want) {
			break
		}
		if !e.IsUser() {
			continue
		}
		if e.Text != want[i] {
			return false
		}
		i++
	}
	return i == len(want)
}

func (l *loop) replayCompleted(ctx context.Context, snap *store.Snapshot) error {
	l.emitStarted(ctx)
	l.turns = snap.Head.Turns
	l.mu.Lock()
	l.usage = snap.Head.Usage
	l.buf = append(l.buf[:1], snap.Entries...)
	l.mu.Unlock()
	l.output = snap.Head.Result.Output
	l.structured = snap.Head.Result.StructuredOutput
	// Heal a crash between checkpoint finalization and the session append (the append
	// is idempotent).
	if l.opts.Session != nil {
		if err := l.opts.Session.Append(ctx, l.sessionID, l.opts.RunID, l.runEntries(), l.sessionMeta()); err != nil {
			return errs.Wrap(errs.KindStore, err, "appending run "+l.opts.RunID+" to session "+l.sessionID, "")
		}
	}
	return nil
}

// countReplies counts model replies: maximal runs of assistant text, reasoning and
// tool-call entries (each turn appends exactly one).
func countReplies(entries []transcript.Entry) int {
	n, in := 0, false
	for _, e := range entries {
		switch e.Type {
		case transcript.TypeAssistantText, transcript.TypeReasoning, transcript.TypeToolCall:
			if !in {
				n++
			}
			in = true
		default:
			in = false
		}
	}
	return n
}
