package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
)

// Write transactions run on one connection this DB keeps (DB.wconn), between
// BEGIN IMMEDIATE and COMMIT issued as statements, rather than in database/sql
// transactions: a *sql.Tx starts a goroutine to watch its context, and so does every
// query inside it, and waking those cost a checkpoint (two or three a turn) more CPU
// than its BEGIN and COMMIT. The hot statements are prepared once on that
// connection instead of parsed by SQLite on every call.

// dbtx is what a transaction's statements run on: a *sql.Tx for reads, a *writeTx
// for writes.
type dbtx interface {
	execQuerier
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// execQuerier is a dbtx or a cachedTx.
type execQuerier interface {
	querier
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// writeTx is the write transaction in progress on db.wconn (db.wmu held).
type writeTx struct{ db *DB }

// writeTx returns the write connection's transaction handle, taking a connection
// from the pool if there is none yet. db.wmu must be held.
func (db *DB) writeTx(ctx context.Context) (*writeTx, error) {
	if db.wconn == nil {
		c, err := db.sql.Conn(ctx)
		if err != nil {
			return nil, err
		}
		db.wconn = c
	}
	return &writeTx{db: db}, nil
}

// dropWriteConn closes the write connection's statements and returns it to the
// pool (db.wmu held).
func (db *DB) dropWriteConn() {
	for _, s := range db.wstmts {
		s.Close()
	}
	db.wstmts = nil
	if db.wconn != nil {
		db.wconn.Close()
		db.wconn = nil
	}
}

// stmt returns query prepared on the write connection (nil when preparing failed:
// the caller then runs the query directly, which reports the error).
func (t *writeTx) stmt(ctx context.Context, query string) *sql.Stmt {
	db := t.db
	if s, ok := db.wstmts[query]; ok {
		return s
	}
	s, err := db.wconn.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	if db.wstmts == nil {
		db.wstmts = map[string]*sql.Stmt{}
	}
	db.wstmts[query] = s
	return s
}

// exec runs a cached statement (BEGIN, COMMIT). A connection that went bad is given
// back so the next write takes a fresh one.
func (t *writeTx) exec(ctx context.Context, query string) (sql.Result, error) {
	res, err := cachedTx{t}.ExecContext(ctx, query)
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) {
		t.db.dropWriteConn()
	}
	return res, err
}

// rollback ends the transaction, if one is open, whatever the context.
func (t *writeTx) rollback() {
	if t.db.wconn != nil {
		_, _ = t.exec(context.Background(), "ROLLBACK")
	}
}

func (t *writeTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.db.wconn.ExecContext(ctx, query, args...)
}

func (t *writeTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return t.db.wconn.QueryContext(ctx, query, args...)
}

func (t *writeTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return t.db.wconn.QueryRowContext(ctx, query, args...)
}

// cachedTx runs a write transaction's queries through the statement cache (for the
// per-turn path; one-off statements need not stay prepared).
type cachedTx struct{ t *writeTx }

// cached returns tx with its statements cached (tx must be a write transaction).
func (db *DB) cached(tx dbtx) execQuerier {
	if t, ok := tx.(*writeTx); ok {
		return cachedTx{t}
	}
	return tx
}

func (c cachedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s := c.t.stmt(ctx, query); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return c.t.ExecContext(ctx, query, args...)
}

func (c cachedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s := c.t.stmt(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return c.t.QueryRowContext(ctx, query, args...)
}
