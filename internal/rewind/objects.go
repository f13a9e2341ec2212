// Package rewind keeps checkpoints of a workspace root so that what a run changed —
// through the file tools or through shell commands — can be undone. A checkpoint is
// the hash of a tree object in a content-addressed store under the data directory
// (never in the user's .git): blobs hold file contents, trees hold one directory each
// (name, kind, mode, size, hash), so an unchanged directory costs nothing in a new
// checkpoint. A per-root stat cache means a snapshot reads only the files whose stat
// changed since the last one; the cost of a snapshot is about one tree walk.
package rewind

import (
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Kinds of tree entries.
const (
	KindFile    = "f"
	KindSymlink = "l"
	KindDir     = "d"
	// KindSkipped is a regular file over a size cap: its content is not kept, so it
	// can be neither restored nor deleted by a rewind.
	KindSkipped = "s"
)

// Entry is one name in a tree.
type Entry struct {
	Name string `json:"n"`
	Kind string `json:"k"`
	// Mode holds the permission bits (0o777) of files and directories.
	Mode uint32 `json:"m,omitempty"`
	Size int64  `json:"s,omitempty"`
	// Hash is the blob of a file, the tree of a directory.
	Hash string `json:"h,omitempty"`
	// Target is a symlink's content (never followed).
	Target string `json:"t,omitempty"`
}

// same reports whether two entries describe the same content.
func (e Entry) same(o Entry) bool {
	return e.Kind == o.Kind && e.Hash == o.Hash && e.Target == o.Target && e.Size == o.Size &&
		(e.Kind == KindDir || e.Mode == o.Mode)
}

// objects is the content-addressed store: objects named by the SHA-256 of their
// raw content, kept deflated. New objects are appended to packs (pack.go); stores
// written before packs hold one file per object, objects/<hash>, or under
// objects/ab/cdef… in the older fan-out layout: both are still read.
type objects struct {
	dir string

	mu  sync.Mutex
	zw  *flate.Writer // reused: a new deflate writer allocates about a megabyte
	buf bytes.Buffer
	// wbuf is reused for the batches written to the pack.
	wbuf []byte
	// w is the pack this process appends to (named wName, wEnd bytes long).
	w     *os.File
	wName string
	wEnd  int64
	// idx locates packed objects by SHA-256 (nil: not read yet), in the packs
	// packNames names (packIDs numbers them).
	idx       map[[32]byte]packRef
	packNames []string
	packIDs   map[string]uint32
	// verified are the packs seen to be there since the snapshot began.
	verified map[string]bool
	// noLoose: the directory of object files is not there (looseChecked: looked
	// since the snapshot began), so has() need not look for h in it.
	looseChecked, noLoose bool
}

// recheck makes has() look again whether the packs and the object files it relies
// on are there (at the start of each snapshot).
func (o *objects) recheck() {
	o.mu.Lock()
	clear(o.verified)
	o.looseChecked = false
	o.mu.Unlock()
}

func hashOf(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// path is where a store of one file per object keeps h.
func (o *objects) path(h string) string { return filepath.Join(o.dir, h) }

// legacyPath is where stores of the fan-out layout keep h.
func (o *objects) legacyPath(h string) string { return filepath.Join(o.dir, h[:2], h[2:]) }

// hashAt is the object id of the file at p under dir ("" for none).
func (o *objects) hashAt(p string) string {
	rel, err := filepath.Rel(o.dir, p)
	if err != nil {
		return ""
	}
	return strings.ReplaceAll(filepath.ToSlash(rel), "/", "")
}

func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil
}

// has reports whether h is stored.
func (o *objects) has(h string) bool {
	o.mu.Lock()
	ok := o.packed(h)
	if !ok && !o.looseChecked {
		_, err := os.Lstat(o.dir)
		o.looseChecked, o.noLoose = true, errors.Is(err, fs.ErrNotExist)
	}
	noLoose := o.noLoose
	o.mu.Unlock()
	if ok {
		return true
	}
	if noLoose {
		return false // a store made since packs: no object file to look for
	}
	if _, err := os.Lstat(o.path(h)); err == nil {
		return true
	}
	_, err := os.Lstat(o.legacyPath(h))
	return err == nil
}

// put stores data under hash h (computed by the caller) unless it is already there.
func (o *objects) put(h string, data []byte) (written int64, err error) {
	if o.has(h) {
		return 0, nil
	}
	var b batch
	o.add(&b, h, data)
	return o.flush(&b)
}

// get returns the content of h, checked against its hash.
func (o *objects) get(h string) ([]byte, error) {
	if !validHash(h) {
		return nil, fmt.Errorf("bad object id %q", h)
	}
	o.mu.Lock()
	l, ok := o.locate(h)
	o.mu.Unlock()
	if !ok {
		data, err := o.getLoose(h)
		if !errors.Is(err, fs.ErrNotExist) {
			return data, err
		}
	}
	if ok {
		data, err := o.readPacked(l, h)
		if !errors.Is(err, fs.ErrNotExist) {
			return data, err
		}
	}
	// Packed since the index was read, or moved by a Prune's rewrite of its pack.
	o.mu.Lock()
	o.forgetPacks()
	l, ok = o.locate(h)
	o.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("read object %s: %w", h[:12], fs.ErrNotExist)
	}
	return o.readPacked(l, h)
}

// getLoose reads h from a store of one file per object.
func (o *objects) getLoose(h string) ([]byte, error) {
	f, err := os.Open(o.path(h))
	if errors.Is(err, fs.ErrNotExist) {
		f, err = os.Open(o.legacyPath(h))
	}
	if err != nil {
		return nil, fmt.Errorf("read object %s: %w", h[:12], err)
	}
	defer f.Close()
	data, err := io.ReadAll(flate.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("read object %s: %w", h[:12], err)
	}
	if hashOf(data) != h {
		return nil, fmt.Errorf("object %s is damaged", h[:12])
	}
	return data, nil
}

// encodeTree is the canonical form of a directory: entries sorted by name, as
// encoding/json writes them. Entries whose strings json would escape are left to
// it; the rest, nearly all, are written here, at a tenth of the cost.
func encodeTree(entries []Entry) []byte {
	sortEntries(entries)
	if entries == nil || !slices.ContainsFunc(entries, needsEscape) {
		return appendTree(nil, entries)
	}
	data, _ := json.Marshal(entries)
	return data
}

// appendTree appends what json.Marshal makes of entries, whose strings need no
// escaping.
func appendTree(b []byte, entries []Entry) []byte {
	if entries == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"n":"`...)
		b = append(b, e.Name...)
		b = append(b, `","k":"`...)
		b = append(b, e.Kind...)
		b = append(b, '"')
		if e.Mode != 0 {
			b = append(b, `,"m":`...)
			b = strconv.AppendUint(b, uint64(e.Mode), 10)
		}
		if e.Size != 0 {
			b = append(b, `,"s":`...)
			b = strconv.AppendInt(b, e.Size, 10)
		}
		if e.Hash != "" {
			b = append(b, `,"h":"`...)
			b = append(b, e.Hash...)
			b = append(b, '"')
		}
		if e.Target != "" {
			b = append(b, `,"t":"`...)
			b = append(b, e.Target...)
			b = append(b, '"')
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// needsEscape reports whether json.Marshal would escape a byte of e's strings:
// anything but printable ASCII, and the quote, backslash and <, >, & (HTML-safe).
func needsEscape(e Entry) bool {
	for _, s := range [...]string{e.Name, e.Kind, e.Hash, e.Target} {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				return true
			}
		}
	}
	return false
}

func sortEntries(entries []Entry) {
	if !slices.IsSortedFunc(entries, cmpName) {
		slices.SortFunc(entries, cmpName)
	}
}

func cmpName(a, b Entry) int { return strings.Compare(a.Name, b.Name) }

func (o *objects) tree(h string) ([]Entry, error) {
	data, err := o.get(h)
	if err != nil {
		return nil, err
	}
	var out []Entry
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("tree %s: %w", h[:12], err)
	}
	for _, e := range out {
		if !validName(e.Name) {
			return nil, fmt.Errorf("tree %s: bad name %q", h[:12], e.Name)
		}
	}
	return out, nil
}

// validName refuses names that could leave a directory when joined.
func validName(n string) bool {
	return n != "" && n != "." && n != ".." && !containsSep(n)
}

func containsSep(n string) bool {
	for i := 0; i < len(n); i++ {
		if n[i] == '/' || n[i] == 0 || (filepath.Separator == '\\' && n[i] == '\\') {
			return true
		}
	}
	return false
}
