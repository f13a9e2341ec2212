package rewind

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// putLoose stores an object as stores made before packs did: one file,
// objects/<hash>, holding the deflated content.
func putLoose(t testing.TB, o *objects, data []byte) string {
	t.Helper()
	h := hashOf(data)
	var buf bytes.Buffer
	zw, _ := flate.NewWriter(&buf, flate.BestSpeed)
	zw.Write(data)
	zw.Close()
	if err := os.MkdirAll(o.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(o.path(h), buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return h
}

// A store removed by hand while lovia runs is made again by the next object put
// (neither the remembered pack index nor the open pack are trusted blindly).
func TestPutAfterStoreRemoved(t *testing.T) {
	o := &objects{dir: filepath.Join(t.TempDir(), "rewind", "objects")}
	data := []byte("content")
	h := hashOf(data)
	for i := range 2 {
		if _, err := o.put(h, data); err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
		got, err := o.get(h)
		if err != nil || string(got) != "content" {
			t.Fatalf("get %d: %q, %v", i, got, err)
		}
		if err := os.RemoveAll(filepath.Dir(o.dir)); err != nil {
			t.Fatal(err)
		}
	}
}

// A file's hash is cached only once its stamp is older than its filesystem's
// timestamp granularity allows a further unseen change: two seconds for stamps in
// whole seconds, a tenth of a second for finer ones.
func TestRacyWindowFollowsStampGranularity(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 600_000_000, time.UTC)
	for _, c := range []struct {
		mtime time.Time
		racy  bool
	}{
		{now.Add(-50 * time.Millisecond), true},
		{now.Add(-150 * time.Millisecond), false},
		{time.Date(2026, 1, 2, 3, 4, 4, 0, time.UTC), true}, // whole seconds: 1.6 s ago
		{time.Date(2026, 1, 2, 3, 4, 3, 0, time.UTC), false},
		{now.Add(time.Second), true}, // a stamp ahead of the clock
	} {
		if got := racy(now, c.mtime); got != c.racy {
			t.Errorf("mtime %s: racy %v, want %v", c.mtime.Format(time.RFC3339Nano), got, c.racy)
		}
	}
}

// Objects of a store written in the older fan-out layout (objects/ab/cdef…) are
// found, read and not stored twice; prune names them by their hash.
func TestLegacyFanOutObjectsStillRead(t *testing.T) {
	o := &objects{dir: filepath.Join(t.TempDir(), "objects")}
	data := []byte("old content")
	h := putLoose(t, o, data)
	// Move it where the fan-out layout kept it.
	if err := os.MkdirAll(filepath.Dir(o.legacyPath(h)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(o.path(h), o.legacyPath(h)); err != nil {
		t.Fatal(err)
	}
	if !o.has(h) {
		t.Fatal("legacy object not found")
	}
	if got, err := o.get(h); err != nil || string(got) != "old content" {
		t.Fatalf("get: %q, %v", got, err)
	}
	if n, err := o.put(h, data); err != nil || n != 0 {
		t.Fatalf("put of a stored legacy object: wrote %d, %v", n, err)
	}
	if _, err := os.Lstat(o.path(h)); err == nil {
		t.Fatal("legacy object stored again in the flat layout")
	}
	if _, err := os.Stat(o.packDir()); err == nil {
		t.Fatal("legacy object stored again in a pack")
	}
	for _, p := range []string{o.path(h), o.legacyPath(h)} {
		if got := o.hashAt(p); got != h {
			t.Fatalf("hashAt(%s) = %s, want %s", p, got, h)
		}
	}
}

// encodeTree writes what encoding/json writes (tree hashes do not change): for
// plain names, and for names json escapes.
func TestEncodeTreeIsJSON(t *testing.T) {
	names := []string{"a.txt", "..x", "sp ace", "q\"uote", "back\\slash", "<html>&", "tab\there", "nl\n", "ünï", "\xff\xfe", "\u2028", "~!@#$%^*()_+{}|:?`-=[];',./"}
	var entries []Entry
	for i, n := range names {
		e := Entry{Name: n, Kind: []string{KindFile, KindDir, KindSymlink, KindSkipped}[i%4], Mode: uint32(i * 0o111 % 0o777), Size: int64(i * i * 1000)}
		switch e.Kind {
		case KindSymlink:
			e.Target = names[(i+3)%len(names)]
		case KindFile, KindDir:
			e.Hash = hashOf([]byte(n))
		}
		entries = append(entries, e)
		slices.SortFunc(entries, cmpName)
		// Every prefix, and each entry alone.
		for _, es := range [][]Entry{entries, {e}, {}, nil} {
			want, err := json.Marshal(es)
			if err != nil {
				t.Fatal(err)
			}
			if got := encodeTree(slices.Clone(es)); string(got) != string(want) {
				t.Fatalf("encodeTree(%q):\n%s\nwant\n%s", n, got, want)
			}
		}
	}
}

// safeID accepts exactly what the regexp it replaced did.
func TestSafeIDMatchesRegexp(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	ids := []string{"", "a", "A", "0", ".", "_", "-", ".a", "a.", "a..b", "run_01-x.y", "a/b", "a\\b", "a b", "a\n", "a\x00", "ü", "aü",
		strings.Repeat("a", 127), strings.Repeat("a", 128), strings.Repeat("a", 129), "-" + strings.Repeat("a", 10)}
	for c := 0; c < 256; c++ {
		ids = append(ids, string(rune(c)), "a"+string([]byte{byte(c)}), string([]byte{byte(c)})+"a")
	}
	for _, id := range ids {
		if got, want := safeID(id), re.MatchString(id); got != want {
			t.Errorf("safeID(%q) = %v, the regexp says %v", id, got, want)
		}
	}
}
