package rewind

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// listDir reports each entry as os.Lstat does (the stat cache compares its keys
// with keys taken from os.File.Stat after a read), and a second snapshot of
// unchanged files reads none of them.
func TestListDirMatchesLstat(t *testing.T) {
	root, _, rec := setup(t)
	write(t, root, "plain.txt", "plain", 0o644)
	write(t, root, "exec.sh", "#!/bin/sh", 0o755)
	write(t, root, "setuid", "s", 0o644)
	os.Chmod(filepath.Join(root, "setuid"), 0o4755|os.ModeSetuid)
	os.Mkdir(filepath.Join(root, "sticky"), 0o755)
	os.Chmod(filepath.Join(root, "sticky"), 0o1777|os.ModeSticky)
	os.Symlink("plain.txt", filepath.Join(root, "link"))
	mkfifo(filepath.Join(root, "fifo"))
	old := time.Now().Add(-time.Hour)
	for _, n := range []string{"plain.txt", "exec.sh", "setuid"} {
		os.Chtimes(filepath.Join(root, n), old, old)
	}
	f, err := os.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := listDir(f, &listScratch{})
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, l := range ls {
		seen[l.name] = true
		fi, err := os.Lstat(filepath.Join(root, l.name))
		if err != nil {
			t.Fatal(err)
		}
		if l.mode != fi.Mode() || l.size != fi.Size() || l.key != keyOf(fi) {
			t.Errorf("%s: listed %v %d %+v, lstat %v %d %+v", l.name, l.mode, l.size, l.key, fi.Mode(), fi.Size(), keyOf(fi))
		}
	}
	des, _ := os.ReadDir(root)
	if len(ls) != len(des) {
		t.Errorf("listed %v, want the %d entries of os.ReadDir", seen, len(des))
	}

	ctx := t.Context()
	if _, err := rec.Current(ctx); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	res, err := rec.current()
	rec.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if res.Read != 0 {
		t.Errorf("a snapshot of unchanged files read %d bytes", res.Read)
	}
}
