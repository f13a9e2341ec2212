// Package subagents is the built-in subagent plugin: spawn_subagent, wait_subagents
// and cancel_subagent. It is invisible to the run loop: children are plain runs
// (runtime.Start, their own run ids, ParentRunID recorded) on goroutines, and their
// reports re-enter the parent only through the mailbox — pushed when a child ends,
// withdrawn again when wait_subagents returns the report itself — never as a late
// tool result, which would break call/result pairing. Leftover children are cancelled
// when the parent run ends.
package subagents

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/lovia-dev/lovia/internal/textutil"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lovia-dev/lovia/internal/agent"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/mailbox"
	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/runtime"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// Defaults.
const (
	DefaultMaxConcurrent = 4
	DefaultWait          = 5 * time.Minute
	maxWait              = 30 * time.Minute
	maxReportChars       = 20_000
)

// ChildSpec describes one child the model asked for.
type ChildSpec struct {
	// ID is the child's id, also used as its run id.
	ID string
	// Preset names a configured agent preset ("" = the default child agent).
	Preset string
	// Instructions, when set, are the child's own instructions (instead of a preset's).
	Instructions string
	Task         string
	// Tools, when non-empty, restricts the child to these tool names.
	Tools       []string
	ParentRunID string
	SessionID   string
	Deps        any
}

// Builder builds a child's agent and run options; the application decides presets,
// models, workspace and stores. Start-time fields the plugin owns (RunID,
// ParentRunID, Approvals) are overwritten.
type Builder func(ctx context.Context, spec ChildSpec) (*agent.Agent, runtime.Options, error)

// Config configures the plugin.
type Config struct {
	Build Builder
	// Presets lists the preset names the model may pick, with what each is for.
	Presets map[string]string
	// MaxConcurrent caps running children per parent run (0 = 4).
	MaxConcurrent int
	// ForwardApprovals routes a child's approval requests to the parent's front end
	// (rc.Ask); otherwise every ask of a child is denied (ApprovalDenyAll).
	ForwardApprovals bool
	// AllowNested lets a child spawn children of its own (off: the tools are only
	// offered to top-level runs).
	AllowNested bool
	// OnEvent, when set, receives every event of every child (for the TUI).
	OnEvent func(childID string, ev event.Event)
}

// Plugin is the subagents plugin.
type Plugin struct {
	cfg    Config
	logger *slog.Logger
}

// New returns the plugin; cfg.Build is required. logger may be nil.
func New(cfg Config, logger *slog.Logger) (*Plugin, error) {
	if cfg.Build == nil {
		return nil, errs.New(errs.KindInternal, "subagents: no child builder", "pass Config.Build")
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = DefaultMaxConcurrent
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Plugin{cfg: cfg, logger: logger}, nil
}

// Name implements plugin.Plugin.
func (*Plugin) Name() string { return "subagents" }

// Status of a child.
const (
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
	// StatusLost: the child was running when the parent run was interrupted (crash);
	// a resumed parent knows it only from its transcript.
	StatusLost = "lost"
)

type child struct {
	id     string
	task   string
	handle *runtime.Handle
	done   chan struct{}

	// Set under manager.mu once, before done is closed.
	status string
	output string
	errMsg string
	turns  int

	// Guarded by manager.mu.
	pushed    bool // the report was pushed to the parent's mailbox
	collected bool // wait_subagents returned the report
}

// manager is one parent run's children.
type manager struct {
	p      *Plugin
	parent *tool.RunContext
	ctx    context.Context // children live under it; Close cancels it
	cancel context.CancelFunc

	mu       sync.Mutex
	children map[string]*child
	order    []string
	seq      int // highest child number used
	wg       sync.WaitGroup

	recovered sync.Once
}

// recover registers children an earlier attempt of this run started (a resumed run
// after a crash): they are lost, and new ids must not reuse their numbers.
func (m *manager) recover(rc *tool.RunContext) {
	m.recovered.Do(func() {
		if rc == nil || rc.Entries == nil {
			return
		}
		for _, e := range rc.Entries() {
			if e.Type != transcript.TypeToolResult || e.Name != "spawn_subagent" || e.IsError {
				continue
			}
			rest, ok := strings.CutPrefix(e.Text, "Started subagent ")
			if !ok {
				continue
			}
			fields := strings.Fields(rest)
			if len(fields) == 0 {
				continue
			}
			id := strings.TrimSuffix(fields[0], ".")
			m.mu.Lock()
			if _, known := m.children[id]; !known {
				c := &child{id: id, task: "(started before this run was interrupted)", done: make(chan struct{}), status: StatusLost,
					errMsg: "the subagent was running when this run was interrupted; its work is lost. Spawn it again if you still need it."}
				close(c.done)
				m.children[id] = c
				m.order = append(m.order, id)
			}
			if i := strings.LastIndex(id, ".sub"); i >= 0 {
				var n int
				if _, err := fmt.Sscan(id[i+4:], &n); err == nil && n > m.seq {
					m.seq = n
				}
			}
			m.mu.Unlock()
		}
	})
}

// Setup implements plugin.Plugin.
func (p *Plugin) Setup(ctx context.Context, rc *tool.RunContext) (*plugin.Contribution, error) {
	if rc != nil && rc.ParentRunID != "" && !p.cfg.AllowNested {
		return &plugin.Contribution{}, nil
	}
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m := &manager{p: p, parent: rc, ctx: cctx, cancel: cancel, children: map[string]*child{}}
	return &plugin.Contribution{
		Tools:        []tool.Tool{m.spawnTool(), m.waitTool(), m.cancelTool()},
		Instructions: p.instructions(),
		Close:        m.close,
	}, nil
}

func (p *Plugin) instructions() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Subagents\nFor independent, well-scoped parts of a larger task (researching several areas, checking several files), start subagents with spawn_subagent (at most %d at once); each works alone with a fresh context and reports back. Give each a self-contained task. Continue your own work meanwhile, and call wait_subagents before you answer if you need their reports; reports that arrive while you work appear as messages. Unfinished subagents are cancelled when you give your final answer.", p.cfg.MaxConcurrent)
	if len(p.cfg.Presets) > 0 {
		names := make([]string, 0, len(p.cfg.Presets))
		for n := range p.cfg.Presets {
			names = append(names, n)
		}
		sort.Strings(names)
		b.WriteString("\nPresets:")
		for _, n := range names {
			fmt.Fprintf(&b, "\n- %s: %s", n, p.cfg.Presets[n])
		}
	}
	return b.String()
}

// newID names the n-th child of a parent run: "<parent run id>.sub<n>" (run ids are
// global keys of the checkpointer, so the parent's id keeps them unique; a random
// suffix stands in when there is no parent id).
func (m *manager) newID() string {
	parent := ""
	if m.parent != nil {
		parent = m.parent.RunID
	}
	if parent == "" {
		var b [4]byte
		_, _ = rand.Read(b[:])
		parent = "run_" + hex.EncodeToString(b[:])
	}
	m.seq++
	return fmt.Sprintf("%s.sub%d", parent, m.seq)
}

type spawnArgs struct {
	Task         string   `json:"task" jsonschema:"description=The complete task for the subagent: goal, context, constraints and what to report back"`
	Preset       string   `json:"preset,omitempty" jsonschema:"description=Optional preset name (see Presets in your instructions)"`
	Instructions string   `json:"instructions,omitempty" jsonschema:"description=Optional system instructions for the subagent instead of a preset"`
	Tools        []string `json:"tools,omitempty" jsonschema:"description=Optional subset of tool names the subagent may use"`
}

func (m *manager) running() int {
	n := 0
	for _, c := range m.children {
		if c.status == "" {
			n++
		}
	}
	return n
}

func (m *manager) spawnTool() tool.Tool {
	return tool.NewResult("spawn_subagent", "Start a subagent on an independent task. It runs in the background with its own context; returns its id at once.",
		func(ctx context.Context, rc *tool.RunContext, a spawnArgs) (tool.Result, error) {
			m.recover(rc)
			task := strings.TrimSpace(a.Task)
			if task == "" {
				return tool.Result{Text: "task is empty: describe the subagent's whole task", IsError: true}, nil
			}
			if a.Preset != "" && len(m.p.cfg.Presets) > 0 {
				if _, ok := m.p.cfg.Presets[a.Preset]; !ok {
					return tool.Result{Text: fmt.Sprintf("unknown preset %q; available: %s", a.Preset, presetNames(m.p.cfg.Presets)), IsError: true}, nil
				}
			}
			m.mu.Lock()
			if n := m.running(); n >= m.p.cfg.MaxConcurrent {
				m.mu.Unlock()
				return tool.Result{Text: fmt.Sprintf("%d subagents are already running (the limit): call wait_subagents, or cancel_subagent one, before starting another", n), IsError: true}, nil
			}
			if m.ctx.Err() != nil {
				m.mu.Unlock()
				return tool.Result{Text: "the run is ending; no new subagents", IsError: true}, nil
			}
			id := m.newID()
			c := &child{id: id, task: task, done: make(chan struct{})}
			m.children[id] = c
			m.order = append(m.order, id)
			m.mu.Unlock()

			spec := ChildSpec{ID: id, Preset: a.Preset, Instructions: a.Instructions, Task: task, Tools: a.Tools}
			if rc != nil {
				spec.ParentRunID, spec.SessionID, spec.Deps = rc.RunID, rc.SessionID, rc.Deps
			}
			ag, opts, err := m.p.cfg.Build(ctx, spec)
			if err == nil && ag == nil {
				err = errors.New("the builder returned no agent")
			}
			if err != nil {
				m.mu.Lock()
				delete(m.children, id)
				m.order = m.order[:len(m.order)-1]
				m.mu.Unlock()
				return tool.Result{Text: "could not start the subagent: " + err.Error(), IsError: true}, nil
			}
			if len(a.Tools) > 0 {
				ag = restrictTools(ag, a.Tools)
			}
			opts.RunID = id
			opts.IfRunExists = runtime.FailRun
			opts.ParentRunID = spec.ParentRunID
			forward := m.p.cfg.ForwardApprovals && m.parent != nil && m.parent.Ask != nil
			if forward {
				opts.Approvals = runtime.ApprovalInteractive
			} else {
				opts.Approvals = runtime.ApprovalDenyAll
			}
			c.handle = runtime.Start(m.ctx, ag, runtime.Text(task), opts)
			m.wg.Add(1)
			go m.watch(c, forward)
			return tool.Result{Text: fmt.Sprintf("Started subagent %s. Its report will arrive as a message, or call wait_subagents.", id)}, nil
		}, tool.Parallel(false))
}

func presetNames(p map[string]string) string {
	names := make([]string, 0, len(p))
	for n := range p {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// restrictTools keeps only the named tools of the agent itself (plugin tools are the
// builder's business: it receives the subset in ChildSpec.Tools).
func restrictTools(a *agent.Agent, names []string) *agent.Agent {
	keep := map[string]bool{}
	for _, n := range names {
		keep[n] = true
	}
	return a.With(func(c *agent.Agent) {
		var ts []tool.Tool
		for _, t := range c.Tools {
			if keep[t.Spec().Name] {
				ts = append(ts, t)
			}
		}
		c.Tools = ts
	})
}

// watch drains a child's events, answers or forwards its approvals, records the
// outcome and pushes the report to the parent's mailbox.
func (m *manager) watch(c *child, forward bool) {
	defer m.wg.Done()
	for ev := range c.handle.Events() {
		if m.p.cfg.OnEvent != nil {
			m.p.cfg.OnEvent(c.id, ev)
		}
		if forward && ev.Type == event.ApprovalRequired && ev.Approval != nil {
			a := *ev.Approval
			a.Summary = "[subagent " + c.id + "] " + a.Summary
			d, err := m.parent.Ask(m.ctx, &a)
			if err != nil {
				d = tool.Decision{}
			}
			_ = c.handle.Approve(ev.CallID, d)
		}
	}
	res, err := c.handle.Result()
	status, output, errMsg, turns := StatusCompleted, "", "", 0
	if res != nil {
		output = res.Output
		if len(res.StructuredOutput) > 0 {
			output = string(res.StructuredOutput)
		}
		turns = res.Turns
	}
	if err != nil {
		status = StatusFailed
		if errs.KindOf(err) == errs.KindCancelled || m.ctx.Err() != nil {
			status = StatusCancelled
		}
		errMsg = err.Error()
	}
	m.mu.Lock()
	c.status, c.output, c.errMsg, c.turns = status, output, errMsg, turns
	deliver := m.ctx.Err() == nil && m.parent != nil && m.parent.Mailbox != nil && status != StatusCancelled
	c.pushed = deliver
	m.mu.Unlock()
	// Push before done is closed, so a wait_subagents that sees the child done can
	// always withdraw the message it is about to return itself.
	if deliver {
		m.parent.Mailbox.Push(mailbox.Message{ID: "subagent:" + c.id, Source: "subagent:" + c.id, Text: report(c)})
	}
	close(c.done)
}

func report(c *child) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[subagent %s %s", c.id, c.status)
	if c.turns > 0 {
		fmt.Fprintf(&b, " after %d turns", c.turns)
	}
	fmt.Fprintf(&b, "] task: %s\n", textutil.Clip(c.task, 200))
	if c.errMsg != "" {
		b.WriteString("error: " + c.errMsg + "\n")
	}
	out := strings.TrimSpace(c.output)
	if out == "" {
		out = "(no output)"
	}
	out, _ = tool.Truncate(out, maxReportChars)
	b.WriteString(out)
	return b.String()
}

type waitArgs struct {
	IDs            []string `json:"ids,omitempty" jsonschema:"description=Subagent ids to wait for (default: all started ones)"`
	TimeoutSeconds int      `json:"timeout_seconds,omitempty" jsonschema:"description=Give up waiting after this many seconds (default 300),minimum=1,maximum=1800"`
}

func (m *manager) waitTool() tool.Tool {
	return tool.NewResult("wait_subagents", "Wait until subagents finish (or the timeout passes) and return their reports.",
		func(ctx context.Context, rc *tool.RunContext, a waitArgs) (tool.Result, error) {
			m.recover(rc)
			m.mu.Lock()
			ids := a.IDs
			if len(ids) == 0 {
				ids = append([]string(nil), m.order...)
			}
			var targets []*child
			for _, id := range ids {
				c, ok := m.children[id]
				if !ok {
					m.mu.Unlock()
					return tool.Result{Text: fmt.Sprintf("no subagent %q in this run; known: %s", id, strings.Join(m.order, ", ")), IsError: true}, nil
				}
				targets = append(targets, c)
			}
			m.mu.Unlock()
			if len(targets) == 0 {
				return tool.Result{Text: "no subagents were started", IsError: true}, nil
			}
			timeout := DefaultWait
			if a.TimeoutSeconds > 0 {
				timeout = min(time.Duration(a.TimeoutSeconds)*time.Second, maxWait)
			}
			timer := time.NewTimer(timeout)
			defer timer.Stop()
			timedOut := false
		wait:
			for _, c := range targets {
				select {
				case <-c.done:
				case <-timer.C:
					timedOut = true
					break wait
				case <-ctx.Done():
					return tool.Result{Text: "wait_subagents was cancelled", IsError: true}, nil
				}
			}
			var parts []string
			for _, c := range targets {
				select {
				case <-c.done:
				default:
					parts = append(parts, fmt.Sprintf("[subagent %s still running] task: %s", c.id, textutil.Clip(c.task, 200)))
					continue
				}
				m.mu.Lock()
				already := c.collected
				c.collected = true
				m.mu.Unlock()
				switch {
				case already:
					parts = append(parts, fmt.Sprintf("[subagent %s %s] (report returned earlier)", c.id, c.status))
				case c.pushed && m.parent != nil && m.parent.Mailbox != nil && !m.parent.Mailbox.Remove("subagent:"+c.id):
					// The report was already delivered as a message at a turn boundary.
					parts = append(parts, fmt.Sprintf("[subagent %s %s] (report delivered earlier as a message)", c.id, c.status))
				default:
					parts = append(parts, report(c))
				}
			}
			text := strings.Join(parts, "\n\n")
			if timedOut {
				text = fmt.Sprintf("Timed out after %s; some subagents are still running (wait again or cancel them).\n\n", timeout) + text
			}
			return tool.Result{Text: text}, nil
		}, tool.Parallel(false))
}

type cancelArgs struct {
	ID string `json:"id" jsonschema:"description=The subagent id to stop"`
}

func (m *manager) cancelTool() tool.Tool {
	return tool.NewResult("cancel_subagent", "Stop a running subagent (its partial work is discarded).",
		func(ctx context.Context, rc *tool.RunContext, a cancelArgs) (tool.Result, error) {
			m.recover(rc)
			m.mu.Lock()
			c, ok := m.children[a.ID]
			known := strings.Join(m.order, ", ")
			m.mu.Unlock()
			if !ok {
				return tool.Result{Text: fmt.Sprintf("no subagent %q in this run; known: %s", a.ID, known), IsError: true}, nil
			}
			select {
			case <-c.done:
				return tool.Result{Text: fmt.Sprintf("subagent %s already ended (%s)", c.id, c.status)}, nil
			default:
			}
			c.handle.Cancel(errs.New(errs.KindCancelled, "cancelled by the parent agent", ""))
			select {
			case <-c.done:
			case <-time.After(10 * time.Second):
				return tool.Result{Text: fmt.Sprintf("asked subagent %s to stop; it has not ended yet", c.id)}, nil
			case <-ctx.Done():
			}
			m.mu.Lock()
			c.collected = true
			m.mu.Unlock()
			return tool.Result{Text: fmt.Sprintf("subagent %s cancelled", c.id)}, nil
		}, tool.Parallel(false))
}

// close cancels leftover children and waits for them (bounded).
func (m *manager) close(ctx context.Context) error {
	m.mu.Lock()
	m.cancel()
	m.mu.Unlock()
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-time.After(15 * time.Second):
		return errors.New("subagents did not stop within 15s")
	case <-ctx.Done():
		return ctx.Err()
	}
}
