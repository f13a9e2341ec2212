package cmd

import (
	"context"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/runtime"
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/store/sqlite"
	"github.com/lovia-dev/lovia/internal/tui"
)

var _ tui.LastRunner = (*chatBackend)(nil)

// LastRun is the session's latest run when it ended unfinished and can still be
// resumed or carried on (`chat -c` / `-s` offer /resume for it).
func (b *chatBackend) LastRun(ctx context.Context, sessionID string) (*tui.LastRun, error) {
	if b.app.DB == nil || b.app.Checkpointer == nil {
		return nil, nil
	}
	runs, err := b.app.DB.Checkpoints().ListRuns(ctx, sqlite.RunFilter{SessionID: sessionID, Limit: 20})
	if err != nil {
		return nil, err
	}
	// Carrying a run rewrites its head after the carrying run started, so the latest
	// run is the one started last, not the one updated last.
	var last *sqlite.RunInfo
	for i := range runs {
		if last == nil || runs[i].StartedAt.After(last.StartedAt) {
			last = &runs[i]
		}
	}
	if last == nil || (last.Status != store.StatusInterrupted && last.Status != store.StatusFailed) || last.Entries == 0 {
		return nil, nil
	}
	snap, err := b.app.Checkpointer.Load(ctx, last.ID)
	if err != nil {
		return nil, err
	}
	switch snap.Head.ErrorKind {
	case runtime.ErrorKindCarried, string(errs.KindGuardrail):
		return nil, nil
	}
	return &tui.LastRun{ID: last.ID, Status: string(last.Status), Error: snap.Head.Error, ErrorKind: snap.Head.ErrorKind}, nil
}
