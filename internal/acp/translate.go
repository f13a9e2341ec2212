package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/lovia-dev/lovia/internal/elicit"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/plugin/human"
	"github.com/lovia-dev/lovia/internal/plugin/todo"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// sender is the part of the connection the translator uses (tests record it).
type sender interface {
	SessionUpdate(ctx context.Context, n sdk.SessionNotification) error
}

// translator turns one run's events into session/update notifications.
type translator struct {
	conn    sender
	session string
	root    string
	log     *slog.Logger

	// before holds the files edits found, taken by a tool gate before each edit
	// runs (events trail the tools, so the file is already written when
	// tool_call_started reaches the translator).
	before *snapshots

	mu    sync.Mutex // calls is read by approval goroutines
	calls map[string]*callInfo
	// streamed reports text deltas since the last message_completed (a provider
	// that does not stream delivers its text there only).
	streamed, thought bool
}

// callInfo is what the translator remembers of a tool call between its events.
type callInfo struct {
	name  string
	args  toolArgs
	raw   json.RawMessage
	title string
	path  string // absolute, for edits
	// old is the file before an edit (oldOK: it could be read; existed: there was
	// one).
	old            string
	oldOK, existed bool
}

// approvalReq is an approval to put to the client.
type approvalReq struct {
	callID string
	call   sdk.ToolCallUpdate
	// question: ask_human's question, answered by picking one of answers (a
	// permission request has no free text).
	question bool
	answers  []string
	// elicitation: an MCP server's form or URL for the person; ACP has no form, so
	// it is declined without a request (docs/mcp.md).
	elicitation bool
}

func newTranslator(conn sender, session, root string, log *slog.Logger) *translator {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &translator{conn: conn, session: session, root: root, log: log, calls: map[string]*callInfo{},
		before: newSnapshots(root)}
}

// snapshots are the files as they were before each edit call ran, by call id.
type snapshots struct {
	root string
	mu   sync.Mutex
	m    map[string]snapshot
}

type snapshot struct {
	old         string
	existed, ok bool
}

func newSnapshots(root string) *snapshots {
	return &snapshots{root: root, m: map[string]snapshot{}}
}

// plugin is the run's front-end plugin: a tool gate that never blocks, only
// records the file an edit is about to change.
func (s *snapshots) plugin() plugin.Plugin {
	return plugin.Func{ID: "acp", Fn: func(context.Context, *tool.RunContext) (*plugin.Contribution, error) {
		return &plugin.Contribution{ToolGates: []plugin.ToolGate{s.gate}}, nil
	}}
}

func (s *snapshots) gate(_ context.Context, _ *tool.RunContext, call transcript.Entry) (plugin.GateResult, error) {
	if call.Name != "write_file" && call.Name != "edit_file" {
		return plugin.GateResult{}, nil
	}
	var sn snapshot
	sn.old, sn.existed, sn.ok = readForDiff(s.root, absPath(s.root, parseArgs(call.Args).Path))
	s.mu.Lock()
	s.m[call.CallID] = sn
	s.mu.Unlock()
	return plugin.GateResult{}, nil
}

// take returns the snapshot of callID (ok false: not taken, yet or at all); done
// forgets it.
func (s *snapshots) take(callID string, done bool) (snapshot, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sn, ok := s.m[callID]
	if done {
		delete(s.m, callID)
	}
	return sn, ok
}

func (t *translator) update(ctx context.Context, u sdk.SessionUpdate) {
	if err := t.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: sdk.SessionId(t.session), Update: u}); err != nil {
		t.log.Debug("acp update not sent", "err", err)
	}
}

// event sends what ev means to the client; for approval_required it returns the
// request to put to the client instead.
func (t *translator) event(ctx context.Context, ev event.Event) *approvalReq {
	switch ev.Type {
	case event.TextDelta:
		t.streamed = true
		if ev.Text != "" {
			t.update(ctx, sdk.UpdateAgentMessageText(ev.Text))
		}
	case event.ReasoningDelta:
		t.thought = true
		if ev.Text != "" {
			t.update(ctx, sdk.UpdateAgentThoughtText(ev.Text))
		}
	case event.MessageCompleted:
		if !t.streamed && ev.Text != "" {
			t.update(ctx, sdk.UpdateAgentMessageText(ev.Text))
		}
		t.streamed, t.thought = false, false
	case event.ToolCallStarted:
		t.started(ctx, ev)
	case event.ApprovalRequired:
		return t.approval(ev)
	case event.ToolCallProgress:
		t.progress(ctx, ev)
	case event.ToolCallCompleted, event.ToolCallFailed:
		t.finished(ctx, ev)
	}
	return nil
}

func (t *translator) call(id string) *callInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.calls[id]
}

func (t *translator) started(ctx context.Context, ev event.Event) {
	c := &callInfo{name: ev.Name, args: parseArgs(ev.Args), raw: ev.Args}
	c.title = toolTitle(ev.Name, c.args)
	opts := []sdk.ToolCallStartOpt{
		sdk.WithStartKind(toolKind(ev.Name)),
		sdk.WithStartStatus(sdk.ToolCallStatusInProgress),
		sdk.WithStartLocations(toolLocations(t.root, ev.Name, c.args)),
	}
	if raw := rawInput(ev.Args); raw != nil {
		opts = append(opts, sdk.WithStartRawInput(raw))
	}
	if ev.Name == "write_file" || ev.Name == "edit_file" {
		c.path = absPath(t.root, c.args.Path)
		t.fill(ev.CallID, c, false)
		if d, ok := c.proposedDiff(); ok {
			opts = append(opts, sdk.WithStartContent([]sdk.ToolCallContent{d}))
		}
	}
	t.mu.Lock()
	t.calls[ev.CallID] = c
	t.mu.Unlock()
	t.update(ctx, sdk.StartToolCall(sdk.ToolCallId(ev.CallID), c.title, opts...))
}

// fill copies the call's snapshot into c once the gate has taken it.
func (t *translator) fill(callID string, c *callInfo, done bool) {
	if c.oldOK {
		if done {
			t.before.take(callID, true)
		}
		return
	}
	if sn, ok := t.before.take(callID, done); ok {
		c.old, c.existed, c.oldOK = sn.old, sn.existed, sn.ok
	}
}

// proposedDiff is the diff an edit would make, from the file as it was and the
// call's arguments.
func (c *callInfo) proposedDiff() (sdk.ToolCallContent, bool) {
	if !c.oldOK {
		return sdk.ToolCallContent{}, false
	}
	nt, ok := proposed(c.name, c.args, c.old, c.existed)
	if !ok {
		return sdk.ToolCallContent{}, false
	}
	return diffContent(c.path, c.old, c.existed, nt), true
}

func (t *translator) approval(ev event.Event) *approvalReq {
	c := t.call(ev.CallID)
	u := sdk.ToolCallUpdate{ToolCallId: sdk.ToolCallId(ev.CallID), Status: sdk.Ptr(sdk.ToolCallStatusPending)}
	var content []sdk.ToolCallContent
	if c != nil {
		u.Kind = sdk.Ptr(toolKind(c.name))
		u.Title = sdk.Ptr(c.title)
		u.Locations = toolLocations(t.root, c.name, c.args)
		u.RawInput = rawInput(c.raw)
		if c.path != "" {
			t.mu.Lock()
			t.fill(ev.CallID, c, false)
			t.mu.Unlock()
		}
		if d, ok := c.proposedDiff(); ok {
			content = append(content, d)
		}
	} else if ev.Name != "" {
		u.Kind = sdk.Ptr(toolKind(ev.Name))
	}
	if a := ev.Approval; a != nil {
		if a.Summary != "" {
			u.Title = sdk.Ptr(oneLine(a.Summary))
		}
		if len(content) == 0 && a.Diff != "" {
			content = append(content, textContent("```diff\n"+a.Diff+"\n```")...)
		}
		if len(a.Rules) > 0 {
			content = append(content, textContent("Allow for this session adds: "+strings.Join(a.Rules, ", "))...)
		}
	}
	u.Content = content
	ap := &approvalReq{callID: ev.CallID, call: u}
	if a := ev.Approval; a != nil && (a.Kind == elicit.Kind || a.Kind == elicit.URLKind) {
		ap.elicitation = true
	}
	if a := ev.Approval; a != nil && a.Kind == human.Kind {
		ap.question, ap.answers = true, a.Subcommands
		u.Kind = sdk.Ptr(sdk.ToolKindOther)
		ap.call = u
	}
	return ap
}

// Question option ids are answerPrefix + the answer's index.
const answerPrefix = "answer_"

// permissionOptions are the choices of an approval: allow once, allow for the
// session, reject; for a question, its answers (or "Yes") and "Decline".
func permissionOptions(ap approvalReq) []sdk.PermissionOption {
	if !ap.question {
		return []sdk.PermissionOption{
			{Kind: sdk.PermissionOptionKindAllowOnce, Name: "Allow", OptionId: optAllow},
			{Kind: sdk.PermissionOptionKindAllowAlways, Name: "Allow for this session", OptionId: optAllowAlways},
			{Kind: sdk.PermissionOptionKindRejectOnce, Name: "Reject", OptionId: optReject},
		}
	}
	var out []sdk.PermissionOption
	for i, a := range ap.answers {
		out = append(out, sdk.PermissionOption{Kind: sdk.PermissionOptionKindAllowOnce, Name: oneLine(a), OptionId: sdk.PermissionOptionId(fmt.Sprintf("%s%d", answerPrefix, i))})
	}
	if len(out) == 0 {
		out = append(out, sdk.PermissionOption{Kind: sdk.PermissionOptionKindAllowOnce, Name: "Yes", OptionId: optAllow})
	}
	return append(out, sdk.PermissionOption{Kind: sdk.PermissionOptionKindRejectOnce, Name: "Decline", OptionId: optReject})
}

// questionDecision maps the pick to ask_human's answer (no answer: declined).
func questionDecision(ap approvalReq, resp sdk.RequestPermissionResponse, err error) tool.Decision {
	if err != nil || resp.Outcome.Selected == nil {
		return tool.Decision{}
	}
	id := string(resp.Outcome.Selected.OptionId)
	if id == optAllow {
		return tool.Decision{Allow: true}
	}
	if n, ok := strings.CutPrefix(id, answerPrefix); ok {
		if i, err := strconv.Atoi(n); err == nil && i >= 0 && i < len(ap.answers) {
			return tool.Decision{Allow: true, Message: ap.answers[i]}
		}
	}
	return tool.Decision{}
}

// progress shows a running call's progress as its content (replaced by the result
// when it finishes); a call already finished or unknown is left alone.
func (t *translator) progress(ctx context.Context, ev event.Event) {
	if ev.Progress == nil || t.call(ev.CallID) == nil {
		return
	}
	t.update(ctx, sdk.UpdateToolCall(sdk.ToolCallId(ev.CallID), sdk.WithUpdateStatus(sdk.ToolCallStatusInProgress),
		sdk.WithUpdateContent(textContent(ev.Progress.String()))))
}

func (t *translator) finished(ctx context.Context, ev event.Event) {
	t.mu.Lock()
	c := t.calls[ev.CallID]
	delete(t.calls, ev.CallID)
	t.mu.Unlock()
	failed := ev.Type == event.ToolCallFailed || ev.IsError
	status := sdk.ToolCallStatusCompleted
	if failed {
		status = sdk.ToolCallStatusFailed
	}
	out := ev.Output
	if ev.Approval != nil && strings.HasPrefix(ev.Approval.Decision, "denied") && out == "" {
		out = "denied: " + ev.Approval.Summary
	}
	var content []sdk.ToolCallContent
	if c != nil && c.path != "" {
		t.fill(ev.CallID, c, true)
	}
	if c != nil && !failed && c.path != "" {
		// The diff shows what the edit did: the file before the call and after it.
		if nt, existed, ok := readForDiff(t.root, c.path); ok && existed && c.oldOK {
			content = append(content, diffContent(c.path, c.old, c.existed, nt))
		}
	}
	if len(content) == 0 {
		content = textContent(out)
	}
	t.update(ctx, sdk.UpdateToolCall(sdk.ToolCallId(ev.CallID), sdk.WithUpdateStatus(status), sdk.WithUpdateContent(content)))
	if c != nil && c.name == todo.ToolName && !failed {
		if items, err := todo.Parse(c.raw); err == nil {
			t.update(ctx, sdk.UpdatePlan(planEntries(items)...))
		}
	}
}

// rawInput is a call's arguments as JSON for the client (nil when not an object).
func rawInput(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	var v map[string]any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	return v
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:199]) + "…"
	}
	return s
}

// decision maps the client's answer to a lovia decision: allow once, allow for the
// session (lovia adds the approval's session rules), or reject. Anything else (an
// error, a cancelled request, an unknown option) denies.
func decision(resp sdk.RequestPermissionResponse, err error) tool.Decision {
	if err != nil {
		return tool.Decision{Message: "the editor did not answer the approval request"}
	}
	sel := resp.Outcome.Selected
	if sel == nil {
		return tool.Decision{Message: "the user cancelled the approval request"}
	}
	switch string(sel.OptionId) {
	case optAllow:
		return tool.Decision{Allow: true}
	case optAllowAlways:
		return tool.Decision{Allow: true, Session: true}
	}
	return tool.Decision{Message: "the user rejected this action"}
}

// replay sends a stored session to the client as it happened: user messages, the
// agent's text and reasoning, tool calls with their results, and the plan.
func replay(ctx context.Context, conn sender, session, root string, entries []transcript.Entry) error {
	t := newTranslator(conn, session, root, nil)
	send := func(u sdk.SessionUpdate) error {
		return conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: sdk.SessionId(session), Update: u})
	}
	calls := map[string]transcript.Entry{}
	for _, e := range entries {
		if e.Synthetic {
			continue
		}
		var err error
		switch e.Type {
		case transcript.TypeInput:
			if e.Role == transcript.RoleUser && e.Text != "" {
				err = send(sdk.UpdateUserMessageText(e.Text))
			}
		case transcript.TypeAssistantText:
			if e.Text != "" {
				err = send(sdk.UpdateAgentMessageText(e.Text))
			}
		case transcript.TypeReasoning:
			if e.Text != "" {
				err = send(sdk.UpdateAgentThoughtText(e.Text))
			}
		case transcript.TypeToolCall:
			calls[e.CallID] = e
			a := parseArgs(e.Args)
			opts := []sdk.ToolCallStartOpt{
				sdk.WithStartKind(toolKind(e.Name)),
				sdk.WithStartStatus(sdk.ToolCallStatusPending),
				sdk.WithStartLocations(toolLocations(t.root, e.Name, a)),
			}
			if raw := rawInput(e.Args); raw != nil {
				opts = append(opts, sdk.WithStartRawInput(raw))
			}
			err = send(sdk.StartToolCall(sdk.ToolCallId(e.CallID), toolTitle(e.Name, a), opts...))
		case transcript.TypeToolResult:
			status := sdk.ToolCallStatusCompleted
			if e.IsError {
				status = sdk.ToolCallStatusFailed
			}
			content := textContent(e.Text)
			call, ok := calls[e.CallID]
			if ok && !e.IsError {
				if d, ok := storedDiff(root, call); ok {
					content = []sdk.ToolCallContent{d}
				}
			}
			err = send(sdk.UpdateToolCall(sdk.ToolCallId(e.CallID), sdk.WithUpdateStatus(status), sdk.WithUpdateContent(content)))
			if err == nil && ok && call.Name == todo.ToolName && !e.IsError {
				if items, perr := todo.Parse(call.Args); perr == nil {
					err = send(sdk.UpdatePlan(planEntries(items)...))
				}
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// storedDiff is the diff a recorded edit shows: the replaced and the new string of
// edit_file, the content of write_file (the whole files are not recorded).
func storedDiff(root string, call transcript.Entry) (sdk.ToolCallContent, bool) {
	a := parseArgs(call.Args)
	p := absPath(root, a.Path)
	if p == "" {
		return sdk.ToolCallContent{}, false
	}
	switch call.Name {
	case "edit_file":
		return sdk.ToolDiffContent(p, a.NewString, a.OldString), true
	case "write_file":
		return sdk.ToolDiffContent(p, a.Content), true
	}
	return sdk.ToolCallContent{}, false
}
