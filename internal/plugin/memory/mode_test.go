//go:build unix

package memory

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// memory.db was created 0644 by SQLite; it is 0600 now, and fixed when found looser.
func TestArchiveFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	for _, existing := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "memory.db")
		if existing {
			if err := os.WriteFile(path, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		a, err := OpenArchive(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Add(context.Background(), Item{Scope: "global", Content: "x"}); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != 0o600 {
				t.Errorf("existing=%v %s: mode %v, want 0600", existing, filepath.Base(p), st.Mode().Perm())
			}
		}
		a.Close()
	}
}
