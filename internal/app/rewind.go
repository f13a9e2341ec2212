package app

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/lovia-dev/lovia/internal/config"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/rewind"
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/store/sqlite"
)

// rewindState is the App's checkpoint recorder of its root, made on first use.
type rewindState struct {
	once  sync.Once
	store *rewind.Store
	rec   *rewind.Recorder
}

// Rewind returns the checkpoint store and the recorder of the working directory
// (nil, nil without a database: there is no session to rewind then).
func (a *App) Rewind() (*rewind.Store, *rewind.Recorder) {
	if a.DB == nil {
		return nil, nil
	}
	rs := &a.extra.rewind
	rs.once.Do(func() { rs.store, rs.rec = RewindRecorder(a.Config, a.Log) })
	return rs.store, rs.rec
}

// RewindRecorder returns the checkpoint store of cfg's data directory and a recorder
// of its working directory.
func RewindRecorder(cfg *config.Config, log *slog.Logger) (*rewind.Store, *rewind.Recorder) {
	st := rewind.Open(cfg.Home)
	// lovia's own state is never walked, in case it lives inside the root.
	exclude := []string{cfg.Home, cfg.UserDir}
	if cfg.DB != "" {
		for _, sfx := range []string{"", "-wal", "-shm", "-journal"} {
			exclude = append(exclude, cfg.DB+sfx)
		}
	}
	return st, st.NewRecorder(cfg.Cwd, exclude, rewind.Limits{}, log)
}

// withCheckpoints wraps the workspace plugin so its mutating tools checkpoint the
// root first (see internal/rewind).
func (a *App) withCheckpoints(p plugin.Plugin) plugin.Plugin {
	if _, rec := a.Rewind(); rec != nil {
		return rec.Wrap(p)
	}
	return p
}

// RewindConversation cuts runID's session back to before that run: its segment and
// those of later runs are dropped (explicit session maintenance; the runs' own
// checkpoints stay, so `lovia runs show` still has them). It returns the session and
// how many segments were dropped.
func RewindConversation(ctx context.Context, db *sqlite.DB, runID string) (string, int, error) {
	info, err := db.Checkpoints().GetRun(ctx, runID)
	if err != nil {
		return "", 0, err
	}
	if info.SessionID == "" {
		return "", 0, errs.Newf(errs.KindUsage, "", "run %s belongs to no session: there is no conversation to rewind", runID)
	}
	if info.Holder != nil && info.Status == store.StatusRunning {
		return "", 0, errs.Newf(errs.KindRunConflict, "wait for it to finish or interrupt it", "run %s is still running (%s)", runID, info.Holder)
	}
	segs, err := db.Sessions().SessionRuns(ctx, info.SessionID)
	if err != nil {
		return "", 0, err
	}
	n := 0
	for i, s := range segs {
		if s.RunID == runID {
			n = len(segs) - i
			break
		}
	}
	if n == 0 {
		// An interrupted run has no segment: drop the ones appended after it started.
		for _, s := range segs {
			if !s.CreatedAt.Before(info.StartedAt) {
				n++
			}
		}
	}
	dropped, err := db.Sessions().Rewind(ctx, info.SessionID, n)
	if err != nil {
		return "", 0, fmt.Errorf("rewind the conversation: %w", err)
	}
	return info.SessionID, dropped, nil
}
