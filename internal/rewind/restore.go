package rewind

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
)

// Change is one path a rewind restores.
type Change struct {
	Path string `json:"path"`
	// Action is "restore" (content or mode differs), "recreate" (deleted since),
	// "delete" (created since) or "skip" (cannot be restored; Note says why).
	Action string `json:"action"`
	Note   string `json:"note,omitempty"`
	want   *Entry
	have   *Entry
}

// Plan is what rewinding a run would do.
type Plan struct {
	Root string `json:"root"`
	// Runs are the runs undone: the one named and the later ones of its session.
	Runs    []*Run   `json:"-"`
	RunIDs  []string `json:"runs"`
	Target  string   `json:"target"`
	Current string   `json:"current"`
	Changes []Change `json:"changes"`
	// Conflicts are files lovia would restore that changed outside lovia since the
	// run (by the user, an editor, another program).
	Conflicts []string `json:"conflicts,omitempty"`
}

// ErrConflict is returned (wrapped) by Apply when files changed outside lovia.
var ErrConflict = errors.New("files changed outside lovia since")

// Plan computes what rewinding runID (and the later runs of its session in the same
// root) would change in rec's root.
func (s *Store) Plan(ctx context.Context, rec *Recorder, runID string) (*Plan, error) {
	run, err := s.FindRun(runID)
	if err != nil {
		return nil, err
	}
	if run.Rewound {
		return nil, fmt.Errorf("the file changes of run %s were already rewound", runID)
	}
	if run.Root != rec.Root() {
		return nil, fmt.Errorf("run %s worked in %s, not in %s: run the rewind there (-C)", runID, run.Root, rec.Root())
	}
	all, err := s.SessionRuns(run.SessionID)
	if err != nil {
		return nil, err
	}
	var runs []*Run
	found := false
	for _, r := range all {
		if r.RunID == run.RunID {
			found = true
		}
		if found && !r.Rewound && r.Root == run.Root {
			runs = append(runs, r)
		}
	}
	if !found {
		runs = []*Run{run}
	}
	cur, err := rec.Current(ctx)
	if err != nil {
		return nil, err
	}
	tc := &treeCache{obj: s.obj, m: map[string][]Entry{}}
	lovia, outside := map[string]bool{}, map[string]bool{}
	for i, r := range runs {
		next := cur
		if i+1 < len(runs) {
			next = runs[i+1].Before()
		}
		seq := make([]string, 0, len(r.Trees)+1)
		for _, t := range r.Trees {
			seq = append(seq, t.Tree)
		}
		if !r.Ended {
			// No end state (killed, crashed): whatever happened up to the next run
			// counts as the run's.
			seq = append(seq, next)
		}
		for j := 0; j+1 < len(seq); j++ {
			if err := tc.diff(seq[j], seq[j+1], "", lovia); err != nil {
				return nil, err
			}
		}
		if r.Ended {
			if err := tc.diff(r.After(), next, "", outside); err != nil {
				return nil, err
			}
		}
	}
	p := &Plan{Root: run.Root, Runs: runs, Target: run.Before(), Current: cur}
	for _, r := range runs {
		p.RunIDs = append(p.RunIDs, r.RunID)
	}
	paths := make([]string, 0, len(lovia))
	for k := range lovia {
		paths = append(paths, k)
	}
	sort.Strings(paths)
	for _, k := range paths {
		want, err := tc.lookup(p.Target, k)
		if err != nil {
			return nil, err
		}
		have, err := tc.lookup(cur, k)
		if err != nil {
			return nil, err
		}
		if want == nil && have == nil || want != nil && have != nil && want.same(*have) {
			continue
		}
		if outside[k] {
			p.Conflicts = append(p.Conflicts, k)
		}
		c := Change{Path: k, want: want, have: have}
		switch {
		case want != nil && want.Kind == KindSkipped:
			c.Action, c.Note = "skip", "its content was over the size cap when checkpointed"
		case want == nil:
			c.Action = "delete"
		case have == nil:
			c.Action = "recreate"
		default:
			c.Action = "restore"
		}
		p.Changes = append(p.Changes, c)
	}
	return p, nil
}

// ChangedFiles lists the paths a run changed (in order of the path).
func (s *Store) ChangedFiles(run *Run, next string) ([]string, error) {
	tc := &treeCache{obj: s.obj, m: map[string][]Entry{}}
	set := map[string]bool{}
	seq := []string{}
	for _, t := range run.Trees {
		seq = append(seq, t.Tree)
	}
	if !run.Ended && next != "" {
		seq = append(seq, next)
	}
	for j := 0; j+1 < len(seq); j++ {
		if err := tc.diff(seq[j], seq[j+1], "", set); err != nil {
			return nil, err
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, nil
}

// treeCache loads tree objects once.
type treeCache struct {
	obj *objects
	m   map[string][]Entry
}

func (tc *treeCache) get(h string) ([]Entry, error) {
	if h == "" {
		return nil, nil
	}
	if t, ok := tc.m[h]; ok {
		return t, nil
	}
	t, err := tc.obj.tree(h)
	if err != nil {
		return nil, err
	}
	tc.m[h] = t
	return t, nil
}

// diff adds to out the leaf paths (files, links, empty directories) that differ
// between trees a and b ("" is an empty tree).
func (tc *treeCache) diff(a, b, prefix string, out map[string]bool) error {
	if a == b {
		return nil
	}
	ta, err := tc.get(a)
	if err != nil {
		return err
	}
	tb, err := tc.get(b)
	if err != nil {
		return err
	}
	byName := func(t []Entry) map[string]Entry {
		m := make(map[string]Entry, len(t))
		for _, e := range t {
			m[e.Name] = e
		}
		return m
	}
	ma, mb := byName(ta), byName(tb)
	names := map[string]bool{}
	for n := range ma {
		names[n] = true
	}
	for n := range mb {
		names[n] = true
	}
	for n := range names {
		ea, oka := ma[n]
		eb, okb := mb[n]
		p := n
		if prefix != "" {
			p = prefix + "/" + n
		}
		if oka && okb && ea.same(eb) {
			continue
		}
		da, db := oka && ea.Kind == KindDir, okb && eb.Kind == KindDir
		switch {
		case da && db:
			if err := tc.diff(ea.Hash, eb.Hash, p, out); err != nil {
				return err
			}
		case da || db:
			// A directory on one side only: all its leaves differ, and so does the
			// path itself when the other side has something there or it is empty.
			h := ea.Hash
			if db {
				h = eb.Hash
			}
			n0 := len(out)
			if err := tc.diff("", h, p, out); err != nil {
				return err
			}
			if len(out) == n0 || (oka && okb) {
				out[p] = true
			}
		default:
			out[p] = true
		}
	}
	return nil
}

// lookup returns the entry at p in tree h (nil when absent).
func (tc *treeCache) lookup(h, p string) (*Entry, error) {
	parts := strings.Split(p, "/")
	for i, name := range parts {
		t, err := tc.get(h)
		if err != nil {
			return nil, err
		}
		var found *Entry
		for j := range t {
			if t[j].Name == name {
				found = &t[j]
				break
			}
		}
		if found == nil {
			return nil, nil
		}
		if i == len(parts)-1 {
			return found, nil
		}
		if found.Kind != KindDir {
			return nil, nil
		}
		h = found.Hash
	}
	return nil, nil
}

// Applied says what Apply did.
type Applied struct {
	Restored int
	Deleted  int
	Skipped  []string // path: why
}

// Apply carries out a plan in its root. It refuses (ErrConflict) when files changed
// outside lovia, unless force. Every write stays inside the root (os.Root) and never
// goes through a symbolic link: a parent that is a link is not followed, a link at
// the path itself is replaced, not written through.
func (s *Store) Apply(ctx context.Context, p *Plan, force bool) (*Applied, error) {
	if len(p.Conflicts) > 0 && !force {
		return nil, fmt.Errorf("%w the run: %s (pass --force to overwrite them)", ErrConflict, strings.Join(p.Conflicts, ", "))
	}
	root, err := os.OpenRoot(p.Root)
	if err != nil {
		return nil, fmt.Errorf("rewind: %w", err)
	}
	defer root.Close()
	tc := &treeCache{obj: s.obj, m: map[string][]Entry{}}
	out := &Applied{}
	skip := func(c Change, why error) {
		out.Skipped = append(out.Skipped, c.Path+": "+why.Error())
	}
	// Phase 1, deepest first: remove what must go (created since, or of another kind
	// than the checkpoint's), then directories left empty that the checkpoint lacks.
	order := slices.Clone(p.Changes)
	sort.SliceStable(order, func(i, j int) bool { return depth(order[i].Path) > depth(order[j].Path) })
	dirs := map[string]bool{}
	for _, c := range order {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		if c.Action == "skip" || c.have == nil {
			continue
		}
		if c.want != nil && c.want.Kind == c.have.Kind && c.have.Kind != KindSymlink {
			continue // replaced in place
		}
		if err := realParents(root, c.Path, false); err != nil {
			skip(c, err)
			continue
		}
		if err := root.Remove(c.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			skip(c, err)
			continue
		}
		if c.want == nil {
			out.Deleted++
		}
		for d := path.Dir(c.Path); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	var dl []string
	for d := range dirs {
		dl = append(dl, d)
	}
	sort.Slice(dl, func(i, j int) bool { return depth(dl[i]) > depth(dl[j]) })
	for _, d := range dl {
		if e, err := tc.lookup(p.Target, d); err == nil && e != nil && e.Kind == KindDir {
			continue
		}
		if realParents(root, d, false) == nil {
			if fi, err := root.Lstat(d); err == nil && fi.IsDir() {
				_ = root.Remove(d) // only when empty
			}
		}
	}
	// Phase 2, shallowest first: write what the checkpoint had.
	sort.SliceStable(order, func(i, j int) bool { return order[i].Path < order[j].Path })
	for _, c := range order {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		if c.Action == "skip" || c.want == nil {
			continue
		}
		if err := s.put(root, tc, p.Target, c); err != nil {
			skip(c, err)
			continue
		}
		out.Restored++
	}
	for _, c := range p.Changes {
		if c.Action == "skip" {
			out.Skipped = append(out.Skipped, c.Path+": "+c.Note)
		}
	}
	for _, r := range p.Runs {
		if err := s.markRewound(r, p.RunIDs[0]); err != nil {
			return out, err
		}
	}
	return out, nil
}

func depth(p string) int { return strings.Count(p, "/") }

// realParents checks that every parent of rel is a directory, not a link (creating
// missing ones when mkdir, with the modes of target's directories).
func realParents(root *os.Root, rel string, mkdir bool) error {
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		d := strings.Join(parts[:i], "/")
		fi, err := root.Lstat(d)
		switch {
		case errors.Is(err, fs.ErrNotExist) && mkdir:
			if err := root.Mkdir(d, 0o755); err != nil {
				return err
			}
		case err != nil:
			return err
		case !fi.IsDir():
			return fmt.Errorf("%s is not a directory (links are not followed)", d)
		}
	}
	return nil
}

// put writes one checkpointed entry at its path.
func (s *Store) put(root *os.Root, tc *treeCache, target string, c Change) error {
	if err := realParents(root, c.Path, true); err != nil {
		return err
	}
	w := c.want
	switch w.Kind {
	case KindDir:
		fi, err := root.Lstat(c.Path)
		if err == nil && fi.IsDir() {
			return nil
		}
		return root.Mkdir(c.Path, fs.FileMode(w.Mode&0o777)|0o700)
	case KindSymlink:
		if fi, err := root.Lstat(c.Path); err == nil {
			if fi.IsDir() {
				return fmt.Errorf("a directory is there now")
			}
			if err := root.Remove(c.Path); err != nil {
				return err
			}
		}
		return root.Symlink(w.Target, c.Path)
	case KindFile:
		data, err := s.obj.get(w.Hash)
		if err != nil {
			return err
		}
		if fi, err := root.Lstat(c.Path); err == nil && fi.IsDir() {
			return fmt.Errorf("a directory is there now")
		}
		// A new file beside the target, renamed over it: a link at the path is
		// replaced, never written through.
		tmp := path.Join(path.Dir(c.Path), ".lovia-rewind-"+rand.Text()[:10])
		perm := fs.FileMode(w.Mode & 0o777)
		f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollowFlags, 0o600)
		if err != nil {
			return err
		}
		_, werr := f.Write(data)
		if werr == nil {
			werr = f.Chmod(perm)
		}
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr == nil {
			werr = root.Rename(tmp, c.Path)
		}
		if werr != nil {
			_ = root.Remove(tmp)
			return werr
		}
		return nil
	}
	return fmt.Errorf("cannot restore an entry of kind %q", w.Kind)
}
