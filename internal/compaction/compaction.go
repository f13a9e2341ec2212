package compaction

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"slices"
	"sync"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// Compaction is the default context policy: a sticky, staged pipeline (offload huge
// tool results → clear older results → incremental summary) planned into a State and
// rendered by the pure Render. It is safe for concurrent use by many runs.
//
// recall_tool_result is always contributed through Tools (a tool set that changes
// mid-run would itself break the prompt cache); markers mention it only when the
// request's ToolNames contain it, and its description tells the model it is for
// results shown as cleared/offloaded markers, so an agent whose results were never
// compacted has no reason to call it.
type Compaction struct {
	cfg        Config
	store      ResultStore
	summarizer Summarizer
	log        *slog.Logger
	cacheSize  int

	mu       sync.Mutex
	tick     uint64
	sessions map[string]*session
}

// Option configures a Compaction.
type Option func(*Compaction)

// WithStore archives offloaded results in s (nil: recall reads the transcript).
func WithStore(s ResultStore) Option { return func(c *Compaction) { c.store = s } }

// WithSummarizer enables the summary stage (without one it is skipped).
func WithSummarizer(s Summarizer) Option { return func(c *Compaction) { c.summarizer = s } }

// WithLogger logs archive and summarizer failures (nil: discarded).
func WithLogger(l *slog.Logger) Option { return func(c *Compaction) { c.log = l } }

// WithCacheSize bounds how many sessions keep in-process state (default 32).
func WithCacheSize(n int) Option { return func(c *Compaction) { c.cacheSize = n } }

// New returns the default policy. cfg is completed with defaults; call cfg.Validate
// first to report a bad configuration to the user.
func New(cfg Config, opts ...Option) *Compaction {
	c := &Compaction{cfg: cfg.WithDefaults(), cacheSize: 32, sessions: map[string]*session{}}
	for _, o := range opts {
		o(c)
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.cacheSize <= 0 {
		c.cacheSize = 1
	}
	return c
}

// Config returns the effective configuration (defaults filled in).
func (c *Compaction) Config() Config { return c.cfg }

// Tools implements ToolSource.
func (c *Compaction) Tools() []tool.Tool { return []tool.Tool{recallTool(c.store)} }

// session is what one conversation keeps in process between calls: the decoded state
// (so an unchanged Request.State is not decoded again), token memo, marker cache and
// the previous view (for StablePrefix).
type session struct {
	mu         sync.Mutex
	used       uint64
	state      *State
	stateBytes []byte
	cnt        counter
	rend       *renderer

	// prevView is the last view returned: buf[:len(prevView):len(prevView)]. buf may
	// have spare capacity that no returned view can reach, so a calm turn extends the
	// view in place instead of copying thousands of entries; entries already handed
	// out are never rewritten (a burst renders into a fresh buffer).
	prevView    []transcript.Entry
	buf         []transcript.Entry
	prevBodyLen int
	prevRaw     int // raw tokens of prevView
	prevSummary *Summary

	forceNext bool // set by CompactNext
}

func (c *Compaction) session(key string) *session {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tick++
	s, ok := c.sessions[key]
	if !ok {
		if len(c.sessions) >= c.cacheSize {
			var oldest string
			var at uint64
			for k, v := range c.sessions {
				if oldest == "" || v.used < at {
					oldest, at = k, v.used
				}
			}
			delete(c.sessions, oldest)
		}
		s = &session{rend: newRenderer(RenderOptions{PreviewChars: c.cfg.Offload.PreviewChars})}
		c.sessions[key] = s
	}
	s.used = c.tick
	return s
}

// CompactNext makes the next Compact call of the session a forced pass, as if its
// Request had Force set: the hook behind the TUI's /compact, which has no model call
// of its own to attach a Request to. sessionID is the run's session (or "run:"+runID
// for a run without one).
func (c *Compaction) CompactNext(sessionID string) {
	s := c.session(sessionID)
	s.mu.Lock()
	s.forceNext = true
	s.mu.Unlock()
}

// Compact implements Policy.
func (c *Compaction) Compact(ctx context.Context, req Request) (Result, error) {
	key := req.SessionID
	if key == "" {
		key = "run:" + req.RunID
	}
	s := c.session(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.forceNext && !req.Overflow {
		req.Force, s.forceNext = true, false
	}

	st, reused := c.loadState(ctx, s, req)
	if !req.Overflow {
		// The report that comes with an overflow retry is the one before the failed
		// call; it was folded in already.
		st.calibrate(req.LastInputTokens)
	}
	body := req.Body
	raw, firstMiss := s.cnt.count(body)
	// The covered prefix is re-checked unless it is provably the one checked before.
	if !reused || firstMiss < st.covered() {
		if st.validate(body) {
			c.log.Info("compaction: the summarized prefix changed; summary reset", "session", req.SessionID)
		}
	}
	sysRaw := EstimateText(req.System)
	toolsTok := EstimateTools(req.Tools)
	budget := c.cfg.BudgetFor(req.ContextWindow)
	optsChanged := s.rend.setOptions(RenderOptions{RecallTool: slices.Contains(req.ToolNames, RecallToolName), PreviewChars: c.cfg.Offload.PreviewChars})
	if s.prevView == nil && st.ViewBody > 0 && st.ViewBody <= len(body) {
		// First call in this process with a state from elsewhere: the previous view
		// was the render of this state over the body as it was then.
		s.prevView = s.rend.render(body[:st.ViewBody], st, nil)
		reused = false
	}

	// Render first: on most turns nothing is decided and this is the view. When the
	// state and the body's prefix are those of the previous view, only the new
	// entries are rendered.
	var view []transcript.Entry
	var viewRaw int
	extend := reused && !optsChanged && s.prevView != nil && st.Summary == s.prevSummary &&
		firstMiss >= s.prevBodyLen && len(body) >= s.prevBodyLen
	if extend {
		var add int
		s.buf, add = s.rend.renderCount(body, raw, st, s.prevBodyLen, s.buf[:len(s.prevView)])
		view, viewRaw = s.buf, s.prevRaw+add
	} else {
		s.buf, viewRaw = s.rend.renderCount(body, raw, st, 0, make([]transcript.Entry, 0, len(body)+len(body)/4+16))
		view = s.buf
	}
	before := st.scaled(sysRaw+viewRaw) + toolsTok
	var info *event.Compaction
	compacted := false
	if req.Force || req.Overflow || before > budget.CompactAt {
		p := &planner{cfg: c.cfg, st: st, r: s.rend, body: body, raw: raw, fixed: sysRaw, tools: toolsTok,
			target: budget.CompactTo, keepRecent: budget.KeepRecent, anchor: true,
			store: c.store, scope: scopeOf(req.SessionID, req.RunID), summarizer: c.summarizer, log: c.log}
		switch {
		case req.Overflow:
			p.aggressive, p.anchor = true, false
			p.target = c.cfg.OverflowTarget.Tokens(budget.Usable)
			p.keepRecent = c.cfg.OverflowKeepRecent.Tokens(budget.Usable)
		case req.Force:
			p.force = true
		}
		compacted = p.run(ctx)
		if compacted {
			st.Bursts++
			s.buf, viewRaw = s.rend.renderCount(body, raw, st, 0, make([]transcript.Entry, 0, len(body)+len(body)/4+16))
			view = s.buf
		}
		if compacted || req.Force {
			p.info.TokensBefore = before
			p.info.TokensAfter = st.scaled(sysRaw+viewRaw) + toolsTok
			p.info.Overflow = req.Overflow
			p.info.Forced = req.Force
			if p.info.Stages == nil {
				p.info.Stages = []string{}
			}
			info = &p.info
		}
	}
	// Full slice expression: a caller appending view-injector entries must not write
	// into memory that prevView (or a later view) shares.
	view = view[:len(view):len(view)]
	st.LastRaw, st.LastTools, st.ViewBody = sysRaw+viewRaw, toolsTok, len(body)

	stable := len(s.prevView)
	if !extend || compacted {
		stable = commonPrefix(s.prevView, view)
	}
	s.prevView, s.prevBodyLen, s.prevRaw, s.prevSummary = view, len(body), viewRaw, st.Summary
	s.state = st
	s.stateBytes = st.Marshal()
	if compacted {
		c.saveState(ctx, req.SessionID, s.stateBytes)
	}
	return Result{View: view, StablePrefix: stable, State: bytes.Clone(s.stateBytes), Compacted: compacted, Info: info}, nil
}

// loadState picks the state for this call: the request's (from the checkpoint head)
// when given, else the session's carried state from an earlier run, else a fresh one.
// A new run keeps call_id decisions and resets the summarizer's circuit breaker.
// reused reports that st is the very state the previous call of the session returned.
func (c *Compaction) loadState(ctx context.Context, s *session, req Request) (st *State, reused bool) {
	switch {
	case len(req.State) > 0 && s.state != nil && bytes.Equal(req.State, s.stateBytes):
		st, reused = s.state, true
	case len(req.State) > 0:
		var err error
		if st, err = ParseState(req.State); err != nil {
			c.log.Warn("compaction: discarding unreadable state", "err", err)
		}
	case s.state != nil:
		st = s.state.clone()
	default:
		st = c.savedState(ctx, req.SessionID)
	}
	if st.RunID != req.RunID {
		st.RunID = req.RunID
		st.SummaryFailures = 0
		st.LastRaw, st.LastReported = 0, 0
	}
	return st, reused
}

// savedState loads the session's state saved by another process (the next run of
// `lovia run -c` starts with no state of its own), or returns a fresh state.
func (c *Compaction) savedState(ctx context.Context, sessionID string) *State {
	ss, ok := c.store.(SessionStateStore)
	if !ok || sessionID == "" {
		return &State{Version: stateVersion}
	}
	raw, err := ss.LoadState(ctx, sessionID)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			c.log.Warn("compaction: loading the session's saved state failed", "session", sessionID, "err", err)
		}
		return &State{Version: stateVersion}
	}
	st, err := ParseState(raw)
	if err != nil {
		c.log.Warn("compaction: discarding the session's unreadable saved state", "session", sessionID, "err", err)
	}
	return st
}

// saveState keeps the session's decisions for runs in other processes. It runs after
// a burst only: between bursts the decisions do not change.
func (c *Compaction) saveState(ctx context.Context, sessionID string, raw []byte) {
	ss, ok := c.store.(SessionStateStore)
	if !ok || sessionID == "" {
		return
	}
	if err := ss.SaveState(ctx, sessionID, raw); err != nil {
		c.log.Warn("compaction: saving the session's state failed", "session", sessionID, "err", err)
	}
}

// commonPrefix counts leading entries of b byte-identical to a's.
func commonPrefix(a, b []transcript.Entry) int {
	n := min(len(a), len(b))
	for i := range n {
		if !sameEntry(&a[i], &b[i]) {
			return i
		}
	}
	return n
}

// sameEntry compares every serialized field; string and slice comparisons
// short-circuit on shared memory, so unchanged entries cost O(1).
func sameEntry(a, b *transcript.Entry) bool {
	if a.Type != b.Type || a.Role != b.Role || a.CallID != b.CallID || a.Name != b.Name ||
		a.IsError != b.IsError || a.Truncated != b.Truncated || a.Synthetic != b.Synthetic ||
		a.RunID != b.RunID || a.Agent != b.Agent || a.Provider != b.Provider ||
		a.Text != b.Text || a.Signature != b.Signature || a.Encrypted != b.Encrypted ||
		a.ProviderID != b.ProviderID || !bytes.Equal(a.Args, b.Args) || len(a.Attachments) != len(b.Attachments) {
		return false
	}
	for i := range a.Attachments {
		x, y := &a.Attachments[i], &b.Attachments[i]
		if x.MIME != y.MIME || x.Name != y.Name || x.URI != y.URI || !bytes.Equal(x.Data, y.Data) {
			return false
		}
	}
	return true
}

var (
	_ Policy     = (*Compaction)(nil)
	_ ToolSource = (*Compaction)(nil)
)
