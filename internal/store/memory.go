package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/lovia-dev/lovia/internal/transcript"
)

// Memory bundles an in-memory Session and Checkpointer (tests, ephemeral runs). The two
// interfaces share method names, so they are two values:
//
//	m := store.NewMemory()
//	opts.Session, opts.Checkpointer = m.Sessions, m.Checkpoints
type Memory struct {
	Sessions    *MemorySession
	Checkpoints *MemoryCheckpointer
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{Sessions: &MemorySession{}, Checkpoints: &MemoryCheckpointer{}}
}

var (
	_ Session      = (*MemorySession)(nil)
	_ Checkpointer = (*MemoryCheckpointer)(nil)
)

// MemorySession is an in-memory Session. It deep copies on the way in and out, so
// callers can never mutate stored data. The zero value is ready to use.
type MemorySession struct {
	mu       sync.Mutex
	sessions map[string]*memSession
}

type memSession struct {
	runs     map[string]bool
	segments []Segment
}

// Segment is one completed run of a session.
type Segment struct {
	RunID   string
	Entries []transcript.Entry
	Meta    json.RawMessage
}

// Load returns the session's entries, all segments in append order.
func (m *MemorySession) Load(_ context.Context, sessionID string) ([]transcript.Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sessions[sessionID]
	if s == nil {
		return nil, nil
	}
	var out []transcript.Entry
	for _, seg := range s.segments {
		for _, e := range seg.Entries {
			out = append(out, e.Clone())
		}
	}
	return out, nil
}

// Append adds a segment; a repeated (sessionID, runID) is a no-op.
func (m *MemorySession) Append(_ context.Context, sessionID, runID string, entries []transcript.Entry, meta json.RawMessage) error {
	if sessionID == "" || runID == "" {
		return fmt.Errorf("session append: session id and run id are required")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sessions == nil {
		m.sessions = map[string]*memSession{}
	}
	s := m.sessions[sessionID]
	if s == nil {
		s = &memSession{runs: map[string]bool{}}
		m.sessions[sessionID] = s
	}
	if s.runs[runID] {
		return nil
	}
	s.runs[runID] = true
	s.segments = append(s.segments, Segment{RunID: runID, Entries: cloneEntries(entries), Meta: slices.Clone(meta)})
	return nil
}

// Segments returns copies of a session's segments in order.
func (m *MemorySession) Segments(sessionID string) []Segment {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sessions[sessionID]
	if s == nil {
		return nil
	}
	out := make([]Segment, len(s.segments))
	for i, seg := range s.segments {
		out[i] = Segment{RunID: seg.RunID, Entries: cloneEntries(seg.Entries), Meta: slices.Clone(seg.Meta)}
	}
	return out
}

// MemoryCheckpointer is an in-memory Checkpointer with the same copying guarantees.
// The zero value is ready to use.
type MemoryCheckpointer struct {
	mu   sync.Mutex
	runs map[string]*Snapshot
	// appends counts Append calls per run (tests assert on write amplification).
	appends map[string]int
}

// Load returns runID's snapshot, or an error matching ErrNotFound.
func (m *MemoryCheckpointer) Load(_ context.Context, runID string) (*Snapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.runs[runID]
	if s == nil {
		return nil, fmt.Errorf("run %q: %w", runID, ErrNotFound)
	}
	return &Snapshot{RunID: s.RunID, Entries: cloneEntries(s.Entries), Head: cloneHead(s.Head)}, nil
}

// Append adds entries to runID's checkpoint and overwrites its head, atomically.
func (m *MemoryCheckpointer) Append(_ context.Context, runID string, entries []transcript.Entry, head Head) error {
	if runID == "" {
		return fmt.Errorf("checkpoint append: run id is required")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.runs == nil {
		m.runs = map[string]*Snapshot{}
		m.appends = map[string]int{}
	}
	s := m.runs[runID]
	if s == nil {
		s = &Snapshot{RunID: runID}
		m.runs[runID] = s
	}
	for _, e := range entries {
		s.Entries = append(s.Entries, e.Clone())
	}
	s.Head = cloneHead(head)
	m.appends[runID]++
	return nil
}

// Reset forgets runID's checkpoint, so a restarted run (runtime.RestartRun) starts
// over. It is an optional extension of Checkpointer.
func (m *MemoryCheckpointer) Reset(_ context.Context, runID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.runs, runID)
	return nil
}

// Appends reports how many Append calls runID received.
func (m *MemoryCheckpointer) Appends(runID string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.appends[runID]
}

func cloneEntries(es []transcript.Entry) []transcript.Entry {
	if es == nil {
		return nil
	}
	out := make([]transcript.Entry, len(es))
	for i, e := range es {
		out[i] = e.Clone()
	}
	return out
}

func cloneHead(h Head) Head {
	h.ContextState = slices.Clone(h.ContextState)
	h.Settings = slices.Clone(h.Settings)
	if h.Result != nil {
		r := *h.Result
		r.StructuredOutput = slices.Clone(r.StructuredOutput)
		h.Result = &r
	}
	return h
}
