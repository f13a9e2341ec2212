package runtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lovia-dev/lovia/internal/agent"
	"github.com/lovia-dev/lovia/internal/compaction"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

// loop owns all mutable state of one run. Only the run goroutine writes it; mu guards
// the parts other goroutines read (tools reading Entries/Usage, hooks).
type loop struct {
	h      *Handle
	entry  *agent.Agent
	input  []transcript.Entry
	opts   Options
	log    *slog.Logger
	now    func() time.Time
	policy compaction.Policy

	sessionID string
	startedAt time.Time
	// newRun: Start generated the run id, so no checkpoint of it exists yet.
	newRun bool

	mu sync.Mutex
	// buf[0] is the system head; buf[1:] is the body: session history (histLen
	// entries) followed by this run's entries. Entries are never modified once
	// appended, so readers may share the array (RunContext.Entries copies nothing).
	buf     []transcript.Entry
	histLen int
	usage   usage.Usage

	turns   int
	active  *active
	actives map[*agent.Agent]*active
	closers []namedCloser
	rc      atomic.Pointer[tool.RunContext]
	rcOnce  sync.Once
	rcFuncs tool.RunContext // newRC's template: the functions only

	emitMu sync.Mutex
	seq    int64

	saved           int // run entries already in the checkpoint
	contextState    json.RawMessage
	lastInputTokens int
	pendingHandoff  string
	badArgs         map[string]string // call id -> arguments that were not valid JSON
	callIDs         map[string]bool   // call ids of this run
	granted         map[string]bool
	repairsLeft     int
	// stopBlocks counts the final answers stop gates refused in this run.
	stopBlocks int
	callSeq    int          // generated call ids (run goroutine only)
	askSeq     atomic.Int64 // ids of approvals asked outside a tool call

	output     string
	structured json.RawMessage
	replay     *store.Snapshot
	refused    bool // the last model turn ended with finish reason "refusal"
	// partial is the text of a reply cut off by an error or an interrupt, recorded
	// (with a note) when the run ends unfinished.
	partial []transcript.Entry
	// owns: this process started the run or restored it from its checkpoint, so it
	// writes the checkpoint head (also on failure).
	owns    bool
	started bool // run_started emitted
}

func newLoop(h *Handle, a *agent.Agent, input []transcript.Entry, opts Options) *loop {
	l := &loop{h: h, entry: a, opts: opts, granted: map[string]bool{}, callIDs: map[string]bool{}, buf: make([]transcript.Entry, 1, 64)}
	l.log = opts.Logger
	if l.log == nil {
		l.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	l.now = opts.Now
	if l.now == nil {
		l.now = time.Now
	}
	l.policy = opts.ContextPolicy
	if l.policy == nil {
		l.policy = compaction.Noop{}
	}
	l.sessionID = opts.SessionID
	if l.sessionID == "" {
		l.sessionID = newID("ses_")
	}
	l.input = make([]transcript.Entry, 0, len(input))
	for _, e := range input {
		if e.IsSystem() {
			// Views never carry system entries: system input joins the run's extra
			// instructions (it applies to every agent of the run).
			l.opts.ExtraInstructions = strings.TrimSpace(l.opts.ExtraInstructions + "\n\n" + e.Text)
			continue
		}
		e = e.Clone()
		e.RunID = opts.RunID
		l.input = append(l.input, e)
	}
	return l
}

func newID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// runEntries is this run's own contribution (no history). The loop goroutine only.
func (l *loop) runEntries() []transcript.Entry { return l.buf[1+l.histLen:] }

// body is the conversation body (history + run entries). The loop goroutine only.
func (l *loop) body() []transcript.Entry { return l.buf[1:] }

func (l *loop) appendEntries(es ...transcript.Entry) {
	l.mu.Lock()
	l.buf = append(l.buf, es...)
	l.mu.Unlock()
}

// snapshotEntries is RunContext.Entries: system head + history + run entries. It
// shares the loop's array (capacity clipped, so appends by the caller copy); entries
// are immutable once appended, so this is O(1) and race-free.
func (l *loop) snapshotEntries() []transcript.Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buf[0].Text == "" {
		return l.buf[1:len(l.buf):len(l.buf)]
	}
	return l.buf[:len(l.buf):len(l.buf)]
}

// setSystem replaces the system head (first activation, handoff). It writes a new
// array so slices handed out earlier never change under their readers.
func (l *loop) setSystem(text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	nb := make([]transcript.Entry, len(l.buf), cap(l.buf))
	copy(nb, l.buf)
	nb[0] = transcript.SystemInput(text)
	l.buf = nb
}

func (l *loop) currentUsage() usage.Usage {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.usage
}

func (l *loop) addUsage(u usage.Usage) {
	l.mu.Lock()
	l.usage = l.usage.Add(u)
	l.mu.Unlock()
}

// newRC returns a fresh RunContext for agent name at turn; it is never mutated after.
func (l *loop) newRC(agentName string, turn int) *tool.RunContext {
	// The functions are the same in every turn's RunContext: made once, they cost
	// no closure allocations per turn.
	l.rcOnce.Do(func() {
		l.rcFuncs = tool.RunContext{
			Cancel: func(reason string) {
				l.h.Cancel(errs.New(errs.KindCancelled, "cancelled: "+reason, ""))
			},
			Entries:    l.snapshotEntries,
			Usage:      l.currentUsage,
			PriceUsage: l.opts.Prices.Apply,
			AddUsage:   l.addUsage,
			Ask: func(ctx context.Context, a *event.Approval) (tool.Decision, error) {
				id := fmt.Sprintf("ask_%d", l.askSeq.Add(1))
				return l.ask(ctx, id, "", nil, a)
			},
		}
	})
	rc := l.rcFuncs
	rc.RunID = l.opts.RunID
	rc.SessionID = l.sessionID
	rc.ParentRunID = l.opts.ParentRunID
	rc.Agent = agentName
	rc.Turn = turn
	rc.Mailbox = l.h.mbox
	rc.Deps = l.opts.Deps
	return &rc
}

// emit stamps ev, queues it for the stream and passes it to every hook. Hooks run
// under emitMu so they see events in sequence order.
func (l *loop) emit(ctx context.Context, ev event.Event) {
	l.emitMu.Lock()
	defer l.emitMu.Unlock()
	l.seq++
	ev.Seq = l.seq
	ev.Time = l.now()
	ev.RunID = l.opts.RunID
	var hooks []plugin.Hook
	if ac := l.activeForEmit(); ac != nil {
		if ev.Agent == "" {
			ev.Agent = ac.agent.Name
		}
		hooks = ac.hooks
	} else if l.entry != nil {
		hooks = l.entry.Hooks
	}
	l.h.events.push(ev)
	if len(hooks) == 0 {
		return
	}
	rc := l.rc.Load()
	if rc == nil {
		rc = l.newRC(ev.Agent, ev.Turn)
	}
	hctx := context.WithoutCancel(ctx)
	for _, hk := range hooks {
		if err := callHook(hctx, hk, ev, rc); err != nil {
			l.log.Warn("hook failed", "event", string(ev.Type), "err", err)
		}
	}
}

func callHook(ctx context.Context, hk plugin.Hook, ev event.Event, rc *tool.RunContext) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("hook panicked: %v", r)
		}
	}()
	return hk(ctx, ev, rc)
}

func (l *loop) activeForEmit() *active {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.active
}

func (l *loop) setActive(ac *active) {
	l.mu.Lock()
	l.active = ac
	l.mu.Unlock()
	l.setSystem(ac.system)
}

// run executes the whole run and always ends the stream with one terminal event.
func (l *loop) run(ctx context.Context) {
	var err error
	defer func() {
		if r := recover(); r != nil {
			l.log.Error("run loop panic", "panic", r, "stack", string(debug.Stack()))
			err = errs.Newf(errs.KindInternal, "this is a bug in lovia or one of its providers/plugins; the run can be resumed",
				"run loop panic: %v", r)
		}
		l.finish(ctx, err)
	}()
	err = l.execute(ctx)
}

func (l *loop) maxTurns() int {
	if l.opts.MaxTurns > 0 {
		return l.opts.MaxTurns
	}
	if l.active != nil {
		return l.active.agent.MaxTurns()
	}
	return agent.DefaultMaxTurns
}

func (l *loop) budget() int {
	if l.opts.BudgetTokens > 0 {
		return l.opts.BudgetTokens
	}
	if l.active != nil {
		return l.active.agent.Limits.BudgetTokens
	}
	return 0
}

// execute is setup + turns. It returns nil when the run completed (l.output set).
func (l *loop) execute(ctx context.Context) error {
	l.startedAt = l.now()
	cp := l.opts.Checkpointer
	var snap *store.Snapshot
	if cp != nil && l.newRun && ctx.Err() != nil {
		return cancelError(ctx) // what loading its checkpoint did
	}
	if cp != nil && !l.newRun {
		s, err := cp.Load(ctx, l.opts.RunID)
		switch {
		case err == nil:
			snap = s
		case errors.Is(err, store.ErrNotFound):
		default:
			return errs.Wrap(errs.KindStore, err, "loading the checkpoint of run "+l.opts.RunID, "check the database path (--db) and its permissions")
		}
	} else if l.opts.IfRunExists == ResumeOnly {
		return errs.New(errs.KindConfig, "cannot resume run "+l.opts.RunID+": no checkpoint store is configured", "resume with the same --db the run used")
	}
	switch {
	case snap == nil && l.opts.IfRunExists == ResumeOnly:
		return errs.Newf(errs.KindNotFound, "", "no checkpoint for run %q", l.opts.RunID)
	case snap != nil && l.opts.IfRunExists == FailRun:
		return errs.Newf(errs.KindRunConflict, "use a new run id, or none (one is generated)", "run %q already exists", l.opts.RunID)
	case snap != nil && l.opts.IfRunExists == RestartRun:
		r, ok := cp.(interface {
			Reset(ctx context.Context, runID string) error
		})
		if !ok {
			return errs.Newf(errs.KindConfig, "use a new --run-id", "run %q exists and this checkpoint store cannot restart runs", l.opts.RunID)
		}
		if err := r.Reset(ctx, l.opts.RunID); err != nil {
			return errs.Wrap(errs.KindStore, err, "restarting run "+l.opts.RunID, "")
		}
		snap = nil
	}

	// A session created for this run has no history: it is not read before the first
	// model call.
	newSession := snap == nil && (l.opts.NewSession || l.opts.SessionID == "")
	a := l.entry
	if snap != nil {
		// A run belongs to the session it started in, whatever the caller passes now.
		if sid := snap.Head.SessionID; sid != "" && sid != l.sessionID {
			if l.opts.SessionID != "" {
				l.log.Info("run belongs to another session; using it", "run", l.opts.RunID, "session", sid, "requested", l.opts.SessionID)
			}
			l.sessionID = sid
		}
		if snap.Head.ParentRunID != "" && l.opts.ParentRunID == "" {
			l.opts.ParentRunID = snap.Head.ParentRunID
		}
		if l.opts.Settings == nil {
			l.opts.Settings = snap.Head.Settings
		}
		if !snap.Head.StartedAt.IsZero() {
			l.startedAt = snap.Head.StartedAt
		}
		l.h.setSessionID(l.sessionID)
		if !sameInput(snap.Entries, l.input) {
			// An idempotency key re-issued with another prompt is a mistake, not a replay.
			return &errs.Error{Kind: errs.KindRunConflict, Err: ErrDifferentInput,
				Msg: fmt.Sprintf("run %q already exists with a different prompt", l.opts.RunID)}
		}
		if snap.Head.Status == store.StatusCompleted && snap.Head.Result != nil {
			l.replay = snap
			return l.replayCompleted(ctx, snap)
		}
		if snap.Head.ErrorKind == ErrorKindCarried {
			return carriedError(l.opts.RunID, snap.Head)
		}
		if snap.Head.ErrorKind == string(errs.KindGuardrail) {
			// Resuming would skip the input guardrails that stopped it.
			return errs.Newf(errs.KindGuardrail, "start a new run with different input",
				"run %q was stopped by a guardrail (%s) and cannot be resumed", l.opts.RunID, snap.Head.Error)
		}
		if name := snap.Head.Agent; name != "" && (a == nil || a.Name != name) {
			if a == nil || a.Find(name) == nil {
				return errs.Newf(errs.KindConfig, "resume with the agent (preset) the run started with",
					"run %q was last handled by agent %q, which is not reachable from agent %q", l.opts.RunID, name, agentName(a))
			}
			a = a.Find(name)
		}
	}
	l.h.setSessionID(l.sessionID)

	ac, err := l.activate(ctx, a)
	if err != nil {
		return err
	}
	l.setActive(ac)
	l.rc.Store(l.newRC(ac.agent.Name, l.turns))
	l.repairsLeft = repairTurns(ac.agent)
	l.emitStarted(ctx)

	// Prior conversation.
	if l.opts.Session != nil && newSession && ctx.Err() != nil {
		// What reading the session did: an interrupt during setup (a slow
		// session_start hook) stops the run here, before it is recorded.
		return cancelError(ctx)
	}
	if l.opts.Session != nil && !newSession {
		hist, err := l.opts.Session.Load(ctx, l.sessionID)
		if err != nil {
			return errs.Wrap(errs.KindStore, err, "loading session "+l.sessionID, "check the database path (--db) and its permissions")
		}
		for _, e := range hist {
			if e.IsSystem() {
				continue // the system head is rebuilt, never replayed from history
			}
			l.appendEntries(e)
		}
		l.histLen = len(l.buf) - 1
	}

	if snap != nil {
		return l.resume(ctx, snap)
	}
	l.owns = true

	carried, err := l.carry(ctx)
	if err != nil {
		return err
	}
	if len(l.input) == 0 && l.histLen == 0 && carried == "" {
		return errs.New(errs.KindUsage, "the run has no input", "give the run a prompt")
	}
	l.appendEntries(l.input...)
	if err := l.inputGuardrails(ctx); err != nil {
		return err
	}
	if err := l.checkpoint(ctx, store.StatusRunning); err != nil {
		return err
	}
	if carried != "" {
		l.markCarried(ctx, carried)
	}
	return l.turnsLoop(ctx)
}

func agentName(a *agent.Agent) string {
	if a == nil {
		return ""
	}
	return a.Name
}

func repairTurns(a *agent.Agent) int {
	switch {
	case a.OutputRepairTurns < 0:
		return 0
	case a.OutputRepairTurns == 0:
		return 1
	}
	return a.OutputRepairTurns
}

// emitStarted emits run_started once; every stream starts with it, even when setup
// fails before the agent is active.
func (l *loop) emitStarted(ctx context.Context) {
	if l.started {
		return
	}
	l.started = true
	name := agentName(l.entry)
	if l.replay != nil {
		name = l.replay.Head.Agent
	}
	l.emit(ctx, event.Event{Type: event.RunStarted, SessionID: l.sessionID, Agent: name, Images: event.ImagesOf(l.input)})
}

func (l *loop) checkLimits(ctx context.Context) error {
	if ctx.Err() != nil {
		return cancelError(ctx)
	}
	if max := l.maxTurns(); l.turns >= max {
		return errs.Newf(errs.KindMaxTurns, "",
			"max turns reached (%d)", max)
	}
	if b := l.budget(); b > 0 {
		if used := l.currentUsage().Total(); used >= b {
			return errs.Newf(errs.KindBudget, "",
				"token budget exhausted: %d of %d tokens used", used, b)
		}
	}
	return l.checkCost()
}

// checkCost stops the run once its cost reached Options.MaxBudgetUSD. A cost that
// became unknown (a subagent on a model without a price) stops it too: a budget
// the run cannot measure is not kept by carrying on.
func (l *loop) checkCost() error {
	b := l.opts.MaxBudgetUSD
	if b <= 0 {
		return nil
	}
	c, ok := l.currentUsage().Cost()
	switch {
	case !ok:
		return errs.New(errs.KindBudget, "the run's cost is unknown (a model without a price was used), so --max-budget-usd cannot be kept",
			"add the model's prices under pricing: in lovia's config (docs/cost.md)")
	case c >= b:
		return errs.Newf(errs.KindBudget, "raise the limit or narrow the task; `lovia resume "+l.opts.RunID+" --max-budget-usd N` continues this run",
			"cost budget exhausted: $%s of $%s used", usage.FormatUSD(c), usage.FormatUSD(b))
	}
	return nil
}

func (l *loop) turnsLoop(ctx context.Context) error {
	for {
		if err := l.checkLimits(ctx); err != nil {
			return err
		}
		l.turns++
		turn := l.turns
		l.rc.Store(l.newRC(l.active.agent.Name, turn))
		l.emit(ctx, event.Event{Type: event.TurnStarted, Turn: turn})
		for _, m := range l.h.mbox.Drain() {
			e := transcript.UserInput(m.Text)
			e.RunID = l.opts.RunID
			l.appendEntries(e)
			l.emit(ctx, event.Event{Type: event.UserMessageInjected, Turn: turn, Text: m.Text})
		}

		reply, err := l.modelPhase(ctx, turn)
		if err != nil {
			return err
		}
		var calls []transcript.Entry
		for _, e := range reply {
			if e.Type == transcript.TypeToolCall {
				calls = append(calls, e)
			}
		}
		done := false
		if len(calls) > 0 {
			if err := l.toolPhase(ctx, calls); err != nil {
				return err
			}
		} else {
			if done, err = l.finalOutput(ctx, reply); err != nil {
				return err
			}
		}
		l.emit(ctx, event.Event{Type: event.TurnEnded, Turn: turn, Usage: ptr(l.currentUsage())})
		if done {
			return nil
		}
		if err := l.applyHandoff(ctx); err != nil {
			return err
		}
	}
}

func ptr[T any](v T) *T { return &v }

// applyHandoff swaps the active agent when a handoff is pending: only the system head
// changes, the conversation body is kept.
func (l *loop) applyHandoff(ctx context.Context) error {
	name := l.pendingHandoff
	if name == "" {
		return nil
	}
	l.pendingHandoff = ""
	from := l.active.agent
	var target *agent.Agent
	for _, h := range from.Handoffs {
		if h != nil && h.Name == name {
			target = h
			break
		}
	}
	if target == nil {
		return errs.Newf(errs.KindInternal, "", "handoff target %q is not a handoff of agent %q", name, from.Name)
	}
	ac, err := l.activate(ctx, target)
	if err != nil {
		return err
	}
	l.setActive(ac)
	l.rc.Store(l.newRC(ac.agent.Name, l.turns))
	l.emit(ctx, event.Event{Type: event.HandoffOccurred, Turn: l.turns, Agent: ac.agent.Name, From: from.Name, To: ac.agent.Name})
	return l.checkpoint(ctx, store.StatusRunning)
}

func (l *loop) guardrailText() string {
	var sb strings.Builder
	for _, e := range l.runEntries() {
		if e.IsUser() {
			if sb.Len() > 0 {
				sb.WriteByte('\n')
			}
			sb.WriteString(e.Text)
		}
	}
	return sb.String()
}

func (l *loop) inputGuardrails(ctx context.Context) error {
	return l.runGuardrails(ctx, "input", l.active.inGuards, l.guardrailText())
}

func (l *loop) runGuardrails(ctx context.Context, which string, gs []plugin.Guardrail, text string) error {
	rc := l.rc.Load()
	for _, g := range gs {
		res, err := g(ctx, rc, text)
		if err != nil {
			if ctx.Err() != nil {
				return cancelError(ctx)
			}
			return errs.Wrap(errs.KindGuardrail, err, which+" guardrail failed", "")
		}
		if res.Tripped {
			msg := res.Message
			if msg == "" {
				msg = "no reason given"
			}
			return errs.Newf(errs.KindGuardrail, "", "%s guardrail tripped: %s", which, msg)
		}
	}
	return nil
}

func (l *loop) finalAgent() string {
	if l.replay != nil {
		if l.replay.Head.Result != nil && l.replay.Head.Result.FinalAgent != "" {
			return l.replay.Head.Result.FinalAgent
		}
		return l.replay.Head.Agent
	}
	if l.active != nil {
		return l.active.agent.Name
	}
	return agentName(l.entry)
}

func finishReason(err error) string {
	if err == nil {
		return "stop"
	}
	switch errs.KindOf(err) {
	case errs.KindMaxTurns:
		return "max_turns"
	case errs.KindBudget:
		return "budget"
	case errs.KindCancelled, errs.KindTerminated:
		return "cancelled"
	case errs.KindGuardrail:
		return "guardrail"
	case errs.KindRefusal:
		return "refusal"
	}
	return "error"
}

// finish persists the outcome, emits the terminal event, tears plugins down (LIFO) and
// publishes the Result. Order on success: output guardrails, checkpoint finalized,
// session append, run_completed.
func (l *loop) finish(ctx context.Context, err error) {
	pctx := context.WithoutCancel(ctx)
	if err == nil && l.replay == nil {
		err = safely(func() error { return l.complete(ctx) })
	}
	if err != nil && ctx.Err() != nil && !isCancelKind(err) {
		// The run was cancelled while something else failed because of it.
		err = cancelError(ctx)
	}
	l.emitStarted(pctx)
	status := store.StatusCompleted
	if err != nil {
		status = store.StatusFailed
		if isCancelKind(err) {
			status = store.StatusInterrupted
		}
		l.keepPartial(err)
		// Only a run this process started or restored writes its head: a refused
		// resume or a conflict must not clobber the stored run.
		if l.owns && l.opts.Checkpointer != nil {
			h := l.head(status)
			h.Error = err.Error()
			h.ErrorKind = string(errs.KindOf(err))
			if werr := safely(func() error { return l.writeCheckpoint(pctx, h) }); werr != nil {
				l.log.Error("checkpoint write on failure", "err", werr)
			}
		}
	}

	u := l.currentUsage()
	res := &Result{
		RunID:            l.opts.RunID,
		SessionID:        l.sessionID,
		Status:           status,
		Output:           l.output,
		StructuredOutput: l.structured,
		Usage:            u,
		Turns:            l.turns,
		FinishReason:     finishReason(err),
		FinalAgent:       l.finalAgent(),
		Replayed:         l.replay != nil,
	}
	if l.replay != nil && l.replay.Head.Result != nil {
		res.FinishReason = l.replay.Head.Result.FinishReason
	}
	l.mu.Lock()
	res.Entries = append([]transcript.Entry(nil), l.buf[1+l.histLen:]...)
	l.mu.Unlock()

	ev := event.Event{Type: event.RunCompleted, SessionID: l.sessionID, Status: string(status), Turns: l.turns,
		FinishReason: res.FinishReason, Usage: &u, Agent: res.FinalAgent}
	if err != nil {
		ev.Type = event.RunFailed
		ev.Error = errorEvent(err)
		res.Output, res.StructuredOutput = "", nil
	} else {
		ev.FinalOutput, ev.StructuredOutput = res.Output, res.StructuredOutput
	}
	l.emit(pctx, ev)

	for i := len(l.closers) - 1; i >= 0; i-- {
		c := l.closers[i]
		if cerr := safeClose(pctx, c.close); cerr != nil {
			l.log.Warn("plugin close failed", "plugin", c.name, "err", cerr)
		}
	}
	l.h.result, l.h.err = res, err
	l.h.events.close()
	l.h.cancel(nil)
	close(l.h.done)
}

// safely turns a panic in f (a store, a guardrail) into an error so the run still
// ends with its terminal event.
func safely(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errs.Newf(errs.KindInternal, "this is a bug; the run can be resumed", "panic while finishing the run: %v", r)
		}
	}()
	return f()
}

func safeClose(ctx context.Context, f func(context.Context) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("close panicked: %v", r)
		}
	}()
	return f(ctx)
}

func isCancelKind(err error) bool {
	k := errs.KindOf(err)
	return k == errs.KindCancelled || k == errs.KindTerminated
}
