package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// maxConcurrentTools bounds parallel tool execution within one turn.
const maxConcurrentTools = 16

// call is one tool call moving through preflight and execution.
type call struct {
	entry    transcript.Entry
	te       *toolEntry
	rc       *tool.RunContext
	approval *event.Approval // shown to the user, with Decision filled
	started  time.Time
}

// outcome is a finished call.
type outcome struct {
	c        *call
	res      tool.Result
	duration time.Duration
}

// toolPhase preflights calls serially in request order, then executes them:
// concurrently where allowed, barriers alone. Each result is appended, reported and
// checkpointed in completion order.
func (l *loop) toolPhase(ctx context.Context, calls []transcript.Entry) error {
	var ready []*call
	for _, e := range calls {
		c := &call{entry: e, started: l.now()}
		l.emit(ctx, event.Event{Type: event.ToolCallStarted, Turn: l.turns, CallID: e.CallID, Name: e.Name, Args: e.Args})
		res, ok, err := l.preflight(ctx, c)
		if err != nil {
			return err
		}
		if !ok {
			if err := l.record(ctx, outcome{c: c, res: res, duration: l.now().Sub(c.started)}); err != nil {
				return err
			}
			continue
		}
		ready = append(ready, c)
	}
	if len(ready) == 0 {
		return nil
	}

	done := make(chan outcome, len(ready))
	inflight := 0
	// waitUntil collects outcomes until at most n calls are in flight.
	waitUntil := func(n int) error {
		for inflight > n {
			select {
			case o := <-done:
				inflight--
				if err := l.record(ctx, o); err != nil {
					return err
				}
			case <-ctx.Done():
				return cancelError(ctx)
			}
		}
		return nil
	}
	for _, c := range ready {
		if c.te.barrier() {
			if err := waitUntil(0); err != nil {
				return err
			}
		} else if err := waitUntil(maxConcurrentTools - 1); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return cancelError(ctx)
		}
		inflight++
		c.started = l.now()
		go func(c *call) { done <- l.invoke(ctx, c) }(c)
		if c.te.barrier() {
			if err := waitUntil(0); err != nil {
				return err
			}
		}
	}
	return waitUntil(0)
}

// preflight runs the gates of one call in order: budget, lookup, argument validation,
// approval. ok=false means res is the call's (error) result and it must not run.
func (l *loop) preflight(ctx context.Context, c *call) (res tool.Result, ok bool, err error) {
	e := c.entry
	if b := l.budget(); b > 0 {
		if used := l.currentUsage().Total(); used >= b {
			return tool.Result{Text: fmt.Sprintf("error: not run: the run's token budget is exhausted (%d of %d tokens used)", used, b), IsError: true}, false, nil
		}
	}
	if err := l.checkCost(); err != nil {
		return tool.Result{Text: "error: not run: " + err.Error(), IsError: true}, false, nil
	}
	te := l.active.tools[e.Name]
	if te == nil {
		return tool.Result{Text: fmt.Sprintf("error: unknown tool %q; available tools: %s", e.Name, l.active.sortedToolNames()), IsError: true}, false, nil
	}
	c.te = te
	base := l.rc.Load()
	rc := *base
	callID, name := e.CallID, e.Name
	rc.Ask = func(ctx context.Context, a *event.Approval) (tool.Decision, error) {
		return l.ask(ctx, callID, name, nil, a)
	}
	c.rc = &rc

	if raw, bad := l.badArgs[e.CallID]; bad {
		if len(raw) > 200 {
			raw = raw[:200] + "..."
		}
		return tool.Result{Text: fmt.Sprintf("error: invalid arguments for %s: not valid JSON: %s. Send a JSON object.", name, raw), IsError: true}, false, nil
	}
	if te.validate != nil {
		if verr := te.validate(e.Args); verr != nil {
			return tool.Result{Text: fmt.Sprintf("error: invalid arguments for %s: %v. Fix the arguments and call the tool again.", name, verr), IsError: true}, false, nil
		}
	} else if !json.Valid(e.Args) {
		return tool.Result{Text: fmt.Sprintf("error: invalid arguments for %s: not valid JSON. Fix the arguments and call the tool again.", name), IsError: true}, false, nil
	}

	var hookAsk []string
	for _, g := range l.active.gates {
		v, gerr := callGate(ctx, g, c.rc, e)
		if gerr != nil {
			if ctx.Err() != nil {
				return tool.Result{}, false, cancelError(ctx)
			}
			l.log.Warn("tool gate failed (call proceeds)", "tool", name, "err", gerr)
			continue
		}
		if v.Block {
			msg := v.Message
			if msg == "" {
				msg = "no reason given"
			}
			return tool.Result{Text: "error: blocked by a pre-tool hook: " + msg, IsError: true}, false, nil
		}
		if len(v.Args) > 0 {
			// A hook rewrote the arguments: they are checked like the model's own.
			args := json.RawMessage(v.Args)
			if te.validate != nil {
				if verr := te.validate(args); verr != nil {
					return tool.Result{Text: fmt.Sprintf("error: a pre-tool hook rewrote the arguments of %s into invalid ones: %v", name, verr), IsError: true}, false, nil
				}
			} else if !json.Valid(args) {
				return tool.Result{Text: "error: a pre-tool hook rewrote the arguments of " + name + " into invalid JSON", IsError: true}, false, nil
			}
			e.Args = args
			c.entry.Args = args
		}
		if v.Ask {
			hookAsk = append(hookAsk, v.Message)
		}
	}
	if len(hookAsk) > 0 {
		// A hook asked for confirmation: the user decides even when the policy would
		// allow the call (an "allow for session" is not offered to be remembered).
		summary := "A hook asks to confirm " + name
		if m := strings.TrimSpace(strings.Join(hookAsk, "; ")); m != "" {
			summary += ": " + m
		}
		a := &event.Approval{Kind: "tool", Summary: summary}
		d, err := l.ask(ctx, callID, name, e.Args, a)
		if err != nil {
			return tool.Result{}, false, err
		}
		if !d.Allow {
			msg := "error: denied by user (a hook asked for confirmation)"
			if d.Message != "" {
				msg += ": " + d.Message
			}
			return tool.Result{Text: msg, IsError: true}, false, nil
		}
	}

	if te.spec.Approval == nil || l.granted[name] {
		return tool.Result{}, true, nil
	}
	a, aerr := te.spec.Approval(ctx, c.rc, e.Args)
	if aerr != nil {
		if ctx.Err() != nil {
			return tool.Result{}, false, cancelError(ctx)
		}
		return tool.Result{Text: "error: denied: " + aerr.Error(), IsError: true}, false, nil
	}
	if a == nil {
		return tool.Result{}, true, nil
	}
	d, err := l.ask(ctx, callID, name, e.Args, a)
	if err != nil {
		return tool.Result{}, false, err
	}
	shown := *a
	c.approval = &shown
	switch {
	case !d.Allow && l.opts.Approvals == ApprovalDenyAll:
		shown.Decision = "denied_by_default"
		return tool.Result{Text: "error: denied: this call needs approval and nobody can approve it in this run (non-interactive, --approve none). Do not retry it; find another way or report what you would need.", IsError: true}, false, nil
	case !d.Allow:
		shown.Decision = "denied"
		msg := "error: denied by user"
		if d.Message != "" {
			msg += ": " + d.Message
		}
		return tool.Result{Text: msg, IsError: true}, false, nil
	case d.Session:
		shown.Decision = "allowed_for_session"
		if te.spec.Grant != nil {
			te.spec.Grant(a)
		} else {
			l.granted[name] = true
		}
	case l.opts.Approvals == ApprovalAllowAll:
		shown.Decision = "allowed_by_default"
	default:
		shown.Decision = "allowed"
	}
	return tool.Result{}, true, nil
}

// ask resolves one approval request according to Options.Approvals.
func (l *loop) ask(ctx context.Context, callID, name string, args json.RawMessage, a *event.Approval) (tool.Decision, error) {
	switch l.opts.Approvals {
	case ApprovalDenyAll:
		return tool.Decision{}, nil
	case ApprovalAllowAll:
		return tool.Decision{Allow: true}, nil
	}
	d, err := l.h.waitApproval(ctx, callID, func() {
		l.emit(ctx, event.Event{Type: event.ApprovalRequired, Turn: l.rc.Load().Turn, CallID: callID, Name: name, Args: args, Approval: a})
	})
	if err != nil {
		return d, cancelError(ctx)
	}
	return d, nil
}

// invoke runs a call with its retries and per-attempt timeout. It never returns an
// error: failures become error results the model sees.
func (l *loop) invoke(ctx context.Context, c *call) outcome {
	spec := c.te.spec
	attempts := spec.Retries + 1
	if attempts < 1 {
		attempts = 1
	}
	var res tool.Result
	gate := l.newProgressGate(ctx, c)
	defer gate.stop()
	pctx := gate.withProgress(ctx)
	for i := 0; i < attempts; i++ {
		var err error
		res, err = l.attempt(pctx, c)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			break
		}
		res = tool.Result{Text: "error: " + tool.ErrorText(err), IsError: true}
		msg := err.Error()
		if l.opts.Scrub != nil {
			msg = l.opts.Scrub(msg)
		}
		l.log.Debug("tool attempt failed", "tool", spec.Name, "attempt", i+1, "err", msg)
	}
	return outcome{c: c, res: res, duration: l.now().Sub(c.started)}
}

var errToolTimeout = errors.New("timed out")

// attempt is one invocation. A tool that ignores its context is abandoned when the
// timeout or the run's cancellation fires, so neither can hang the run.
func (l *loop) attempt(ctx context.Context, c *call) (tool.Result, error) {
	spec := c.te.spec
	actx, cancel := context.WithCancel(ctx)
	if spec.Timeout > 0 {
		actx, cancel = context.WithTimeoutCause(ctx, spec.Timeout, errToolTimeout)
	}
	defer cancel()
	type ret struct {
		res tool.Result
		err error
	}
	ch := make(chan ret, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				l.log.Error("tool panic", "tool", spec.Name, "panic", r, "stack", string(debug.Stack()))
				ch <- ret{err: fmt.Errorf("tool %s panicked: %v", spec.Name, r)}
			}
		}()
		r, err := c.te.tool.Invoke(actx, c.rc, c.entry.Args)
		ch <- ret{r, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil && errors.Is(context.Cause(actx), errToolTimeout) && ctx.Err() == nil {
			return tool.Result{}, fmt.Errorf("tool %s timed out after %s", spec.Name, spec.Timeout)
		}
		return r.res, r.err
	case <-actx.Done():
		if ctx.Err() == nil && errors.Is(context.Cause(actx), errToolTimeout) {
			return tool.Result{}, fmt.Errorf("tool %s timed out after %s", spec.Name, spec.Timeout)
		}
		return tool.Result{}, ctx.Err()
	}
}

// record appends a call's result (truncated to its cap), reports it and checkpoints.
// After cancellation nothing is recorded: the call stays dangling for resume.
func (l *loop) record(ctx context.Context, o outcome) error {
	if ctx.Err() != nil {
		return cancelError(ctx)
	}
	c, res := o.c, o.res
	if res.Handoff != "" && (c.te == nil || !c.te.handoff) {
		res.Handoff = "" // only the loop's own handoff tools may hand off
	}
	if res.Handoff != "" {
		if l.pendingHandoff == "" {
			l.pendingHandoff = res.Handoff
		} else if l.pendingHandoff != res.Handoff {
			res = tool.Result{Text: fmt.Sprintf("error: not transferred: the conversation is already being handed to %s in this turn", l.pendingHandoff), IsError: true}
		}
	}
	if l.opts.Scrub != nil {
		// The one place every tool result passes (successes, errors, denials, hook
		// blocks) before the model, the transcript, the database or an event sees it.
		res.Text = l.opts.Scrub(res.Text)
		res.Diff = l.opts.Scrub(res.Diff)
	}
	max := l.outputCap(c.te)
	text, truncated := tool.Truncate(res.Text, max)
	e := transcript.ToolResult(c.entry.CallID, c.entry.Name, text, res.IsError)
	e.RunID = l.opts.RunID
	e.Agent = l.active.agent.Name
	e.Truncated = truncated
	e.Attachments = res.Attachments
	l.appendEntries(e)
	typ := event.ToolCallCompleted
	if res.IsError {
		typ = event.ToolCallFailed
	}
	l.emit(ctx, event.Event{Type: typ, Turn: l.turns, CallID: e.CallID, Name: e.Name, Output: text, IsError: res.IsError,
		Truncated: truncated, DurationMS: o.duration.Milliseconds(), Approval: c.approval, Diff: res.Diff})
	return l.checkpoint(ctx, store.StatusRunning)
}

func (l *loop) outputCap(te *toolEntry) int {
	if te != nil && te.spec.MaxOutputChars != 0 {
		return te.spec.MaxOutputChars
	}
	if n := l.active.agent.Limits.MaxToolOutputChars; n != 0 {
		return n
	}
	return tool.DefaultMaxOutputChars
}

func callGate(ctx context.Context, g plugin.ToolGate, rc *tool.RunContext, e transcript.Entry) (v plugin.GateResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("tool gate panicked: %v", r)
		}
	}()
	return g(ctx, rc, e)
}
