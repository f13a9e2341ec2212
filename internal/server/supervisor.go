package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lovia-dev/lovia/internal/app"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/mailbox"
	"github.com/lovia-dev/lovia/internal/runtime"
	"github.com/lovia-dev/lovia/internal/termtext"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

// Supervisor owns the server's runs: they belong to it, not to a connection, so a
// closed tab stops nothing. It keeps each run's events in memory (bounded) for
// replay, answers approvals nobody answered in time with a denial, and on Shutdown
// interrupts every run (checkpointed, resumable).
type Supervisor struct {
	app  *app.App
	opts Options
	// base is the context runs start under; cancelled only by Shutdown.
	base context.Context

	mu       sync.Mutex
	runs     map[string]*Run
	order    []string          // run ids in creation order (for eviction)
	sessions map[string]string // session id -> its active run id (or "" while starting)
	closing  bool
	wg       sync.WaitGroup
}

// Run is one run the server knows: started or resumed here, or a subagent child of
// one.
type Run struct {
	ID        string
	SessionID string
	ParentID  string
	Created   time.Time
	// Prompt is the run's input (for a page reloaded mid-run: events do not repeat it).
	Prompt string

	mu      sync.Mutex
	status  string // running | completed | failed | interrupted
	events  []frame
	dropped int64 // events evicted from the front (bound)
	notify  chan struct{}
	ended   bool // the terminal event was appended
	usage   *usage.Usage
	turns   int
	agent   string
	errMsg  string
	final   string
	pending map[string]*pending
	handle  *runtime.Handle // nil for children
	// epoch counts the times this run was (re)started here; events restart at seq 1.
	epoch int
}

// frame is one event as the streams send it: encoded once, sent to every client.
type frame struct {
	seq  int64
	term bool
	data []byte // the stream-json object
}

type pending struct {
	ev    event.Event
	timer *time.Timer
}

func newSupervisor(ctx context.Context, a *app.App, opts Options) *Supervisor {
	s := &Supervisor{app: a, opts: opts, base: ctx, runs: map[string]*Run{}, sessions: map[string]string{}}
	return s
}

// httpError carries an HTTP status through the supervisor's API (conflict, notFound,
// badRequest build them).
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func conflict(format string, a ...any) error {
	return &httpError{http.StatusConflict, fmt.Sprintf(format, a...)}
}
func notFound(format string, a ...any) error {
	return &httpError{http.StatusNotFound, fmt.Sprintf(format, a...)}
}
func badRequest(format string, a ...any) error {
	return &httpError{http.StatusBadRequest, fmt.Sprintf(format, a...)}
}

// StartRequest is the body of POST /api/runs.
type StartRequest struct {
	Prompt    string `json:"prompt"`
	SessionID string `json:"session_id,omitempty"`
	Model     string `json:"model,omitempty"`
	Preset    string `json:"preset,omitempty"`
	Policy    string `json:"policy,omitempty"`
}

// reserve marks sessionID busy; one active run per session.
func (s *Supervisor) reserve(sessionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return &httpError{http.StatusServiceUnavailable, "the server is shutting down"}
	}
	if id, busy := s.sessions[sessionID]; busy {
		if id == "" {
			return conflict("session %s is starting a run", sessionID)
		}
		return conflict("session %s already has an active run (%s): wait for it, steer it or cancel it", sessionID, id)
	}
	s.sessions[sessionID] = ""
	return nil
}

func (s *Supervisor) release(sessionID, runID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id, ok := s.sessions[sessionID]; ok && id == runID {
		delete(s.sessions, sessionID)
	}
}

// Start starts a run for req. The run lives in the server's context, not ctx (the
// request's): closing the connection does not stop it.
func (s *Supervisor) Start(ctx context.Context, req StartRequest) (*Run, error) {
	if strings.TrimSpace(req.Prompt) == "" {
		return nil, badRequest("prompt is empty")
	}
	if len(req.Prompt) > maxPrompt {
		return nil, badRequest("prompt is larger than %d KiB", maxPrompt>>10)
	}
	if req.Policy != "" && !slices.Contains([]string{"readonly", "coding", "trusted"}, req.Policy) {
		return nil, badRequest("policy must be readonly, coding or trusted")
	}
	sid := req.SessionID
	if sid == "" {
		sid = newID("ses_")
	} else if !validID(sid) {
		return nil, badRequest("session_id %q is not a valid id", sid)
	}
	if err := s.reserve(sid); err != nil {
		return nil, err
	}
	h, _, err := s.app.Start(s.base, runtime.Text(req.Prompt), app.RunOptions{
		SessionID: sid,
		Model:     req.Model,
		Preset:    req.Preset,
		// A request's policy can only tighten the server's (--policy, config).
		PolicyCeiling: req.Policy,
		Approvals:     runtime.ApprovalInteractive,
		Flags:         map[string]any{"front_end": "serve"},
	})
	if err != nil {
		s.release(sid, "")
		return nil, &httpError{http.StatusBadRequest, errMessage(err)}
	}
	r := s.adopt(h, sid, "")
	r.setPrompt(req.Prompt)
	s.app.Log.Info("serve: run started", "run", r.ID, "session", sid)
	return r, nil
}

func (r *Run) setPrompt(p string) {
	r.mu.Lock()
	r.Prompt = p
	r.mu.Unlock()
}

// Resume continues an interrupted or failed run from its checkpoint.
func (s *Supervisor) Resume(ctx context.Context, runID string) (*Run, error) {
	s.mu.Lock()
	r := s.runs[runID]
	s.mu.Unlock()
	if r != nil {
		if r.ParentID != "" {
			return nil, conflict("run %s is a subagent task; resume its parent %s", runID, r.ParentID)
		}
		if r.Status() == "running" {
			return nil, conflict("run %s is running", runID)
		}
	}
	if s.app.Checkpointer == nil {
		return nil, notFound("no run %s", runID)
	}
	st, snap, err := app.ReadSettings(ctx, s.app.Checkpointer, runID)
	if err != nil {
		if errs.KindOf(err) == errs.KindNotFound {
			return nil, notFound("no run %s", runID)
		}
		return nil, err
	}
	if snap.Head.ParentRunID != "" {
		return nil, conflict("run %s is a subagent task; resume its parent %s", runID, snap.Head.ParentRunID)
	}
	if st.Cwd != "" && st.Cwd != s.app.Config.Cwd {
		return nil, conflict("run %s belongs to %s, not this server's directory; continue it with `lovia resume %s`", runID, st.Cwd, runID)
	}
	if s.app.DB != nil {
		// A run another lovia process is running (a terminal's `lovia resume`, another
		// server) is not taken over.
		host, _ := os.Hostname()
		if h, err := s.app.DB.HolderOf(ctx, runID); err == nil && h != nil && (h.PID != os.Getpid() || h.Host != host) {
			return nil, conflict("run %s is being run by another lovia process (%s)", runID, h)
		}
	}
	sid := snap.Head.SessionID
	if err := s.reserve(sid); err != nil {
		return nil, err
	}
	ro := app.RunOptions{Approvals: runtime.ApprovalInteractive, Preset: st.Preset, PolicyCeiling: st.Policy,
		MaxTurns: st.MaxTurns, OutputSchema: st.OutputSchema, Flags: st.Flags, SessionID: sid}
	if p, err := s.app.Presets.Get(st.Preset); err == nil {
		if m, _ := s.app.Model(p); m != st.Model {
			ro.Model = st.Model
		}
	}
	h, _, err := s.app.Resume(s.base, runID, ro)
	if err != nil {
		s.release(sid, "")
		return nil, &httpError{http.StatusBadRequest, errMessage(err)}
	}
	r = s.adopt(h, sid, "")
	for _, e := range snap.Entries {
		if e.Type == transcript.TypeInput && e.Role == "user" {
			r.setPrompt(e.Text)
			break
		}
	}
	return r, nil
}

// adopt registers a started handle and pumps its events.
func (s *Supervisor) adopt(h *runtime.Handle, sid, parent string) *Run {
	s.mu.Lock()
	r := s.runs[h.RunID()]
	if r == nil {
		r = &Run{ID: h.RunID(), SessionID: sid, ParentID: parent, Created: time.Now()}
		s.runs[r.ID] = r
		s.order = append(s.order, r.ID)
	}
	s.sessions[sid] = r.ID
	s.wg.Add(1)
	s.mu.Unlock()

	r.mu.Lock()
	r.status = "running"
	r.events, r.dropped, r.ended = nil, 0, false
	r.handle = h
	r.pending = map[string]*pending{}
	r.epoch++
	epoch := r.epoch
	r.errMsg, r.final = "", ""
	r.mu.Unlock()

	go func() {
		defer s.wg.Done()
		for ev := range h.Events() {
			s.observe(r, ev)
		}
		_, _ = h.Result()
		r.mu.Lock()
		// A client may have resumed the run as soon as this attempt's terminal event
		// arrived: the newer attempt owns the run's state and its session from then on.
		current := r.epoch == epoch
		if current {
			for id, p := range r.pending {
				p.timer.Stop()
				delete(r.pending, id)
			}
			if !r.ended {
				// The stream closed without a terminal event (cannot happen by
				// contract): clients must still learn the run is over.
				r.status = "failed"
				r.ended = true
				r.wake()
			}
		}
		r.mu.Unlock()
		if current {
			s.release(sid, r.ID)
		}
		s.app.Log.Info("serve: run ended", "run", r.ID, "status", r.Status())
		s.evict()
	}()
	return r
}

// observe records one event of r and keeps the approval bookkeeping.
func (s *Supervisor) observe(r *Run, ev event.Event) {
	if ev.Type.Terminal() {
		// The session is free before its run's end is told: a client that resumes or
		// continues on seeing it must not get a 409.
		r.mu.Lock()
		sid := r.SessionID
		r.mu.Unlock()
		s.release(sid, r.ID)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.append(ev, s.opts.MaxEvents)
	switch ev.Type {
	case event.ApprovalRequired:
		if r.handle != nil && r.pending != nil {
			h, callID := r.handle, ev.CallID
			timeout := s.opts.ApprovalTimeout
			p := &pending{ev: ev}
			p.timer = time.AfterFunc(timeout, func() {
				r.mu.Lock()
				_, still := r.pending[callID]
				delete(r.pending, callID)
				r.mu.Unlock()
				if still {
					_ = h.Approve(callID, tool.Decision{Message: fmt.Sprintf("nobody answered this approval within %s (lovia serve --approval-timeout)", timeout)})
				}
			})
			r.pending[callID] = p
		}
	case event.ToolCallStarted, event.ToolCallFailed, event.ToolCallCompleted:
		if p, ok := r.pending[ev.CallID]; ok {
			p.timer.Stop()
			delete(r.pending, ev.CallID)
		}
	}
}

// append adds ev under r.mu, keeping at most max events, and wakes the streams.
func (r *Run) append(ev event.Event, max int) {
	if ev.Agent != "" {
		r.agent = ev.Agent
	}
	if ev.Usage != nil && ev.Type != event.MessageCompleted {
		u := *ev.Usage
		r.usage = &u
	}
	if ev.Turn > r.turns {
		r.turns = ev.Turn
	}
	if ev.SessionID != "" && r.SessionID == "" {
		r.SessionID = ev.SessionID
	}
	if ev.Type.Terminal() {
		r.ended = true
		r.status = ev.Status
		if r.status == "" {
			r.status = "completed"
			if ev.Type == event.RunFailed {
				r.status = "failed"
			}
		}
		r.final = ev.FinalOutput
		if ev.Error != nil {
			r.errMsg = ev.Error.Message
		}
		if ev.Turns > 0 {
			r.turns = ev.Turns
		}
	}
	data, err := json.Marshal(ev)
	if err != nil {
		// An event is plain data; this cannot fail. Keep the stream gapless anyway.
		data, _ = json.Marshal(event.Event{Type: ev.Type, Seq: ev.Seq, Time: ev.Time, RunID: ev.RunID})
	}
	// Like stream-json: C1 controls and bidi overrides as \u escapes (same JSON value),
	// so a client that prints the data to a terminal is not steered by it.
	var safe bytes.Buffer
	if _, err := termtext.NewJSONWriter(&safe).Write(data); err == nil {
		data = safe.Bytes()
	}
	r.events = append(r.events, frame{seq: ev.Seq, term: ev.Type.Terminal(), data: data})
	// Past the bound, drop the oldest in batches (amortised: not a copy per event).
	if max > 0 && len(r.events) > max+max/8 {
		n := len(r.events) - max
		r.events = slices.Delete(r.events, 0, n)
		r.dropped += int64(n)
	}
	r.wake()
}

// wake tells every waiting stream that something changed (under r.mu).
func (r *Run) wake() {
	if r.notify != nil {
		close(r.notify)
		r.notify = nil
	}
}

// since returns the events with seq > after, whether the run has ended, and a channel
// closed when more arrive. gone reports that some of them were evicted (bound).
func (r *Run) since(after int64) (evs []frame, ended, gone bool, wait <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	// Seqs are 1, 2, 3… without gaps, so the index of seq n is n-1-dropped.
	i := after - r.dropped
	if i < 0 {
		gone = true
		i = 0
	}
	if i < int64(len(r.events)) {
		evs = slices.Clone(r.events[i:])
	}
	if r.notify == nil {
		r.notify = make(chan struct{})
	}
	return evs, r.ended, gone, r.notify
}

// Epoch is the run's attempt in this server (1 for a run started or first resumed
// here, and for subagent tasks; +1 for each resume).
func (r *Run) Epoch() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return max(r.epoch, 1)
}

// Status is the run's status now.
func (r *Run) Status() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status
}

// Info is what GET /api/runs/{id} says about a run.
type Info struct {
	RunID     string       `json:"run_id"`
	SessionID string       `json:"session_id,omitempty"`
	ParentID  string       `json:"parent_id,omitempty"`
	Status    string       `json:"status"`
	Agent     string       `json:"agent,omitempty"`
	Turns     int          `json:"turns"`
	Usage     *usage.Usage `json:"usage,omitempty"`
	Model     string       `json:"model,omitempty"`
	Error     string       `json:"error,omitempty"`
	Output    string       `json:"final_output,omitempty"`
	Prompt    string       `json:"prompt,omitempty"`
	// ContextWindow is the model's context window in tokens (GET /api/runs/{id}).
	ContextWindow int `json:"context_window,omitempty"`
	// CostUSD estimates the run's cost (GET /api/runs/{id}; absent when the model's
	// price is unknown).
	CostUSD *float64 `json:"cost_usd,omitempty"`
	// Events is the number of events this server holds for the run (0: none, e.g. a
	// run of an earlier server process).
	Events    int64             `json:"events"`
	Approvals []PendingApproval `json:"pending_approvals,omitempty"`
	Children  []string          `json:"children,omitempty"`
	// Live: the server holds the run's events (started, resumed or watched here).
	Live      bool       `json:"live"`
	StartedAt *time.Time `json:"started_at,omitempty"`
	UpdatedAt *time.Time `json:"updated_at,omitempty"`
}

// PendingApproval is an approval waiting for an answer.
type PendingApproval struct {
	ApprovalID string          `json:"approval_id"`
	Name       string          `json:"name"`
	Approval   *event.Approval `json:"approval,omitempty"`
}

func (s *Supervisor) info(r *Run) Info {
	r.mu.Lock()
	in := Info{RunID: r.ID, SessionID: r.SessionID, ParentID: r.ParentID, Status: r.status, Agent: r.agent,
		Turns: r.turns, Error: r.errMsg, Output: r.final, Prompt: r.Prompt, Events: r.dropped + int64(len(r.events)), Live: true}
	if r.usage != nil {
		u := *r.usage
		in.Usage = &u
	}
	t := r.Created
	in.StartedAt = &t
	for id, p := range r.pending {
		in.Approvals = append(in.Approvals, PendingApproval{ApprovalID: id, Name: p.ev.Name, Approval: p.ev.Approval})
	}
	r.mu.Unlock()
	slices.SortFunc(in.Approvals, func(a, b PendingApproval) int { return strings.Compare(a.ApprovalID, b.ApprovalID) })
	s.mu.Lock()
	for _, id := range s.order {
		if c := s.runs[id]; c != nil && c.ParentID == r.ID {
			in.Children = append(in.Children, id)
		}
	}
	s.mu.Unlock()
	return in
}

// get returns a run known in memory.
func (s *Supervisor) get(id string) *Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[id]
}

// list returns the runs in memory, newest first.
func (s *Supervisor) list() []*Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Run, 0, len(s.order))
	for i := len(s.order) - 1; i >= 0; i-- {
		out = append(out, s.runs[s.order[i]])
	}
	return out
}

// activeRun is the run active in sessionID ("" when none).
func (s *Supervisor) activeRun(sessionID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.sessions[sessionID]
	if ok && id == "" {
		return "(starting)"
	}
	return id
}

// Approve answers approval approvalID of run r.
func (s *Supervisor) Approve(r *Run, approvalID string, d tool.Decision) error {
	r.mu.Lock()
	p, ok := r.pending[approvalID]
	if ok {
		if err := checkForm(p.ev.Approval, d); err != nil {
			// The form stays open: the person corrects it.
			r.mu.Unlock()
			return badRequest("%v", err)
		}
		p.timer.Stop()
		delete(r.pending, approvalID)
	}
	h := r.handle
	r.mu.Unlock()
	if !ok || h == nil {
		return notFound("no approval %s is waiting in run %s", approvalID, r.ID)
	}
	if err := h.Approve(approvalID, d); err != nil {
		return notFound("no approval %s is waiting in run %s", approvalID, r.ID)
	}
	return nil
}

// Steer queues a message for the run's next turn.
func (s *Supervisor) Steer(r *Run, text string) error {
	r.mu.Lock()
	h, st := r.handle, r.status
	r.mu.Unlock()
	if h == nil || st != "running" {
		return conflict("run %s is not running", r.ID)
	}
	h.Mailbox().Push(mailbox.Message{ID: newID("msg_"), Text: text, Source: "user"})
	return nil
}

// Cancel stops the run (interrupted, resumable).
func (s *Supervisor) Cancel(r *Run) error {
	r.mu.Lock()
	h, st := r.handle, r.status
	r.mu.Unlock()
	if h == nil || st != "running" {
		return conflict("run %s is not running", r.ID)
	}
	h.Cancel(errs.New(errs.KindCancelled, "cancelled by a client of lovia serve", ""))
	return nil
}

// childEvent records an event of a subagent child (app.SubagentEvents); children are
// named "<parent run id>.sub<n>".
func (s *Supervisor) childEvent(childID string, ev event.Event) {
	s.mu.Lock()
	r := s.runs[childID]
	if r == nil {
		parent := childID
		if i := strings.LastIndex(childID, ".sub"); i > 0 {
			parent = childID[:i]
		}
		sid := ""
		if p := s.runs[parent]; p != nil {
			sid = p.SessionID
		}
		r = &Run{ID: childID, ParentID: parent, SessionID: sid, Created: time.Now(), status: "running"}
		s.runs[childID] = r
		s.order = append(s.order, childID)
	}
	s.mu.Unlock()
	r.mu.Lock()
	r.append(ev, s.opts.MaxEvents)
	r.mu.Unlock()
}

// evict forgets the oldest finished runs past the bound (their records stay in the
// store).
func (s *Supervisor) evict() {
	s.mu.Lock()
	defer s.mu.Unlock()
	excess := len(s.order) - s.opts.MaxRuns
	if excess <= 0 {
		return
	}
	keep := s.order[:0]
	for _, id := range s.order {
		r := s.runs[id]
		if excess > 0 && r.Status() != "running" && s.sessions[r.SessionID] != id {
			delete(s.runs, id)
			excess--
			continue
		}
		keep = append(keep, id)
	}
	s.order = keep
}

// Shutdown interrupts every live run (SIGTERM: status interrupted, resumable) and
// waits for them to record it, at most until ctx ends.
func (s *Supervisor) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	var hs []*runtime.Handle
	for _, r := range s.runs {
		r.mu.Lock()
		if r.handle != nil && r.status == "running" {
			hs = append(hs, r.handle)
		}
		r.mu.Unlock()
	}
	s.mu.Unlock()
	for _, h := range hs {
		h.Cancel(errs.New(errs.KindTerminated, "terminated (lovia serve stopped)", ""))
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return errors.New("runs did not stop in time")
	}
}

func errMessage(err error) string {
	msg := err.Error()
	if h := errs.HintOf(err); h != "" {
		msg += " (" + h + ")"
	}
	return msg
}

func newID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// validID accepts ids like lovia's own: 1–128 letters, digits, '.', '_', '-', ':'.
func validID(id string) bool {
	if id == "" || len(id) > 128 || id == "." || id == ".." {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' || r == ':') {
			return false
		}
	}
	return true
}
