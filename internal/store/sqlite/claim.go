package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/store"
)

// Liveness. A run's head says `running` while a process works on it; after a kill -9
// it still says so. The process that writes a running head holds a claim row (host,
// pid, process start time); a run whose claim is missing or whose holder is gone is
// reported as `interrupted`. The start time (from /proc on Linux) guards against pid
// reuse. A claim from another host cannot be checked and is assumed alive.

// Holder identifies the process holding a run.
type Holder struct {
	Host string `json:"host"`
	PID  int    `json:"pid"`
	// StartTime is the process start time as the OS reports it (Linux: clock ticks
	// since boot, from /proc/PID/stat); empty where unavailable.
	StartTime string `json:"start_time,omitempty"`
}

func selfHolder() Holder {
	host, _ := os.Hostname()
	pid := os.Getpid()
	st, _ := processStartTime(pid)
	return Holder{Host: host, PID: pid, StartTime: st}
}

func (h Holder) String() string { return fmt.Sprintf("pid %d on %s", h.PID, h.Host) }

// alive reports whether h's process still runs (true for another host: unknowable).
func (db *DB) alive(h Holder) bool {
	if h == db.self {
		return true
	}
	if h.Host != db.self.Host {
		return true
	}
	return processAlive(h.PID, h.StartTime)
}

// claimOf returns the holder of runID, or nil when no claim row exists.
func claimOf(ctx context.Context, q querier, runID string) (*Holder, error) {
	var h Holder
	err := q.QueryRowContext(ctx, `SELECT host, pid, start_time FROM run_claims WHERE run_id = ?`, runID).
		Scan(&h.Host, &h.PID, &h.StartTime)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &h, nil
}

// liveOther returns the holder of runID when it is another process that is still
// alive (nil otherwise).
func (db *DB) liveOther(ctx context.Context, q querier, runID string) (*Holder, error) {
	h, err := claimOf(ctx, q, runID)
	if err != nil || h == nil {
		return nil, err
	}
	if *h != db.self && db.alive(*h) {
		return h, nil
	}
	return nil, nil
}

func (db *DB) heldError(runID string, h *Holder) error {
	hint := fmt.Sprintf("wait for that process to finish or stop it (kill %d); `lovia runs show %s` shows its state", h.PID, runID)
	if h.Host != db.self.Host {
		hint = fmt.Sprintf("lovia cannot check processes on %s; if that process is gone, break its claim (BreakClaim) and resume", h.Host)
	}
	return errs.Newf(errs.KindRunConflict, hint, "run %s is in use by another lovia process (%s)", runID, h)
}

// BreakClaim drops runID's claim whoever holds it: the escape hatch for a claim this
// host cannot check (another machine or container sharing the file) whose process is
// known to be gone. It reports whether there was a claim.
func (db *DB) BreakClaim(ctx context.Context, runID string) (bool, error) {
	var n int64
	err := db.write(ctx, "break claim of run "+runID, func(tx dbtx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM run_claims WHERE run_id = ?`, runID)
		if err == nil {
			n, _ = res.RowsAffected()
		}
		return err
	})
	return n > 0, err
}

// takeClaim records this process as runID's holder unless another live process
// holds it.
func (db *DB) takeClaim(ctx context.Context, tx execQuerier, runID string) error {
	h, err := claimOf(ctx, tx, runID)
	if err != nil {
		return err
	}
	return db.claimWith(ctx, tx, runID, h)
}

// claimWith is takeClaim given runID's current holder h (nil: none), read in tx.
func (db *DB) claimWith(ctx context.Context, tx execQuerier, runID string, h *Holder) error {
	if h != nil && *h == db.self {
		return nil
	}
	if h != nil && db.alive(*h) {
		return db.heldError(runID, h)
	}
	_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO run_claims (run_id, host, pid, start_time, claimed_at) VALUES (?, ?, ?, ?, ?)`,
		runID, db.self.Host, db.self.PID, db.self.StartTime, db.now().UnixMilli())
	return err
}

// Claim makes this process the holder of runID (which need not exist yet), so other
// processes see it as running and refuse to write it. It fails with
// errs.KindRunConflict when another live process holds the run. Claims are
// per-process, not per-goroutine: a second Claim in the same process succeeds.
// release drops the claim (if still ours); a checkpoint whose status leaves
// `running` drops it too.
func (db *DB) Claim(ctx context.Context, runID string) (release func(), err error) {
	err = db.write(ctx, "claim run "+runID, func(tx dbtx) error { return db.takeClaim(ctx, tx, runID) })
	if err != nil {
		return nil, err
	}
	return func() {
		// Best effort with a fresh context: release runs on the way out, often
		// after the run's context was cancelled.
		_ = db.write(context.Background(), "release run "+runID, func(tx dbtx) error {
			_, err := tx.ExecContext(context.Background(), `DELETE FROM run_claims WHERE run_id = ? AND host = ? AND pid = ? AND start_time = ?`,
				runID, db.self.Host, db.self.PID, db.self.StartTime)
			return err
		})
	}, nil
}

// HolderOf returns the live process holding runID (this process included), or nil.
func (db *DB) HolderOf(ctx context.Context, runID string) (*Holder, error) {
	var out *Holder
	err := db.read(ctx, "read run claim", func(tx dbtx) error {
		h, err := claimOf(ctx, tx, runID)
		if err == nil && h != nil && db.alive(*h) {
			out = h
		}
		return err
	})
	return out, err
}

// EffectiveStatus is what a stored status means given whether a live process holds
// the run: `running` without a live holder is `interrupted`.
func EffectiveStatus(stored store.Status, heldByLiveProcess bool) store.Status {
	if stored == store.StatusRunning && !heldByLiveProcess {
		return store.StatusInterrupted
	}
	return stored
}
