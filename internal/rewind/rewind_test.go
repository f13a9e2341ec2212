package rewind

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/tool"
)

func write(t *testing.T, root, rel, body string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// tree reads every file under root (links as "-> target"), with modes.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			out[rel] = "-> " + l
		case fi.IsDir():
			out[rel+"/"] = fi.Mode().Perm().String()
		default:
			b, _ := os.ReadFile(p)
			out[rel] = fi.Mode().Perm().String() + " " + string(b)
		}
		return nil
	})
	return out
}

func setup(t *testing.T) (root string, s *Store, rec *Recorder) {
	t.Helper()
	base := t.TempDir()
	root = filepath.Join(base, "work")
	os.MkdirAll(root, 0o755)
	s = Open(filepath.Join(base, "data"))
	rec = s.NewRecorder(root, nil, Limits{}, nil)
	return root, s, rec
}

func rc(run string) *tool.RunContext { return &tool.RunContext{RunID: run, SessionID: "ses"} }

func TestRewindRestoresEverything(t *testing.T) {
	ctx := context.Background()
	root, s, rec := setup(t)
	write(t, root, "a.txt", "alpha\n", 0o644)
	write(t, root, "bin/run.sh", "#!/bin/sh\necho hi\n", 0o755)
	write(t, root, "gone.txt", "keep me\n", 0o600)
	write(t, root, ".gitignore", "build/\n", 0o644)
	write(t, root, "build/out.o", "object", 0o644)
	os.Symlink("a.txt", filepath.Join(root, "link"))
	before := tree(t, root)

	if err := rec.Checkpoint(ctx, rc("r1"), "edit_file", "a.txt"); err != nil {
		t.Fatal(err)
	}
	write(t, root, "a.txt", "ALPHA\n", 0o644)
	rec.Checkpoint(ctx, rc("r1"), "shell", "many")
	write(t, root, "bin/run.sh", "changed", 0o644)
	os.Remove(filepath.Join(root, "gone.txt"))
	write(t, root, "new/deep/file.txt", "new", 0o644)
	os.Remove(filepath.Join(root, "link"))
	os.Symlink("/etc/passwd", filepath.Join(root, "link"))
	write(t, root, "build/out.o", "rebuilt", 0o644) // ignored: not rewound
	if err := rec.End(ctx, "r1", "ses"); err != nil {
		t.Fatal(err)
	}

	p, err := s.Plan(ctx, rec, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Conflicts) > 0 {
		t.Fatalf("conflicts %v", p.Conflicts)
	}
	if _, err := s.Apply(ctx, p, false); err != nil {
		t.Fatal(err)
	}
	after := tree(t, root)
	before["build/out.o"] = "-rw-r--r-- rebuilt"
	if !mapsEqual(before, after) {
		t.Errorf("after rewind:\n%v\nwant\n%v", after, before)
	}
	if _, err := s.Plan(ctx, rec, "r1"); err == nil {
		t.Error("a rewound run can be rewound again")
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestConflictNamesFilesChangedOutside(t *testing.T) {
	ctx := context.Background()
	root, s, rec := setup(t)
	write(t, root, "a.txt", "1", 0o644)
	write(t, root, "b.txt", "1", 0o644)
	rec.Checkpoint(ctx, rc("r1"), "shell", "x")
	write(t, root, "a.txt", "2", 0o644)
	write(t, root, "b.txt", "2", 0o644)
	rec.End(ctx, "r1", "ses")
	write(t, root, "a.txt", "user", 0o644) // the user edits after the run
	p, err := s.Plan(ctx, rec, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Conflicts, []string{"a.txt"}) {
		t.Fatalf("conflicts %v, want [a.txt]", p.Conflicts)
	}
	if _, err := s.Apply(ctx, p, false); err == nil {
		t.Fatal("applied despite a conflict")
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "user" {
		t.Fatalf("a.txt = %q after a refused rewind", b)
	}
	if _, err := s.Apply(ctx, p, true); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"a.txt", "b.txt"} {
		if b, _ := os.ReadFile(filepath.Join(root, f)); string(b) != "1" {
			t.Errorf("%s = %q after a forced rewind", f, b)
		}
	}
}

// A run replaces a file and a directory by links pointing outside the root; the
// rewind must restore them without writing anything outside.
func TestRewindNeverWritesThroughLinks(t *testing.T) {
	ctx := context.Background()
	root, s, rec := setup(t)
	outside := filepath.Join(filepath.Dir(root), "outside")
	write(t, outside, "victim.txt", "victim", 0o644)
	write(t, root, "a.txt", "original", 0o644)
	write(t, root, "dir/x.txt", "x", 0o644)
	os.Symlink(outside, filepath.Join(root, "planted")) // in the repository from the start
	before, outBefore := tree(t, root), tree(t, outside)

	rec.Checkpoint(ctx, rc("r1"), "shell", "evil")
	os.Remove(filepath.Join(root, "a.txt"))
	os.Symlink(filepath.Join(outside, "victim.txt"), filepath.Join(root, "a.txt"))
	os.RemoveAll(filepath.Join(root, "dir"))
	os.Symlink(outside, filepath.Join(root, "dir"))
	rec.End(ctx, "r1", "ses")

	p, err := s.Plan(ctx, rec, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(ctx, p, false); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, outside); !mapsEqual(got, outBefore) {
		t.Errorf("outside changed: %v", got)
	}
	if got := tree(t, root); !mapsEqual(got, before) {
		t.Errorf("root %v, want %v", got, before)
	}
}

func TestWalkSkipsGitAndLinksOut(t *testing.T) {
	ctx := context.Background()
	root, s, rec := setup(t)
	write(t, root, ".git/HEAD", "ref: refs/heads/main\n", 0o644)
	write(t, root, "node_modules/x/index.js", "x", 0o644)
	os.Symlink("/", filepath.Join(root, "rootlink"))
	rec.Checkpoint(ctx, rc("r1"), "shell", "x")
	run, err := s.FindRun("r1")
	if err != nil {
		t.Fatal(err)
	}
	tc := &treeCache{obj: s.obj, m: map[string][]Entry{}}
	set := map[string]bool{}
	tc.diff("", run.Before(), "", set)
	if len(set) != 1 || !set["rootlink"] {
		t.Errorf("snapshot holds %v, want only rootlink", set)
	}
}

func TestPruneKeepsWhatLiveCheckpointsUse(t *testing.T) {
	ctx := context.Background()
	root, s, rec := setup(t)
	zero := time.Duration(0)
	s.pruneGrace = &zero
	write(t, root, "shared.txt", "shared", 0o644)
	write(t, root, "a.txt", "only in session a", 0o644)
	rec.Checkpoint(ctx, &tool.RunContext{RunID: "ra", SessionID: "a"}, "shell", "")
	os.Remove(filepath.Join(root, "a.txt"))
	write(t, root, "b.txt", "only in session b", 0o644)
	rec.Checkpoint(ctx, &tool.RunContext{RunID: "rb", SessionID: "b"}, "shell", "")
	if err := s.DeleteSession("a"); err != nil {
		t.Fatal(err)
	}
	res, err := s.Prune(DefaultBudget, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Objects == 0 {
		t.Fatal("nothing pruned")
	}
	if s.obj.has(hashOf([]byte("only in session a"))) {
		t.Error("an object only the deleted session used is still there")
	}
	for _, body := range []string{"shared", "only in session b"} {
		if !s.obj.has(hashOf([]byte(body))) {
			t.Errorf("%q was pruned but session b uses it", body)
		}
	}
	// A recorder of another process learns of the prune and stores again what it
	// needs (the stat cache alone must not make it refer to a pruned object).
	write(t, root, "a.txt", "only in session a", 0o644)
	os.Chtimes(filepath.Join(root, "a.txt"), time.Now().Add(-time.Hour), time.Now().Add(-time.Hour))
	rec.Checkpoint(ctx, &tool.RunContext{RunID: "rc", SessionID: "c"}, "shell", "")
	os.Remove(filepath.Join(root, "a.txt"))
	rec.Checkpoint(ctx, &tool.RunContext{RunID: "rc", SessionID: "c"}, "shell", "")
	p, err := s.Plan(ctx, rec, "rc")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(ctx, p, false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "only in session a" {
		t.Errorf("a.txt = %q", b)
	}
}
