package memory

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/safefile"
)

// GlobalScope is the scope of memories shared by every project.
const GlobalScope = "global"

// Item is one archived memory.
type Item struct {
	ID        int64     `json:"id"`
	Scope     string    `json:"scope"` // "global" or a project key
	Content   string    `json:"content"`
	Tags      string    `json:"tags,omitempty"`
	Pinned    bool      `json:"pinned,omitempty"`
	SessionID string    `json:"session_id,omitempty"`
	RunID     string    `json:"run_id,omitempty"`
	Created   time.Time `json:"created"`
	// Snippet is the matching excerpt (search results only).
	Snippet string `json:"snippet,omitempty"`
}

// Archive is the searchable cold tier: one table plus an FTS5 index, kept apart from
// the session tables (it may share their database file).
type Archive struct {
	db    *sql.DB
	owned bool
	// embed, when set, adds a vector index fused with the keyword one (vector.go).
	embed Embedder

	// path is the file of an archive opened on first use (OpenLazy): db is set by
	// once, or openErr says why it could not be.
	path    string
	once    sync.Once
	openErr error
}

const schema = `
CREATE TABLE IF NOT EXISTS memory_items (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	scope      TEXT NOT NULL,
	content    TEXT NOT NULL,
	tags       TEXT NOT NULL DEFAULT '',
	pinned     INTEGER NOT NULL DEFAULT 0,
	session_id TEXT NOT NULL DEFAULT '',
	run_id     TEXT NOT NULL DEFAULT '',
	created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS memory_items_scope ON memory_items(scope);
CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts USING fts5(
	content, tags, content='memory_items', content_rowid='id', tokenize='porter unicode61'
);
CREATE TRIGGER IF NOT EXISTS memory_items_ai AFTER INSERT ON memory_items BEGIN
	INSERT INTO memory_fts(rowid, content, tags) VALUES (new.id, new.content, new.tags);
END;
CREATE TRIGGER IF NOT EXISTS memory_items_ad AFTER DELETE ON memory_items BEGIN
	INSERT INTO memory_fts(memory_fts, rowid, content, tags) VALUES ('delete', old.id, old.content, old.tags);
END;
`

// NewArchive uses db (which the caller keeps owning) and creates the tables if needed.
func NewArchive(ctx context.Context, db *sql.DB) (*Archive, error) {
	if _, err := db.ExecContext(ctx, schema+vectorSchema); err != nil {
		return nil, errs.Wrap(errs.KindStore, err, "create the memory archive tables", "check that the database is writable")
	}
	return &Archive{db: db}, nil
}

// OpenArchive opens (creating if needed) the SQLite file at path.
func OpenArchive(ctx context.Context, path string) (*Archive, error) {
	db, err := openDB(ctx, path)
	if err != nil {
		return nil, err
	}
	return &Archive{db: db, owned: true}, nil
}

// OpenLazy is OpenArchive on first use: a run whose model never touches the archive
// does not open (nor create) the file, and the first model request does not wait
// for it. A failure to open is the error of every call.
func OpenLazy(path string) *Archive { return &Archive{path: path, owned: true} }

// openDB opens the archive's database at path with its tables created, private.
func openDB(ctx context.Context, path string) (*sql.DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, errs.Wrap(errs.KindStore, err, "create the memory database directory", "check the permissions of "+filepath.Dir(path))
	}
	// Create the file 0600 before SQLite does (it would use 0644): the archive holds
	// what the model remembered, which may quote code or secrets.
	if err := safefile.CreatePrivate(path); err != nil {
		return nil, errs.Wrap(errs.KindStore, err, "create the memory database "+path, "check the permissions of "+filepath.Dir(path))
	}
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	db, err := sql.Open("sqlite", "file:"+esc+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_txlock=immediate")
	if err != nil {
		return nil, errs.Wrap(errs.KindStore, err, "open the memory database "+path, "")
	}
	if _, err := NewArchive(ctx, db); err != nil {
		db.Close()
		return nil, errs.Wrap(errs.KindStore, err, "open the memory database "+path, fmt.Sprintf("check that it is writable, or move it aside (mv %q %q) so lovia starts a new one", path, path+".bak"))
	}
	for _, p := range []string{path + "-wal", path + "-shm"} {
		if err := safefile.PrivateFile(p); err != nil {
			db.Close()
			return nil, errs.Wrap(errs.KindStore, err, "make "+p+" private", "check the file's owner and permissions")
		}
	}
	return db, nil
}

// ready opens a lazy archive on first use (the caller's cancellation does not end
// the open for the calls after it).
func (a *Archive) ready(ctx context.Context) error {
	if a.path == "" {
		return nil
	}
	a.once.Do(func() { a.db, a.openErr = openDB(context.WithoutCancel(ctx), a.path) })
	return a.openErr
}

// errClosed is the error of a lazy archive used after Close.
var errClosed = errors.New("the memory archive is closed")

// Close closes the database if the archive opened it (a lazy one never opens after).
func (a *Archive) Close() error {
	if a.path != "" {
		a.once.Do(func() { a.openErr = errClosed })
	}
	if a.owned && a.db != nil {
		return a.db.Close()
	}
	return nil
}

// Add stores it and returns its id.
func (a *Archive) Add(ctx context.Context, it Item) (int64, error) {
	if err := a.ready(ctx); err != nil {
		return 0, err
	}
	if it.Created.IsZero() {
		it.Created = time.Now()
	}
	res, err := a.db.ExecContext(ctx, `INSERT INTO memory_items(scope, content, tags, pinned, session_id, run_id, created_at) VALUES (?,?,?,?,?,?,?)`,
		it.Scope, it.Content, it.Tags, it.Pinned, it.SessionID, it.RunID, it.Created.UTC().Format(time.RFC3339Nano))
	if err != nil {
		return 0, fmt.Errorf("store memory: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, err
	}
	// Without a vector the item is still found by keywords (and indexed by the
	// next search's backfill).
	_ = a.indexVectors(ctx, []Item{{ID: id, Content: it.Content, Tags: it.Tags}})
	return id, nil
}

// wordRE is compiled on first use: its Unicode classes cost a start-up that most
// runs would pay for nothing.
var wordRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[\p{L}\p{N}_]+`) })

// ftsQuery turns free text into an FTS5 query: every word as a quoted prefix term,
// OR-ed, so punctuation in the input can never be FTS syntax and ranking decides.
func ftsQuery(q string) string {
	words := wordRE().FindAllString(q, 32)
	terms := make([]string, 0, len(words))
	for _, w := range words {
		terms = append(terms, `"`+w+`"*`)
	}
	return strings.Join(terms, " OR ")
}

// keywordSearch returns up to limit items of the given scopes matching query by
// the FTS5 index, best first.
func (a *Archive) keywordSearch(ctx context.Context, query string, scopes []string, limit int) ([]Item, error) {
	q := ftsQuery(query)
	if q == "" {
		return nil, errors.New("the query has no words to search for")
	}
	if limit <= 0 {
		limit = 10
	}
	args := []any{q}
	marks := make([]string, len(scopes))
	for i, s := range scopes {
		marks[i] = "?"
		args = append(args, s)
	}
	args = append(args, limit)
	rows, err := a.db.QueryContext(ctx, `
		SELECT m.id, m.scope, m.content, m.tags, m.pinned, m.session_id, m.run_id, m.created_at,
		       snippet(memory_fts, 0, '[', ']', ' … ', 24)
		FROM memory_fts JOIN memory_items m ON m.id = memory_fts.rowid
		WHERE memory_fts MATCH ? AND m.scope IN (`+strings.Join(marks, ",")+`)
		ORDER BY bm25(memory_fts) LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("search memory: %w", err)
	}
	defer rows.Close()
	var out []Item
	for rows.Next() {
		var it Item
		var created string
		if err := rows.Scan(&it.ID, &it.Scope, &it.Content, &it.Tags, &it.Pinned, &it.SessionID, &it.RunID, &created, &it.Snippet); err != nil {
			return nil, err
		}
		it.Created, _ = time.Parse(time.RFC3339Nano, created)
		out = append(out, it)
	}
	return out, rows.Err()
}

// Get returns the item with id if it belongs to one of scopes.
func (a *Archive) Get(ctx context.Context, id int64, scopes []string) (Item, bool, error) {
	if err := a.ready(ctx); err != nil {
		return Item{}, false, err
	}
	var it Item
	var created string
	err := a.db.QueryRowContext(ctx, `SELECT id, scope, content, tags, pinned, session_id, run_id, created_at FROM memory_items WHERE id = ?`, id).
		Scan(&it.ID, &it.Scope, &it.Content, &it.Tags, &it.Pinned, &it.SessionID, &it.RunID, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return Item{}, false, nil
	}
	if err != nil {
		return Item{}, false, err
	}
	for _, s := range scopes {
		if s == it.Scope {
			it.Created, _ = time.Parse(time.RFC3339Nano, created)
			return it, true, nil
		}
	}
	return Item{}, false, nil
}

// Remove deletes the item with id.
func (a *Archive) Remove(ctx context.Context, id int64) error {
	if err := a.ready(ctx); err != nil {
		return err
	}
	_, err := a.db.ExecContext(ctx, `DELETE FROM memory_items WHERE id = ?`, id)
	return err
}
