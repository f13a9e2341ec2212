package tui

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/mailbox"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

// fakeRun records what the TUI asks of a run; events are delivered by the test.
type fakeRun struct {
	id, session string
	mbox        mailbox.Mailbox
	mu          sync.Mutex
	decisions   map[string]tool.Decision
	cancelled   error
	compacted   int
}

func (r *fakeRun) RunID() string              { return r.id }
func (r *fakeRun) SessionID() string          { return r.session }
func (r *fakeRun) Events() <-chan event.Event { return nil }
func (r *fakeRun) Approve(id string, d tool.Decision) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.decisions == nil {
		r.decisions = map[string]tool.Decision{}
	}
	r.decisions[id] = d
	return nil
}
func (r *fakeRun) Mailbox() *mailbox.Mailbox { return &r.mbox }
func (r *fakeRun) Cancel(cause error)        { r.cancelled = cause }
func (r *fakeRun) Compact()                  { r.compacted++ }

type fakeBackend struct {
	reqs     []StartRequest
	runs     []*fakeRun
	sessions []SessionInfo
	history  map[string][]transcript.Entry
}

func (b *fakeBackend) Start(_ context.Context, req StartRequest) (Handle, error) {
	b.reqs = append(b.reqs, req)
	sid := req.SessionID
	if sid == "" {
		sid = "sess_1"
	}
	r := &fakeRun{id: "run_" + string(rune('a'+len(b.runs))), session: sid}
	b.runs = append(b.runs, r)
	return r, nil
}
func (b *fakeBackend) Sessions(context.Context) ([]SessionInfo, error) { return b.sessions, nil }
func (b *fakeBackend) History(_ context.Context, id string) ([]transcript.Entry, error) {
	return b.history[id], nil
}
func (b *fakeBackend) Models() []string         { return []string{"script:a.yaml", "openai:gpt-4.1"} }
func (b *fakeBackend) ContextWindow(string) int { return 100000 }

// harness drives a Model synchronously: commands are executed inline, except event
// waits and ticks (the test delivers events itself).
type harness struct {
	t       testing.TB
	m       *Model
	b       *fakeBackend
	printed strings.Builder
	clock   time.Time
	timers  []timer
}

// timer is a tick the model asked for; advance delivers it.
type timer struct {
	at time.Time
	fn func(time.Time) tea.Msg
}

func newHarness(t testing.TB, w, h int) *harness {
	hs := &harness{t: t, b: &fakeBackend{history: map[string][]transcript.Entry{}}}
	hs.clock = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	hs.m = NewModel(context.Background(), Config{
		Backend: hs.b, Model: "script:demo.yaml", Width: w, Height: h, Dark: true, Color: true,
		Now: func() time.Time { return hs.clock }, Location: time.UTC,
	})
	hs.m.print = func(s string) tea.Cmd {
		hs.printed.WriteString(s)
		hs.printed.WriteString("\n")
		return nil
	}
	hs.m.wait = func(Handle) tea.Cmd { return nil }
	hs.m.tick = func(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
		hs.timers = append(hs.timers, timer{at: hs.clock.Add(d), fn: fn})
		return nil
	}
	hs.exec(hs.m.Init())
	return hs
}

func (h *harness) send(msg tea.Msg) {
	_, cmd := h.m.Update(msg)
	h.exec(cmd)
}

var cmdType = reflect.TypeOf(tea.Cmd(nil))

func (h *harness) exec(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	msg := cmd()
	if msg == nil {
		return
	}
	if v := reflect.ValueOf(msg); v.Kind() == reflect.Slice && v.Type().Elem() == cmdType {
		for i := 0; i < v.Len(); i++ {
			h.exec(v.Index(i).Interface().(tea.Cmd))
		}
		return
	}
	switch msg.(type) {
	case tea.QuitMsg:
		return
	}
	h.send(msg)
}

func (h *harness) typeText(s string) {
	for _, r := range s {
		if r == '\n' {
			h.send(tea.KeyPressMsg{Code: 'j', Mod: tea.ModCtrl})
			continue
		}
		h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func (h *harness) key(code rune, mod ...tea.KeyMod) {
	k := tea.KeyPressMsg{Code: code}
	for _, md := range mod {
		k.Mod |= md
	}
	h.send(k)
}

// advance moves the clock by d and delivers the ticks that are due.
func (h *harness) advance(d time.Duration) {
	h.clock = h.clock.Add(d)
	var due []timer
	keep := h.timers[:0]
	for _, tm := range h.timers {
		if tm.at.After(h.clock) {
			keep = append(keep, tm)
		} else {
			due = append(due, tm)
		}
	}
	h.timers = keep
	for _, tm := range due {
		h.send(tm.fn(h.clock))
	}
}

// choose answers the pending approval the explicit way: after the guard, select
// answer n (1-based) with a digit and confirm with Enter.
func (h *harness) choose(n int) {
	h.advance(approvalGuard)
	h.typeText(string(rune('0' + n)))
	h.enter()
}

func (h *harness) enter() { h.key(tea.KeyEnter) }
func (h *harness) esc()   { h.key(tea.KeyEscape) }

func (h *harness) run() *fakeRun {
	h.t.Helper()
	if len(h.b.runs) == 0 {
		h.t.Fatal("no run started")
	}
	return h.b.runs[len(h.b.runs)-1]
}

func (h *harness) events(evs ...event.Event) {
	h.send(eventsMsg{run: h.m.run, evs: evs})
}

// view is the live frame without escape codes.
func (h *harness) view() string { return ansi.Strip(h.m.View().Content) }

// scrollback is everything printed so far, without escape codes.
func (h *harness) scrollback() string { return ansi.Strip(h.printed.String()) }

func ev(t event.Type) event.Event { return event.Event{Type: t, RunID: "run_a"} }

func textDelta(s string) event.Event { e := ev(event.TextDelta); e.Text = s; return e }

func toolStarted(id, name, args string) event.Event {
	e := ev(event.ToolCallStarted)
	e.CallID, e.Name, e.Args = id, name, json.RawMessage(args)
	return e
}

func toolDone(id, name, output string, ms int64, isErr bool) event.Event {
	e := ev(event.ToolCallCompleted)
	e.CallID, e.Name, e.Output, e.DurationMS, e.IsError = id, name, output, ms, isErr
	return e
}

func completed(u usage.Usage) event.Event {
	e := ev(event.RunCompleted)
	e.Status, e.Usage, e.SessionID = "completed", &u, "sess_1"
	return e
}
