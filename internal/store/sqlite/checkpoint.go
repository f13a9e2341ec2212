package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

// CheckpointStore is the store.Checkpointer over a DB: per run, one mutable head row
// (runs) and one row per non-empty append (run_batches), both written in one
// transaction, so an Append costs O(new entries) however long the run is and a crash
// leaves either the whole batch with its head or neither.
type CheckpointStore struct{ db *DB }

var _ store.Checkpointer = (*CheckpointStore)(nil)

// Append adds entries (those since the last Append; may be empty) and overwrites the
// head, atomically. Synthetic entries are dropped (they are never persisted); secret-
// looking keys in head.Settings are redacted. A running head makes this process the
// run's holder (head.PID defaults to this process); any other status releases it.
// Writing a run that another live process holds fails with errs.KindRunConflict.
func (c *CheckpointStore) Append(ctx context.Context, runID string, entries []transcript.Entry, head store.Head) error {
	db := c.db
	op := "save checkpoint of run " + runID
	if runID == "" {
		return errs.New(errs.KindInternal, op+": empty run id", "")
	}
	switch head.Status {
	case store.StatusRunning, store.StatusInterrupted, store.StatusCompleted, store.StatusFailed:
	default:
		return errs.Newf(errs.KindInternal, "", "%s: invalid status %q", op, head.Status)
	}
	settings, err := db.redactSettings(head.Settings)
	if err != nil {
		return errs.Wrap(errs.KindInternal, err, op+": settings", "")
	}
	head.Settings = settings
	if head.Status == store.StatusRunning && head.PID == 0 {
		head.PID = db.self.PID
	}
	entries = persistable(entries)
	entries, blobs := splitBlobs(entries) // blobs.go
	var batch []byte
	if len(entries) > 0 {
		if batch, err = json.Marshal(entries); err != nil {
			return errs.Wrap(errs.KindInternal, err, op+": encode entries", "")
		}
	}
	now := db.now()
	if head.UpdatedAt.IsZero() {
		head.UpdatedAt = now
	}
	return db.write(ctx, op, func(sqltx dbtx) error {
		tx := db.cached(sqltx)
		// One read for the claim and the run's counters (each statement costs a trip
		// through database/sql and the VDBE).
		var (
			claimHost, claimStart sql.NullString
			claimPID              sql.NullInt64
			oldStatus, oldSession sql.NullString
			nBatches, nEntries    int64
			started               int64
		)
		if err := tx.QueryRowContext(ctx, `SELECT c.host, c.pid, c.start_time, r.status, r.session_id,
	COALESCE(r.n_batches, 0), COALESCE(r.n_entries, 0), COALESCE(r.started_at, 0)
FROM (SELECT ?1 AS id) k LEFT JOIN run_claims c ON c.run_id = k.id LEFT JOIN runs r ON r.run_id = k.id`, runID).
			Scan(&claimHost, &claimPID, &claimStart, &oldStatus, &oldSession, &nBatches, &nEntries, &started); err != nil {
			return err
		}
		var claim *Holder
		if claimHost.Valid {
			claim = &Holder{Host: claimHost.String, PID: int(claimPID.Int64), StartTime: claimStart.String}
		}
		if head.Status == store.StatusRunning {
			if err := db.claimWith(ctx, tx, runID, claim); err != nil {
				return err
			}
		} else if claim != nil {
			if *claim != db.self && db.alive(*claim) {
				return db.heldError(runID, claim)
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM run_claims WHERE run_id = ?`, runID); err != nil {
				return err
			}
		}
		if head.StartedAt.IsZero() {
			head.StartedAt = fromMillis(started)
			if started == 0 {
				head.StartedAt = now
			}
		}
		hj, err := json.Marshal(head)
		if err != nil {
			return errs.Wrap(errs.KindInternal, err, op+": encode head", "")
		}
		newBatches, newEntries := nBatches, nEntries
		if len(entries) > 0 {
			newBatches++
			newEntries += int64(len(entries))
		}
		if !oldStatus.Valid {
			_, err = tx.ExecContext(ctx, `INSERT INTO runs (run_id, session_id, status, head, n_batches, n_entries, started_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
				runID, head.SessionID, string(head.Status), string(hj), newBatches, newEntries,
				millis(head.StartedAt), millis(head.UpdatedAt))
		} else {
			// The indexed columns (session_id, status) are set only when they change:
			// setting one even to its own value rewrites its index entries, one more
			// WAL page per checkpoint.
			set := `head = ?, n_batches = ?, n_entries = ?, updated_at = ?`
			args := []any{string(hj), newBatches, newEntries, millis(head.UpdatedAt)}
			if oldStatus.String != string(head.Status) {
				set += `, status = ?`
				args = append(args, string(head.Status))
			}
			if oldSession.String != head.SessionID {
				set += `, session_id = ?`
				args = append(args, head.SessionID)
			}
			_, err = tx.ExecContext(ctx, `UPDATE runs SET `+set+` WHERE run_id = ?`, append(args, runID)...)
		}
		if err != nil {
			return err
		}
		if err := putBlobs(ctx, tx, blobs, now); err != nil {
			return err
		}
		if len(entries) > 0 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO run_batches (run_id, seq, first_entry, entries) VALUES (?, ?, ?, ?)`,
				runID, nBatches, nEntries, string(batch)); err != nil {
				return err
			}
		}
		return nil
	})
}

// Load returns runID's entries in order and its head, with Head.Status as seen by
// others: `running` only while a live process (possibly this one) holds the run,
// `interrupted` once that process is gone. Unknown ids give an error matching
// store.ErrNotFound (errs.KindNotFound).
func (c *CheckpointStore) Load(ctx context.Context, runID string) (*store.Snapshot, error) {
	db := c.db
	snap := &store.Snapshot{RunID: runID}
	err := db.read(ctx, "load checkpoint of run "+runID, func(tx dbtx) error {
		var hj string
		var nBatches, nEntries int64
		err := tx.QueryRowContext(ctx, `SELECT head, n_batches, n_entries FROM runs WHERE run_id = ?`, runID).
			Scan(&hj, &nBatches, &nEntries)
		if errors.Is(err, sql.ErrNoRows) {
			return runNotFound(runID)
		}
		if err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(hj), &snap.Head); err != nil {
			return db.corruptRun(runID, fmt.Errorf("head: %w", err))
		}
		rows, err := tx.QueryContext(ctx, `SELECT seq, first_entry, entries FROM run_batches WHERE run_id = ? ORDER BY seq`, runID)
		if err != nil {
			return err
		}
		defer rows.Close()
		var raw []rawBatch
		for rows.Next() {
			var b rawBatch
			if err := rows.Scan(&b.seq, &b.first, &b.data); err != nil {
				return err
			}
			raw = append(raw, b)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		entries, err := decodeBatches(raw, nBatches, nEntries)
		if err != nil {
			return db.corruptRun(runID, err)
		}
		if err := fillBlobs(ctx, tx, entries); err != nil {
			return err
		}
		snap.Entries = entries
		h, err := claimOf(ctx, tx, runID)
		if err != nil {
			return err
		}
		snap.Head.Status = EffectiveStatus(snap.Head.Status, h != nil && db.alive(*h))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return snap, nil
}

// decodeEntries parses one stored batch (a JSON array of entries).
func decodeEntries(data []byte) ([]transcript.Entry, error) {
	var out []transcript.Entry
	if err := decodeEntriesInto(data, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// decodeEntriesInto appends the decoded batch to *out[:0].
func decodeEntriesInto(data []byte, out *[]transcript.Entry) error {
	// encoding/json decodes into existing elements without zeroing them.
	clear((*out)[:cap(*out)])
	*out = (*out)[:0]
	if err := json.Unmarshal(data, out); err != nil {
		return err
	}
	if *out == nil {
		return fmt.Errorf("batch is null, not a list of entries")
	}
	for i, e := range *out {
		switch e.Type {
		case transcript.TypeInput, transcript.TypeAssistantText, transcript.TypeReasoning,
			transcript.TypeToolCall, transcript.TypeToolResult:
		default:
			return fmt.Errorf("entry %d has unknown type %q", i, e.Type)
		}
	}
	return nil
}

type rawBatch struct {
	seq, first int64
	data       []byte
}

// parallelDecodeBytes is the size above which batches are decoded on several cores:
// JSON decoding dominates loading a long run for resume.
const parallelDecodeBytes = 256 << 10

// decodeBatches decodes a run's batches (ordered by seq) into one entry slice,
// checking that they are numbered without gaps and agree with the head's counts.
func decodeBatches(raw []rawBatch, nBatches, nEntries int64) ([]transcript.Entry, error) {
	if int64(len(raw)) != nBatches {
		return nil, fmt.Errorf("head counts %d batches, found %d", nBatches, len(raw))
	}
	size := 0
	for i, b := range raw {
		next := nEntries
		if i+1 < len(raw) {
			next = raw[i+1].first
		}
		if b.seq != int64(i) || b.first < 0 || next < b.first || next > nEntries || (i == 0 && b.first != 0) {
			return nil, fmt.Errorf("batch %d (first entry %d) out of sequence (want batch %d; head counts %d entries)", b.seq, b.first, i, nEntries)
		}
		size += len(b.data)
	}
	// Every stored entry takes several bytes, so a damaged count cannot make us
	// allocate more than the data could hold.
	if nEntries < 0 || nEntries > int64(size) {
		return nil, fmt.Errorf("head counts %d entries in %d bytes of batches", nEntries, size)
	}
	entries := make([]transcript.Entry, nEntries)
	decode := func(i int) error {
		b := raw[i]
		next := nEntries
		if i+1 < len(raw) {
			next = raw[i+1].first
		}
		// Decode straight into the batch's place: Unmarshal appends to a zero-length
		// slice, and the capped capacity keeps a longer batch from spilling into the
		// next one (it reallocates instead, and the count check refuses it).
		es := entries[b.first:b.first:next]
		if err := decodeEntriesInto(b.data, &es); err != nil {
			return fmt.Errorf("batch %d: %w", b.seq, err)
		}
		if int64(len(es)) != next-b.first {
			return fmt.Errorf("batch %d holds %d entries, its place holds %d", b.seq, len(es), next-b.first)
		}
		return nil
	}
	workers := min(runtime.GOMAXPROCS(0), 8, len(raw))
	if size < parallelDecodeBytes || workers < 2 {
		for i := range raw {
			if err := decode(i); err != nil {
				return nil, err
			}
		}
		return entries, nil
	}
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(raw); i += workers {
				if err := decode(i); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return entries, nil
}

// persistable drops synthetic entries, which views make up and stores never keep.
func persistable(entries []transcript.Entry) []transcript.Entry {
	for i, e := range entries {
		if e.Synthetic {
			out := append([]transcript.Entry(nil), entries[:i]...)
			for _, e := range entries[i+1:] {
				if !e.Synthetic {
					out = append(out, e)
				}
			}
			return out
		}
	}
	return entries
}

func runNotFound(runID string) error {
	return errs.Wrap(errs.KindNotFound, store.ErrNotFound, "run "+runID+" not found",
		"`lovia runs list` shows the known runs")
}

func (db *DB) corruptRun(runID string, err error) error {
	return errs.Wrap(errs.KindStore, err, fmt.Sprintf("checkpoint of run %s in %s is damaged", runID, db.path),
		"this run cannot be resumed; start it again (`lovia run`), and run `lovia doctor` to check the database")
}

// RunFilter selects runs for ListRuns. Zero fields do not filter.
type RunFilter struct {
	SessionID string
	// Repo keeps the runs of the sessions recorded in that repository.
	Repo string
	// Status matches the effective status (a dead `running` run is `interrupted`).
	Status store.Status
	Limit  int
}

// RunInfo summarises a run for `lovia runs`.
type RunInfo struct {
	ID        string `json:"run_id"`
	SessionID string `json:"session_id,omitempty"`
	// Status is the effective status; StoredStatus what the head says (they differ
	// for a run whose process died: running vs interrupted).
	Status       store.Status `json:"status"`
	StoredStatus store.Status `json:"stored_status"`
	Agent        string       `json:"agent"`
	EntryAgent   string       `json:"entry_agent,omitempty"`
	Turns        int          `json:"turns"`
	Usage        usage.Usage  `json:"usage"`
	Model        string       `json:"model,omitempty"`
	Entries      int          `json:"entries"`
	PID          int          `json:"pid,omitempty"`
	// Holder is the live process holding the run (nil when none).
	Holder    *Holder   `json:"holder,omitempty"`
	Error     string    `json:"error,omitempty"`
	ErrorKind string    `json:"error_kind,omitempty"`
	StartedAt time.Time `json:"started_at"`
	UpdatedAt time.Time `json:"updated_at"`

	// ParentRunID is the run that started this one (a subagent, an agent asked as a
	// tool).
	ParentRunID string `json:"parent_run_id,omitempty"`
}

// ListRuns lists runs, most recently updated first.
func (c *CheckpointStore) ListRuns(ctx context.Context, f RunFilter) ([]RunInfo, error) {
	return c.listRuns(ctx, f, "")
}

// GetRun summarises one run (errs.KindNotFound for an unknown id).
func (c *CheckpointStore) GetRun(ctx context.Context, runID string) (RunInfo, error) {
	out, err := c.listRuns(ctx, RunFilter{}, runID)
	if err != nil {
		return RunInfo{}, err
	}
	if len(out) == 0 {
		return RunInfo{}, runNotFound(runID)
	}
	return out[0], nil
}

func (c *CheckpointStore) listRuns(ctx context.Context, f RunFilter, runID string) ([]RunInfo, error) {
	db := c.db
	var out []RunInfo
	where := `(?1 = '' OR r.session_id = ?1) AND (?2 = '' OR r.run_id = ?2)
	AND (?3 = '' OR r.session_id IN (SELECT id FROM sessions WHERE repo = ?3))`
	limit := f.Limit
	if f.Status != "" {
		limit = 0 // the effective status is known only after the liveness check
	}
	// The recency index (runs_updated) leaves running runs out, so checkpoints do
	// not rewrite it; runs_running finds those. SQLite merges the two ordered arms,
	// so the rows stream in order and stop at the limit.
	arm := `SELECT r.run_id, r.head, r.n_entries, r.started_at, r.updated_at, c.host, c.pid, c.start_time
FROM runs r %s LEFT JOIN run_claims c ON c.run_id = r.run_id
WHERE r.status %s 'running' AND ` + where
	q := fmt.Sprintf(arm, "INDEXED BY runs_updated", "<>") + "\nUNION ALL\n" +
		fmt.Sprintf(arm, "INDEXED BY runs_running", "=") + "\nORDER BY 5 DESC, 1"
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	err := db.read(ctx, "list runs", func(tx dbtx) error {
		rows, err := tx.QueryContext(ctx, q, f.SessionID, runID, f.Repo)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, hj string
			var n, started, updated int64
			var host, startTime sql.NullString
			var pid sql.NullInt64
			if err := rows.Scan(&id, &hj, &n, &started, &updated, &host, &pid, &startTime); err != nil {
				return err
			}
			var h store.Head
			if err := json.Unmarshal([]byte(hj), &h); err != nil {
				return db.corruptRun(id, fmt.Errorf("head: %w", err))
			}
			ri := RunInfo{
				ID: id, SessionID: h.SessionID, StoredStatus: h.Status, Agent: h.Agent,
				EntryAgent: h.EntryAgent, ParentRunID: h.ParentRunID, Turns: h.Turns, Usage: h.Usage, Model: settingString(h.Settings, "model"),
				Entries: int(n), PID: h.PID, Error: h.Error, ErrorKind: h.ErrorKind,
				StartedAt: fromMillis(started), UpdatedAt: fromMillis(updated),
			}
			if host.Valid {
				hd := Holder{Host: host.String, PID: int(pid.Int64), StartTime: startTime.String}
				if db.alive(hd) {
					ri.Holder = &hd
				}
			}
			ri.Status = EffectiveStatus(h.Status, ri.Holder != nil)
			if f.Status != "" && ri.Status != f.Status {
				continue
			}
			out = append(out, ri)
			if f.Limit > 0 && len(out) == f.Limit {
				break
			}
		}
		return rows.Err()
	})
	return out, err
}

// RunIDsWithPrefix lists the ids of the runs whose id starts with prefix, sorted
// (for resolving the short ids users type).
func (c *CheckpointStore) RunIDsWithPrefix(ctx context.Context, prefix string) ([]string, error) {
	return idsWithPrefix(ctx, c.db, "run ids", `SELECT run_id FROM runs WHERE run_id >= ?1 AND substr(run_id, 1, length(?1)) = ?1 ORDER BY run_id`, prefix)
}

// idsWithPrefix runs q (one text column, ?1 the prefix) and collects the column.
func idsWithPrefix(ctx context.Context, db *DB, op, q, prefix string) ([]string, error) {
	return queryStrings(ctx, db, op, q, prefix)
}

// queryStrings runs q (one text column) with args and collects the column.
func queryStrings(ctx context.Context, db *DB, op, q string, args ...any) ([]string, error) {
	var ids []string
	err := db.read(ctx, op, func(tx dbtx) error {
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return rows.Err()
	})
	return ids, err
}

// settingString reads a top-level string from a settings object ("" if absent).
func settingString(settings json.RawMessage, key string) string {
	if len(settings) == 0 {
		return ""
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(settings, &m) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(m[key], &s) != nil {
		return ""
	}
	return s
}

// DeleteRun removes a run's checkpoint (head, entries, claim). A run held by another
// live process is refused (errs.KindRunConflict); an unknown id is errs.KindNotFound.
func (c *CheckpointStore) DeleteRun(ctx context.Context, runID string) error {
	return c.deleteRun(ctx, runID, "delete run "+runID, true)
}

// Reset discards a run's checkpoint so the id can start over (the runtime's
// IfRunExists "restart"); an unknown id is not an error.
func (c *CheckpointStore) Reset(ctx context.Context, runID string) error {
	return c.deleteRun(ctx, runID, "reset run "+runID, false)
}

func (c *CheckpointStore) deleteRun(ctx context.Context, runID, op string, mustExist bool) error {
	db := c.db
	return db.write(ctx, op, func(tx dbtx) error {
		h, err := db.liveOther(ctx, tx, runID)
		if err != nil {
			return err
		}
		if h != nil {
			return db.heldError(runID, h)
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE run_id = ?`, runID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 && mustExist {
			return runNotFound(runID)
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM run_claims WHERE run_id = ?`, runID)
		return err
	})
}
