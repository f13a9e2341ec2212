package tui

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

func TestPromptStreamsAndPrintsOnce(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeText("explain the bug")
	h.enter()
	if got := h.b.reqs; len(got) != 1 || got[0].Prompt != "explain the bug" || got[0].Model != "script:demo.yaml" {
		t.Fatalf("start requests = %+v", got)
	}
	if !strings.Contains(h.scrollback(), "› explain the bug") {
		t.Fatalf("user message not in scrollback:\n%s", h.scrollback())
	}
	e := ev(event.RunStarted)
	e.SessionID = "sess_1"
	h.events(e, event.Event{Type: event.TurnStarted, Turn: 1}, textDelta("The bug is in **par"))
	if v := h.view(); !strings.Contains(v, "The bug is in") {
		t.Fatalf("streaming text not live:\n%s", v)
	}
	if strings.Contains(h.scrollback(), "The bug") {
		t.Fatal("unsettled text printed to scrollback")
	}
	h.events(textDelta("sing**.\n\nSecond para"))
	sb := h.scrollback()
	if !strings.Contains(sb, "The bug is in parsing.") {
		t.Fatalf("settled paragraph not printed:\n%s", sb)
	}
	v := h.view()
	if strings.Contains(v, "The bug is in") || !strings.Contains(v, "Second para") {
		t.Fatalf("live region should hold only the tail:\n%s", v)
	}
	mc := ev(event.MessageCompleted)
	mc.Text = "The bug is in **parsing**.\n\nSecond paragraph."
	mc.Usage = &usage.Usage{InputTokens: 1200, OutputTokens: 30}
	h.events(textDelta("graph."), mc, completed(usage.Usage{InputTokens: 1200, OutputTokens: 30}))
	sb = h.scrollback()
	if strings.Count(sb, "The bug is in parsing.") != 1 || strings.Count(sb, "Second paragraph.") != 1 {
		t.Fatalf("each block must be printed exactly once:\n%s", sb)
	}
	if h.m.run != nil {
		t.Fatal("run still active after run_completed")
	}
	v = h.view()
	for _, want := range []string{"script:demo.yaml", "session sess_1", "turn 1", "↑1.2k ↓30", "$0.000", "ctx 1%"} {
		if !strings.Contains(v, want) {
			t.Errorf("status line lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "Second") {
		t.Fatalf("finished reply still in the live region:\n%s", v)
	}
}

func TestToolCallsLinePreviewAndDiff(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeText("go")
	h.enter()
	h.events(toolStarted("c1", "shell", `{"command":"go test ./..."}`))
	v := h.view()
	if !strings.Contains(v, "shell go test ./...") {
		t.Fatalf("running tool line missing:\n%s", v)
	}
	h.clock = h.clock.Add(1500 * time.Millisecond)
	if v := h.view(); !strings.Contains(v, "1.5s") {
		t.Fatalf("running tool duration missing:\n%s", v)
	}
	out := "ok  a 0.1s\nok  b 0.2s\nl3\nl4\nl5\nl6\nl7\nl8"
	h.events(toolDone("c1", "shell", out, 1500, false))
	sb := h.scrollback()
	for _, want := range []string{"✓ shell go test ./...", "1.5s", "ok  a 0.1s", "… 2 more lines"} {
		if !strings.Contains(sb, want) {
			t.Errorf("scrollback lacks %q:\n%s", want, sb)
		}
	}
	if strings.Contains(h.view(), "go test") {
		t.Fatal("finished tool still live")
	}
	edited := toolDone("c2", "edit_file", "edited main.go (1 replacement)", 3, false)
	edited.Diff = "--- a/main.go\n+++ b/main.go\n@@ -1,2 +1,2 @@\n a := 1\n-b := 2\n+b := 3"
	h.events(toolStarted("c2", "edit_file", `{"path":"main.go","old_string":"a := 1\nb := 2","new_string":"a := 1\nb := 3"}`), edited)
	sb = h.scrollback()
	for _, want := range []string{"✓ edit_file main.go", "--- a/main.go", "+++ b/main.go", "-b := 2", "+b := 3", " a := 1"} {
		if !strings.Contains(sb, want) {
			t.Errorf("diff lacks %q:\n%s", want, sb)
		}
	}
	fail := toolDone("c3", "read_file", "open nope.txt: no such file", 1, true)
	fail.Type = event.ToolCallFailed
	h.events(toolStarted("c3", "read_file", `{"path":"nope.txt"}`), fail)
	if sb := h.scrollback(); !strings.Contains(sb, "✗ read_file nope.txt") || !strings.Contains(sb, "no such file") {
		t.Fatalf("failed tool not shown:\n%s", sb)
	}
}

func TestToolErrorIsRed(t *testing.T) {
	th := NewTheme(true, true)
	c := &toolCall{Name: "shell", Args: json.RawMessage(`{"command":"false"}`), Done: true, IsError: true, Output: "exit status 1"}
	out := renderTool(th, c, 80)
	if !strings.Contains(out, th.Err.Render("exit status 1")) {
		t.Fatalf("error output not styled as error: %q", out)
	}
}

func TestApprovalKeys(t *testing.T) {
	for _, tc := range []struct {
		name  string
		keys  func(h *harness)
		allow bool
		sess  bool
		msg   string
	}{
		{"allow once", func(h *harness) { h.choose(1) }, true, false, ""},
		{"allow session", func(h *harness) { h.choose(2) }, true, true, ""},
		{"deny", func(h *harness) { h.choose(3) }, false, false, ""},
		{"deny with message", func(h *harness) { h.choose(4); h.typeText("use make test"); h.enter() }, false, false, "use make test"},
		{"arrows", func(h *harness) { h.advance(approvalGuard); h.key(tea.KeyDown); h.key(tea.KeyDown); h.enter() }, true, true, ""},
		{"esc denies", func(h *harness) { h.esc() }, false, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, 80, 24)
			h.typeText("run tests")
			h.enter()
			a := ev(event.ApprovalRequired)
			a.CallID, a.Name, a.Args = "c1", "shell", json.RawMessage(`{"command":"go test ./... && rm -rf build"}`)
			a.Approval = &event.Approval{Kind: "command", Summary: "go test ./... && rm -rf build",
				Subcommands: []string{"go test ./...", "rm -rf build"}, Rules: []string{"go test", "rm"}}
			h.events(toolStarted("c1", "shell", `{"command":"go test ./... && rm -rf build"}`), a)
			v := h.view()
			for _, want := range []string{"Run this command?", "• go test ./...", "• rm -rf build", "1. allow once",
				"2. allow for session (go test, rm)", "3. deny", "4. deny with message"} {
				if !strings.Contains(v, want) {
					t.Errorf("approval view lacks %q:\n%s", want, v)
				}
			}
			tc.keys(h)
			d, ok := h.run().decisions["c1"]
			if !ok {
				t.Fatal("no decision sent")
			}
			if d.Allow != tc.allow || d.Session != tc.sess || d.Message != tc.msg {
				t.Fatalf("decision = %+v", d)
			}
			if strings.Contains(h.view(), "Run this command?") {
				t.Fatal("approval still shown after answer")
			}
		})
	}
}

func TestSteeringQueuedThenDelivered(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeText("start")
	h.enter()
	h.events(textDelta("working on it"))
	h.typeText("also fix the docs")
	h.enter()
	if n := h.run().mbox.Len(); n != 1 {
		t.Fatalf("mailbox len = %d", n)
	}
	if v := h.view(); !strings.Contains(v, "⧗ queued: also fix the docs") {
		t.Fatalf("queued message not shown:\n%s", v)
	}
	if len(h.b.reqs) != 1 {
		t.Fatal("steering must not start a second run")
	}
	// The loop drains the mailbox at the next turn and reports the injection.
	h.run().mbox.Drain()
	inj := ev(event.UserMessageInjected)
	inj.Text = "also fix the docs"
	h.events(inj)
	if v := h.view(); strings.Contains(v, "queued") {
		t.Fatalf("delivered message still queued:\n%s", v)
	}
	if sb := h.scrollback(); !strings.Contains(sb, "› also fix the docs  (steering)") {
		t.Fatalf("delivered message not printed:\n%s", sb)
	}
}

func TestQueuedLeftoverStartsNextRun(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeText("one")
	h.enter()
	h.typeText("two")
	h.enter()
	h.events(completed(usage.Usage{}))
	if len(h.b.reqs) != 2 || h.b.reqs[1].Prompt != "two" || h.b.reqs[1].SessionID != "sess_1" {
		t.Fatalf("leftover message not sent as a new run: %+v", h.b.reqs)
	}
}

func TestEscInterruptsAndResume(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeText("long task")
	h.enter()
	h.events(textDelta("step 1"))
	h.typeText("queued thing")
	h.enter()
	h.esc()
	r := h.run()
	if errs.KindOf(r.cancelled) != errs.KindCancelled {
		t.Fatalf("cancel cause = %v", r.cancelled)
	}
	f := ev(event.RunFailed)
	f.Status = "interrupted"
	f.Error = &event.Error{Kind: "cancelled", Message: "interrupted"}
	h.events(f)
	sb := h.scrollback()
	if !strings.Contains(sb, "interrupted") || !strings.Contains(sb, "/resume continues run run_a") {
		t.Fatalf("interruption not reported:\n%s", sb)
	}
	if got := h.m.input.Value(); got != "queued thing" {
		t.Fatalf("undelivered steering message should return to the prompt, got %q", got)
	}
	// Esc twice clears the prompt.
	h.esc()
	if h.m.input.Value() == "" {
		t.Fatal("first Esc on a non-empty idle prompt must not clear it")
	}
	h.esc()
	if h.m.input.Value() != "" {
		t.Fatal("second Esc should clear the prompt")
	}
	h.typeText("/resume")
	h.enter()
	if n := len(h.b.reqs); n != 2 || h.b.reqs[1].ResumeRunID != "run_a" {
		t.Fatalf("resume request = %+v", h.b.reqs)
	}
}

func TestSessionsPickerSwitches(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.b.sessions = []SessionInfo{
		{ID: "sess_new", Title: "newest", Updated: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)},
		{ID: "sess_old", Title: "fix login", Updated: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
			Usage: usage.Usage{InputTokens: 5000, OutputTokens: 300}},
	}
	h.b.history["sess_old"] = []transcript.Entry{
		transcript.UserInput("fix the login form"),
		transcript.ToolCall("c1", "read_file", json.RawMessage(`{"path":"login.go"}`)),
		transcript.ToolResult("c1", "read_file", "package login", false),
		transcript.AssistantText("Fixed the **login** form."),
	}
	h.typeText("/sessions")
	h.enter()
	v := h.view()
	if !strings.Contains(v, "sess_new") || !strings.Contains(v, "sess_old") {
		t.Fatalf("picker not shown:\n%s", v)
	}
	h.key(tea.KeyDown)
	h.enter()
	if h.m.SessionID() != "sess_old" {
		t.Fatalf("session = %q", h.m.SessionID())
	}
	if v := h.view(); !strings.Contains(v, "↑5.0k ↓300") {
		t.Fatalf("the session's usage is not in the status line:\n%s", v)
	}
	sb := h.scrollback()
	for _, want := range []string{"session sess_old", "› fix the login form", "✓ read_file login.go", "Fixed the login form."} {
		if !strings.Contains(sb, want) {
			t.Errorf("history lacks %q:\n%s", want, sb)
		}
	}
	h.typeText("next")
	h.enter()
	if h.b.reqs[0].SessionID != "sess_old" {
		t.Fatalf("next run not in the switched session: %+v", h.b.reqs[0])
	}
}

func TestSlashCompletion(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeText("/se")
	v := h.view()
	if !strings.Contains(v, "/sessions") || strings.Contains(v, "/model") {
		t.Fatalf("completion popup wrong:\n%s", v)
	}
	h.key(tea.KeyTab)
	if got := h.m.input.Value(); got != "/sessions" {
		t.Fatalf("tab completed to %q", got)
	}
	h.m.input.Reset()
	h.typeText("/co")
	v = h.view()
	if !strings.Contains(v, "/compact") || !strings.Contains(v, "/cost") {
		t.Fatalf("completion popup wrong:\n%s", v)
	}
	h.key(tea.KeyDown)
	h.enter() // runs /cost
	if sb := h.scrollback(); !strings.Contains(sb, "Usage this session") {
		t.Fatalf("/cost did not run:\n%s", sb)
	}
}

func TestFileCompletion(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.send(filesMsg{files: []string{"cmd/root.go", "internal/tui/model.go", "internal/tui/view.go", "README.md"}})
	h.typeText("look at @tuimod")
	v := h.view()
	if !strings.Contains(v, "@internal/tui/model.go") {
		t.Fatalf("file completion missing:\n%s", v)
	}
	h.key(tea.KeyTab)
	if got := h.m.input.Value(); got != "look at @internal/tui/model.go " {
		t.Fatalf("completed to %q", got)
	}
}

func TestHistoryAndMultiline(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeText("first")
	h.enter()
	h.events(completed(usage.Usage{}))
	h.typeText("line one\nline two")
	if got := h.m.input.Value(); got != "line one\nline two" {
		t.Fatalf("multi-line input = %q", got)
	}
	h.enter()
	h.events(completed(usage.Usage{}))
	if h.b.reqs[1].Prompt != "line one\nline two" {
		t.Fatalf("prompt = %q", h.b.reqs[1].Prompt)
	}
	h.key(tea.KeyUp)
	if got := h.m.input.Value(); got != "line one\nline two" {
		t.Fatalf("history up = %q", got)
	}
	h.key(tea.KeyUp) // cursor is on the last line: moves up a line first
	h.key(tea.KeyUp)
	if got := h.m.input.Value(); got != "first" {
		t.Fatalf("history up twice = %q", got)
	}
	h.key(tea.KeyDown)
	h.key(tea.KeyDown)
	if got := h.m.input.Value(); got != "" {
		t.Fatalf("history back to draft = %q", got)
	}
}

func TestReasoningDimmedAndCollapsed(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeText("think")
	h.enter()
	r := ev(event.ReasoningDelta)
	r.Text = "Let me consider the parser first."
	h.events(r)
	if v := h.view(); !strings.Contains(v, "thinking") || !strings.Contains(v, "consider the parser") {
		t.Fatalf("live reasoning missing:\n%s", v)
	}
	h.clock = h.clock.Add(2 * time.Second)
	h.events(textDelta("Answer."))
	sb := h.scrollback()
	if !strings.Contains(sb, "thought for 2.0s · 6 words") || strings.Contains(sb, "consider the parser") {
		t.Fatalf("reasoning should be collapsed in scrollback:\n%s", sb)
	}
	h.key('o', tea.ModCtrl)
	h.events(r, textDelta(" More."))
	if sb := h.scrollback(); !strings.Contains(sb, "consider the parser") {
		t.Fatalf("expanded reasoning missing:\n%s", sb)
	}
}

func TestCommands(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeText("/help")
	h.enter()
	if sb := h.scrollback(); !strings.Contains(sb, "/sessions") || !strings.Contains(sb, "ctrl+g") {
		t.Fatalf("/help output:\n%s", sb)
	}
	h.typeText("/model op")
	if v := h.view(); !strings.Contains(v, "openai:gpt-4.1") {
		t.Fatalf("model completion missing:\n%s", v)
	}
	h.enter() // accepts the completion and runs the command
	if h.m.model != "openai:gpt-4.1" {
		t.Fatalf("model = %q", h.m.model)
	}
	h.typeText("/compact")
	h.enter()
	h.typeText("hi")
	h.enter()
	if h.run().compacted != 1 {
		t.Fatal("/compact while idle must force compaction on the next run")
	}
	if h.b.reqs[0].Model != "openai:gpt-4.1" {
		t.Fatalf("model not used: %+v", h.b.reqs[0])
	}
	h.events(toolStarted("t1", "todo_write", `{"todos":[{"content":"write tests","status":"in_progress"},{"content":"ship","status":"pending"}]}`),
		toolDone("t1", "todo_write", "Todo list updated.", 1, false), completed(usage.Usage{}))
	h.printed.Reset()
	h.typeText("/todo")
	h.enter()
	if sb := h.scrollback(); !strings.Contains(sb, "▶ write tests") || !strings.Contains(sb, "☐ ship") {
		t.Fatalf("/todo output:\n%s", sb)
	}
	h.typeText("/bogus")
	h.enter()
	if !strings.Contains(h.view(), "unknown command /bogus") || len(h.b.reqs) != 1 {
		t.Fatalf("unknown command handling:\n%s", h.view())
	}
	h.m.input.Reset()
	h.typeText("/new")
	h.enter()
	if h.m.SessionID() != "" || !strings.Contains(h.scrollback(), "new session") {
		t.Fatal("/new did not reset the session")
	}
}

func TestSanitizeNeverLeaksEscapes(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeText("x")
	h.enter()
	h.events(textDelta("red \x1b[31mtext\x1b[0m and \x1b]0;title\x07 bell"))
	v := h.m.View().Content
	if strings.Contains(v, "\x1b[31m") || strings.Contains(v, "\x1b]0;") || strings.Contains(v, "\x07") {
		t.Fatalf("model escape codes reached the frame: %q", v)
	}
	h.events(toolStarted("c", "shell", `{"command":"ls"}`), toolDone("c", "shell", "\x1b[1mbold\x1b[0m\r\n", 1, false))
	if strings.Contains(h.printed.String(), "\x1b[1mbold") {
		t.Fatal("tool escape codes reached scrollback")
	}
}

func TestResizeAndSmallTerminal(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeText("x")
	h.enter()
	long := strings.Repeat("word ", 400) + "\n\n" + strings.Repeat("line\n", 3)
	h.events(textDelta(long[:len(long)-30]))
	h.send(tea.WindowSizeMsg{Width: 40, Height: 10})
	lines := strings.Split(h.view(), "\n")
	if len(lines) > 10 {
		t.Fatalf("frame has %d lines in a 10-line terminal", len(lines))
	}
	for _, l := range lines {
		if w := len([]rune(l)); w > 40 {
			t.Fatalf("line wider than 40: %q", l)
		}
	}
}

func TestIdleSchedulesNothing(t *testing.T) {
	h := newHarness(t, 80, 24)
	ticks := 0
	h.m.tick = func(time.Duration, func(time.Time) tea.Msg) tea.Cmd { ticks++; return nil }
	h.typeText("hello")
	h.send(tea.WindowSizeMsg{Width: 90, Height: 20})
	if ticks != 0 {
		t.Fatalf("idle model scheduled %d ticks", ticks)
	}
	h.enter()
	if ticks == 0 {
		t.Fatal("no spinner tick while a run is live")
	}
	h.events(completed(usage.Usage{}))
	h.m.ticking = false // the pending tick fires once more...
	h.send(tickMsg{gen: h.m.tickGen})
	n := ticks
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	if ticks != n {
		t.Fatal("tick loop continued after the run ended")
	}
}

func TestContinueWithPromptPrintsHistoryFirst(t *testing.T) {
	b := &fakeBackend{history: map[string][]transcript.Entry{"s1": {transcript.UserInput("earlier question"), transcript.AssistantText("earlier answer")}}}
	var printed strings.Builder
	m := NewModel(context.Background(), Config{Backend: b, Model: "script:x", SessionID: "s1", ShowHistory: true, Prompt: "follow-up"})
	m.print = func(s string) tea.Cmd { printed.WriteString(s + "\n"); return nil }
	m.wait = func(Handle) tea.Cmd { return nil }
	m.tick = func(time.Duration, func(time.Time) tea.Msg) tea.Cmd { return nil }
	h := &harness{t: t, m: m, b: b}
	h.exec(m.Init())
	sb := ansi.Strip(printed.String())
	i, j := strings.Index(sb, "earlier answer"), strings.Index(sb, "› follow-up")
	if i < 0 || j < 0 || i > j {
		t.Fatalf("history must precede the new prompt:\n%s", sb)
	}
	if len(b.reqs) != 1 || b.reqs[0].SessionID != "s1" || b.reqs[0].Prompt != "follow-up" {
		t.Fatalf("requests = %+v", b.reqs)
	}
}

func TestCtrlCTwiceQuitsWhileInterrupting(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeText("work")
	h.enter()
	h.key('c', tea.ModCtrl)
	if h.run().cancelled == nil || h.m.quitting {
		t.Fatal("first ctrl+c must interrupt, not quit")
	}
	if !strings.Contains(h.view(), "ctrl+c again quits") {
		t.Fatalf("no hint:\n%s", h.view())
	}
	h.key('c', tea.ModCtrl)
	if !h.m.quitting {
		t.Fatal("second ctrl+c while interrupting must quit")
	}
}
