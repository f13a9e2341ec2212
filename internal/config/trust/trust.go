// Package trust records which project folders the user trusts to widen what the
// agent may do. A project's settings that loosen the policy or run code (writable
// paths, allow rules, env, hooks, MCP servers, a looser policy, ...) apply only once
// the folder is trusted; trust is keyed by the folder's resolved path and a hash of
// exactly those settings, so editing them asks again.
package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lovia-dev/lovia/internal/errs"
)

// Entry is one project setting that needs trust.
type Entry struct {
	// File is the file the setting is in (absolute).
	File string `json:"file"`
	// Line is the setting's line in File (0 = unknown).
	Line int `json:"line,omitempty"`
	// Key names the setting: "workspace.writable[0]", "hooks[1]", "preset coder".
	Key string `json:"key"`
	// Value is the setting as decoded from YAML.
	Value any `json:"value,omitempty"`
	// Why says what it would do ("writable outside the workspace").
	Why string `json:"why,omitempty"`
}

// Where is "file:line" (the file relative to root when it is below it).
func (e Entry) Where(root string) string {
	f := e.File
	if root != "" {
		if rel, err := filepath.Rel(root, f); err == nil && !strings.HasPrefix(rel, "..") {
			f = rel
		}
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d", f, e.Line)
	}
	return f
}

// ValueString renders Value on one line.
func (e Entry) ValueString() string {
	switch v := e.Value.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	b, err := json.Marshal(e.Value)
	if err != nil {
		return fmt.Sprint(e.Value)
	}
	return string(b)
}

// String is "file:line  key: value  (why)".
func (e Entry) String(root string) string {
	s := e.Where(root) + "  " + e.Key
	if v := e.ValueString(); v != "" {
		s += ": " + v
	}
	if e.Why != "" {
		s += "  (" + e.Why + ")"
	}
	return s
}

// Sort orders entries by file, line and key.
func Sort(entries []Entry) {
	slices.SortStableFunc(entries, func(a, b Entry) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return strings.Compare(a.Key, b.Key)
	})
}

// Hash is the canonical hash of entries: the SHA-256 of their JSON (file relative to
// root, key and value; lines and explanations are left out so that moving a comment
// does not ask again).
func Hash(root string, entries []Entry) string {
	type canon struct {
		File  string `json:"file"`
		Key   string `json:"key"`
		Value any    `json:"value"`
	}
	list := make([]canon, 0, len(entries))
	for _, e := range entries {
		f := e.File
		if rel, err := filepath.Rel(root, f); err == nil && !strings.HasPrefix(rel, "..") {
			f = filepath.ToSlash(rel)
		}
		list = append(list, canon{File: f, Key: e.Key, Value: normalize(e.Value)})
	}
	slices.SortFunc(list, func(a, b canon) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	b, err := json.Marshal(list)
	if err != nil {
		// Values come from YAML and are JSON-able; fall back to their printed form.
		b = fmt.Appendf(nil, "%v", list)
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// normalize turns YAML-decoded values into JSON-encodable ones (map[any]any keys).
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalize(e)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = normalize(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	}
	return v
}

// Record is one trusted folder.
type Record struct {
	Path string    `json:"path"`
	Hash string    `json:"hash"`
	At   time.Time `json:"trusted_at"`
	// Entries are what was trusted (for `lovia trust --list`).
	Entries []Entry `json:"entries,omitempty"`
}

type file struct {
	Version int      `json:"version"`
	Folders []Record `json:"folders"`
}

// Store is the trust file in lovia's data directory.
type Store struct {
	// Path is the JSON file (DataDir/trust.json).
	Path string
}

// FileName is the store's name inside the data directory.
const FileName = "trust.json"

// NewStore returns the store of the data directory home.
func NewStore(home string) Store { return Store{Path: filepath.Join(home, FileName)} }

// maxStoreBytes bounds the trust file (it lists folders, not contents).
const maxStoreBytes = 8 << 20

func (s Store) load() (*file, error) {
	fi, err := os.Lstat(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return &file{Version: 1}, nil
	}
	if err != nil {
		return nil, errs.Wrap(errs.KindConfig, err, "trust file "+s.Path, "check the permissions of lovia's data directory")
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxStoreBytes {
		return nil, errs.Newf(errs.KindConfig, "remove it; `lovia trust` writes a new one", "trust file %s is not a regular file under %d MiB", s.Path, maxStoreBytes>>20)
	}
	data, err := os.ReadFile(s.Path)
	if err != nil {
		return nil, errs.Wrap(errs.KindConfig, err, "read trust file "+s.Path, "check the permissions of lovia's data directory")
	}
	var f file
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, errs.Wrap(errs.KindConfig, err, "trust file "+s.Path+" is not valid JSON", "remove it and trust your folders again with `lovia trust`")
	}
	return &f, nil
}

func (s Store) save(f *file) error {
	dir := filepath.Dir(s.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return errs.Wrap(errs.KindConfig, err, "create "+dir, "check LOVIA_HOME is writable")
	}
	f.Version = 1
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return errs.Wrap(errs.KindInternal, err, "encode trust file", "")
	}
	tmp, err := os.CreateTemp(dir, ".trust-*.json")
	if err != nil {
		return errs.Wrap(errs.KindConfig, err, "write trust file", "check LOVIA_HOME is writable")
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return errs.Wrap(errs.KindConfig, err, "write trust file", "")
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return errs.Wrap(errs.KindConfig, err, "write trust file", "")
	}
	if err := tmp.Close(); err != nil {
		return errs.Wrap(errs.KindConfig, err, "write trust file", "")
	}
	if err := os.Rename(tmp.Name(), s.Path); err != nil {
		return errs.Wrap(errs.KindConfig, err, "write trust file", "")
	}
	return nil
}

// Lookup returns the record of dir (a resolved absolute path), if any.
func (s Store) Lookup(dir string) (*Record, error) {
	f, err := s.load()
	if err != nil {
		return nil, err
	}
	for i := range f.Folders {
		if f.Folders[i].Path == dir {
			return &f.Folders[i], nil
		}
	}
	return nil, nil
}

// Trusted reports whether dir is trusted with exactly the settings hashed by hash.
func (s Store) Trusted(dir, hash string) (bool, error) {
	r, err := s.Lookup(dir)
	if err != nil || r == nil {
		return false, err
	}
	return r.Hash == hash, nil
}

// Trust records dir as trusted with the settings entries (hash their Hash).
func (s Store) Trust(dir, hash string, entries []Entry, now time.Time) error {
	f, err := s.load()
	if err != nil {
		return err
	}
	f.Folders = slices.DeleteFunc(f.Folders, func(r Record) bool { return r.Path == dir })
	f.Folders = append(f.Folders, Record{Path: dir, Hash: hash, At: now.UTC(), Entries: entries})
	slices.SortFunc(f.Folders, func(a, b Record) int { return strings.Compare(a.Path, b.Path) })
	return s.save(f)
}

// Untrust forgets dir; it reports whether dir was recorded.
func (s Store) Untrust(dir string) (bool, error) {
	f, err := s.load()
	if err != nil {
		return false, err
	}
	n := len(f.Folders)
	f.Folders = slices.DeleteFunc(f.Folders, func(r Record) bool { return r.Path == dir })
	if len(f.Folders) == n {
		return false, nil
	}
	return true, s.save(f)
}

// List returns every trusted folder, sorted by path.
func (s Store) List() ([]Record, error) {
	f, err := s.load()
	if err != nil {
		return nil, err
	}
	return f.Folders, nil
}

// Policy ranks: a larger rank grants more.
var policyRank = map[string]int{"readonly": 0, "coding": 1, "trusted": 2}

// Looser reports whether policy a grants more than policy b ("" is coding).
func Looser(a, b string) bool {
	return rank(a) > rank(b)
}

func rank(p string) int {
	if p == "" {
		p = "coding"
	}
	r, ok := policyRank[p]
	if !ok {
		return 0 // unknown names are rejected elsewhere; never treat them as loose
	}
	return r
}

// Stricter returns the stricter of two policies ("" is ignored; both "" gives "").
func Stricter(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	case rank(a) <= rank(b):
		return a
	}
	return b
}

// Notice is the one message that names the ignored entries and the fix ("" when
// there are none).
func Notice(root string, entries []Entry) string {
	if len(entries) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "lovia: this folder (%s) is not trusted: %d project setting(s) that widen what the agent may do or run code are ignored:\n", root, len(entries))
	for _, e := range entries {
		b.WriteString("  ")
		b.WriteString(e.String(root))
		b.WriteString("\n")
	}
	b.WriteString("  hint: if you trust this repository, run `lovia trust` (or pass --trust for this run only)\n")
	return b.String()
}
