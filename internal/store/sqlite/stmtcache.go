package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache holds the statements of the per-turn write path (a checkpoint runs a
// handful of them two or three times a turn), prepared once per connection instead
// of parsed again by SQLite on every call.
type stmtCache struct {
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

// execQuerier is a *sql.Tx or a cachedTx.
type execQuerier interface {
	querier
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// cachedTx runs queries in tx through db's statement cache. It satisfies querier.
type cachedTx struct {
	db *DB
	tx *sql.Tx
}

func (db *DB) cached(tx *sql.Tx) cachedTx { return cachedTx{db: db, tx: tx} }

// stmt returns query prepared on the database (nil when preparing failed: the
// caller then runs the query directly, which reports the error).
func (db *DB) stmt(ctx context.Context, query string) *sql.Stmt {
	db.stmts.mu.Lock()
	defer db.stmts.mu.Unlock()
	if s, ok := db.stmts.m[query]; ok {
		return s
	}
	s, err := db.sql.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	if db.stmts.m == nil {
		db.stmts.m = map[string]*sql.Stmt{}
	}
	db.stmts.m[query] = s
	return s
}

func (c cachedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s := c.db.stmt(ctx, query); s != nil {
		return c.tx.StmtContext(ctx, s).ExecContext(ctx, args...)
	}
	return c.tx.ExecContext(ctx, query, args...)
}

func (c cachedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s := c.db.stmt(ctx, query); s != nil {
		return c.tx.StmtContext(ctx, s).QueryRowContext(ctx, args...)
	}
	return c.tx.QueryRowContext(ctx, query, args...)
}
