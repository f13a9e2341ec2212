package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/lovia-dev/lovia/internal/errs"
)

// readerBusyTimeout bounds how long a reader waits on a lock. Under WAL readers do
// not wait for writers; this only covers a writer recovering the WAL.
const readerBusyTimeout = 2 * time.Second

// OpenReadOnly opens the database for reading only: it creates nothing, migrates
// nothing and never takes the write lock, so `lovia runs`, `sessions`, `doctor` and
// completion work on a read-only LOVIA_HOME and while another lovia writes. A missing
// or empty file reads as an empty database. A database whose schema is older than
// this lovia is opened read-write once to migrate it (when that is impossible the
// error says so).
func OpenReadOnly(ctx context.Context, path string) (*DB, error) {
	path, err := dbPath(path)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(path); errors.Is(err, os.ErrNotExist) || err == nil && st.Size() == 0 {
		return emptyDB(ctx, path)
	}
	if err := sniff(path); err != nil {
		return nil, err
	}
	db, err := openRO(ctx, path, false)
	if err != nil {
		// A read-only directory cannot hold the WAL index (-shm): read the file as
		// immutable instead (nothing can be writing it there).
		if db2, err2 := openRO(ctx, path, true); err2 == nil {
			db, err = db2, nil
		}
	}
	if err != nil {
		return nil, err
	}
	tables, err := db.tables(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	if _, ours := tables[schemaTable]; !ours {
		db.Close()
		if len(tables) == 0 {
			return emptyDB(ctx, path)
		}
		// Let the read-write path word the "another program's database" error.
		return Open(ctx, path)
	}
	v, err := db.version(ctx, db.sql)
	if err != nil {
		db.Close()
		return nil, err
	}
	if err := db.checkNewer(v); err != nil {
		db.Close()
		return nil, err
	}
	if v < len(migrations) {
		db.Close()
		return Open(ctx, path)
	}
	return db, nil
}

func openRO(ctx context.Context, path string, immutable bool) (*DB, error) {
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	dsn := "file:" + esc + "?mode=ro"
	if immutable {
		dsn += "&immutable=1"
	}
	dsn += fmt.Sprintf("&_pragma=busy_timeout(%d)&_pragma=foreign_keys(1)", readerBusyTimeout.Milliseconds())
	sqldb, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, errs.Wrap(errs.KindStore, err, "open database "+path, "")
	}
	sqldb.SetMaxOpenConns(4)
	sqldb.SetMaxIdleConns(2)
	db := &DB{path: path, sql: sqldb, self: selfHolder(), now: time.Now, readOnly: true}
	if err := sqldb.PingContext(ctx); err != nil {
		sqldb.Close()
		return nil, db.fail("open database", err)
	}
	// The first query is where a locked-out or unreadable file shows.
	if _, err := db.tables(ctx); err != nil {
		sqldb.Close()
		return nil, err
	}
	return db, nil
}

// emptyDB is an in-memory database with lovia's schema: what a reader sees before
// the first run created the file.
func emptyDB(ctx context.Context, path string) (*DB, error) {
	sqldb, err := sql.Open("sqlite", "file::memory:?_pragma=foreign_keys(1)")
	if err != nil {
		return nil, errs.Wrap(errs.KindStore, err, "open database "+path, "")
	}
	// One connection: each connection to :memory: is a database of its own.
	sqldb.SetMaxOpenConns(1)
	db := &DB{path: path, sql: sqldb, self: selfHolder(), now: time.Now}
	if err := db.migrate(ctx); err != nil {
		sqldb.Close()
		return nil, err
	}
	// Give the one connection back for reads.
	db.wmu.Lock()
	db.dropWriteConn()
	db.wmu.Unlock()
	db.readOnly = true
	return db, nil
}
