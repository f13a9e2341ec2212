package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/mailbox"
	"github.com/lovia-dev/lovia/internal/usage"
)

// ---- submitting ----

func (m *Model) submit(text string) tea.Cmd {
	text = strings.TrimRight(text, "\n ")
	if strings.TrimSpace(text) == "" {
		return nil
	}
	m.pushHistory(text)
	if first := strings.Fields(text)[0]; strings.HasPrefix(first, "/") && strings.Count(first, "/") == 1 {
		// A command; a path such as "/etc/hosts is wrong" is a message.
		if cmd, ok := m.command(text); ok {
			return cmd
		}
		if cmd, ok := m.customCommand(text); ok {
			return cmd
		}
		m.notice = "unknown command " + first + " · /help lists the commands"
		m.input.SetValue(text)
		return nil
	}
	if (m.run != nil || m.starting) && m.holdImages(text) { // images.go
		return nil
	}
	if m.run != nil || m.starting {
		m.queueSeq++
		q := queuedMsg{id: fmt.Sprintf("q%d", m.queueSeq), text: text}
		if m.run != nil {
			m.run.Mailbox().Push(mailbox.Message{ID: q.id, Text: text, Source: "user"})
			q.pushed = true
		}
		m.queued = append(m.queued, q)
		return nil
	}
	m.emit('u', renderUser(m.theme, text, m.width, ""))
	return m.start(StartRequest{SessionID: m.sessionID, Prompt: text, Model: m.model, CarryRunID: m.carry,
		Images: m.takeImages(text)})
}

func (m *Model) pushHistory(text string) {
	if n := len(m.history); n == 0 || m.history[n-1] != text {
		m.history = append(m.history, text)
		if len(m.history) > 500 {
			m.history = m.history[len(m.history)-500:]
		}
	}
	m.histPos = len(m.history)
	m.histDraft = ""
}

func (m *Model) start(req StartRequest) tea.Cmd {
	m.starting = true
	m.notice = ""
	b, ctx := m.backend, m.ctx
	resume := req.ResumeRunID != ""
	return func() tea.Msg {
		typed := req.Prompt
		imgs, notes, ab := attachImageMentions(ctx, b, req.Prompt) // images.go
		req.Images = append(req.Images, imgs...)
		var more []string
		req.Prompt, more = attachMentions(ctx, ab, req.Prompt) // attach.go
		notes = append(notes, more...)
		mcpNotes, failed := expandMCP(ctx, b, typed, &req) // mcp.go: @server:uri
		if failed != nil {
			return failed
		}
		notes = append(notes, mcpNotes...)
		r, err := b.Start(ctx, req)
		msg := runStartedMsg{run: r, err: err, resume: resume}
		if err != nil && !resume && isCommand(typed) {
			return keepTyped(typed, msg) // mcp.go: a failed /server:prompt is not lost
		}
		if len(notes) == 0 {
			return msg
		}
		return applyMsg(func(m *Model) tea.Cmd {
			for _, n := range notes {
				m.emit('n', m.theme.Dim.Render(renderNotice(m.theme, "↳ "+n, m.width)))
			}
			return m.onRunStarted(msg)
		})
	}
}

func (m *Model) onRunStarted(msg runStartedMsg) tea.Cmd {
	m.starting = false
	if msg.err != nil {
		m.emitError(msg.err)
		m.restoreQueued(nil)
		return nil
	}
	m.run = msg.run
	m.carry, m.interrupted = "", "" // this run resumes or carries on the unfinished one
	m.input.Placeholder = busyPlaceholder
	m.runUsage = usage.Usage{}
	m.turn = 0
	m.resetLive()
	if id := msg.run.SessionID(); id != "" {
		m.sessionID = id
	}
	for i := range m.queued {
		if !m.queued[i].pushed {
			m.run.Mailbox().Push(mailbox.Message{ID: m.queued[i].id, Text: m.queued[i].text, Source: "user"})
			m.queued[i].pushed = true
		}
	}
	if m.pendingCompact {
		m.run.Compact()
		m.pendingCompact = false
	}
	return m.wait(m.run)
}

func (m *Model) resetLive() {
	m.stream = mdStream{}
	m.reasoning.Reset()
	m.tools = map[string]*toolCall{}
	m.toolOrder = nil
	m.approvals = nil
	m.denyMsg = false
}

// waitEvents reads the next events of r: it blocks for one, then takes whatever else
// is already waiting, so a burst of deltas costs one Update and one frame.
func waitEvents(r Handle) tea.Cmd {
	ch := r.Events()
	return func() tea.Msg {
		ev, ok := <-ch
		if !ok {
			return eventsMsg{run: r, closed: true}
		}
		evs := []event.Event{ev}
		for len(evs) < 512 && !ev.Type.Terminal() {
			select {
			case ev, ok = <-ch:
				if !ok {
					return eventsMsg{run: r, evs: evs, closed: true}
				}
				evs = append(evs, ev)
			default:
				return eventsMsg{run: r, evs: evs}
			}
		}
		return eventsMsg{run: r, evs: evs}
	}
}

func (m *Model) interrupt() {
	if m.run == nil {
		if m.starting {
			m.notice = "starting… Esc again once the run is live"
		}
		return
	}
	m.run.Cancel(errs.New(errs.KindCancelled, "interrupted by the user (Esc)", ""))
	m.interrupting = true
	m.notice = "interrupting… (ctrl+c again quits)"
}

// ---- events ----

func (m *Model) onEvents(msg eventsMsg) tea.Cmd {
	if msg.run != m.run || m.run == nil {
		return nil
	}
	done := msg.closed
	for _, ev := range msg.evs {
		m.handleEvent(ev)
		if ev.Type.Terminal() {
			done = true
		}
	}
	if done {
		return m.finishRun(msg.evs)
	}
	// Settled markdown blocks go to scrollback right away.
	m.flushSettled()
	return m.wait(m.run)
}

func (m *Model) handleEvent(ev event.Event) {
	// Durations come from the events' own clock when they carry one: a burst of
	// events handled in one Update must not read as "0ms".
	m.evTime = ev.Time
	switch ev.Type {
	case event.RunStarted:
		if ev.SessionID != "" {
			m.sessionID = ev.SessionID
		}
	case event.TurnStarted:
		m.turn = ev.Turn
	case event.ReasoningDelta:
		if m.reasoning.Len() == 0 {
			m.reasoningStart = m.eventNow()
		}
		m.reasoning.WriteString(ev.Text)
	case event.TextDelta:
		m.closeReasoning()
		m.stream.AppendRaw(ev.Text)
	case event.OutputDiscarded:
		m.reasoning.Reset()
		printed := m.stream.settled > 0
		m.stream = mdStream{}
		note := "↻ the reply restarted"
		if ev.Text != "" {
			note += " (" + ev.Text + ")"
		}
		if printed {
			note += "; the text above was discarded"
		}
		m.emit('n', m.theme.Warn.Render(renderNotice(m.theme, note, m.width)))
	case event.MessageCompleted:
		m.closeReasoning()
		full := sanitize(ev.Text)
		if m.stream.Len() == 0 && full != "" {
			m.stream.Append(full)
		} else if full != "" && strings.HasPrefix(full, m.stream.String()) && len(full) > m.stream.Len() {
			m.stream.Append(full[m.stream.Len():])
		}
		m.flushSettled()
		if t := m.stream.tail(); strings.TrimSpace(t) != "" {
			m.emit('a', m.md.render(t, m.theme, m.width))
		}
		m.stream = mdStream{}
		if ev.Usage != nil {
			m.lastContext = ev.Usage.InputTokens + ev.Usage.OutputTokens
		}
	case event.UserMessageInjected:
		note := "(steering)"
		found := false
		for i, q := range m.queued {
			if q.text == ev.Text || strings.TrimSpace(q.text) == strings.TrimSpace(ev.Text) {
				m.queued = append(m.queued[:i], m.queued[i+1:]...)
				found = true
				break
			}
		}
		if !found {
			note = "(injected)"
		}
		m.emit('u', renderUser(m.theme, ev.Text, m.width, note))
	case event.ToolCallStarted:
		m.flushStreamForTool()
		c := m.tools[ev.CallID]
		if c == nil {
			c = &toolCall{ID: ev.CallID}
			m.tools[ev.CallID] = c
			m.toolOrder = append(m.toolOrder, ev.CallID)
		}
		c.Name, c.Args, c.Started = ev.Name, ev.Args, m.now()
		if ev.Name == "todo_write" {
			m.todos = ev.Args
		}
	case event.ToolCallProgress:
		if c := m.tools[ev.CallID]; c != nil && !c.Done && ev.Progress != nil {
			p := *ev.Progress
			c.Progress = &p
		}
	case event.ApprovalRequired:
		c := m.tools[ev.CallID]
		if c == nil {
			c = &toolCall{ID: ev.CallID, Name: ev.Name, Args: ev.Args, Started: m.now()}
			m.tools[ev.CallID] = c
			m.toolOrder = append(m.toolOrder, ev.CallID)
		}
		c.Approval = ev.Approval
		if c.Approval == nil {
			c.Approval = &event.Approval{Kind: "tool", Summary: ev.Name}
		}
		m.approvals = append(m.approvals, ev.CallID)
	case event.ToolCallCompleted, event.ToolCallFailed:
		c := m.tools[ev.CallID]
		if c == nil {
			c = &toolCall{ID: ev.CallID, Name: ev.Name, Args: ev.Args}
		}
		if c.Name == "" {
			c.Name = ev.Name
		}
		if len(c.Args) == 0 {
			c.Args = ev.Args
		}
		c.Done = true
		c.Output, c.Diff = ev.Output, ev.Diff
		c.IsError = ev.IsError || ev.Type == event.ToolCallFailed
		c.Trunc = ev.Truncated
		c.Duration = time.Duration(ev.DurationMS) * time.Millisecond
		if ev.Approval != nil && strings.HasPrefix(ev.Approval.Decision, "denied") {
			c.Denied = ev.Approval.Decision
		}
		diffSrc := c.Approval
		if ev.Approval != nil && ev.Approval.Diff != "" {
			diffSrc = ev.Approval
		}
		c.Approval = diffSrc
		m.dropApproval(ev.CallID)
		delete(m.tools, ev.CallID)
		for i, id := range m.toolOrder {
			if id == ev.CallID {
				m.toolOrder = append(m.toolOrder[:i], m.toolOrder[i+1:]...)
				break
			}
		}
		m.emit('t', renderTool(m.theme, c, m.width))
	case event.HandoffOccurred:
		m.emit('n', m.theme.Accent.Render(renderNotice(m.theme, fmt.Sprintf("⇄ handoff: %s → %s", ev.From, ev.To), m.width)))
	case event.ContextCompacted:
		if c := ev.Compaction; c != nil {
			m.emit('n', m.theme.Dim.Render(renderNotice(m.theme, fmt.Sprintf("⊘ context compacted: %s → %s tokens (%s)",
				fmtTokens(c.TokensBefore), fmtTokens(c.TokensAfter), strings.Join(c.Stages, ", ")), m.width)))
			m.lastContext = c.TokensAfter
		}
	case event.TurnEnded:
		if ev.Usage != nil {
			m.runUsage = *ev.Usage
		}
	case event.RunCompleted, event.RunFailed:
		if ev.Usage != nil {
			m.runUsage = *ev.Usage
		}
		if ev.SessionID != "" {
			m.sessionID = ev.SessionID
		}
		m.closeReasoning()
		if t := m.stream.tail(); strings.TrimSpace(t) != "" {
			m.flushSettled()
			m.emit('a', m.md.render(m.stream.tail(), m.theme, m.width))
			m.stream = mdStream{}
		}
		if ev.Type == event.RunFailed {
			m.reportFailure(ev)
		}
	}
}

// flushStreamForTool prints the reply text that precedes a tool call, so the call's
// line lands after it in scrollback.
func (m *Model) flushStreamForTool() {
	m.closeReasoning()
	m.flushSettled()
	if t := m.stream.tail(); strings.TrimSpace(t) != "" {
		m.emit('a', m.md.render(t, m.theme, m.width))
	}
	m.stream = mdStream{}
}

// eventNow is the time of the event being handled, or the clock.
func (m *Model) eventNow() time.Time {
	if !m.evTime.IsZero() {
		return m.evTime
	}
	return m.now()
}

func (m *Model) closeReasoning() {
	if m.reasoning.Len() == 0 {
		return
	}
	m.emit('r', renderReasoning(m.theme, m.reasoning.String(), m.eventNow().Sub(m.reasoningStart), m.width, m.showReasoning))
	m.reasoning.Reset()
}

// flushSettled renders and prints the reply's settled blocks.
func (m *Model) flushSettled() {
	if chunk := m.stream.takeSettled(); strings.TrimSpace(chunk) != "" {
		m.emit('a', m.md.render(chunk, m.theme, m.width))
	}
}

func (m *Model) dropApproval(id string) {
	for i, a := range m.approvals {
		if a == id {
			m.approvals = append(m.approvals[:i], m.approvals[i+1:]...)
			if i == 0 {
				m.denyMsg = false
			}
			return
		}
	}
}

func (m *Model) reportFailure(ev event.Event) {
	if ev.Status == "interrupted" || (ev.Error != nil && ev.Error.Kind == string(errs.KindCancelled)) {
		m.interrupted = ev.RunID
		m.noteUnfinished(ev)
		m.emit('n', m.theme.Warn.Render(renderNotice(m.theme, "⏹ interrupted · /resume continues run "+ev.RunID+" · or just type", m.width)))
		return
	}
	msg := "run failed"
	hint := ""
	if ev.Error != nil {
		msg = ev.Error.Message
		hint = chatHint(ev.Error.Kind, ev.Error.Hint)
	}
	m.noteUnfinished(ev)
	out := m.theme.Err.Render(renderNotice(m.theme, "✗ "+msg, m.width))
	if hint != "" {
		out += "\n" + m.theme.Dim.Render(renderNotice(m.theme, "hint: "+hint, m.width))
	}
	m.emit('n', out)
}

func (m *Model) emitError(err error) {
	out := m.theme.Err.Render(renderNotice(m.theme, "✗ "+err.Error(), m.width))
	if h := errs.HintOf(err); h != "" {
		out += "\n" + m.theme.Dim.Render(renderNotice(m.theme, "hint: "+h, m.width))
	}
	m.emit('n', out)
}

// finishRun closes the live run. Steering messages it never delivered are sent as a
// new run after a completion, or put back in the prompt after a failure.
// reindex rebuilds the @ file index in the background (at start, and after each run,
// which may have created files).
func (m *Model) reindex() tea.Cmd {
	if m.cfg.Root == "" {
		return nil
	}
	root, ctx := m.cfg.Root, m.ctx
	return func() tea.Msg { return filesMsg{indexFiles(ctx, root)} }
}

func (m *Model) finishRun(evs []event.Event) tea.Cmd {
	h := m.run
	var cur tea.Cmd
	if n := len(evs); n > 0 && evs[n-1].Type == event.RunCompleted && h != nil {
		cur = m.curate(h)
	}
	return tea.Batch(m.endRun(evs), m.reindex(), cur)
}

func (m *Model) endRun(evs []event.Event) tea.Cmd {
	r := m.run
	m.run = nil
	m.input.Placeholder = idlePlaceholder
	m.usage = m.usage.Add(m.runUsage)
	m.runUsage = usage.Usage{}
	failed := true
	if n := len(evs); n > 0 && evs[n-1].Type == event.RunCompleted {
		failed = false
	}
	// Unanswered approvals and running tools are gone with the run.
	for _, id := range m.toolOrder {
		if c := m.tools[id]; c != nil && !c.Done {
			c.Done, c.IsError, c.Output = true, true, "not finished: the run ended"
			if c.Approval != nil {
				c.Denied = "not answered"
			}
			m.emit('t', renderTool(m.theme, c, m.width))
		}
	}
	m.resetLive()
	if m.interrupting {
		m.interrupting = false
		m.notice = ""
	}
	left := r.Mailbox().Drain()
	if len(left) == 0 {
		m.queued = nil
		return nil
	}
	var texts []string
	for _, l := range left {
		texts = append(texts, l.Text)
	}
	m.queued = nil
	if failed {
		m.restoreQueued(texts)
		return nil
	}
	text := strings.Join(texts, "\n\n")
	m.emit('u', renderUser(m.theme, text, m.width, "(queued)"))
	return m.start(StartRequest{SessionID: m.sessionID, Prompt: text, Model: m.model})
}

// restoreQueued puts undelivered steering messages back into the prompt.
func (m *Model) restoreQueued(texts []string) {
	if texts == nil {
		for _, q := range m.queued {
			texts = append(texts, q.text)
		}
	}
	m.queued = nil
	if len(texts) == 0 {
		return
	}
	cur := m.input.Value()
	all := strings.Join(texts, "\n\n")
	if cur != "" {
		all = cur + "\n\n" + all
	}
	m.input.SetValue(all)
	m.notice = "queued messages were not delivered; they are back in the prompt"
}
