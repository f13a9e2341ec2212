package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/lovia-dev/lovia/internal/errs"
)

// schemaTable records which migrations were applied. Its name is lovia-specific so a
// foreign database is never mistaken for ours.
const schemaTable = "lovia_schema"

// migrations are applied in order; migrations[i] takes the schema from version i to
// i+1. Never edit a released step: append a new one.
var migrations = []string{
	// v1: sessions (one row per completed-run segment) and checkpoints (one head row
	// per run + one row per non-empty entry batch). Times are Unix milliseconds;
	// entries are JSON arrays of transcript.Entry.
	`
CREATE TABLE sessions (
	id         TEXT PRIMARY KEY,
	cwd        TEXT NOT NULL DEFAULT '',
	repo       TEXT NOT NULL DEFAULT '',
	title      TEXT NOT NULL DEFAULT '',
	meta       TEXT NOT NULL DEFAULT '{}',
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);
CREATE INDEX sessions_repo_updated ON sessions(repo, updated_at);
CREATE INDEX sessions_updated ON sessions(updated_at);
CREATE TABLE session_runs (
	seq        INTEGER PRIMARY KEY AUTOINCREMENT,
	session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	run_id     TEXT NOT NULL,
	entries    TEXT NOT NULL,
	n_entries  INTEGER NOT NULL,
	created_at INTEGER NOT NULL,
	UNIQUE(session_id, run_id)
);
CREATE TABLE runs (
	run_id     TEXT PRIMARY KEY,
	session_id TEXT NOT NULL DEFAULT '',
	status     TEXT NOT NULL,
	head       TEXT NOT NULL,
	n_batches  INTEGER NOT NULL DEFAULT 0,
	n_entries  INTEGER NOT NULL DEFAULT 0,
	started_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);
CREATE INDEX runs_session ON runs(session_id);
CREATE TABLE run_batches (
	run_id      TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
	seq         INTEGER NOT NULL,
	first_entry INTEGER NOT NULL,
	entries     TEXT NOT NULL,
	PRIMARY KEY (run_id, seq)
);
`,
	// v2: run liveness (which process holds a run), per-segment usage for session
	// listings, and listing runs by recency.
	`
CREATE TABLE run_claims (
	run_id     TEXT PRIMARY KEY,
	host       TEXT NOT NULL,
	pid        INTEGER NOT NULL,
	start_time TEXT NOT NULL,
	claimed_at INTEGER NOT NULL
);
ALTER TABLE session_runs ADD COLUMN usage TEXT NOT NULL DEFAULT '{}';
CREATE INDEX runs_updated ON runs(updated_at);
`,
	// v3: attachment bytes (images) stored once per content, named by their SHA-256
	// from the entries (blobs.go), instead of as base64 in every batch and segment.
	`
CREATE TABLE blobs (
	sha256     TEXT PRIMARY KEY,
	mime       TEXT NOT NULL,
	data       BLOB NOT NULL,
	created_at INTEGER NOT NULL
);
`,
	// v4: a running run's checkpoint writes no index page. Its updated_at changes at
	// every checkpoint, so the recency index leaves running runs out, and a second
	// index finds them (Append writes status only when it changes; an indexed column
	// set even to its own value rewrites its index entry, one more WAL page per
	// checkpoint). ListRuns merges the two.
	`
DROP INDEX runs_updated;
CREATE INDEX runs_updated ON runs(updated_at) WHERE status <> 'running';
CREATE INDEX runs_running ON runs(run_id) WHERE status = 'running';
`,
}

// SchemaVersion is the schema version this lovia writes.
func SchemaVersion() int { return len(migrations) }

// migrate checks that the file is (or can become) a lovia database, switches it to
// WAL and applies pending migrations. Nothing is written to a foreign or newer file.
func (db *DB) migrate(ctx context.Context) error {
	tables, err := db.tables(ctx)
	if err != nil {
		return err
	}
	_, ours := tables[schemaTable]
	current := false
	if !ours && len(tables) > 0 {
		names := make([]string, 0, len(tables))
		for n := range tables {
			names = append(names, n)
		}
		sort.Strings(names)
		if len(names) > 5 {
			names = append(names[:5], "…")
		}
		return errs.Newf(errs.KindStore,
			"use another file with --db PATH or LOVIA_HOME, or "+moveAsideHint(db.path),
			"%s is an SQLite database of another program (tables: %s), not a lovia database",
			db.path, strings.Join(names, ", "))
	}
	if ours {
		v, err := db.version(ctx, db.sql)
		if err != nil {
			return err
		}
		if err := db.checkNewer(v); err != nil {
			return err
		}
		current = v == len(migrations)
	}
	if err := db.walMode(ctx); err != nil {
		return db.fail("switch database to WAL", err)
	}
	if current {
		// Migrations only go forward: a current database has nothing to apply, and
		// the write transaction that re-checks under the lock is spared (every run
		// opens the database).
		return nil
	}
	return db.write(ctx, "migrate database", func(tx dbtx) error {
		// Re-read under the write lock: another process may have migrated meanwhile.
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+schemaTable+
			` (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
			return err
		}
		v, err := db.version(ctx, tx)
		if err != nil {
			return err
		}
		if err := db.checkNewer(v); err != nil {
			return err
		}
		for i := v; i < len(migrations); i++ {
			if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
				return fmt.Errorf("migrate to v%d: %w", i+1, err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO `+schemaTable+` (version, applied_at) VALUES (?, ?)`,
				i+1, db.now().UnixMilli()); err != nil {
				return err
			}
		}
		return nil
	})
}

func (db *DB) checkNewer(v int) error {
	if v > len(migrations) {
		return errs.Newf(errs.KindStore, fmt.Sprintf("upgrade lovia to use %s, or use another database with --db PATH", db.path),
			"database schema v%d is newer than this lovia (v%d); upgrade lovia", v, len(migrations))
	}
	return nil
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// version is the applied schema version (0 for a new database).
func (db *DB) version(ctx context.Context, q querier) (int, error) {
	var v sql.NullInt64
	if err := q.QueryRowContext(ctx, `SELECT MAX(version) FROM `+schemaTable).Scan(&v); err != nil {
		return 0, db.fail("read schema version", err)
	}
	return int(v.Int64), nil
}

// tables lists the database's tables (SQLite's own excluded). It is the first read of
// a file, so a damaged file is reported here.
func (db *DB) tables(ctx context.Context) (map[string]struct{}, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		return nil, db.fail("open database", err)
	}
	defer rows.Close()
	out := map[string]struct{}{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, db.fail("open database", err)
		}
		out[n] = struct{}{}
	}
	if err := rows.Err(); err != nil {
		return nil, db.fail("open database", err)
	}
	return out, nil
}

// walMode switches the database to WAL. Switching a new file takes an exclusive
// lock, and SQLite can answer SQLITE_BUSY at once rather than wait out the busy
// timeout when other connections opening the same new file hold theirs
// (TestConcurrentOpenMigratesOnce): retried, as write retries a transaction.
func (db *DB) walMode(ctx context.Context) error {
	return retryBusy(ctx, 6, 20*time.Millisecond, func() error {
		var mode string
		return db.sql.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode)
	})
}
