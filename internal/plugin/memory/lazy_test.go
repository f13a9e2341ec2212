package memory

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A lazy archive creates its file on first use — private, as OpenArchive does — and
// works like an opened one; none is created when nothing uses it.
func TestOpenLazy(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "data", "memory.db")
	a := OpenLazy(path)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("created before first use: %v", err)
	}
	id, err := a.Add(ctx, Item{Scope: GlobalScope, Content: "the tests use go test"})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("after first use: %v %v", st, err)
	}
	if got, err := a.Search(ctx, "tests", []string{GlobalScope}, 5); err != nil || len(got) != 1 || got[0].ID != id {
		t.Fatalf("search: %+v %v", got, err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Add(ctx, Item{Scope: GlobalScope, Content: "x"}); err == nil {
		t.Fatal("used after Close")
	}

	unused := OpenLazy(filepath.Join(t.TempDir(), "memory.db"))
	if err := unused.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := unused.Get(ctx, 1, []string{GlobalScope}); err == nil {
		t.Fatal("a closed, never opened archive opened")
	}
}

// A file that cannot be opened is the error of every call, not a panic or a hang.
func TestOpenLazyFailure(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	a := OpenLazy(filepath.Join(blocker, "memory.db")) // a directory that is a file
	defer a.Close()
	for range 2 {
		if _, err := a.Search(context.Background(), "x", []string{GlobalScope}, 1); err == nil || !strings.Contains(err.Error(), "memory database") {
			t.Fatalf("search: %v", err)
		}
	}
}
