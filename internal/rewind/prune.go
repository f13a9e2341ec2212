package rewind

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// pruneGrace: objects younger than this are kept even when unreferenced — another
// process may have stored them for a checkpoint whose record it has not written yet.
const pruneGrace = 10 * time.Minute

// DefaultBudget is the size the object store is pruned to.
const DefaultBudget = 2 << 30

// PruneResult says what Prune did.
type PruneResult struct {
	Objects     int   // objects deleted
	Freed       int64 // bytes freed
	Size        int64 // bytes left
	RunsDropped int   // oldest runs' checkpoints dropped to meet the budget
}

// Prune deletes objects no checkpoint refers to; then, while the store is larger
// than budget, it drops the checkpoints of the oldest runs (never those of
// keepSession) and deletes what they alone used.
func (s *Store) Prune(budget int64, keepSession string) (PruneResult, error) {
	var res PruneResult
	for {
		runs, err := s.AllRuns()
		if err != nil {
			return res, err
		}
		n, freed, size, err := s.sweep(runs)
		if err != nil {
			return res, err
		}
		res.Objects += n
		res.Freed += freed
		res.Size = size
		if budget <= 0 || size <= budget {
			return res, nil
		}
		dropped := false
		for _, r := range runs {
			if r.SessionID == keepSession {
				continue
			}
			if err := os.Remove(filepath.Join(s.sessionDir(r.SessionID), fileID(r.RunID)+".jsonl")); err == nil {
				res.RunsDropped++
				dropped = true
				break
			}
		}
		if !dropped {
			return res, nil
		}
	}
}

// sweep marks what runs reference and deletes the rest (past the grace period).
func (s *Store) sweep(runs []*Run) (deleted int, freed, size int64, err error) {
	tc := &treeCache{obj: s.obj, m: map[string][]Entry{}}
	live := map[string]bool{}
	var mark func(h string)
	mark = func(h string) {
		if live[h] {
			return
		}
		live[h] = true
		t, err := tc.get(h)
		if err != nil {
			return
		}
		for _, e := range t {
			switch e.Kind {
			case KindDir:
				mark(e.Hash)
			case KindFile:
				live[e.Hash] = true
			}
		}
		delete(tc.m, h) // each tree is visited once; keep memory flat
	}
	for _, r := range runs {
		for _, t := range r.Trees {
			mark(t.Tree)
		}
	}
	cutoff := time.Now().Add(-s.grace())
	err = filepath.WalkDir(s.obj.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		h := s.obj.hashAt(p)
		if live[h] || fi.ModTime().After(cutoff) {
			size += fi.Size()
			return nil
		}
		if os.Remove(p) == nil {
			deleted++
			freed += fi.Size()
		}
		return nil
	})
	if deleted > 0 {
		// Recorders of other processes drop their "already stored" memory.
		_ = os.WriteFile(filepath.Join(s.dir, "generation"), []byte(strconv.FormatInt(time.Now().UnixNano(), 10)), 0o600)
	}
	return deleted, freed, size, err
}

func (s *Store) grace() time.Duration {
	if s.pruneGrace != nil {
		return *s.pruneGrace
	}
	return pruneGrace
}

// generation changes whenever Prune deleted objects.
func (s *Store) generation() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "generation"))
	return string(b)
}
