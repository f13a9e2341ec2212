package rewind

import (
	"encoding/gob"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lovia-dev/lovia/internal/workspace"
)

// Limits bound what one snapshot keeps.
type Limits struct {
	// MaxFileBytes: larger regular files are recorded as skipped (default 10 MiB).
	MaxFileBytes int64
	// MaxSnapshotBytes: new content read by one snapshot beyond this is skipped
	// (default 256 MiB).
	MaxSnapshotBytes int64
	// MaxFiles: entries beyond this many are not walked (default 200,000).
	MaxFiles int
}

func (l Limits) withDefaults() Limits {
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = 10 << 20
	}
	if l.MaxSnapshotBytes <= 0 {
		l.MaxSnapshotBytes = 256 << 20
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = 200_000
	}
	return l
}

// alwaysSkipped are directory names never walked, whatever .gitignore says: git's
// own state (the user's and nested repositories') is never read or restored, and
// dependency trees are rebuilt, not rewound.
var alwaysSkipped = map[string]bool{".git": true, "node_modules": true, ".hg": true, ".svn": true, ".jj": true}

// statKey is what the stat cache compares: a file whose key is unchanged is not read.
type statKey struct {
	MtimeNs int64
	CtimeNs int64
	Ino     uint64
	Size    int64
	Mode    uint32
}

type cached struct {
	Key  statKey
	Hash string
}

// statCache maps root-relative paths to the hash of the content they had.
type statCache map[string]cached

// A file modified within its filesystem's timestamp granularity of now may change
// again without its stat changing, so its hash is not cached (git's "racy" rule).
// racyWindow covers filesystems with whole-second or 2-second stamps (HFS+, FAT);
// a stamp with a sub-second part comes from a filesystem whose granularity is at
// most a scheduler tick (10 ms; exFAT's is 10 ms too), for which fineRacyWindow
// leaves a wide margin. Without it, every file a run wrote was read and hashed
// again by each checkpoint of the next two seconds.
const (
	racyWindow     = 2 * time.Second
	fineRacyWindow = 100 * time.Millisecond
)

// racy reports whether a file stamped mtime may still change unseen at now.
func racy(now, mtime time.Time) bool {
	w := racyWindow
	if mtime.Nanosecond() != 0 {
		w = fineRacyWindow
	}
	return now.Sub(mtime) <= w
}

// snapshotter walks one root.
type snapshotter struct {
	root   string
	limits Limits
	// excludeRel: root-relative paths never walked (lovia's own data).
	excludeRel map[string]bool
	obj        *objects
	known      map[string]bool // objects known to be stored
	cache      statCache
	// trees remembers each directory's last entries and tree hash, so an unchanged
	// directory is neither encoded nor hashed again.
	trees map[string]dirTree
	now   func() time.Time
	// batch holds the new objects of the snapshot under way until they are written.
	batch batch
}

type dirTree struct {
	entries []Entry
	hash    string
}

// result of one snapshot.
type snapResult struct {
	Tree    string
	Files   int
	Read    int64 // bytes of content read (stat changed)
	Written int64 // bytes added to the store
	Notes   []string
}

type walkState struct {
	s      *snapshotter
	r      *os.Root
	res    *snapResult
	next   statCache
	files  int
	capped bool
	// pending are the objects of s.batch, known once the batch is written.
	pending map[string]bool
	// err is a failed write of the batch, which fails the snapshot.
	err     error
	scratch listScratch
}

// listScratch is listDir's scratch space, kept through a walk.
type listScratch struct {
	buf   []byte
	names []string
}

// listed is an entry of a directory listing, with its lstat.
type listed struct {
	name string
	mode fs.FileMode
	size int64
	key  statKey
}

// snapshot walks the root and returns the tree of its current state.
func (s *snapshotter) snapshot() (*snapResult, error) {
	r, err := os.OpenRoot(s.root)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", s.root, err)
	}
	defer r.Close()
	res := &snapResult{}
	ws := &walkState{s: s, r: r, res: res, next: make(statCache, len(s.cache))}
	s.batch.reset()
	s.obj.recheck()
	h, err := ws.dir("", workspace.RootIgnores(s.root))
	if err == nil {
		// The objects are written before the tree is returned: a checkpoint record
		// never names an object that is not stored.
		err = ws.flush()
	}
	if err != nil {
		s.batch.reset()
		return nil, err
	}
	if ws.capped {
		res.Notes = append(res.Notes, fmt.Sprintf("more than %d files: the rest were not checkpointed", s.limits.MaxFiles))
	}
	s.cache = ws.next
	res.Tree = h
	res.Files = ws.files
	return res, nil
}

// excludedRel is the set of the root-relative (slash-separated) paths of exclude
// that lie under the root: a walk compares names, not absolute paths it would
// have to join and clean for every entry.
func excludedRel(root string, exclude []string) map[string]bool {
	var m map[string]bool
	for _, x := range exclude {
		rel, err := filepath.Rel(root, x)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		if m == nil {
			m = map[string]bool{}
		}
		m[filepath.ToSlash(rel)] = true
	}
	return m
}

// dir builds the tree of rel ("" is the root) and returns its hash. ign is the
// chain of the parent directory: the directory's own .gitignore is added to it
// when the listing has one.
func (ws *walkState) dir(rel string, ign workspace.Ignores) (string, error) {
	name := rel
	if name == "" {
		name = "."
	}
	f, err := ws.r.OpenFile(name, os.O_RDONLY|dirFlags, 0)
	if err != nil {
		return "", fmt.Errorf("snapshot: open %s: %w", name, err)
	}
	ls, err := listDir(f, &ws.scratch)
	f.Close()
	if err != nil {
		return "", fmt.Errorf("snapshot: list %s: %w", name, err)
	}
	if rel != "" && slices.ContainsFunc(ls, func(l listed) bool { return l.name == ".gitignore" }) {
		ign = ign.With(filepath.Join(ws.s.root, filepath.FromSlash(rel)), rel)
	}
	entries := make([]Entry, 0, len(ls))
	for i := range ls {
		l := &ls[i]
		n := l.name
		if !validName(n) {
			continue
		}
		crel := n
		if rel != "" {
			crel = rel + "/" + n
		}
		typ := l.mode.Type()
		isDir := typ&fs.ModeDir != 0
		if ws.files >= ws.s.limits.MaxFiles {
			ws.capped = true
			break
		}
		if isDir && alwaysSkipped[n] {
			continue
		}
		if ign.Ignored(crel, isDir) {
			continue
		}
		switch {
		case isDir:
			if ws.s.excludeRel[crel] {
				continue
			}
			h, err := ws.dir(crel, ign)
			if err != nil {
				return "", err
			}
			entries = append(entries, Entry{Name: n, Kind: KindDir, Mode: uint32(l.mode.Perm()), Hash: h})
		case typ&fs.ModeSymlink != 0:
			t, err := ws.r.Readlink(crel)
			if err != nil {
				continue
			}
			ws.files++
			entries = append(entries, Entry{Name: n, Kind: KindSymlink, Target: t})
		case typ.IsRegular():
			if ws.s.excludeRel[crel] {
				continue
			}
			e, ok := ws.file(crel, l)
			if ws.err != nil {
				return "", ws.err
			}
			if ok {
				ws.files++
				entries = append(entries, e)
			}
		}
		// FIFOs, sockets and devices are not content: skipped.
	}
	// Sorted before the comparison: a listing comes in the directory's own order
	// (on ext4 a hash order), the remembered entries in the tree's.
	sortEntries(entries)
	if t, ok := ws.s.trees[rel]; ok && slices.Equal(t.entries, entries) && ws.s.known[t.hash] {
		return t.hash, nil
	}
	data := encodeTree(entries)
	h := hashOf(data)
	if err := ws.store(h, data); err != nil {
		return "", err
	}
	if ws.s.trees == nil {
		ws.s.trees = map[string]dirTree{}
	}
	ws.s.trees[rel] = dirTree{entries: entries, hash: h}
	return h, nil
}

// stored reports whether object h is in the store (checked once per process).
func (s *snapshotter) stored(h string) bool {
	if s.known[h] {
		return true
	}
	if s.obj.has(h) {
		s.known[h] = true
		return true
	}
	return false
}

// store adds h to the snapshot's batch unless it is stored (or added) already.
func (ws *walkState) store(h string, data []byte) error {
	if ws.s.known[h] || ws.pending[h] {
		return nil
	}
	if ws.s.obj.has(h) {
		ws.s.known[h] = true
		return nil
	}
	ws.s.obj.add(&ws.s.batch, h, data)
	if ws.pending == nil {
		ws.pending = map[string]bool{}
	}
	ws.pending[h] = true
	if len(ws.s.batch.data) >= maxBatchData {
		return ws.flush()
	}
	return nil
}

// flush writes the batch; its objects are then known to be stored.
func (ws *walkState) flush() error {
	n, err := ws.s.obj.flush(&ws.s.batch)
	if err != nil {
		ws.err = err
		return err
	}
	ws.res.Written += n
	for h := range ws.pending {
		ws.s.known[h] = true
	}
	clear(ws.pending)
	return nil
}

// file records one regular file, reading it only when its stat changed.
func (ws *walkState) file(rel string, l *listed) (Entry, bool) {
	e := Entry{Name: l.name, Kind: KindFile, Mode: uint32(l.mode.Perm()), Size: l.size}
	key := l.key
	if l.size > ws.s.limits.MaxFileBytes {
		e.Kind = KindSkipped
		ws.res.Notes = append(ws.res.Notes, fmt.Sprintf("%s not checkpointed: %s over the per-file cap of %s", rel, human(l.size), human(ws.s.limits.MaxFileBytes)))
		return e, true
	}
	if c, ok := ws.s.cache[rel]; ok && c.Key == key && ws.s.stored(c.Hash) {
		e.Hash = c.Hash
		ws.next[rel] = c
		return e, true
	}
	if ws.res.Read+l.size > ws.s.limits.MaxSnapshotBytes {
		e.Kind = KindSkipped
		ws.res.Notes = append(ws.res.Notes, fmt.Sprintf("%s not checkpointed: the snapshot's cap of %s was reached", rel, human(ws.s.limits.MaxSnapshotBytes)))
		return e, true
	}
	data, fi2, err := readNoFollow(ws.r, rel, ws.s.limits.MaxFileBytes)
	if err != nil {
		return Entry{}, false // vanished or replaced by something that is not a file
	}
	ws.res.Read += int64(len(data))
	h := hashOf(data)
	if err := ws.store(h, data); err != nil {
		return Entry{}, false // ws.err fails the snapshot
	}
	e.Hash, e.Size, e.Mode = h, int64(len(data)), uint32(fi2.Mode().Perm())
	key2 := keyOf(fi2)
	if !racy(ws.s.now(), fi2.ModTime()) && key2.Size == int64(len(data)) {
		ws.next[rel] = cached{Key: key2, Hash: h}
	}
	return e, true
}

// readNoFollow reads a regular file without following a link in its last component
// and without blocking on a FIFO swapped in after the listing.
func readNoFollow(r *os.Root, rel string, limit int64) ([]byte, os.FileInfo, error) {
	f, err := r.OpenFile(rel, os.O_RDONLY|noFollowFlags, 0)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, errNotRegular
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, nil, err
	}
	if int64(len(data)) > limit {
		return nil, nil, errNotRegular
	}
	return data, fi, nil
}

var errNotRegular = fmt.Errorf("not a regular file")

func human(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func loadCache(path string) statCache {
	f, err := os.Open(path)
	if err != nil {
		return statCache{}
	}
	defer f.Close()
	var c statCache
	if gob.NewDecoder(f).Decode(&c) != nil || c == nil {
		return statCache{}
	}
	return c
}

func saveCache(path string, c statCache) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if err := gob.NewEncoder(f).Encode(c); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
