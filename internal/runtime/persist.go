package runtime

import (
	"context"
	"encoding/json"
	"os"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/usage"
)

// head builds the checkpoint head for status.
func (l *loop) head(status store.Status) store.Head {
	h := store.Head{
		Status:          status,
		SessionID:       l.sessionID,
		EntryAgent:      agentName(l.entry),
		ParentRunID:     l.opts.ParentRunID,
		Usage:           l.currentUsage(),
		Turns:           l.turns,
		LastInputTokens: l.lastInputTokens,
		ContextState:    l.contextState,
		Settings:        l.opts.Settings,
		PID:             os.Getpid(),
		StartedAt:       l.startedAt,
		UpdatedAt:       l.now(),
	}
	if l.active != nil {
		h.Agent = l.active.agent.Name
	} else {
		h.Agent = agentName(l.entry)
	}
	return h
}

// checkpoint appends the run entries since the last append and overwrites the head.
func (l *loop) checkpoint(ctx context.Context, status store.Status) error {
	return l.writeCheckpoint(ctx, l.head(status))
}

func (l *loop) writeCheckpoint(ctx context.Context, h store.Head) error {
	cp := l.opts.Checkpointer
	if cp == nil {
		return nil
	}
	run := l.runEntries()
	if l.saved > len(run) {
		l.saved = len(run)
	}
	if err := cp.Append(context.WithoutCancel(ctx), l.opts.RunID, run[l.saved:], h); err != nil {
		if k, ok := errAsKind(err); ok {
			if k == errs.KindRunConflict {
				l.owns = false // another process holds the run: leave it alone
			}
			return errs.Wrap(k, err, "writing the checkpoint of run "+l.opts.RunID, "")
		}
		return errs.Wrap(errs.KindStore, err, "writing the checkpoint of run "+l.opts.RunID, "check the database path (--db), disk space and permissions")
	}
	l.saved = len(run)
	return nil
}

func (l *loop) sessionMeta() json.RawMessage {
	b, _ := json.Marshal(struct {
		Agent string      `json:"agent"`
		Turns int         `json:"turns"`
		Usage usage.Usage `json:"usage"`
	}{l.finalAgent(), l.turns, l.currentUsage()})
	return b
}

// complete runs the output guardrails, finalizes the checkpoint, then appends the
// run to the session.
func (l *loop) complete(ctx context.Context) error {
	text := l.output
	if len(l.structured) > 0 {
		text = string(l.structured)
	}
	if err := l.runGuardrails(ctx, "output", l.active.outGuards, text); err != nil {
		return err
	}
	h := l.head(store.StatusCompleted)
	h.Result = &store.RunRecord{Output: l.output, StructuredOutput: l.structured, FinishReason: "stop", FinalAgent: l.finalAgent()}
	if err := l.writeCheckpoint(ctx, h); err != nil {
		return err
	}
	if l.opts.Session != nil {
		if err := l.opts.Session.Append(context.WithoutCancel(ctx), l.sessionID, l.opts.RunID, l.runEntries(), l.sessionMeta()); err != nil {
			return errs.Wrap(errs.KindStore, err, "appending run "+l.opts.RunID+" to session "+l.sessionID,
				"the run is complete in its checkpoint; resuming it retries the append")
		}
	}
	return nil
}
