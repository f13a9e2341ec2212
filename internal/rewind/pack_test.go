package rewind

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/tool"
)

// packs lists the pack files of s.
func packs(t *testing.T, s *Store) []string {
	t.Helper()
	ps, _ := filepath.Glob(filepath.Join(s.obj.packDir(), "*"+packExt))
	return ps
}

// rewindRun plans and applies the rewind of run with a store opened afresh (as a
// later process would) and checks the root then reads as want.
func rewindRun(t *testing.T, dataDir, root, run string, want map[string]string) {
	t.Helper()
	ctx := context.Background()
	s := Open(dataDir)
	rec := s.NewRecorder(root, nil, Limits{}, nil)
	p, err := s.Plan(ctx, rec, run)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(ctx, p, true); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, root); !mapsEqual(got, want) {
		t.Fatalf("after rewinding %s:\n%v\nwant\n%v", run, got, want)
	}
}

// A crash in the middle of writing a batch leaves a pack that ends in a torn batch:
// the store still reads (the checkpoints taken before restore), a later process
// writes a pack of its own, and Prune drops the torn bytes.
func TestTornPackKeepsEarlierCheckpoints(t *testing.T) {
	ctx := context.Background()
	root, s, rec := setup(t)
	dataDir := filepath.Dir(s.Dir())
	write(t, root, "a.txt", "alpha\n", 0o644)
	write(t, root, "dir/b.txt", "beta\n", 0o644)
	before := tree(t, root)
	if err := rec.Checkpoint(ctx, rc("r1"), "shell", ""); err != nil {
		t.Fatal(err)
	}
	write(t, root, "a.txt", "ALPHA\n", 0o644)
	write(t, root, "dir/c.txt", "gamma\n", 0o644)
	if err := rec.End(ctx, "r1", "ses"); err != nil {
		t.Fatal(err)
	}
	ps := packs(t, s)
	if len(ps) != 1 {
		t.Fatalf("packs %v, want one", ps)
	}
	good, err := os.ReadFile(ps[0])
	if err != nil {
		t.Fatal(err)
	}
	// The batch a crashed checkpoint was writing: whole, then cut at every length.
	var b batch
	s.obj.add(&b, hashOf([]byte("never recorded")), []byte("never recorded"))
	s.obj.add(&b, hashOf([]byte("nor this")), []byte("nor this"))
	scratch := &objects{dir: filepath.Join(t.TempDir(), "objects")}
	if _, err := scratch.flush(&b); err != nil {
		t.Fatal(err)
	}
	torn, err := os.ReadFile(packs(t, &Store{obj: scratch})[0])
	if err != nil {
		t.Fatal(err)
	}
	for cut := 1; cut < len(torn); cut++ {
		if err := os.WriteFile(ps[0], append(good[:len(good):len(good)], torn[:cut]...), 0o600); err != nil {
			t.Fatal(err)
		}
		fresh := Open(dataDir)
		if end, err := scanPack(ps[0], func([32]byte, packLoc) {}); err != nil || end != int64(len(good)) {
			t.Fatalf("cut at %d: valid batches end at %d (%v), want %d", cut, end, err, len(good))
		}
		for _, body := range []string{"alpha\n", "ALPHA\n", "gamma\n"} {
			if got, err := fresh.obj.get(hashOf([]byte(body))); err != nil || string(got) != body {
				t.Fatalf("cut at %d: %q: %q, %v", cut, body, got, err)
			}
		}
		if fresh.obj.has(hashOf([]byte("nor this"))) {
			t.Fatalf("cut at %d: an object of the torn batch is found", cut)
		}
	}

	// A later process checkpoints (into a pack of its own) and rewinds the first run.
	s2 := Open(dataDir)
	rec2 := s2.NewRecorder(root, nil, Limits{}, nil)
	write(t, root, "dir/d.txt", "delta\n", 0o644)
	if err := rec2.Checkpoint(ctx, &tool.RunContext{RunID: "r2", SessionID: "ses"}, "shell", ""); err != nil {
		t.Fatal(err)
	}
	if err := rec2.End(ctx, "r2", "ses"); err != nil {
		t.Fatal(err)
	}
	if n := len(packs(t, s2)); n != 2 {
		t.Fatalf("%d packs, want 2 (a torn pack is not appended to)", n)
	}
	before["dir/d.txt"] = "-rw-r--r-- delta\n" // made outside the runs
	rewindRun(t, dataDir, root, "r1", before)

	// Prune drops the torn tail and keeps everything else.
	zero := time.Duration(0)
	s3 := Open(dataDir)
	s3.pruneGrace = &zero
	if _, err := s3.Prune(DefaultBudget, ""); err != nil {
		t.Fatal(err)
	}
	for _, p := range packs(t, s3) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if end, _ := scanPack(p, func([32]byte, packLoc) {}); end != fi.Size() {
			t.Errorf("%s: %d bytes after the valid batches remain", filepath.Base(p), fi.Size()-end)
		}
	}
	for _, body := range []string{"alpha\n", "ALPHA\n", "gamma\n", "delta\n"} {
		if got, err := Open(dataDir).obj.get(hashOf([]byte(body))); err != nil || string(got) != body {
			t.Fatalf("after prune, %q: %q, %v", body, got, err)
		}
	}
}

// Stores written before packs (one file per object) still restore, and a recorder
// does not store again what they hold.
func TestLooseStoreStillRestores(t *testing.T) {
	ctx := context.Background()
	root, s, rec := setup(t)
	dataDir := filepath.Dir(s.Dir())
	write(t, root, "a.txt", "alpha\n", 0o644)
	write(t, root, "dir/b.txt", "beta\n", 0o755)
	before := tree(t, root)
	if err := rec.Checkpoint(ctx, rc("r1"), "shell", ""); err != nil {
		t.Fatal(err)
	}
	write(t, root, "a.txt", "ALPHA\n", 0o644)
	os.Remove(filepath.Join(root, "dir/b.txt"))
	if err := rec.End(ctx, "r1", "ses"); err != nil {
		t.Fatal(err)
	}
	// Turn the store into one of the earlier layout.
	for _, p := range packs(t, s) {
		scanPack(p, func(key [32]byte, l packLoc) {
			h := hex.EncodeToString(key[:])
			l.pack = filepath.Base(p)
			data, err := s.obj.readPacked(l, h)
			if err != nil {
				t.Fatal(err)
			}
			putLoose(t, s.obj, data)
		})
	}
	if err := os.RemoveAll(s.obj.packDir()); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(s.Dir(), "roots")) // no stat cache: every file is read
	s2 := Open(dataDir)
	rec2 := s2.NewRecorder(root, nil, Limits{}, nil)
	if _, err := rec2.Current(ctx); err != nil {
		t.Fatal(err)
	}
	if ps := packs(t, s2); len(ps) != 0 {
		t.Errorf("objects of the loose store stored again in %v", ps)
	}
	rewindRun(t, dataDir, root, "r1", before)
}

// A reader that indexed the packs before another process's Prune rewrote them
// still finds the objects.
func TestReadAfterPruneRewrotePack(t *testing.T) {
	ctx := context.Background()
	root, s, rec := setup(t)
	dataDir := filepath.Dir(s.Dir())
	write(t, root, "keep.txt", "kept\n", 0o644)
	write(t, root, "drop.txt", "dropped\n", 0o644)
	rec.Checkpoint(ctx, &tool.RunContext{RunID: "ra", SessionID: "a"}, "shell", "")
	os.Remove(filepath.Join(root, "drop.txt"))
	rec.Checkpoint(ctx, &tool.RunContext{RunID: "rb", SessionID: "b"}, "shell", "")
	reader := Open(dataDir)
	if !reader.obj.has(hashOf([]byte("kept\n"))) {
		t.Fatal("kept.txt's blob not found")
	}
	old := packs(t, s)
	zero := time.Duration(0)
	pruner := Open(dataDir)
	pruner.pruneGrace = &zero
	s.DeleteSession("a")
	if res, err := pruner.Prune(DefaultBudget, ""); err != nil || res.Objects == 0 {
		t.Fatalf("prune: %+v, %v", res, err)
	}
	if now := packs(t, s); len(now) != 1 || now[0] == old[0] {
		t.Fatalf("packs %v after prune, want one new one (was %v)", now, old)
	}
	if got, err := reader.obj.get(hashOf([]byte("kept\n"))); err != nil || string(got) != "kept\n" {
		t.Fatalf("get after the rewrite: %q, %v", got, err)
	}
	if reader.obj.has(hashOf([]byte("dropped\n"))) {
		t.Error("a pruned object is still found")
	}
	// The recorder that wrote the rewritten pack writes to a new one.
	write(t, root, "new.txt", "new\n", 0o644)
	if err := rec.Checkpoint(ctx, &tool.RunContext{RunID: "rb", SessionID: "b"}, "shell", ""); err != nil {
		t.Fatal(err)
	}
	if got, err := Open(dataDir).obj.get(hashOf([]byte("new\n"))); err != nil || string(got) != "new\n" {
		t.Fatalf("object written after the prune: %q, %v", got, err)
	}
}

// Objects of every size read back as written: small ones are stored uncompressed,
// larger ones deflated, all inflated alike.
func TestPackedObjectsRoundTrip(t *testing.T) {
	o := &objects{dir: filepath.Join(t.TempDir(), "rewind", "objects")}
	o.has(hashOf(nil)) // the index is read: the flush adds to it
	var b batch
	var all [][]byte
	for _, n := range []int{0, 1, 70, storedMax - 1, storedMax, 70_000} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(i*7 + n)
		}
		all = append(all, data)
		o.add(&b, hashOf(data), data)
	}
	if _, err := o.flush(&b); err != nil {
		t.Fatal(err)
	}
	for _, o := range []*objects{o, {dir: o.dir}} { // this process's index, and a fresh one
		for _, data := range all {
			got, err := o.get(hashOf(data))
			if err != nil || string(got) != string(data) {
				t.Fatalf("%d bytes: got %d bytes, %v", len(data), len(got), err)
			}
		}
	}
}

// A directory unchanged since the last snapshot is neither encoded nor hashed
// again, whatever order its listing comes in.
func TestUnchangedDirectoryTreeReused(t *testing.T) {
	ctx := context.Background()
	root, _, rec := setup(t)
	for i := range 40 {
		write(t, root, filepath.Join("d", string(rune('a'+i%26))+string(rune('a'+i/26))+".txt"), "x", 0o644)
	}
	old := time.Now().Add(-time.Hour)
	filepath.Walk(root, func(p string, _ os.FileInfo, _ error) error { return os.Chtimes(p, old, old) })
	if _, err := rec.Current(ctx); err != nil {
		t.Fatal(err)
	}
	first := &rec.snap.trees["d"].entries[0]
	write(t, root, "other.txt", "y", 0o644)
	if _, err := rec.Current(ctx); err != nil {
		t.Fatal(err)
	}
	if &rec.snap.trees["d"].entries[0] != first {
		t.Error("the tree of an unchanged directory was made again")
	}
}

// What the recorder is told to exclude (lovia's data directory, its database) is
// never walked when it lies in the root, and a nested .gitignore applies below its
// directory only.
func TestWalkExcludesAndNestedIgnores(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	root := filepath.Join(base, "work")
	data := filepath.Join(root, ".lovia")
	s := Open(data)
	rec := s.NewRecorder(root, []string{data, filepath.Join(root, "state.db"), filepath.Join(base, "elsewhere")}, Limits{}, nil)
	write(t, root, "a.txt", "a", 0o644)
	write(t, root, "state.db", "db", 0o644)
	write(t, root, "..notparent", "x", 0o644)
	write(t, root, "sub/.gitignore", "*.log\n", 0o644)
	write(t, root, "sub/x.log", "ignored", 0o644)
	write(t, root, "sub/deeper/y.log", "ignored", 0o644)
	write(t, root, "other/z.log", "kept", 0o644)
	h, err := rec.Current(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tc := &treeCache{obj: s.obj, m: map[string][]Entry{}}
	set := map[string]bool{}
	if err := tc.diff("", h, "", set); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"a.txt": true, "..notparent": true, "sub/.gitignore": true, "sub/deeper": true, "other/z.log": true}
	if len(set) != len(want) {
		t.Fatalf("snapshot holds %v, want %v", set, want)
	}
	for k := range want {
		if !set[k] {
			t.Fatalf("snapshot holds %v, want %v", set, want)
		}
	}
}

// Over its budget, Prune drops the oldest runs until what is left fits, and
// deletes what they alone used from the packs; the newest run still rewinds.
func TestPruneToBudget(t *testing.T) {
	ctx := context.Background()
	root, s, rec := setup(t)
	dataDir := filepath.Dir(s.Dir())
	big := func(seed byte) string {
		b := make([]byte, 100<<10)
		x := uint32(seed) + 1
		for i := range b {
			x = x*1664525 + 1013904223
			b[i] = byte(x >> 24)
		}
		return string(b)
	}
	var before map[string]string
	for i := range 4 {
		write(t, root, "big.bin", big(byte(i)), 0o644)
		before = tree(t, root)
		ses := fmt.Sprintf("s%d", i)
		if err := rec.Checkpoint(ctx, &tool.RunContext{RunID: "r" + ses, SessionID: ses}, "shell", ""); err != nil {
			t.Fatal(err)
		}
		write(t, root, "small.txt", ses, 0o644)
		if err := rec.End(ctx, "r"+ses, ses); err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(root, "small.txt"))
	}
	zero := time.Duration(0)
	s.pruneGrace = &zero
	res, err := s.Prune(250<<10, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.RunsDropped != 2 || res.Size > 250<<10 || res.Objects == 0 {
		t.Fatalf("prune: %+v, want 2 runs dropped and at most 250 KiB left", res)
	}
	if got := dirSize(s.obj.packDir()); got != res.Size {
		t.Errorf("packs hold %d bytes, prune says %d", got, res.Size)
	}
	write(t, root, "small.txt", "s3", 0o644)
	rewindRun(t, dataDir, root, "rs3", before)
	if _, err := Open(dataDir).FindRun("rs0"); err == nil {
		t.Error("the oldest run was kept")
	}
}

// Processes sharing a store (two Stores here) and recorders sharing a process
// checkpoint at the same time into packs of their own; every run then rewinds.
func TestConcurrentRecordersShareAStore(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	dataDir := filepath.Join(base, "data")
	stores := []*Store{Open(dataDir), Open(dataDir)}
	type job struct {
		root, run string
		rec       *Recorder
		before    map[string]string
	}
	var jobs []*job
	for i := range 4 {
		root := filepath.Join(base, fmt.Sprintf("work%d", i))
		write(t, root, "same.txt", "identical in every root\n", 0o644)
		write(t, root, "own.txt", fmt.Sprintf("root %d\n", i), 0o644)
		j := &job{root: root, run: fmt.Sprintf("run%d", i), rec: stores[i%2].NewRecorder(root, nil, Limits{}, nil)}
		j.before = tree(t, root)
		jobs = append(jobs, j)
	}
	errs := make(chan error, len(jobs))
	for _, j := range jobs {
		go func() {
			rc := &tool.RunContext{RunID: j.run, SessionID: "ses-" + j.run}
			for k := range 5 {
				if err := j.rec.Checkpoint(ctx, rc, "shell", ""); err != nil {
					errs <- err
					return
				}
				if err := os.WriteFile(filepath.Join(j.root, fmt.Sprintf("n%d.txt", k)), []byte(j.run), 0o644); err != nil {
					errs <- err
					return
				}
			}
			errs <- j.rec.End(ctx, j.run, rc.SessionID)
		}()
	}
	for range jobs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := len(packs(t, stores[0])); n < 1 || n > 2 {
		t.Errorf("%d packs, want one per store (process) at most", n)
	}
	for _, j := range jobs {
		rewindRun(t, dataDir, j.root, j.run, j.before)
	}
}
