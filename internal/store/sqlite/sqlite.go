// Package sqlite is lovia's persistence: one SQLite file (modernc.org/sqlite, pure Go)
// holding the Session store (completed runs of a conversation) and the Checkpointer
// (in-flight runs), with schema migrations, multi-process safety and run liveness.
//
// store.Session and store.Checkpointer both have Load/Append with different
// signatures, so *DB cannot implement both: (*DB).Sessions returns a *SessionStore
// (a store.Session) and (*DB).Checkpoints a *CheckpointStore (a store.Checkpointer).
// Both share the DB's connection pool and write lock.
package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	sqlitedrv "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/safefile"
)

// busyTimeout is how long SQLite waits for another connection's write lock before
// reporting SQLITE_BUSY; writes then retry a few more times (see write).
const busyTimeout = 5 * time.Second

// DB is an open lovia database. It is safe for concurrent use by goroutines, and
// several processes may open the same file.
type DB struct {
	path string
	sql  *sql.DB
	// wmu serialises this process's write transactions so goroutines queue on a
	// mutex instead of polling SQLite's busy handler; other processes are kept out
	// by BEGIN IMMEDIATE. It guards wconn and wstmts.
	wmu sync.Mutex
	// wconn is the connection write transactions run on, taken from the pool by the
	// first write and kept (stmtcache.go).
	wconn  *sql.Conn
	wstmts map[string]*sql.Stmt // prepared on wconn
	self   Holder               // this process, as recorded in run claims
	now    func() time.Time
	// readOnly: opened by OpenReadOnly; writes are refused.
	readOnly bool
	settings settingsMemo // redact.go
}

// DefaultPath is where lovia keeps its database: $LOVIA_HOME/lovia.db, else
// $XDG_DATA_HOME/lovia/lovia.db, else ~/.local/share/lovia/lovia.db.
func DefaultPath(getenv func(string) string) string {
	if h := getenv("LOVIA_HOME"); h != "" {
		return filepath.Join(h, "lovia.db")
	}
	if x := getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "lovia", "lovia.db")
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".local", "share", "lovia", "lovia.db")
}

// dbPath is path made absolute, or the error for a missing one.
func dbPath(path string) (string, error) {
	if path == "" {
		return "", errs.New(errs.KindStore, "no database path given", "pass --db PATH or set LOVIA_HOME")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", errs.Wrap(errs.KindStore, err, "database path "+path, "pass an absolute path with --db")
	}
	return abs, nil
}

// Open opens (creating on first use, with its parent directories) the database at
// path and migrates it to the current schema. A file that is not a lovia database —
// not SQLite, damaged, another program's SQLite database, or written by a newer
// lovia — is refused with an errs.KindStore error naming the path and the fix; it is
// never modified.
func Open(ctx context.Context, path string) (*DB, error) {
	path, err := dbPath(path)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, errs.Wrap(errs.KindStore, err, "create database directory "+filepath.Dir(path),
			"check the directory's permissions, or choose another location with --db or LOVIA_HOME")
	}
	if err := sniff(path); err != nil {
		return nil, err
	}
	// Create the file ourselves so it is private (conversations may hold source code);
	// an empty file is a valid, empty SQLite database.
	// A database created 0644 by an older lovia, or widened by hand, is made private
	// again; SQLite gives its -wal and -shm files the database's mode.
	if err := safefile.CreatePrivate(path); err != nil {
		return nil, errs.Wrap(errs.KindStore, err, "open database "+path,
			"check the file's permissions, or choose another file with --db")
	}

	sqldb, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, errs.Wrap(errs.KindStore, err, "open database "+path, "")
	}
	// A handful of connections is plenty: readers run concurrently under WAL, writers
	// are serialised anyway.
	sqldb.SetMaxOpenConns(8)
	sqldb.SetMaxIdleConns(4)
	db := &DB{path: path, sql: sqldb, self: selfHolder(), now: time.Now}
	if err := db.migrate(ctx); err != nil {
		sqldb.Close()
		return nil, err
	}
	// -wal and -shm left from a looser past keep their mode: tighten them too.
	for _, p := range []string{path + "-wal", path + "-shm"} {
		if err := safefile.PrivateFile(p); err != nil {
			sqldb.Close()
			return nil, errs.Wrap(errs.KindStore, err, "make "+p+" private", "check the file's owner and permissions")
		}
	}
	return db, nil
}

// dsn configures every pooled connection.
//
// Durability: WAL with synchronous=NORMAL. A commit is appended to the WAL (in the OS
// page cache) before it returns, so a committed checkpoint survives the lovia process
// being killed at any instant (kill -9, OOM, a crash) — the guarantee `lovia resume`
// relies on. Only an OS crash or power loss can lose the last few commits (the
// database stays consistent; it rolls back to an earlier checkpoint, so a resumed run
// may redo its last tool calls). synchronous=FULL would close that window at the cost
// of an fsync per checkpoint; we judge power loss mid-run rare enough not to pay it
// on every tool result, especially on slow or networked disks.
//
// foreign_keys is per connection, hence here; journal_mode=WAL is persistent and is
// set once by migrate, after the file was checked to be ours. _txlock=immediate makes
// write transactions take the write lock at BEGIN, so a transaction never fails half
// way when another process writes; read-only transactions stay deferred.
func dsn(path string) string {
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	return "file:" + esc + fmt.Sprintf("?_pragma=busy_timeout(%d)", busyTimeout.Milliseconds()) +
		"&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_txlock=immediate"
}

// sniff refuses a non-empty file that is not SQLite before the driver touches it.
func sniff(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return errs.Wrap(errs.KindStore, err, "open database "+path,
			"check the file's permissions, or choose another file with --db")
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return errs.Wrap(errs.KindStore, err, "open database "+path, "")
	}
	if st.IsDir() {
		return errs.Newf(errs.KindStore, "pass the path of a file (e.g. "+filepath.Join(path, "lovia.db")+") with --db",
			"database path %s is a directory", path)
	}
	if st.Size() == 0 {
		return nil
	}
	hdr := make([]byte, 16)
	n, _ := io.ReadFull(f, hdr)
	if !bytes.Equal(hdr[:n], []byte("SQLite format 3\x00")) {
		return errs.Newf(errs.KindStore, moveAsideHint(path),
			"%s is not a lovia database (not an SQLite file)", path)
	}
	return nil
}

func moveAsideHint(path string) string {
	return fmt.Sprintf("move it aside (mv %q %q) so lovia starts a new database, or use another file with --db PATH or LOVIA_HOME", path, path+".bak")
}

// Path is the absolute path of the database file.
func (db *DB) Path() string { return db.path }

// Close closes the database.
func (db *DB) Close() error {
	db.wmu.Lock()
	db.dropWriteConn()
	db.wmu.Unlock()
	return db.sql.Close()
}

// Sessions returns the session store (a store.Session).
func (db *DB) Sessions() *SessionStore { return &SessionStore{db: db} }

// Checkpoints returns the checkpoint store (a store.Checkpointer).
func (db *DB) Checkpoints() *CheckpointStore { return &CheckpointStore{db: db} }

// Check runs SQLite's integrity and foreign-key checks; nil means the file is sound.
func (db *DB) Check(ctx context.Context) error {
	var problems []string
	collect := func(q string, scan func(*sql.Rows) (string, error)) error {
		rows, err := db.sql.QueryContext(ctx, q)
		if err != nil {
			return db.fail("check database", err)
		}
		defer rows.Close()
		for rows.Next() {
			s, err := scan(rows)
			if err != nil {
				return db.fail("check database", err)
			}
			if s != "ok" && len(problems) < 20 {
				problems = append(problems, s)
			}
		}
		if err := rows.Err(); err != nil {
			return db.fail("check database", err)
		}
		return nil
	}
	if err := collect("PRAGMA integrity_check", func(r *sql.Rows) (string, error) {
		var s string
		return s, r.Scan(&s)
	}); err != nil {
		return err
	}
	if err := collect("PRAGMA foreign_key_check", func(r *sql.Rows) (string, error) {
		var table, parent string
		var rowid sql.NullInt64
		var fkid int
		if err := r.Scan(&table, &rowid, &parent, &fkid); err != nil {
			return "", err
		}
		return fmt.Sprintf("row %d of %s refers to a missing %s row", rowid.Int64, table, parent), nil
	}); err != nil {
		return err
	}
	if len(problems) > 0 {
		return errs.Newf(errs.KindStore, moveAsideHint(db.path),
			"database %s failed its integrity check: %s", db.path, strings.Join(problems, "; "))
	}
	return nil
}

// fail classifies a driver error as errs.KindStore, naming the database and, for the
// failures a user can act on, the fix. Already classified errors pass through.
func (db *DB) fail(op string, err error) error {
	if err == nil {
		return nil
	}
	var e *errs.Error
	if errors.As(err, &e) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return errs.Wrap(errs.KindCancelled, err, op, "")
	}
	msg := fmt.Sprintf("%s (database %s)", op, db.path)
	hint := ""
	switch sqliteCode(err) {
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		msg = fmt.Sprintf("%s: database %s is damaged or not an SQLite database", op, db.path)
		hint = moveAsideHint(db.path)
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		hint = "another lovia process held the database too long; retry, or check for a stuck process"
	case sqlite3.SQLITE_FULL:
		hint = "the disk is full; free some space"
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_CANTOPEN:
		hint = "check the permissions of the database file and its directory, or use another file with --db"
	case sqlite3.SQLITE_IOERR:
		hint = "the disk reported an I/O error; check the filesystem"
	}
	return errs.Wrap(errs.KindStore, err, msg, hint)
}

// sqliteCode is the primary SQLite result code of err, or 0.
func sqliteCode(err error) int {
	var se *sqlitedrv.Error
	if errors.As(err, &se) {
		return se.Code() & 0xff
	}
	return 0
}

// write runs fn in a BEGIN IMMEDIATE transaction, retrying the whole transaction if
// another process keeps the write lock past the busy timeout.
func (db *DB) write(ctx context.Context, op string, fn func(dbtx) error) error {
	if db.readOnly {
		return errs.Newf(errs.KindInternal, "", "%s: database %s was opened read-only", op, db.path)
	}
	db.wmu.Lock()
	defer db.wmu.Unlock()
	return db.fail(op, retryBusy(ctx, 4, 50*time.Millisecond, func() error { return db.writeOnce(ctx, fn) }))
}

// retryBusy calls fn up to attempts times while it fails with SQLITE_BUSY or
// SQLITE_LOCKED, waiting step longer before each new attempt (step, 2·step, …).
func retryBusy(ctx context.Context, attempts int, step time.Duration, fn func() error) error {
	var err error
	for attempt := 0; attempt < attempts; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(attempt) * step):
			}
		}
		err = fn()
		if c := sqliteCode(err); c != sqlite3.SQLITE_BUSY && c != sqlite3.SQLITE_LOCKED {
			return err
		}
	}
	return err
}

// writeOnce runs fn between BEGIN IMMEDIATE and COMMIT on the write connection
// (not a database/sql Tx: see stmtcache.go). Any failure rolls back; a ROLLBACK with
// no transaction open (BEGIN failed, or COMMIT failed after ending it) is harmless.
func (db *DB) writeOnce(ctx context.Context, fn func(dbtx) error) error {
	tx, err := db.writeTx(ctx)
	if err != nil {
		return err
	}
	if _, err := tx.exec(ctx, "BEGIN IMMEDIATE"); err != nil {
		tx.rollback()
		return err
	}
	if err := fn(tx); err != nil {
		tx.rollback()
		return err
	}
	if _, err := tx.exec(ctx, "COMMIT"); err != nil {
		tx.rollback()
		return err
	}
	return nil
}

// read runs fn in a read transaction (one consistent snapshot under WAL).
func (db *DB) read(ctx context.Context, op string, fn func(dbtx) error) error {
	tx, err := db.sql.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return db.fail(op, err)
	}
	defer tx.Rollback()
	return db.fail(op, fn(tx))
}

func millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
