package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/transcript"
)

func TestDefaultPath(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"lovia home wins", map[string]string{"LOVIA_HOME": "/lh", "XDG_DATA_HOME": "/xdg", "HOME": "/h"}, "/lh/lovia.db"},
		{"xdg data home", map[string]string{"XDG_DATA_HOME": "/xdg", "HOME": "/h"}, "/xdg/lovia/lovia.db"},
		{"home fallback", map[string]string{"HOME": "/h"}, "/h/.local/share/lovia/lovia.db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DefaultPath(func(k string) string { return tt.env[k] }); got != tt.want {
				t.Errorf("DefaultPath = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOpenCreatesFileWithPragmas(t *testing.T) {
	ctx := ctxT(t)
	path := filepath.Join(t.TempDir(), "a", "b", "lovia.db")
	db := openAt(t, path)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", st.Mode().Perm())
	}
	if dst, _ := os.Stat(filepath.Dir(path)); dst.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v, want 0700", dst.Mode().Perm())
	}
	for _, p := range []struct{ pragma, want string }{
		{"journal_mode", "wal"},
		{"foreign_keys", "1"},
		{"busy_timeout", "5000"},
		{"synchronous", "1"}, // NORMAL
	} {
		var got string
		if err := db.sql.QueryRowContext(ctx, "PRAGMA "+p.pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != p.want {
			t.Errorf("PRAGMA %s = %s, want %s", p.pragma, got, p.want)
		}
	}
	if err := db.Check(ctx); err != nil {
		t.Errorf("Check on a new database: %v", err)
	}
	v, err := db.version(ctx, db.sql)
	if err != nil || v != SchemaVersion() {
		t.Errorf("version = %d, %v; want %d", v, err, SchemaVersion())
	}
	// Reopening is a no-op migration.
	db.Close()
	db2 := openAt(t, path)
	if v, _ := db2.version(ctx, db2.sql); v != SchemaVersion() {
		t.Errorf("after reopen version = %d", v)
	}
}

// loadSQL creates a database file from a SQL script, bypassing Open.
func loadSQL(t *testing.T, path, script string) {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(script); err != nil {
		t.Fatalf("load script: %v", err)
	}
}

func TestMigrateFromPreviousSchema(t *testing.T) {
	ctx := ctxT(t)
	script, err := os.ReadFile("testdata/schema_v1.sql")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "lovia.db")
	loadSQL(t, path, string(script))
	db := openAt(t, path)
	if v, _ := db.version(ctx, db.sql); v != SchemaVersion() {
		t.Fatalf("version after migration = %d, want %d", v, SchemaVersion())
	}
	if err := db.Check(ctx); err != nil {
		t.Fatal(err)
	}
	// Old data reads through the current code.
	hist, err := db.Sessions().Load(ctx, "s-old")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(texts(hist), "|"); got != "input:fix the build|assistant_text:done|input:thanks|assistant_text:welcome" {
		t.Errorf("session history = %s", got)
	}
	snap, err := db.Checkpoints().Load(ctx, "r-old-2")
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Entries) != 3 || snap.Head.Status != store.StatusCompleted || snap.Head.Result.Output != "welcome" {
		t.Errorf("snapshot = %+v", snap)
	}
	// A v1 run left running has no claim: it is interrupted.
	ri, err := db.Checkpoints().GetRun(ctx, "r-old-3")
	if err != nil {
		t.Fatal(err)
	}
	if ri.Status != store.StatusInterrupted || ri.StoredStatus != store.StatusRunning {
		t.Errorf("old running run: status %s stored %s", ri.Status, ri.StoredStatus)
	}
	infos, err := db.Sessions().ListSessions(ctx, SessionFilter{Repo: "/home/u/proj"})
	if err != nil || len(infos) != 1 {
		t.Fatalf("ListSessions = %v, %v", infos, err)
	}
	if infos[0].Runs != 2 || infos[0].Title != "fix the build" || infos[0].Entries != 4 {
		t.Errorf("session info = %+v", infos[0])
	}
	// The new schema is usable on the migrated file: claims and per-segment usage.
	if err := db.Sessions().Append(ctx, "s-old", "r-new", []transcript.Entry{transcript.UserInput("more")},
		[]byte(`{"usage":{"input_tokens":7,"output_tokens":3,"cached_input_tokens":1}}`)); err != nil {
		t.Fatal(err)
	}
	info, _ := db.Sessions().GetSession(ctx, "s-old")
	if info.Usage.InputTokens != 7 || info.Runs != 3 {
		t.Errorf("after append on migrated db: %+v", info)
	}
	release, err := db.Claim(ctx, "r-old-3")
	if err != nil {
		t.Fatal(err)
	}
	release()
}

func TestOpenRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A valid lovia database, then damaged in the middle of its pages.
	corrupt := filepath.Join(dir, "corrupt.db")
	{
		db := openAt(t, corrupt)
		ctx := context.Background()
		for i := 0; i < 50; i++ {
			if err := db.Checkpoints().Append(ctx, "r", toolPair("c", strings.Repeat("x", 3000)), running("a")); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.sql.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			t.Fatal(err)
		}
		db.Close()
		b, _ := os.ReadFile(corrupt)
		for i := 100; i < len(b); i += 7 {
			b[i] ^= 0x5a
		}
		os.WriteFile(corrupt, b, 0o600)
	}
	newer := filepath.Join(dir, "newer.db")
	loadSQL(t, newer, `CREATE TABLE lovia_schema (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL);
INSERT INTO lovia_schema VALUES (1, 0), (2, 0), (99, 0);`)
	foreign := filepath.Join(dir, "foreign.db")
	loadSQL(t, foreign, `CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users VALUES (1, 'x');`)
	foreignBefore, _ := os.ReadFile(foreign)

	tests := []struct {
		name     string
		path     string
		wantMsg  string
		wantHint string
	}{
		{"text file", write("notes.txt", []byte("hello, this is not a database at all\n")), "is not a lovia database (not an SQLite file)", "move it aside"},
		{"short garbage", write("short.db", []byte{0x00, 0x01}), "not an SQLite file", "--db"},
		{"sqlite header then garbage", write("hdr.db", append([]byte("SQLite format 3\x00"), make([]byte, 200)...)), "", "move it aside"},
		{"corrupt pages", corrupt, "", "move it aside"},
		{"foreign sqlite", foreign, "an SQLite database of another program (tables: users)", "--db"},
		{"newer schema", newer, "database schema v99 is newer than this lovia (v" + strconv.Itoa(SchemaVersion()) + "); upgrade lovia", "upgrade lovia"},
		{"directory", dir, "is a directory", "--db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, err := Open(context.Background(), tt.path)
			if err == nil {
				// Damage may only show when the pages are read.
				err = db.Check(context.Background())
				if err == nil {
					_, err = db.Checkpoints().Load(context.Background(), "r")
				}
				db.Close()
			}
			if err == nil {
				t.Fatal("no error")
			}
			if k := errs.KindOf(err); k != errs.KindStore {
				t.Errorf("kind %s, want store: %v", k, err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) || !strings.Contains(err.Error()+errs.HintOf(err), tt.path) {
				t.Errorf("error %q lacks %q or the path", err, tt.wantMsg)
			}
			if h := errs.HintOf(err); !strings.Contains(h, tt.wantHint) {
				t.Errorf("hint %q lacks %q", h, tt.wantHint)
			}
		})
	}
	if after, _ := os.ReadFile(foreign); string(after) != string(foreignBefore) {
		t.Error("a foreign database was modified")
	}
	if _, err := os.Stat(foreign + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Error("a foreign database was switched to WAL")
	}
}

func TestEmptyFileIsANewDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lovia.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	db := openAt(t, path)
	if v, _ := db.version(context.Background(), db.sql); v != SchemaVersion() {
		t.Errorf("version %d", v)
	}
}

// TestMigratedSchemaMatchesFresh: a database migrated from the v1 fixture ends with
// exactly the schema of a database created by this lovia (so the fixture is a true
// v1 and every step is applied).
func TestMigratedSchemaMatchesFresh(t *testing.T) {
	ctx := ctxT(t)
	schema := func(db *DB) string {
		rows, err := db.sql.QueryContext(ctx, `SELECT type, name, COALESCE(sql, '') FROM sqlite_master ORDER BY type, name`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var b strings.Builder
		for rows.Next() {
			var typ, name, ddl string
			rows.Scan(&typ, &name, &ddl)
			b.WriteString(typ + " " + name + ": " + strings.Join(strings.Fields(ddl), " ") + "\n")
		}
		return b.String()
	}
	fresh := schema(openTest(t))
	script, _ := os.ReadFile("testdata/schema_v1.sql")
	path := filepath.Join(t.TempDir(), "lovia.db")
	loadSQL(t, path, string(script))
	if got := schema(openAt(t, path)); got != fresh {
		t.Errorf("migrated schema differs from fresh:\n--- migrated\n%s--- fresh\n%s", got, fresh)
	}
}

// TestConcurrentOpenMigratesOnce: processes racing to create the database apply
// each migration once.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	ctx := ctxT(t)
	path := filepath.Join(t.TempDir(), "lovia.db")
	errc := make(chan error, 6)
	for i := 0; i < 6; i++ {
		go func() {
			db, err := Open(ctx, path)
			if err == nil {
				db.Close()
			}
			errc <- err
		}()
	}
	for i := 0; i < 6; i++ {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	db := openAt(t, path)
	var n int
	db.sql.QueryRowContext(ctx, `SELECT COUNT(*) FROM lovia_schema`).Scan(&n)
	if n != SchemaVersion() {
		t.Errorf("%d migration rows, want %d", n, SchemaVersion())
	}
}

func TestOpenOddPath(t *testing.T) {
	ctx := ctxT(t)
	path := filepath.Join(t.TempDir(), "my docs", "what?#%20x.db")
	db := openAt(t, path)
	if err := db.Sessions().Append(ctx, "s", "r", []transcript.Entry{transcript.UserInput("x")}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database not at the given path: %v", err)
	}
	if db.Path() != path {
		t.Errorf("Path() = %q", db.Path())
	}
}
