package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/lovia-dev/lovia/internal/compaction"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

// render asks the context policy for this call's view and appends the plugin view
// injectors' transient entries.
func (l *loop) render(ctx context.Context, turn int, overflow, force bool) (compaction.Result, error) {
	ac := l.active
	res, err := l.policy.Compact(ctx, compaction.Request{
		RunID:           l.opts.RunID,
		SessionID:       l.sessionID,
		Body:            l.body(),
		System:          ac.system,
		Tools:           ac.toolSchemas,
		ToolNames:       ac.toolNames,
		ContextWindow:   ac.info.ContextWindow,
		LastInputTokens: l.lastInputTokens,
		State:           l.contextState,
		Overflow:        overflow,
		Force:           force,
	})
	if err != nil {
		if ctx.Err() != nil {
			return res, cancelError(ctx)
		}
		if _, ok := errAsKind(err); ok {
			return res, err
		}
		return res, errs.Wrap(errs.KindInternal, err, "context policy failed", "")
	}
	l.contextState = res.State
	if res.Compacted {
		info := res.Info
		if info == nil {
			info = &event.Compaction{}
		}
		info.Overflow = info.Overflow || overflow
		info.Forced = info.Forced || force
		l.emit(ctx, event.Event{Type: event.ContextCompacted, Turn: turn, Compaction: info})
	}
	if len(ac.injectors) > 0 {
		rc := l.rc.Load()
		var extra []transcript.Entry
		for i, inj := range ac.injectors {
			es, err := callInjector(ctx, inj, rc)
			if err != nil {
				l.log.Warn("view injector failed (skipped)", "index", i, "err", err)
				continue
			}
			for _, e := range es {
				e.Synthetic = true
				extra = append(extra, e)
			}
		}
		if len(extra) > 0 {
			// Clip so the append copies: the view may alias the transcript's array.
			v := res.View[:len(res.View):len(res.View)]
			res.View = append(v, extra...)
		}
	}
	return res, nil
}

func callInjector(ctx context.Context, inj plugin.ViewInjector, rc *tool.RunContext) (es []transcript.Entry, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("view injector panicked: %v", r)
		}
	}()
	return inj(ctx, rc)
}

// modelPhase renders the view, streams the reply, appends it and checkpoints.
func (l *loop) modelPhase(ctx context.Context, turn int) ([]transcript.Entry, error) {
	ac := l.active
	view, err := l.render(ctx, turn, false, l.h.forceCompact.Swap(false))
	if err != nil {
		return nil, err
	}
	req := provider.Request{
		Model:        ac.info.Model,
		System:       ac.system,
		Entries:      view.View,
		Tools:        ac.toolDefs,
		StablePrefix: view.StablePrefix,
	}
	if ac.outputValidate != nil && ac.nativeSchema {
		req.OutputSchema = ac.agent.OutputSchema
		req.OutputName = ac.agent.OutputName
	}
	var reply []transcript.Entry
	var u usage.Usage
	for attempt := 0; ; attempt++ {
		var streamed bool
		reply, u, streamed, err = l.stream(ctx, turn, req)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil, cancelError(ctx)
		}
		if errors.Is(err, provider.ErrContextOverflow) {
			if !streamed && attempt == 0 {
				again, rerr := l.render(ctx, turn, true, false)
				if rerr != nil {
					return nil, rerr
				}
				if again.Compacted {
					req.Entries, req.StablePrefix = again.View, again.StablePrefix
					continue
				}
			}
			return nil, errs.Wrap(errs.KindOverflow, err, "the conversation does not fit the model's context window",
				"start a new session (or /compact), or use a model with a larger context window")
		}
		if _, ok := errAsKind(err); ok {
			return nil, err
		}
		return nil, errs.Wrap(errs.KindProvider, err, "model call failed", "check the provider's status and your network; the run is saved and can be resumed")
	}
	if u.Requests == 0 {
		u.Requests = 1
	}
	u = l.opts.Prices.Apply(ac.info.Provider, ac.info.Model, u)
	l.addUsage(u)
	if u.InputTokens > 0 {
		l.lastInputTokens = u.InputTokens // the whole prompt: adapters count cached tokens inside InputTokens
	}

	var text strings.Builder
	for i := range reply {
		e := &reply[i]
		e.RunID = l.opts.RunID
		e.Agent = ac.agent.Name
		switch e.Type {
		case transcript.TypeToolCall:
			if e.CallID == "" {
				l.callSeq++
				e.CallID = fmt.Sprintf("call_%s_%d", l.opts.RunID, l.callSeq)
			}
			// Everything pairs by call id: a provider (or script) repeating an id
			// within the run gets it made unique.
			if l.callIDs[e.CallID] {
				base := e.CallID
				for n := 2; l.callIDs[e.CallID]; n++ {
					e.CallID = fmt.Sprintf("%s_%d", base, n)
				}
			}
			l.callIDs[e.CallID] = true
			if len(e.Args) == 0 {
				e.Args = json.RawMessage(`{}`)
			} else if !json.Valid(e.Args) {
				// Keep the record encodable (stores, stream-json): broken arguments are
				// kept as a JSON string and the call fails preflight with a clear result.
				raw := string(e.Args)
				e.Args, _ = json.Marshal(raw)
				if l.badArgs == nil {
					l.badArgs = map[string]string{}
				}
				l.badArgs[e.CallID] = raw
			}
		case transcript.TypeAssistantText:
			text.WriteString(e.Text)
		}
	}
	l.appendEntries(reply...)
	l.emit(ctx, event.Event{Type: event.MessageCompleted, Turn: turn, Text: text.String(), Usage: &u})
	if err := l.checkpoint(ctx, store.StatusRunning); err != nil {
		return nil, err
	}
	if l.refused {
		// A refusal is not an answer: the run fails and says what the model said.
		msg := strings.TrimSpace(text.String())
		if msg == "" {
			msg = "(no text)"
		}
		return nil, errs.Newf(errs.KindRefusal, "rephrase the request or use another model",
			"the model refused: %s", msg)
	}
	return reply, nil
}

// stream runs one provider call. streamed reports whether anything (not discarded)
// was received before an error.
func (l *loop) stream(ctx context.Context, turn int, req provider.Request) (reply []transcript.Entry, u usage.Usage, streamed bool, err error) {
	// What the loop body changes lives in one value: variables a range-over-func
	// body assigns move to the heap one by one.
	st := &streamState{}
	defer func() {
		if r := recover(); r != nil {
			l.log.Error("provider panic", "panic", r, "stack", string(debug.Stack()))
			reply, u, streamed = st.reply, st.u, st.streamed
			err = errs.Newf(errs.KindProvider, "this is a bug in the provider adapter; the run can be resumed", "provider panicked: %v", r)
		}
	}()
	l.partial = nil
	for d, derr := range l.active.prov.Stream(ctx, req) {
		if derr != nil {
			st.err = derr
			break
		}
		switch d.Kind {
		case provider.DeltaText:
			st.streamed = true
			st.pending.WriteString(d.Text)
			l.emit(ctx, event.Event{Type: event.TextDelta, Turn: turn, Text: d.Text})
		case provider.DeltaReasoning:
			st.streamed = true
			l.emit(ctx, event.Event{Type: event.ReasoningDelta, Turn: turn, Text: d.Text})
		case provider.DeltaToolCall:
			st.streamed = true
		case provider.DeltaEntry:
			if d.Entry != nil {
				st.streamed = true
				st.reply = append(st.reply, d.Entry.Clone())
				if d.Entry.Type == transcript.TypeAssistantText {
					st.pending.Reset()
				}
			}
		case provider.DeltaUsage:
			if d.Usage != nil {
				st.u = st.u.Add(*d.Usage)
			}
		case provider.DeltaFinish:
			l.refused = d.FinishReason == "refusal"
		case provider.DeltaDiscard:
			l.refused = false
			st.reply, st.streamed = st.reply[:0], false
			st.pending.Reset()
			l.emit(ctx, event.Event{Type: event.OutputDiscarded, Turn: turn, Text: d.Text})
		}
	}
	if st.err == nil && ctx.Err() != nil {
		st.err = cancelError(ctx)
	}
	if st.err != nil {
		// Text the user saw stream before an error or an interrupt is kept (partial).
		l.partial = st.partial(l.partial)
	}
	return st.reply, st.u, st.streamed, st.err
}

// streamState is what stream gathers from the deltas.
type streamState struct {
	reply    []transcript.Entry
	u        usage.Usage
	streamed bool
	pending  strings.Builder // text streamed since the last assistant text entry
	err      error
}

// partial appends to kept the text the user saw stream.
func (st *streamState) partial(kept []transcript.Entry) []transcript.Entry {
	for _, e := range st.reply {
		if e.Type == transcript.TypeAssistantText && strings.TrimSpace(e.Text) != "" {
			kept = append(kept, e)
		}
	}
	if t := st.pending.String(); strings.TrimSpace(t) != "" {
		kept = append(kept, transcript.AssistantText(t))
	}
	return kept
}

// finalOutput handles a reply without tool calls. done=false means a repair turn was
// armed.
func (l *loop) finalOutput(ctx context.Context, reply []transcript.Entry) (bool, error) {
	var sb strings.Builder
	for _, e := range reply {
		if e.Type == transcript.TypeAssistantText {
			sb.WriteString(e.Text)
		}
	}
	text := sb.String()
	ac := l.active
	if ac.outputValidate == nil {
		if l.stopRefused(ctx, text) {
			return false, l.checkpoint(ctx, store.StatusRunning)
		}
		l.output = text
		return true, nil
	}
	js, verr := parseStructured(text, ac.outputValidate)
	if verr == nil {
		if l.stopRefused(ctx, text) {
			return false, l.checkpoint(ctx, store.StatusRunning)
		}
		l.output = text
		l.structured = js
		return true, nil
	}
	if l.repairsLeft > 0 {
		l.repairsLeft--
		msg := "Your final answer is not valid: " + verr.Error() + ". Reply again with only a JSON value that matches the required JSON Schema (no prose, no code fences)."
		e := transcript.UserInput(msg)
		e.RunID = l.opts.RunID
		l.appendEntries(e)
		l.emit(ctx, event.Event{Type: event.UserMessageInjected, Turn: l.turns, Text: msg})
		if err := l.checkpoint(ctx, store.StatusRunning); err != nil {
			return false, err
		}
		return false, nil
	}
	return false, errs.Wrap(errs.KindOutput, verr, "the final answer does not match the output schema",
		"simplify the schema or use a stronger model; the raw answer is in the run's transcript")
}

// maxStopBlocks bounds how many final answers stop gates may refuse in one run (as
// Claude Code caps consecutive Stop-hook blocks), so a hook that always blocks cannot
// keep a run going forever.
const maxStopBlocks = 8

// stopRefused asks the stop gates whether the run may end with text. A refusal
// appends the gate's message as a user message; the caller continues the run.
func (l *loop) stopRefused(ctx context.Context, text string) bool {
	if len(l.active.stopGates) == 0 || l.stopBlocks >= maxStopBlocks {
		return false
	}
	rc := l.rc.Load()
	for _, g := range l.active.stopGates {
		v, err := g(ctx, rc, text, l.stopBlocks > 0)
		if err != nil {
			l.log.Warn("stop gate failed (run ends)", "err", err)
			continue
		}
		if !v.Continue {
			continue
		}
		l.stopBlocks++
		msg := v.Message
		if msg == "" {
			msg = "no reason given"
		}
		msg = "Stop hook feedback: " + msg
		e := transcript.UserInput(msg)
		e.RunID = l.opts.RunID
		l.appendEntries(e)
		l.emit(ctx, event.Event{Type: event.UserMessageInjected, Turn: l.turns, Text: msg})
		return true
	}
	return false
}

// parseStructured extracts the JSON value of a final answer (tolerating a code fence)
// and validates it.
func parseStructured(text string, validate func(json.RawMessage) error) (json.RawMessage, error) {
	s := strings.TrimSpace(text)
	if strings.HasPrefix(s, "```") {
		s = strings.TrimPrefix(s, "```")
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		}
		s = strings.TrimSuffix(strings.TrimSpace(s), "```")
		s = strings.TrimSpace(s)
	}
	if s == "" {
		return nil, errors.New("the answer is empty, a JSON value was expected")
	}
	if !json.Valid([]byte(s)) {
		return nil, errors.New("the answer is not valid JSON")
	}
	if err := validate(json.RawMessage(s)); err != nil {
		return nil, err
	}
	return json.RawMessage(s), nil
}
