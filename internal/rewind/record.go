package rewind

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/tool"
)

// Record kinds in a run's checkpoint log.
const (
	// RecCall is the root's state just before a mutating tool call.
	RecCall = "call"
	// RecEnd is the root's state when the run ended.
	RecEnd = "end"
	// RecRewound marks a run whose file changes were rewound.
	RecRewound = "rewound"
)

// Record is one line of a run's checkpoint log
// (<data>/rewind/sessions/<session>/<run>.jsonl).
type Record struct {
	Kind      string    `json:"kind"`
	Seq       int       `json:"seq"`
	RunID     string    `json:"run_id"`
	SessionID string    `json:"session_id,omitempty"`
	Root      string    `json:"root"`
	Tree      string    `json:"tree,omitempty"`
	Tool      string    `json:"tool,omitempty"`
	Summary   string    `json:"summary,omitempty"`
	Input     string    `json:"input,omitempty"`
	Time      time.Time `json:"time"`
	Notes     []string  `json:"notes,omitempty"`
	Files     int       `json:"files,omitempty"`
	Written   int64     `json:"written,omitempty"`
}

// MutatingTools are the workspace tools checkpointed before they run.
var mutatingTools = map[string]bool{"write_file": true, "edit_file": true, "shell": true}

// Recorder takes the checkpoints of one root for the runs of one process. It is safe
// for concurrent use; snapshots of the root are serialized.
type Recorder struct {
	store *Store
	root  string
	log   *slog.Logger

	mu   sync.Mutex
	snap *snapshotter
	runs map[string]*runLog
	gen  string // the store's generation when snap.known was last valid
}

type runLog struct {
	seq      int
	lastTree string
}

// NewRecorder returns the recorder of root (an absolute directory). exclude lists
// absolute paths never walked (lovia's own data directory and database).
func (s *Store) NewRecorder(root string, exclude []string, limits Limits, log *slog.Logger) *Recorder {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	return &Recorder{store: s, root: filepath.Clean(root), log: log, runs: map[string]*runLog{},
		snap: &snapshotter{root: filepath.Clean(root), limits: limits.withDefaults(), excludeRel: excludedRel(filepath.Clean(root), cleanAll(exclude)), obj: s.obj, known: map[string]bool{}, now: time.Now}}
}

// Root is the directory the recorder checkpoints.
func (r *Recorder) Root() string { return r.root }

func cleanAll(ps []string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		if p == "" {
			continue
		}
		p = filepath.Clean(p)
		out = append(out, p)
		if e, err := filepath.EvalSymlinks(p); err == nil && e != p {
			out = append(out, e)
		}
	}
	return out
}

func (r *Recorder) cachePath() string {
	sum := sha256.Sum256([]byte(r.root))
	return filepath.Join(r.store.dir, "roots", hex.EncodeToString(sum[:8]), "statcache")
}

// current snapshots the root (mu held).
func (r *Recorder) current() (*snapResult, error) {
	if r.snap.cache == nil {
		r.snap.cache = loadCache(r.cachePath())
	}
	if g := r.store.generation(); g != r.gen {
		// A prune may have deleted objects this process thinks are stored.
		r.gen, r.snap.known = g, map[string]bool{}
	}
	return r.snap.snapshot()
}

// Current returns the tree of the root as it is now (stored, so it can be restored).
func (r *Recorder) Current(ctx context.Context) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	res, err := r.current()
	if err != nil {
		return "", err
	}
	_ = saveCache(r.cachePath(), r.snap.cache)
	return res.Tree, nil
}

// Checkpoint records the root's state before a mutating call of rc's run.
func (r *Recorder) Checkpoint(ctx context.Context, rc *tool.RunContext, toolName, summary string) error {
	if rc == nil || rc.RunID == "" {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	res, err := r.current()
	if err != nil {
		return err
	}
	rl := r.runs[rc.RunID]
	if rl == nil {
		rl = &runLog{}
		r.runs[rc.RunID] = rl
	}
	rl.seq++
	rec := Record{Kind: RecCall, Seq: rl.seq, RunID: rc.RunID, SessionID: rc.SessionID, Root: r.root, Tree: res.Tree,
		Tool: toolName, Summary: summary, Time: time.Now().UTC(), Notes: capNotes(res.Notes), Files: res.Files, Written: res.Written}
	if rl.seq == 1 && rc.Entries != nil {
		rec.Input = runInput(rc)
	}
	rl.lastTree = res.Tree
	return r.store.appendRecord(rec)
}

// End records the root's state at the end of a run that took checkpoints, and saves
// the stat cache.
func (r *Recorder) End(ctx context.Context, runID, sessionID string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	rl := r.runs[runID]
	if rl == nil {
		return nil
	}
	delete(r.runs, runID)
	res, err := r.current()
	if err != nil {
		return err
	}
	_ = saveCache(r.cachePath(), r.snap.cache)
	return r.store.appendRecord(Record{Kind: RecEnd, Seq: rl.seq + 1, RunID: runID, SessionID: sessionID, Root: r.root,
		Tree: res.Tree, Time: time.Now().UTC(), Notes: capNotes(res.Notes), Files: res.Files, Written: res.Written})
}

func capNotes(n []string) []string {
	if len(n) > 20 {
		return append(n[:20:20], fmt.Sprintf("... and %d more", len(n)-20))
	}
	return n
}

func runInput(rc *tool.RunContext) string {
	for _, e := range rc.Entries() {
		if e.IsUser() && e.RunID == rc.RunID {
			return e.Text
		}
	}
	return ""
}

// Wrap returns p with its mutating tools (write_file, edit_file, shell) checkpointed
// before each call, and the run's end recorded. A failed checkpoint is logged and the
// call proceeds: rewind is a safety net, not a gate.
func (r *Recorder) Wrap(p plugin.Plugin) plugin.Plugin {
	return plugin.Func{ID: p.Name(), Fn: func(ctx context.Context, rc *tool.RunContext) (*plugin.Contribution, error) {
		c, err := p.Setup(ctx, rc)
		if err != nil || c == nil {
			return c, err
		}
		out := *c
		out.Tools = make([]tool.Tool, len(c.Tools))
		for i, t := range c.Tools {
			if mutatingTools[t.Spec().Name] {
				t = &checkpointed{Tool: t, r: r}
			}
			out.Tools[i] = t
		}
		out.Hooks = append(c.Hooks[:len(c.Hooks):len(c.Hooks)], func(ctx context.Context, ev event.Event, rc *tool.RunContext) error {
			if !ev.Type.Terminal() || rc == nil {
				return nil
			}
			return r.End(context.WithoutCancel(ctx), rc.RunID, rc.SessionID)
		})
		return &out, nil
	}}
}

// checkpointed is a mutating tool that checkpoints the root before it runs.
type checkpointed struct {
	tool.Tool
	r *Recorder
}

func (c *checkpointed) Invoke(ctx context.Context, rc *tool.RunContext, args json.RawMessage) (tool.Result, error) {
	name := c.Spec().Name
	if err := c.r.Checkpoint(ctx, rc, name, summarize(name, args)); err != nil {
		c.r.log.Warn("rewind checkpoint failed (the call proceeds)", "tool", name, "err", err)
	}
	return c.Tool.Invoke(ctx, rc, args)
}

func summarize(name string, args json.RawMessage) string {
	var a struct {
		Path    string `json:"path"`
		Command string `json:"command"`
	}
	_ = json.Unmarshal(args, &a)
	s := a.Path
	if name == "shell" {
		s = a.Command
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// Store is the checkpoint store under <data>/rewind.
type Store struct {
	dir string
	obj *objects
	// pruneGrace overrides the grace period of Prune (tests).
	pruneGrace *time.Duration
}

// Open returns the store under dataDir (created on first write).
func Open(dataDir string) *Store {
	d := filepath.Join(dataDir, "rewind")
	return &Store{dir: d, obj: &objects{dir: filepath.Join(d, "objects")}}
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// safeID reports whether id can be a file name as it is: 1 to 128 ASCII letters,
// digits, '.', '_' and '-', the first a letter or digit. (A function, not the
// regexp ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$: compiling that took ~30 million
// instructions at the init of every lovia process.)
func safeID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return true
}

// fileID maps an id to a file name that cannot leave its directory.
func fileID(id string) string {
	if id == "" {
		return "_"
	}
	if safeID(id) {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "x-" + hex.EncodeToString(sum[:12])
}

func (s *Store) sessionDir(sessionID string) string {
	return filepath.Join(s.dir, "sessions", fileID(sessionID))
}

func (s *Store) appendRecord(rec Record) error {
	d := s.sessionDir(rec.SessionID)
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	p := filepath.Join(d, fileID(rec.RunID)+".jsonl")
	const flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND | appendFlags
	f, err := os.OpenFile(p, flags, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		// The session's first record (the directory is made only then).
		if err = os.MkdirAll(d, 0o700); err == nil {
			f, err = os.OpenFile(p, flags, 0o600)
		}
	}
	if err != nil {
		return fmt.Errorf("checkpoint log: %w", err)
	}
	_, err = f.Write(append(data, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("checkpoint log: %w", err)
	}
	return nil
}

// Run is one run's checkpoints.
type Run struct {
	RunID     string
	SessionID string
	Root      string
	Input     string
	Start     time.Time
	// Trees are the checkpoints in order (before each mutating call, then the end
	// state when the run ended normally).
	Trees   []Record
	Ended   bool
	Rewound bool
	Notes   []string
}

// Before is the tree of the root before the run's first change.
func (r *Run) Before() string { return r.Trees[0].Tree }

// After is the tree at the run's end ("" when the run did not end normally).
func (r *Run) After() string {
	if r.Ended {
		return r.Trees[len(r.Trees)-1].Tree
	}
	return ""
}

func readRun(path string) (*Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	run := &Run{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var rec Record
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue // a torn last line after a crash
		}
		switch rec.Kind {
		case RecCall, RecEnd:
			if !validHash(rec.Tree) {
				continue
			}
			if len(run.Trees) == 0 {
				run.RunID, run.SessionID, run.Root, run.Start = rec.RunID, rec.SessionID, rec.Root, rec.Time
			}
			if rec.Input != "" && run.Input == "" {
				run.Input = rec.Input
			}
			run.Trees = append(run.Trees, rec)
			run.Ended = rec.Kind == RecEnd
			run.Notes = append(run.Notes, rec.Notes...)
		case RecRewound:
			run.Rewound = true
		}
	}
	if len(run.Trees) == 0 {
		return nil, os.ErrNotExist
	}
	return run, nil
}

// SessionRuns lists the checkpointed runs of a session, oldest first.
func (s *Store) SessionRuns(sessionID string) ([]*Run, error) {
	return s.runsIn(s.sessionDir(sessionID))
}

func (s *Store) runsIn(dir string) ([]*Run, error) {
	des, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*Run
	for _, de := range des {
		if !strings.HasSuffix(de.Name(), ".jsonl") {
			continue
		}
		r, err := readRun(filepath.Join(dir, de.Name()))
		if err != nil {
			continue
		}
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out, nil
}

// FindRun returns the checkpoints of runID (os.ErrNotExist wrapped when it has none).
func (s *Store) FindRun(runID string) (*Run, error) {
	matches, _ := filepath.Glob(filepath.Join(s.dir, "sessions", "*", fileID(runID)+".jsonl"))
	for _, m := range matches {
		if r, err := readRun(m); err == nil && r.RunID == runID {
			return r, nil
		}
	}
	return nil, noCheckpoints(runID)
}

// noCheckpoints is os.ErrNotExist for errors.Is, worded for the user.
type noCheckpoints string

func (e noCheckpoints) Error() string      { return "run " + string(e) + " has no file checkpoints" }
func (noCheckpoints) Is(target error) bool { return target == os.ErrNotExist }

// AllRuns lists every checkpointed run, oldest first.
func (s *Store) AllRuns() ([]*Run, error) {
	dirs, _ := filepath.Glob(filepath.Join(s.dir, "sessions", "*"))
	var out []*Run
	for _, d := range dirs {
		rs, err := s.runsIn(d)
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out, nil
}

// DeleteSession removes a session's checkpoint logs (objects no checkpoint uses any
// more go at the next Prune).
func (s *Store) DeleteSession(sessionID string) error {
	return os.RemoveAll(s.sessionDir(sessionID))
}

func (s *Store) markRewound(r *Run, by string) error {
	return s.appendRecord(Record{Kind: RecRewound, RunID: r.RunID, SessionID: r.SessionID, Root: r.Root, Summary: by, Time: time.Now().UTC()})
}
