package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/agent"
	"github.com/lovia-dev/lovia/internal/compaction"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// Recorded views, phase by phase (each asserts what the fake provider was sent):
//   - setup / system prompt:      TestSystemPromptComposition
//   - history + input:            TestRunToolThenAnswer (second run of the session)
//   - mailbox drain:              TestMailboxLandsAtNextTurn, TestMailboxPushDuringToolLandsNextTurn
//   - context policy + injectors: TestOverflowCompactsAndRetriesOnce, TestForcedCompaction, TestViewInjectorsAreTransient
//   - tool results:               TestRunToolThenAnswer, TestParallelPreflightBarrierAndPairing
//   - structured-output repair:   TestStructuredOutputRepairedOnce
//   - handoff swap:               TestHandoffSwapsOnlySystemHead
//   - resume:                     TestResumeAfterCrash, TestCancelMidToolThenResume
func TestRunToolThenAnswer(t *testing.T) {
	p := newFake(calls(mkcall("c1", "add", `{"a":2,"b":3}`)), say("The answer is 5."))
	m := memStore()
	o := withStores(opts1(p), m)
	o.SessionID = "s1"
	h := Start(context.Background(), newAgent("calc", addTool()), Text("2+3?"), o)
	res, err, evs := collect(t, h)
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "The answer is 5." || res.Turns != 2 || res.Status != store.StatusCompleted || res.FinishReason != "stop" {
		t.Fatalf("result %+v", res)
	}
	if res.Usage.InputTokens != 20 || res.Usage.OutputTokens != 10 || res.Usage.Requests != 2 {
		t.Fatalf("usage %+v", res.Usage)
	}
	want := "run_started turn_started message_completed tool_call_started tool_call_completed turn_ended " +
		"turn_started text_delta text_delta message_completed turn_ended run_completed"
	if got := strings.Join(types(evs), " "); got != want {
		t.Fatalf("events\n got %s\nwant %s", got, want)
	}
	last := evs[len(evs)-1]
	if last.FinalOutput != "The answer is 5." || last.SessionID != "s1" || last.Turns != 2 {
		t.Fatalf("terminal event %+v", last)
	}
	if mc := ofType(evs, event.MessageCompleted); mc[0].Usage == nil || mc[0].Usage.InputTokens != 10 {
		t.Fatalf("message_completed usage %+v", mc[0].Usage)
	}

	// Recorded views: the second call sees the call and its result, never the system
	// head among the entries.
	reqs := p.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if reqs[0].System != "You are calc." || len(reqs[0].Tools) != 1 || reqs[0].Tools[0].Name != "add" {
		t.Fatalf("first request %+v", reqs[0])
	}
	if got := shape(reqs[0].Entries); got != "user:2+3?" {
		t.Fatalf("view 1: %s", got)
	}
	if got := shape(reqs[1].Entries); got != "user:2+3? call:c1:add result:c1:5" {
		t.Fatalf("view 2: %s", got)
	}

	// Persistence: checkpoint finalized with the result, session segment appended.
	snap, err := m.Checkpoints.Load(context.Background(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Head.Status != store.StatusCompleted || snap.Head.Result == nil || snap.Head.Result.Output != "The answer is 5." || snap.Head.Turns != 2 {
		t.Fatalf("head %+v", snap.Head)
	}
	if shape(snap.Entries) != shape(res.Entries) || len(snap.Entries) != 4 {
		t.Fatalf("checkpoint entries (no duplicates expected): %s", shape(snap.Entries))
	}
	for _, e := range snap.Entries {
		if e.RunID != res.RunID {
			t.Fatalf("entry without run id: %+v", e)
		}
	}
	hist, _ := m.Sessions.Load(context.Background(), "s1")
	if shape(hist) != shape(res.Entries) {
		t.Fatalf("session %s", shape(hist))
	}

	// A second run of the session sees the history first.
	p2 := newFake(say("again"))
	o2 := withStores(opts1(p2), m)
	o2.SessionID = "s1"
	if _, err := Start(context.Background(), newAgent("calc", addTool()), Text("more"), o2).Result(); err != nil {
		t.Fatal(err)
	}
	if got := shape(p2.requests()[0].Entries); got != "user:2+3? call:c1:add result:c1:5 text:The answer is 5. user:more" {
		t.Fatalf("history view: %s", got)
	}
}

func TestResultWithoutReadingEvents(t *testing.T) {
	p := newFake(say("ok"))
	res, err := Start(context.Background(), newAgent("a"), Text("hi"), opts1(p)).Result()
	if err != nil || res.Output != "ok" {
		t.Fatalf("%v %+v", err, res)
	}
}

func TestSystemPromptComposition(t *testing.T) {
	p := newFake(say("ok"))
	a := newAgent("a")
	a.Fragments = []agent.Fragment{func(_ context.Context, rc *tool.RunContext) (string, error) {
		return "Fragment for " + rc.Agent + ".", nil
	}}
	a.Plugins = []plugin.Plugin{plugin.Func{ID: "p", Fn: func(context.Context, *tool.RunContext) (*plugin.Contribution, error) {
		return &plugin.Contribution{Instructions: "Plugin rules."}, nil
	}}}
	a.OutputSchema = json.RawMessage(`{"type":"object"}`)
	o := opts1(p)
	o.ExtraInstructions = "Extra."
	p.replies = []reply{say(`{}`)}
	if _, err := Start(context.Background(), a, Text("hi"), o).Result(); err != nil {
		t.Fatal(err)
	}
	sys := p.requests()[0].System
	parts := strings.Split(sys, "\n\n")
	if len(parts) < 5 || parts[0] != "You are a." || parts[1] != "Fragment for a." || parts[2] != "Plugin rules." || parts[3] != "Extra." ||
		!strings.Contains(parts[4], "JSON Schema") {
		t.Fatalf("system prompt:\n%s", sys)
	}
	if p.requests()[0].OutputSchema != nil {
		t.Fatal("output schema sent to a provider without native support")
	}

	// Native schema support: no contract in the prompt, the schema goes in the request.
	p2 := newFake(say(`{"x":1}`))
	p2.info.NativeSchema = true
	if _, err := Start(context.Background(), a, Text("hi"), opts1(p2)).Result(); err != nil {
		t.Fatal(err)
	}
	r := p2.requests()[0]
	if strings.Contains(r.System, "JSON Schema") || string(r.OutputSchema) != `{"type":"object"}` {
		t.Fatalf("native: system %q schema %s", r.System, r.OutputSchema)
	}
}

func TestHandoffSwapsOnlySystemHead(t *testing.T) {
	pa := newFake(reply{text: "Let me transfer you.", calls: []fcall{mkcall("h1", "transfer_to_billing", `{"reason":"refund"}`)}})
	pb := newFake(say("Refund issued."))
	billing := &agent.Agent{Name: "billing", Instructions: "You handle billing.", Model: "fake:b", HandoffDescription: "Refunds and invoices."}
	triage := &agent.Agent{Name: "triage", Instructions: "You route.", Model: "fake:a", Handoffs: []*agent.Agent{billing}}
	m := memStore()
	o := withStores(Options{Resolve: resolver(map[string]*fakeProvider{"fake:a": pa, "fake:b": pb})}, m)
	res, err, evs := collect(t, Start(context.Background(), triage, Text("refund please"), o))
	if err != nil {
		t.Fatal(err)
	}
	if res.FinalAgent != "billing" || res.Output != "Refund issued." {
		t.Fatalf("result %+v", res)
	}
	ra, rb := pa.requests()[0], pb.requests()[0]
	if !strings.Contains(ra.Tools[0].Description, "Refunds and invoices.") {
		t.Fatalf("handoff tool description %q", ra.Tools[0].Description)
	}
	if rb.System != "You handle billing." {
		t.Fatalf("system after handoff %q", rb.System)
	}
	wantBody := "user:refund please text:Let me transfer you. call:h1:transfer_to_billing result:h1:Transferred to billing."
	if got := shape(rb.Entries); got != wantBody {
		t.Fatalf("body after handoff\n got %s\nwant %s", got, wantBody)
	}
	ho := ofType(evs, event.HandoffOccurred)
	if len(ho) != 1 || ho[0].From != "triage" || ho[0].To != "billing" {
		t.Fatalf("handoff events %+v", ho)
	}
	// handoff_occurred comes after turn_ended of the turn that asked for it.
	var seen []string
	for _, e := range evs {
		if e.Type == event.TurnEnded || e.Type == event.HandoffOccurred {
			seen = append(seen, string(e.Type))
		}
	}
	if strings.Join(seen, " ") != "turn_ended handoff_occurred turn_ended" {
		t.Fatalf("order %v", seen)
	}
	for _, e := range res.Entries {
		if e.Type == transcript.TypeAssistantText && e.Text == "Refund issued." && e.Agent != "billing" {
			t.Fatalf("entry agent %q", e.Agent)
		}
	}
	snap, _ := m.Checkpoints.Load(context.Background(), res.RunID)
	if snap.Head.Agent != "billing" || snap.Head.EntryAgent != "triage" || snap.Head.Result.FinalAgent != "billing" {
		t.Fatalf("head %+v", snap.Head)
	}
}

func TestFirstHandoffOfTurnWins(t *testing.T) {
	pa := newFake(calls(mkcall("h1", "transfer_to_b", `{}`), mkcall("h2", "transfer_to_c", `{}`)))
	pb := newFake(say("b here"))
	b := &agent.Agent{Name: "b", Model: "fake:b"}
	c := &agent.Agent{Name: "c", Model: "fake:c"}
	a := &agent.Agent{Name: "a", Model: "fake:a", Handoffs: []*agent.Agent{b, c}}
	o := Options{Resolve: resolver(map[string]*fakeProvider{"fake:a": pa, "fake:b": pb, "fake:c": newFake()})}
	res, err, evs := collect(t, Start(context.Background(), a, Text("x"), o))
	if err != nil {
		t.Fatal(err)
	}
	if res.FinalAgent != "b" {
		t.Fatalf("final agent %s", res.FinalAgent)
	}
	got := shape(pb.requests()[0].Entries)
	if !strings.Contains(got, "result:h1:Transferred to b.") || !strings.Contains(got, "errorresult:h2:error: not transferred") {
		t.Fatalf("view %s", got)
	}
	if len(ofType(evs, event.HandoffOccurred)) != 1 {
		t.Fatal("more than one handoff")
	}
}

func TestParallelPreflightBarrierAndPairing(t *testing.T) {
	var mu sync.Mutex
	var validated []string
	// done[name] closes when that tool returns; the tools order themselves on these
	// channels, never on the clock.
	done := map[string]chan struct{}{}
	for _, n := range []string{"slow", "fast", "barrier", "after"} {
		done[n] = make(chan struct{})
	}
	closed := func(n string) bool {
		select {
		case <-done[n]:
			return true
		default:
			return false
		}
	}
	var running atomic.Int32
	var problems []string
	problem := func(s string) { mu.Lock(); problems = append(problems, s); mu.Unlock() }

	mk := func(name string, parallel bool, body func(ctx context.Context)) tool.Tool {
		return &tool.FuncTool{
			S: tool.Spec{Name: name, Parallel: parallel, Schema: json.RawMessage(`{"type":"object"}`),
				Validate: func(json.RawMessage) error {
					mu.Lock()
					validated = append(validated, name)
					mu.Unlock()
					return nil
				}},
			Fn: func(ctx context.Context, _ *tool.RunContext, args json.RawMessage) (tool.Result, error) {
				if n := running.Add(1); !parallel && n != 1 {
					problem("barrier ran while another call was running")
				}
				body(ctx)
				running.Add(-1)
				close(done[name])
				return tool.Result{Text: "out-" + name}, nil
			},
		}
	}
	// slow returns only after fast's completion was reported: the two must run at the
	// same time (a loop that ran them one after the other would leave slow waiting
	// until the deadline), and fast's result comes first.
	fastReported := make(chan struct{})
	slow := mk("slow", true, func(ctx context.Context) {
		select {
		case <-fastReported:
		case <-ctx.Done():
			problem("slow and fast did not run concurrently")
		}
	})
	fast := mk("fast", true, func(context.Context) {})
	barrier := mk("barrier", false, func(context.Context) {
		if !closed("slow") || !closed("fast") {
			problem("the barrier started before the calls ahead of it finished")
		}
	})
	after := mk("after", true, func(context.Context) {
		if !closed("barrier") {
			problem("a call after the barrier started before it finished")
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a := newAgent("a", slow, fast, barrier, after)
	p := newFake(calls(mkcall("c1", "slow", `{}`), mkcall("c2", "fast", `{}`), mkcall("c3", "barrier", `{}`), mkcall("c4", "after", `{}`)), say("done"))
	h := Start(ctx, a, Text("go"), opts1(p))
	var evs []event.Event
	for ev := range h.Events() {
		evs = append(evs, ev)
		if ev.Type == event.ToolCallCompleted && ev.CallID == "c2" {
			close(fastReported)
		}
	}
	checkStream(t, evs)
	if _, err := h.Result(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(validated, " ") != "slow fast barrier after" {
		t.Fatalf("preflight order %v", validated)
	}
	var startedOrder []string
	for _, e := range ofType(evs, event.ToolCallStarted) {
		startedOrder = append(startedOrder, e.CallID)
	}
	if strings.Join(startedOrder, " ") != "c1 c2 c3 c4" {
		t.Fatalf("tool_call_started order %v", startedOrder)
	}
	if len(problems) > 0 {
		t.Fatal(strings.Join(problems, "; "))
	}
	// Completion order: fast before slow; every result paired with its own call.
	var completed []string
	for _, e := range ofType(evs, event.ToolCallCompleted) {
		completed = append(completed, e.CallID)
		want := map[string]string{"c1": "out-slow", "c2": "out-fast", "c3": "out-barrier", "c4": "out-after"}[e.CallID]
		if e.Output != want {
			t.Fatalf("result of %s is %q", e.CallID, e.Output)
		}
	}
	if strings.Join(completed, " ") != "c2 c1 c3 c4" {
		t.Fatalf("completion order %v", completed)
	}
	view := shape(p.requests()[1].Entries)
	if view != "user:go call:c1:slow call:c2:fast call:c3:barrier call:c4:after result:c2:out-fast result:c1:out-slow result:c3:out-barrier result:c4:out-after" {
		t.Fatalf("view %s", view)
	}
}

func TestToolTimeoutBecomesErrorResult(t *testing.T) {
	// The tool ignores its context and stays blocked until the test ends: the run
	// finishing at all shows the loop moved on at the timeout.
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	slow := fnTool("slow", func(ctx context.Context, _ *tool.RunContext) (string, error) {
		<-release
		return "late", nil
	}, tool.Timeout(50*time.Millisecond))
	p := newFake(calls(mkcall("c1", "slow", `{}`)), say("ok"))
	_, err, evs := collect(t, Start(context.Background(), newAgent("a", slow), Text("x"), opts1(p)))
	if err != nil {
		t.Fatal(err)
	}
	f := ofType(evs, event.ToolCallFailed)
	if len(f) != 1 || !strings.Contains(f[0].Output, "timed out after 50ms") {
		t.Fatalf("failed events %+v", f)
	}
	if v := shape(p.requests()[1].Entries); !strings.Contains(v, "errorresult:c1:error: tool slow timed out after 50ms") {
		t.Fatalf("view %s", v)
	}
}

func TestRetriesAndToolErrors(t *testing.T) {
	var n atomic.Int32
	flaky := fnTool("flaky", func(context.Context, *tool.RunContext) (string, error) {
		if n.Add(1) < 3 {
			return "", errors.New("transient")
		}
		return "fine", nil
	}, tool.Retries(2))
	broken := fnTool("broken", func(context.Context, *tool.RunContext) (string, error) {
		return "", errors.New("disk on fire")
	})
	boom := fnTool("boom", func(context.Context, *tool.RunContext) (string, error) { panic("kaput") })
	p := newFake(calls(mkcall("c1", "flaky", `{}`), mkcall("c2", "broken", `{}`), mkcall("c3", "boom", `{}`), mkcall("c4", "nope", `{}`)), say("ok"))
	_, err, _ := collect(t, Start(context.Background(), newAgent("a", flaky, broken, boom), Text("x"), opts1(p)))
	if err != nil {
		t.Fatal(err)
	}
	v := shape(p.requests()[1].Entries)
	for _, want := range []string{"result:c1:fine", "errorresult:c2:error: disk on fire", "errorresult:c3:error: tool boom panicked: kaput",
		`errorresult:c4:error: unknown tool "nope"; available tools: boom, broken, flaky`} {
		if !strings.Contains(v, want) {
			t.Fatalf("view lacks %q:\n%s", want, v)
		}
	}
	if n.Load() != 3 {
		t.Fatalf("flaky invoked %d times", n.Load())
	}
}

func TestInvalidArgumentsBecomeErrorResult(t *testing.T) {
	var invoked atomic.Bool
	add := tool.New("add", "adds", func(_ context.Context, _ *tool.RunContext, a addArgs) (string, error) {
		invoked.Store(true)
		return "", nil
	})
	p := newFake(calls(mkcall("c1", "add", `{"a":"two","b":3}`)), say("sorry"))
	_, err, evs := collect(t, Start(context.Background(), newAgent("a", add), Text("x"), opts1(p)))
	if err != nil {
		t.Fatal(err)
	}
	if invoked.Load() {
		t.Fatal("tool ran with invalid arguments")
	}
	f := ofType(evs, event.ToolCallFailed)
	if len(f) != 1 || !strings.Contains(f[0].Output, "invalid arguments for add") || !strings.Contains(f[0].Output, "/a") {
		t.Fatalf("failed %+v", f)
	}
	if v := shape(p.requests()[1].Entries); !strings.Contains(v, "errorresult:c1:error: invalid arguments for add") {
		t.Fatalf("model does not see the error: %s", v)
	}
}

func TestOutputTruncation(t *testing.T) {
	big := strings.Repeat("x", 500) + "TAIL"
	perTool := fnTool("pertool", func(context.Context, *tool.RunContext) (string, error) { return big, nil }, tool.MaxOutput(100))
	agentCap := fnTool("agentcap", func(context.Context, *tool.RunContext) (string, error) { return big, nil })
	small := fnTool("small", func(context.Context, *tool.RunContext) (string, error) { return "tiny", nil })
	p := newFake(calls(mkcall("c1", "pertool", `{}`), mkcall("c2", "agentcap", `{}`), mkcall("c3", "small", `{}`)), say("ok"))
	a := newAgent("a", perTool, agentCap, small)
	a.Limits.MaxToolOutputChars = 200
	res, err, evs := collect(t, Start(context.Background(), a, Text("x"), opts1(p)))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]transcript.Entry{}
	for _, e := range res.Entries {
		if e.Type == transcript.TypeToolResult {
			byID[e.CallID] = e
		}
	}
	for id, max := range map[string]int{"c1": 100, "c2": 200} {
		e := byID[id]
		if !e.Truncated || !strings.Contains(e.Text, "characters truncated") || !strings.HasSuffix(e.Text, "TAIL") || len(e.Text) > max+120 {
			t.Fatalf("%s not truncated to %d: truncated=%v len=%d", id, max, e.Truncated, len(e.Text))
		}
	}
	if byID["c3"].Truncated || byID["c3"].Text != "tiny" {
		t.Fatalf("small result changed: %+v", byID["c3"])
	}
	for _, e := range ofType(evs, event.ToolCallCompleted) {
		if (e.CallID != "c3") != e.Truncated {
			t.Fatalf("event truncated flag wrong for %s", e.CallID)
		}
	}
}

var nSchema = json.RawMessage(`{"type":"object","required":["n"],"properties":{"n":{"type":"integer"}}}`)

func TestStructuredOutputRepairedOnce(t *testing.T) {
	p := newFake(say("here you go: five"), say("```json\n{\"n\": 5}\n```"))
	a := newAgent("a")
	a.OutputSchema = nSchema
	res, err, evs := collect(t, Start(context.Background(), a, Text("x"), opts1(p)))
	if err != nil {
		t.Fatal(err)
	}
	if string(res.StructuredOutput) != `{"n": 5}` || res.Turns != 2 {
		t.Fatalf("result %+v", res)
	}
	v := p.requests()[1].Entries
	last := v[len(v)-1]
	if !last.IsUser() || !strings.Contains(last.Text, "not valid JSON") {
		t.Fatalf("repair message %+v", last)
	}
	if evs[len(evs)-1].StructuredOutput == nil {
		t.Fatal("terminal event lacks structured output")
	}
}

func TestStructuredOutputFailsClearlyAfterRepair(t *testing.T) {
	p := newFake(say(`{"n":"five"}`), say(`{"m":1}`))
	a := newAgent("a")
	a.OutputSchema = nSchema
	res, err, evs := collect(t, Start(context.Background(), a, Text("x"), opts1(p)))
	if errs.KindOf(err) != errs.KindOutput || errs.ExitCode(err) != 1 {
		t.Fatalf("err %v (%s)", err, errs.KindOf(err))
	}
	if !strings.Contains(err.Error(), "does not match the output schema") || !strings.Contains(err.Error(), "missing property") {
		t.Fatalf("message %q", err)
	}
	if res.Status != store.StatusFailed || len(p.requests()) != 2 {
		t.Fatalf("status %s, %d calls", res.Status, len(p.requests()))
	}
	if !strings.Contains(p.requests()[1].Entries[len(p.requests()[1].Entries)-1].Text, "/n") {
		t.Fatal("repair message does not name the failing field")
	}
	if last := evs[len(evs)-1]; last.Type != event.RunFailed || last.Error.Kind != "output" {
		t.Fatalf("terminal %+v", last)
	}
}

func TestMaxTurns(t *testing.T) {
	loopy := fnTool("again", func(context.Context, *tool.RunContext) (string, error) { return "more", nil })
	p := newFake()
	p.next = func(n int, _ provider.Request) reply { return calls(mkcall("", "again", `{}`)) }
	o := opts1(p)
	o.MaxTurns = 3
	m := memStore()
	o = withStores(o, m)
	res, err, evs := collect(t, Start(context.Background(), newAgent("a", loopy), Text("x"), o))
	if errs.KindOf(err) != errs.KindMaxTurns || errs.ExitCode(err) != 3 || strings.Contains(errs.HintOf(err), "--max-turns") {
		t.Fatalf("err %v", err)
	}
	if res.Turns != 3 || res.FinishReason != "max_turns" || len(p.requests()) != 3 {
		t.Fatalf("turns %d reason %s calls %d", res.Turns, res.FinishReason, len(p.requests()))
	}
	last := evs[len(evs)-1]
	if last.Type != event.RunFailed || last.FinishReason != "max_turns" || last.Status != "failed" {
		t.Fatalf("terminal %+v", last)
	}
	snap, _ := m.Checkpoints.Load(context.Background(), res.RunID)
	if snap.Head.Status != store.StatusFailed || snap.Head.ErrorKind != "max_turns" {
		t.Fatalf("head %+v", snap.Head)
	}
	// Generated call ids are unique.
	ids := map[string]bool{}
	for _, e := range res.Entries {
		if e.Type == transcript.TypeToolCall {
			if ids[e.CallID] || e.CallID == "" {
				t.Fatalf("duplicate/empty call id %q", e.CallID)
			}
			ids[e.CallID] = true
		}
	}
}

func TestBudget(t *testing.T) {
	loopy := fnTool("again", func(context.Context, *tool.RunContext) (string, error) { return "more", nil })
	p := newFake()
	p.next = func(n int, _ provider.Request) reply {
		r := calls(mkcall("", "again", `{}`))
		r.usage.InputTokens, r.usage.OutputTokens = 40, 20
		return r
	}
	a := newAgent("a", loopy)
	a.Limits.BudgetTokens = 100
	res, err, _ := collect(t, Start(context.Background(), a, Text("x"), opts1(p)))
	if errs.KindOf(err) != errs.KindBudget || errs.ExitCode(err) != 3 {
		t.Fatalf("err %v", err)
	}
	// 60 after turn 1, 120 after turn 2: the third turn never starts.
	if res.Turns != 2 || res.Usage.Total() != 120 || res.FinishReason != "budget" {
		t.Fatalf("result %+v", res)
	}
	// The second turn's call is preflighted after the budget ran out: not run.
	last := res.Entries[len(res.Entries)-1]
	if !last.IsError || !strings.Contains(last.Text, "budget is exhausted") {
		t.Fatalf("last entry %+v", last)
	}
}

func TestProviderFailureEndsStreamWithOneTerminalEvent(t *testing.T) {
	cases := []struct {
		name string
		r    reply
		kind errs.Kind
	}{
		{"http error", reply{err: &provider.HTTPError{Provider: "fake", Status: 500, Message: "upstream"}}, errs.KindProvider},
		{"classified error", reply{err: errs.New(errs.KindAuth, "bad key", "set FAKE_API_KEY")}, errs.KindAuth},
		{"panic", reply{panic: "provider exploded"}, errs.KindProvider},
		{"overflow without compaction", reply{err: &provider.HTTPError{Provider: "fake", Status: 400, Overflow: true}}, errs.KindOverflow},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newFake(c.r)
			m := memStore()
			res, err, evs := collect(t, Start(context.Background(), newAgent("a"), Text("x"), withStores(opts1(p), m)))
			if errs.KindOf(err) != c.kind {
				t.Fatalf("kind %s (%v)", errs.KindOf(err), err)
			}
			if res == nil || res.Status != store.StatusFailed {
				t.Fatalf("result %+v", res)
			}
			last := evs[len(evs)-1]
			if last.Type != event.RunFailed || last.Error == nil || last.Error.Kind != string(c.kind) {
				t.Fatalf("terminal %+v", last)
			}
			snap, _ := m.Checkpoints.Load(context.Background(), res.RunID)
			if snap.Head.Status != store.StatusFailed {
				t.Fatalf("head %s", snap.Head.Status)
			}
		})
	}
}

func TestSetupFailureStillStreams(t *testing.T) {
	a := newAgent("a")
	a.Model = "fake:unknown"
	_, err, evs := collect(t, Start(context.Background(), a, Text("x"), opts1(newFake())))
	if errs.KindOf(err) != errs.KindConfig || errs.ExitCode(err) != 2 {
		t.Fatalf("err %v", err)
	}
	if got := strings.Join(types(evs), " "); got != "run_started run_failed" {
		t.Fatalf("events %s", got)
	}
}

func TestDiscardedOutput(t *testing.T) {
	p := newFake(reply{discardText: "partial garb", text: "clean answer"})
	res, err, evs := collect(t, Start(context.Background(), newAgent("a"), Text("x"), opts1(p)))
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "clean answer" {
		t.Fatalf("output %q", res.Output)
	}
	d := ofType(evs, event.OutputDiscarded)
	if len(d) != 1 || d[0].Text == "" {
		t.Fatalf("discard events %+v", d)
	}
}

// shrinkPolicy renders the full body until told about an overflow, then keeps only
// the last entry.
type shrinkPolicy struct {
	mu   sync.Mutex
	reqs []compaction.Request
}

func (s *shrinkPolicy) Compact(_ context.Context, req compaction.Request) (compaction.Result, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	state := json.RawMessage(`{"passes":` + string(rune('0'+len(s.reqs))) + `}`)
	if req.Overflow || req.Force {
		return compaction.Result{View: req.Body[len(req.Body)-1:], State: state, Compacted: true,
			Info: &event.Compaction{Stages: []string{"clear"}, TokensBefore: 100, TokensAfter: 10}}, nil
	}
	return compaction.Result{View: req.Body, StablePrefix: len(req.Body), State: state}, nil
}

func TestOverflowCompactsAndRetriesOnce(t *testing.T) {
	p := newFake(reply{err: &provider.HTTPError{Provider: "fake", Status: 400, Overflow: true}}, say("fits now"))
	pol := &shrinkPolicy{}
	o := opts1(p)
	o.ContextPolicy = pol
	m := memStore()
	o = withStores(o, m)
	o.SessionID = "s"
	_ = m.Sessions.Append(context.Background(), "s", "old", []transcript.Entry{transcript.UserInput("old question"), transcript.AssistantText("old answer")}, nil)
	res, err, evs := collect(t, Start(context.Background(), newAgent("a"), Text("new"), o))
	if err != nil {
		t.Fatal(err)
	}
	reqs := p.requests()
	if len(reqs) != 2 || shape(reqs[0].Entries) != "user:old question text:old answer user:new" || shape(reqs[1].Entries) != "user:new" {
		t.Fatalf("views: %d %v", len(reqs), reqs)
	}
	if len(pol.reqs) != 2 || !pol.reqs[1].Overflow || pol.reqs[1].ContextWindow != 100000 {
		t.Fatalf("policy requests %+v", pol.reqs)
	}
	c := ofType(evs, event.ContextCompacted)
	if len(c) != 1 || !c[0].Compaction.Overflow {
		t.Fatalf("compaction events %+v", c)
	}
	snap, _ := m.Checkpoints.Load(context.Background(), res.RunID)
	if string(snap.Head.ContextState) != `{"passes":2}` || snap.Head.LastInputTokens != 10 {
		t.Fatalf("head context state %s last %d", snap.Head.ContextState, snap.Head.LastInputTokens)
	}
	// The transcript is never rewritten by compaction.
	if shape(res.Entries) != "user:new text:fits now" {
		t.Fatalf("entries %s", shape(res.Entries))
	}
}

func TestForcedCompaction(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	wait := fnTool("wait", func(context.Context, *tool.RunContext) (string, error) {
		close(started)
		<-release
		return "ok", nil
	})
	p := newFake(calls(mkcall("c1", "wait", `{}`)), say("done"))
	pol := &shrinkPolicy{}
	o := opts1(p)
	o.ContextPolicy = pol
	h := Start(context.Background(), newAgent("a", wait), Text("x"), o)
	<-started
	h.Compact()
	close(release)
	if _, err := h.Result(); err != nil {
		t.Fatal(err)
	}
	if len(pol.reqs) != 2 || pol.reqs[0].Force || !pol.reqs[1].Force {
		t.Fatalf("force flags %v %v", pol.reqs[0].Force, pol.reqs[1].Force)
	}
	if shape(p.requests()[1].Entries) != "result:c1:ok" {
		t.Fatalf("forced view %s", shape(p.requests()[1].Entries))
	}
}

func TestViewInjectorsAreTransient(t *testing.T) {
	var n atomic.Int32
	pl := plugin.Func{ID: "todo", Fn: func(context.Context, *tool.RunContext) (*plugin.Contribution, error) {
		return &plugin.Contribution{ViewInjectors: []plugin.ViewInjector{
			func(_ context.Context, rc *tool.RunContext) ([]transcript.Entry, error) {
				return []transcript.Entry{transcript.UserInput("reminder " + string(rune('0'+n.Add(1))))}, nil
			},
			func(context.Context, *tool.RunContext) ([]transcript.Entry, error) {
				return nil, errors.New("broken injector")
			},
		}}, nil
	}}
	p := newFake(calls(mkcall("c1", "add", `{"a":1,"b":1}`)), say("2"))
	a := newAgent("a", addTool())
	a.Plugins = []plugin.Plugin{pl}
	res, err := Start(context.Background(), a, Text("x"), opts1(p)).Result()
	if err != nil {
		t.Fatal(err)
	}
	reqs := p.requests()
	if shape(reqs[0].Entries) != "user:x user:reminder 1" || shape(reqs[1].Entries) != "user:x call:c1:add result:c1:2 user:reminder 2" {
		t.Fatalf("views:\n%s\n%s", shape(reqs[0].Entries), shape(reqs[1].Entries))
	}
	if strings.Contains(shape(res.Entries), "reminder") {
		t.Fatalf("injected entry persisted: %s", shape(res.Entries))
	}
}

func TestMailboxLandsAtNextTurn(t *testing.T) {
	pushed := make(chan struct{})
	steer := fnTool("work", func(context.Context, *tool.RunContext) (string, error) {
		<-pushed
		return "worked", nil
	})
	p := newFake(calls(mkcall("c1", "work", `{}`)), say("ok, using tabs"))
	h := Start(context.Background(), newAgent("a", steer), Text("format it"), opts1(p))
	var evs []event.Event
	for ev := range h.Events() {
		evs = append(evs, ev)
		if ev.Type == event.ToolCallStarted {
			// The user types while the tool runs.
			h.Mailbox().Push(mailboxMsg("use tabs"))
			close(pushed)
		}
	}
	checkStream(t, evs)
	if _, err := h.Result(); err != nil {
		t.Fatal(err)
	}
	inj := ofType(evs, event.UserMessageInjected)
	if len(inj) != 1 || inj[0].Text != "use tabs" || inj[0].Turn != 2 {
		t.Fatalf("injected %+v", inj)
	}
	if evs[inj[0].Seq-2].Type != event.TurnStarted {
		t.Fatalf("message not drained right after turn_started: %v", types(evs))
	}
	if got := shape(p.requests()[0].Entries); got != "user:format it" {
		t.Fatalf("first view %s", got)
	}
	if got := shape(p.requests()[1].Entries); got != "user:format it call:c1:work result:c1:worked user:use tabs" {
		t.Fatalf("second view %s", got)
	}
}

func TestMailboxPushDuringToolLandsNextTurn(t *testing.T) {
	steer := fnTool("work", func(_ context.Context, rc *tool.RunContext) (string, error) {
		rc.Mailbox.Push(mailboxMsg("also add tests"))
		return "worked", nil
	})
	p := newFake(calls(mkcall("c1", "work", `{}`)), say("ok"))
	_, err := Start(context.Background(), newAgent("a", steer), Text("do it"), opts1(p)).Result()
	if err != nil {
		t.Fatal(err)
	}
	if got := shape(p.requests()[1].Entries); got != "user:do it call:c1:work result:c1:worked user:also add tests" {
		t.Fatalf("view %s", got)
	}
	if got := shape(p.requests()[0].Entries); got != "user:do it" {
		t.Fatalf("first view %s", got)
	}
}

func TestBrokenArgumentJSONStaysEncodable(t *testing.T) {
	p := newFake(calls(mkcall("c1", "add", `{"a":1,`)), say("oops"))
	res, err, evs := collect(t, Start(context.Background(), newAgent("a", addTool()), Text("x"), opts1(p)))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Entries {
		if _, err := json.Marshal(e); err != nil {
			t.Fatalf("entry not encodable: %v", err)
		}
	}
	for _, ev := range evs {
		if _, err := json.Marshal(ev); err != nil {
			t.Fatalf("event %s not encodable: %v", ev.Type, err)
		}
	}
	if v := shape(p.requests()[1].Entries); !strings.Contains(v, `errorresult:c1:error: invalid arguments for add: not valid JSON: {"a":1,`) {
		t.Fatalf("view %s", v)
	}
}

func TestSystemInputJoinsInstructions(t *testing.T) {
	p := newFake(say("ok"))
	in := []transcript.Entry{transcript.SystemInput("Answer in French."), transcript.UserInput("hi")}
	if _, err := Start(context.Background(), newAgent("a"), in, opts1(p)).Result(); err != nil {
		t.Fatal(err)
	}
	r := p.requests()[0]
	if r.System != "You are a.\n\nAnswer in French." || shape(r.Entries) != "user:hi" {
		t.Fatalf("system %q view %s", r.System, shape(r.Entries))
	}
}

func TestEmptyInputIsUsageError(t *testing.T) {
	_, err := Start(context.Background(), newAgent("a"), nil, opts1(newFake())).Result()
	if errs.KindOf(err) != errs.KindUsage {
		t.Fatalf("err %v", err)
	}
}

func TestRunContextEntries(t *testing.T) {
	var seen string
	var sys bool
	peek := fnTool("peek", func(_ context.Context, rc *tool.RunContext) (string, error) {
		es := rc.Entries()
		sys = es[0].IsSystem() && es[0].Text == "You are a."
		seen = shape(es[1:])
		_ = append(es, transcript.UserInput("caller append must not leak"))
		return "peeked", nil
	})
	p := newFake(calls(mkcall("c1", "peek", `{}`)), say("ok"))
	res, err := Start(context.Background(), newAgent("a", peek), Text("look"), opts1(p)).Result()
	if err != nil {
		t.Fatal(err)
	}
	if !sys || seen != "user:look call:c1:peek" {
		t.Fatalf("system %v entries %s", sys, seen)
	}
	if strings.Contains(shape(res.Entries), "leak") || strings.Contains(shape(p.requests()[1].Entries), "leak") {
		t.Fatal("an append to RunContext.Entries leaked into the transcript")
	}
}

func TestRepeatedCallIDsAreMadeUnique(t *testing.T) {
	p := newFake(calls(mkcall("call_1", "add", `{"a":1,"b":1}`), mkcall("call_1", "add", `{"a":2,"b":2}`)),
		calls(mkcall("call_1", "add", `{"a":3,"b":3}`)), say("ok"))
	serialAdd := tool.New("add", "adds", func(_ context.Context, _ *tool.RunContext, a addArgs) (string, error) {
		return fmt.Sprint(a.A + a.B), nil
	}, tool.Parallel(false)) // deterministic result order
	res, err := Start(context.Background(), newAgent("a", serialAdd), Text("x"), opts1(p)).Result()
	if err != nil {
		t.Fatal(err)
	}
	want := "user:x call:call_1:add call:call_1_2:add result:call_1:2 result:call_1_2:4 call:call_1_3:add result:call_1_3:6 text:ok"
	if got := shape(res.Entries); got != want {
		t.Fatalf("entries\n got %s\nwant %s", got, want)
	}
}
