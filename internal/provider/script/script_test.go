package script

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/transcript"
)

func mustParse(t *testing.T, src string) *Provider {
	t.Helper()
	s, err := Parse("test.yaml", []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return New("test.yaml", s)
}

type reply struct {
	text      string
	textDelta []string
	reasoning string
	calls     []transcript.Entry
	entries   []transcript.Entry
	finish    string
	usage     bool
	err       error
}

func collect(t *testing.T, p *Provider, entries []transcript.Entry) reply {
	t.Helper()
	var r reply
	for d, err := range p.Stream(context.Background(), provider.Request{Entries: entries}) {
		if err != nil {
			r.err = err
			break
		}
		switch d.Kind {
		case provider.DeltaText:
			r.text += d.Text
			r.textDelta = append(r.textDelta, d.Text)
		case provider.DeltaReasoning:
			r.reasoning += d.Text
		case provider.DeltaEntry:
			r.entries = append(r.entries, *d.Entry)
			if d.Entry.Type == transcript.TypeToolCall {
				r.calls = append(r.calls, *d.Entry)
			}
		case provider.DeltaUsage:
			r.usage = d.Usage != nil && d.Usage.OutputTokens > 0
		case provider.DeltaFinish:
			r.finish = d.FinishReason
		}
	}
	return r
}

const twoTurns = `
turns:
  - reasoning: "I should read the file first."
    text: "Let me look at main.go for you, it is short."
    tool_calls:
      - name: read_file
        args: {path: main.go, limit: 20, opts: {deep: true}, list: [1, two]}
  - text: "Done: the file prints hello."
`

func TestStreamsTextToolCallsAndFinish(t *testing.T) {
	p := mustParse(t, twoTurns)
	in := []transcript.Entry{{Type: transcript.TypeInput, Role: "user", Text: "hi", RunID: "run-a"}}
	r := collect(t, p, in)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.text != "Let me look at main.go for you, it is short." || len(r.textDelta) < 3 {
		t.Errorf("text %q in %d deltas, want the whole text in 16-char pieces", r.text, len(r.textDelta))
	}
	for _, d := range r.textDelta {
		if len(d) > chunk {
			t.Errorf("delta %q longer than %d", d, chunk)
		}
	}
	if r.reasoning != "I should read the file first." {
		t.Errorf("reasoning %q", r.reasoning)
	}
	if len(r.calls) != 1 || r.calls[0].Name != "read_file" {
		t.Fatalf("calls %+v", r.calls)
	}
	var args map[string]any
	if err := json.Unmarshal(r.calls[0].Args, &args); err != nil {
		t.Fatalf("args %s: %v", r.calls[0].Args, err)
	}
	if args["path"] != "main.go" || args["limit"] != float64(20) || args["opts"].(map[string]any)["deep"] != true {
		t.Errorf("args %s", r.calls[0].Args)
	}
	if r.finish != "tool_calls" || !r.usage {
		t.Errorf("finish %q usage %v", r.finish, r.usage)
	}
	if got := []transcript.Type{r.entries[0].Type, r.entries[1].Type, r.entries[2].Type}; got[0] != transcript.TypeReasoning || got[1] != transcript.TypeAssistantText || got[2] != transcript.TypeToolCall {
		t.Errorf("entry order %v", got)
	}

	// Second request: the view now holds the reply and its result.
	call := r.calls[0]
	call.RunID = "run-a"
	view := append(in, transcript.Entry{Type: transcript.TypeAssistantText, Text: "x", RunID: "run-a"}, call,
		transcript.Entry{Type: transcript.TypeToolResult, CallID: call.CallID, Text: "package main", RunID: "run-a"})
	r2 := collect(t, p, view)
	if r2.text != "Done: the file prints hello." || r2.finish != "stop" {
		t.Errorf("turn 2: %q %q", r2.text, r2.finish)
	}

	// Third request: the script is exhausted and says so.
	view = append(view, transcript.Entry{Type: transcript.TypeAssistantText, Text: "Done", RunID: "run-a"},
		transcript.Entry{Type: transcript.TypeInput, Role: "user", Text: "more", RunID: "run-a"})
	r3 := collect(t, p, view)
	if errs.KindOf(r3.err) != errs.KindProvider || !strings.Contains(r3.err.Error(), "script test.yaml has 2 turns; the run asked for turn 3 — add a turn") {
		t.Errorf("exhausted: %v", r3.err)
	}
	if n := len(p.Requests()); n != 3 {
		t.Errorf("recorded %d requests, want 3", n)
	}
}

func TestTurnSelection(t *testing.T) {
	u := func(run, text string) transcript.Entry {
		return transcript.Entry{Type: transcript.TypeInput, Role: "user", Text: text, RunID: run}
	}
	a := func(run string) transcript.Entry {
		return transcript.Entry{Type: transcript.TypeAssistantText, Text: "a", RunID: run}
	}
	c := func(run, id string) transcript.Entry {
		return transcript.Entry{Type: transcript.TypeToolCall, CallID: id, Name: "t", RunID: run}
	}
	r := func(run, id string) transcript.Entry {
		return transcript.Entry{Type: transcript.TypeToolResult, CallID: id, Text: "ok", RunID: run}
	}
	tests := []struct {
		name    string
		entries []transcript.Entry
		want    int
	}{
		{"fresh run", []transcript.Entry{u("r1", "hi")}, 0},
		{"history of another run is ignored", []transcript.Entry{u("r0", "x"), a("r0"), u("r1", "hi")}, 0},
		{"text + calls in one reply count once", []transcript.Entry{u("r1", "hi"), a("r1"), c("r1", "1"), c("r1", "2"), r("r1", "1"), r("r1", "2")}, 1},
		{"mailbox input between replies", []transcript.Entry{u("r1", "hi"), c("r1", "1"), r("r1", "1"), u("r1", "steer"), a("r1")}, 2},
		{"only the input is stamped", []transcript.Entry{u("r0", "x"), a(""), u("r1", "hi"), a(""), c("", "1"), r("", "1"), a("")}, 2},
		{"no run ids: whole view", []transcript.Entry{u("", "hi"), a(""), u("", "again")}, 1},
		{"synthetic tail ignored for run id", []transcript.Entry{u("r1", "hi"), a("r1"), {Type: transcript.TypeInput, Role: "user", Text: "reminder", Synthetic: true}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, n := RepliesInView(tt.entries); n != tt.want {
				t.Errorf("got %d, want %d", n, tt.want)
			}
		})
	}
}

func TestCompactedViewNeverGoesBack(t *testing.T) {
	p := mustParse(t, "turns:\n  - text: one\n  - text: two\n  - text: three\n")
	full := []transcript.Entry{
		{Type: transcript.TypeInput, Role: "user", Text: "hi", RunID: "r"},
		{Type: transcript.TypeAssistantText, Text: "one", RunID: "r"},
		{Type: transcript.TypeInput, Role: "user", Text: "more", RunID: "r"},
	}
	if got := collect(t, p, full).text; got != "two" {
		t.Fatalf("got %q", got)
	}
	// A summary replaced the first reply: the count would drop to 0, but the provider
	// remembers it saw one reply of run r already.
	compacted := []transcript.Entry{
		{Type: transcript.TypeInput, Role: "user", Text: "summary", Synthetic: true},
		{Type: transcript.TypeInput, Role: "user", Text: "more", RunID: "r"},
	}
	if got := collect(t, p, compacted).text; got != "two" {
		t.Fatalf("compacted view replayed %q, want two", got)
	}
}

func TestErrorsAreServedOnceThenTheReply(t *testing.T) {
	p := mustParse(t, `
turns:
  - error: {status: 429, message: slow down, retry_after: 2s}
  - error: {cut: true}
    text: "partial text that is lost"
  - text: ok
  - error: {overflow: true}
  - text: second
`)
	in := []transcript.Entry{transcript.UserInput("hi")}
	var he *provider.HTTPError
	r := collect(t, p, in)
	if !errors.As(r.err, &he) || he.Status != 429 || he.RetryAfter != 2*time.Second || !he.Retryable() {
		t.Fatalf("first: %v", r.err)
	}
	r = collect(t, p, in)
	if !errors.Is(r.err, provider.ErrStreamCut) || r.text != "partial text that is lost" {
		t.Fatalf("second: %v %q", r.err, r.text)
	}
	if r = collect(t, p, in); r.err != nil || r.text != "ok" {
		t.Fatalf("third: %v %q", r.err, r.text)
	}
	in = append(in, transcript.AssistantText("ok"), transcript.UserInput("more"))
	r = collect(t, p, in)
	if !errors.Is(r.err, provider.ErrContextOverflow) {
		t.Fatalf("fourth: %v", r.err)
	}
	if r = collect(t, p, in); r.err != nil || r.text != "second" {
		t.Fatalf("fifth: %v %q", r.err, r.text)
	}
	// A fresh provider (a resumed run in a new process) at turn 2 serves the overflow
	// again, then the reply.
	p2 := New("test.yaml", p.Script())
	if r = collect(t, p2, in); !errors.Is(r.err, provider.ErrContextOverflow) {
		t.Fatalf("fresh: %v", r.err)
	}
}

func TestDelayHonoursCancellation(t *testing.T) {
	p := mustParse(t, "turns:\n  - text: late\n    delay: 10s\n")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	var gotErr error
	for _, err := range p.Stream(ctx, provider.Request{}) {
		gotErr = err
	}
	if !errors.Is(gotErr, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Fatalf("err %v after %v", gotErr, time.Since(start))
	}
}

func TestUsageOverrideAndRawArgs(t *testing.T) {
	p := mustParse(t, `
turns:
  - tool_calls:
      - name: add
        raw_args: '{"a": 1,'
        id: c9
    usage: {input_tokens: 100, output_tokens: 7, cached_input_tokens: 50}
`)
	var got provider.Delta
	var call transcript.Entry
	for d, err := range p.Stream(context.Background(), provider.Request{}) {
		if err != nil {
			t.Fatal(err)
		}
		if d.Kind == provider.DeltaUsage {
			got = d
		}
		if d.Kind == provider.DeltaEntry {
			call = *d.Entry
		}
	}
	if got.Usage.InputTokens != 100 || got.Usage.CachedInputTokens != 50 || got.Usage.OutputTokens != 7 {
		t.Errorf("usage %+v", got.Usage)
	}
	if string(call.Args) != `{"a": 1,` || call.CallID != "c9" {
		t.Errorf("call %+v", call)
	}
}

// aliasBomb nests 9 levels of 9 aliases in a turn's args (9^9 values expanded).
var aliasBomb = func() string {
	s := "x0: &a0 [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n"
	for i := 1; i <= 9; i++ {
		s += fmt.Sprintf("x%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 9), ","))
	}
	return s + "turns:\n  - tool_calls: [{name: t, args: {v: *a9}}]\n"
}()

// A script: path that names an endless device fails at the cap.
func TestLoadIsCapped(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no /dev/zero")
	}
	_, err := Load("/dev/zero")
	if err == nil || !strings.Contains(err.Error(), "/dev/zero is over the size limit (16 MiB)") || errs.KindOf(err) != errs.KindConfig {
		t.Errorf("err %v", err)
	}
}

func TestBadScripts(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"syntax", "turns:\n  - text: [unclosed\n", []string{"bad.yaml:"}},
		{"unknown key", "turns:\n  - txt: hello\n", []string{"bad.yaml:2:5", `unknown key "txt"`, `did you mean "text"`}},
		{"wrong type", "turns:\n  - text: hi\n    delay: [1]\n", []string{"bad.yaml:3:"}},
		{"no turns", "context_window: 10\n", []string{"no turns"}},
		{"empty error", "turns:\n  - error: {message: x}\n", []string{"empty error"}},
		{"unnamed call", "turns:\n  - tool_calls: [{args: {}}]\n", []string{"has no name"}},
		{"alias bomb", aliasBomb, []string{"bad.yaml:", "aliases expand to more than 100000 nodes", "write the values out"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(tt.src))
			if err == nil {
				t.Fatal("no error")
			}
			if errs.KindOf(err) != errs.KindConfig {
				t.Errorf("kind %s", errs.KindOf(err))
			}
			full := err.Error() + " | " + errs.HintOf(err)
			for _, w := range tt.want {
				if !strings.Contains(full, w) {
					t.Errorf("%q lacks %q", full, w)
				}
			}
		})
	}
}

func TestFactoryResolvesRelativeToDir(t *testing.T) {
	r := provider.NewRegistry(provider.Env{Dir: "testdata"})
	Register(r)
	p, err := r.Resolve(context.Background(), "script:hello.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if info := p.Info(); info.Provider != "script" || info.ContextWindow != 4096 {
		t.Errorf("info %+v", info)
	}
	sp := p.(*Provider)
	for range sp.Stream(context.Background(), provider.Request{}) {
	}
	if n := len(sp.Requests()); n != 0 {
		t.Errorf("a registry-built provider recorded %d requests", n)
	}
	sp.SetRecording(true)
	for range sp.Stream(context.Background(), provider.Request{}) {
	}
	if n := len(sp.Requests()); n != 1 {
		t.Errorf("recorded %d requests after SetRecording(true)", n)
	}
	_, err = r.Resolve(context.Background(), "script:missing.yaml")
	if errs.KindOf(err) != errs.KindConfig {
		t.Errorf("missing file: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(twoTurns))
	f.Add([]byte("turns:\n  - error: {status: 429}\n  - text: hi\n"))
	f.Add([]byte("turns: [{tool_calls: [{name: x, args: {a: {b: [1, 2, {c: d}]}}}]}]"))
	f.Add([]byte("turns:\n  - txt: 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data)
		if err != nil {
			if errs.KindOf(err) != errs.KindConfig {
				t.Fatalf("error of kind %s: %v", errs.KindOf(err), err)
			}
			return
		}
		for i := range s.Turns {
			s.Turns[i].Delay = 0 // no sleeping in the fuzzer
		}
		p := New("fuzz.yaml", s)
		for _, err := range p.Stream(context.Background(), provider.Request{}) {
			_ = err
		}
	})
}

func TestSessionScope(t *testing.T) {
	p := mustParse(t, "scope: session\nturns:\n  - text: first\n  - text: second\n")
	view := []transcript.Entry{
		{Type: transcript.TypeInput, Role: "user", Text: "hi", RunID: "r1"},
		{Type: transcript.TypeAssistantText, Text: "first"},
		{Type: transcript.TypeInput, Role: "user", Text: "again", RunID: "r2"},
	}
	if got := collect(t, p, view).text; got != "second" {
		t.Errorf("session scope replayed %q", got)
	}
	run := mustParse(t, "turns:\n  - text: first\n  - text: second\n")
	if got := collect(t, run, view).text; got != "first" {
		t.Errorf("run scope replayed %q", got)
	}
	if _, err := Parse("x.yaml", []byte("scope: forever\nturns: [{text: a}]\n")); err == nil {
		t.Error("bad scope accepted")
	}
}
