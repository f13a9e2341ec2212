package rewind

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
	for budget > 0 {
		// What would be left: a pack is rewritten once, at the end, not once per
		// dropped run.
		runs, err := s.AllRuns()
		if err != nil {
			return res, err
		}
		_, _, size, err := s.sweep(runs, false)
		if err != nil {
			return res, err
		}
		if size <= budget {
			break
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
			break
		}
	}
	runs, err := s.AllRuns()
	if err != nil {
		return res, err
	}
	res.Objects, res.Freed, res.Size, err = s.sweep(runs, true)
	return res, err
}

// sweep marks what runs reference and deletes the rest (past the grace period),
// or with apply false only counts what it would delete and leave.
func (s *Store) sweep(runs []*Run, apply bool) (deleted int, freed, size int64, err error) {
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
		if !apply || os.Remove(p) == nil {
			deleted++
			freed += fi.Size()
		}
		return nil
	})
	if err != nil {
		return deleted, freed, size, err
	}
	pd, pf, ps, err := s.obj.sweepPacks(live, cutoff, apply)
	deleted, freed, size = deleted+pd, freed+pf, size+ps
	if deleted > 0 && apply {
		// Recorders of other processes drop their "already stored" memory.
		_ = os.WriteFile(filepath.Join(s.dir, "generation"), []byte(strconv.FormatInt(time.Now().UnixNano(), 10)), 0o600)
	}
	return deleted, freed, size, err
}

// sweepPacks deletes the objects of packs older than cutoff that live does not name:
// a pack with none left is removed, one with some is rewritten with those alone (a
// torn batch a crash left is dropped the same way).
func (o *objects) sweepPacks(live map[string]bool, cutoff time.Time, apply bool) (deleted int, freed, size int64, err error) {
	dir := o.packDir()
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, 0, 0, nil
	}
	if err != nil {
		return 0, 0, 0, err
	}
	for _, de := range des {
		name := de.Name()
		p := filepath.Join(dir, name)
		fi, err := de.Info()
		if err != nil {
			continue // removed meanwhile (another prune)
		}
		if fi.ModTime().After(cutoff) {
			size += fi.Size()
			continue
		}
		if !strings.HasSuffix(name, packExt) || !fi.Mode().IsRegular() {
			// A rewrite's temporary file a crash left.
			if !apply || os.Remove(p) == nil {
				freed += fi.Size()
			}
			continue
		}
		if apply {
			o.mu.Lock()
			if name == o.wName {
				o.closePack() // this process appends to a new pack from now on
			}
			o.mu.Unlock()
		}
		var keep []packEntry
		dead := 0
		keptBytes := int64(batchHdrLen)
		end, err := scanPack(p, func(key [32]byte, l packLoc) {
			if h := hex.EncodeToString(key[:]); live[h] {
				keep = append(keep, packEntry{h, l})
				keptBytes += batchEntLen + int64(l.n)
			} else {
				dead++
			}
		})
		if err != nil {
			continue
		}
		var n int64
		switch {
		case dead == 0 && end == fi.Size():
			size += fi.Size()
			continue
		case !apply:
			if len(keep) > 0 {
				n = keptBytes
			}
		case len(keep) == 0:
			if err := os.Remove(p); err != nil {
				continue
			}
		default:
			if n, err = o.rewritePack(p, keep); err != nil {
				return deleted, freed, size, fmt.Errorf("prune %s: %w", name, err)
			}
		}
		deleted += dead
		freed += fi.Size() - n
		size += n
	}
	o.mu.Lock()
	o.forgetPacks()
	o.mu.Unlock()
	return deleted, freed, size, nil
}

type packEntry struct {
	h string
	l packLoc
}

// rewritePack replaces the pack at p by a new one holding only keep, and returns its
// size. The new pack is synced before the old one goes: it holds objects that were
// on disk for a while.
func (o *objects) rewritePack(p string, keep []packEntry) (int64, error) {
	src, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer src.Close()
	index := make([]byte, 0, len(keep)*batchEntLen)
	var dlen uint64
	for _, k := range keep {
		var ent [batchEntLen]byte
		hex.Decode(ent[:32], []byte(k.h))
		binary.LittleEndian.PutUint32(ent[32:], k.l.n)
		index = append(index, ent[:]...)
		dlen += uint64(k.l.n)
	}
	hdr := appendBatchHeader(nil, len(keep), dlen, index)

	final := filepath.Join(o.packDir(), newPackName())
	tmp := final + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	bw.Write(hdr)
	bw.Write(index)
	for _, k := range keep {
		if _, err = io.Copy(bw, io.NewSectionReader(src, k.l.off, int64(k.l.n))); err != nil {
			break
		}
	}
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err != nil {
		os.Remove(tmp)
		return 0, err
	}
	os.Remove(p)
	return int64(batchHdrLen) + int64(len(index)) + int64(dlen), nil
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
