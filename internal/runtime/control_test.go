package runtime

import (
	"context"
	"encoding/json"
	"errors"
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
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// TestCancelMidToolThenResume: a run cancelled while a tool runs cancels the tool's
// context promptly, leaves the checkpoint interrupted with the call dangling, and a
// resume re-runs only that call (never the one that already has a result).
func TestCancelMidToolThenResume(t *testing.T) {
	for _, c := range []struct {
		name  string
		cause error
		kind  errs.Kind
		exit  int
	}{
		{"sigint", nil, errs.KindCancelled, 130},
		{"sigterm", errs.New(errs.KindTerminated, "terminated", ""), errs.KindTerminated, 143},
	} {
		t.Run(c.name, func(t *testing.T) {
			var quickRuns, slowRuns atomic.Int32
			var block atomic.Bool
			block.Store(true)
			cancelled := make(chan struct{}, 1)
			quickDone, slowBlocked := make(chan struct{}, 1), make(chan struct{}, 1)
			quick := fnTool("quick", func(context.Context, *tool.RunContext) (string, error) {
				quickRuns.Add(1)
				quickDone <- struct{}{}
				return "quick done", nil
			})
			slow := fnTool("slow", func(ctx context.Context, _ *tool.RunContext) (string, error) {
				slowRuns.Add(1)
				if !block.Load() {
					return "slow done", nil
				}
				slowBlocked <- struct{}{}
				<-ctx.Done()
				cancelled <- struct{}{}
				return "", ctx.Err()
			})
			p := newFake(calls(mkcall("c1", "quick", `{}`), mkcall("c2", "slow", `{}`)), say("all done"))
			m := memStore()
			o := withStores(opts1(p), m)
			o.SessionID = "s"
			a := newAgent("a", quick, slow)
			h := Start(context.Background(), a, Text("go"), o)
			var evs []event.Event
			c1Completed := make(chan struct{})
			go func() {
				// Cancel once c1's result is in (its completion event was emitted, not
				// merely the tool function returned) and c2 is blocked.
				<-quickDone
				<-c1Completed
				<-slowBlocked
				h.Cancel(c.cause)
			}()
			for ev := range h.Events() {
				evs = append(evs, ev)
				if ev.Type == event.ToolCallCompleted && ev.CallID == "c1" {
					close(c1Completed)
				}
			}
			checkStream(t, evs)
			res, err := h.Result()
			if errs.KindOf(err) != c.kind || errs.ExitCode(err) != c.exit {
				t.Fatalf("err %v kind %s", err, errs.KindOf(err))
			}
			// The core words no CLI hint: each front end says how to continue.
			if h := errs.HintOf(err); strings.Contains(h, "lovia") {
				t.Fatalf("hint %q names a command", h)
			}
			// The tool's context is cancelled (the run may end before the tool has
			// noticed: wait for it; the guard only stops a hang).
			select {
			case <-cancelled:
			case <-time.After(30 * time.Second):
				t.Fatal("the running tool's context was never cancelled")
			}
			last := evs[len(evs)-1]
			if last.Type != event.RunFailed || last.Status != "interrupted" || res.Status != store.StatusInterrupted || res.FinishReason != "cancelled" {
				t.Fatalf("terminal %+v / result %+v", last, res)
			}
			snap, _ := m.Checkpoints.Load(context.Background(), h.RunID())
			if snap.Head.Status != store.StatusInterrupted {
				t.Fatalf("head %s", snap.Head.Status)
			}
			if got := shape(snap.Entries); got != "user:go call:c1:quick call:c2:slow result:c1:quick done" {
				t.Fatalf("snapshot %s", got)
			}
			if segs := m.Sessions.Segments("s"); len(segs) != 0 {
				t.Fatal("interrupted run appended to the session")
			}

			// Resume: only c2 runs again; the model continues at turn 2.
			block.Store(false)
			r2, err := Resume(context.Background(), a, h.RunID(), withStores(opts1(p), m)).Result()
			if err != nil {
				t.Fatal(err)
			}
			if quickRuns.Load() != 1 || slowRuns.Load() != 2 {
				t.Fatalf("quick ran %d, slow ran %d", quickRuns.Load(), slowRuns.Load())
			}
			if r2.Output != "all done" || r2.Turns != 2 || r2.SessionID != "s" {
				t.Fatalf("resumed result %+v", r2)
			}
			if got := shape(p.requests()[1].Entries); got != "user:go call:c1:quick call:c2:slow result:c1:quick done result:c2:slow done" {
				t.Fatalf("resumed view %s", got)
			}
			if segs := m.Sessions.Segments("s"); len(segs) != 1 || shape(segs[0].Entries) != shape(r2.Entries) {
				t.Fatalf("session after resume %+v", segs)
			}
		})
	}
}

func TestCancelWhileStreaming(t *testing.T) {
	blocked := make(chan struct{})
	p := newFake(reply{block: true, blocked: blocked})
	h := Start(context.Background(), newAgent("a"), Text("x"), opts1(p))
	go func() {
		<-blocked
		h.Cancel(nil)
	}()
	_, err, evs := collect(t, h)
	if errs.KindOf(err) != errs.KindCancelled || evs[len(evs)-1].Status != "interrupted" {
		t.Fatalf("err %v terminal %+v", err, evs[len(evs)-1])
	}
}

// TestResumeAfterCrash simulates kill -9 after a model reply with two calls, one of
// which already has its result: the snapshot is built by hand, as a crashed process
// would leave it.
func TestResumeAfterCrash(t *testing.T) {
	var runs sync.Map
	count := func(name string) tool.Tool {
		return fnTool(name, func(context.Context, *tool.RunContext) (string, error) {
			v, _ := runs.LoadOrStore(name, new(atomic.Int32))
			v.(*atomic.Int32).Add(1)
			return name + " ok", nil
		})
	}
	ctx := context.Background()
	m := memStore()
	entries := []transcript.Entry{
		transcript.UserInput("fix it"),
		transcript.ToolCall("c1", "read", nil),
		transcript.ToolCall("c2", "write", nil),
		transcript.ToolResult("c1", "read", "read ok", false),
	}
	for i := range entries {
		entries[i].RunID = "r1"
	}
	head := store.Head{Status: store.StatusRunning, SessionID: "s", Agent: "coder", EntryAgent: "lead", Turns: 1,
		ContextState: json.RawMessage(`{"k":1}`)}
	head.Usage.InputTokens = 50
	if err := m.Checkpoints.Append(ctx, "r1", entries, head); err != nil {
		t.Fatal(err)
	}
	coder := &agent.Agent{Name: "coder", Instructions: "You code.", Model: "fake:m", Tools: []tool.Tool{count("read"), count("write")}}
	lead := &agent.Agent{Name: "lead", Model: "fake:m", Handoffs: []*agent.Agent{coder}}
	p := newFake(say("fixed"))
	pol := &recordPolicy{}
	o := withStores(opts1(p), m)
	o.ContextPolicy = pol
	res, err, evs := collect(t, Resume(ctx, lead, "r1", o))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := runs.Load("read"); ok {
		t.Fatal("re-ran a call that has a result")
	}
	if v, _ := runs.Load("write"); v == nil || v.(*atomic.Int32).Load() != 1 {
		t.Fatal("dangling call not re-run exactly once")
	}
	r := p.requests()[0]
	if r.System != "You code." {
		t.Fatalf("resumed as the wrong agent: %q", r.System)
	}
	if got := shape(r.Entries); got != "user:fix it call:c1:read call:c2:write result:c1:read ok result:c2:write ok" {
		t.Fatalf("view %s", got)
	}
	if string(pol.reqs[0].State) != `{"k":1}` {
		t.Fatalf("context state not restored: %s", pol.reqs[0].State)
	}
	if res.Turns != 2 || res.Usage.InputTokens != 60 || res.SessionID != "s" || res.FinalAgent != "coder" {
		t.Fatalf("result %+v", res)
	}
	// The re-executed call belongs to turn 1 (the turn that asked for it).
	for _, e := range evs {
		if e.Type == event.ToolCallCompleted && e.Turn != 1 {
			t.Fatalf("re-executed call reported in turn %d", e.Turn)
		}
	}
	snap, _ := m.Checkpoints.Load(ctx, "r1")
	if len(snap.Entries) != 6 || snap.Head.Status != store.StatusCompleted {
		t.Fatalf("snapshot after resume: %s %s", shape(snap.Entries), snap.Head.Status)
	}

	// Re-issuing the completed run with another prompt is a conflict, not a replay.
	calls := len(p.requests())
	if _, err, _ := collect(t, Start(ctx, lead, Text("something else"), withStores(Options{RunID: "r1", Resolve: opts1(p).Resolve}, m))); errs.KindOf(err) != errs.KindRunConflict {
		t.Fatalf("different prompt under a completed id: err %v", err)
	}
	// Re-issuing it with its prompt replays it without calling the model.
	res2, err, evs2 := collect(t, Start(ctx, lead, Text("fix it"), withStores(Options{RunID: "r1", SessionID: "other", Resolve: opts1(p).Resolve}, m)))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.requests()) != calls {
		t.Fatal("replay called the model")
	}
	if got := strings.Join(types(evs2), " "); got != "run_started run_completed" {
		t.Fatalf("replay events %s", got)
	}
	if res2.SessionID != "s" || len(m.Sessions.Segments("other")) != 0 {
		t.Fatalf("replay moved the run to session %q", res2.SessionID)
	}
	if !res2.Replayed || res2.Output != "fixed" || res2.Turns != 2 || res2.FinalAgent != "coder" || len(res2.Entries) != 6 {
		t.Fatalf("replayed %+v", res2)
	}
	if evs2[1].FinalOutput != "fixed" {
		t.Fatalf("replay terminal %+v", evs2[1])
	}
	if segs := m.Sessions.Segments("s"); len(segs) != 1 {
		t.Fatalf("segments %d", len(segs))
	}
}

type recordPolicy struct{ reqs []compaction.Request }

func (r *recordPolicy) Compact(ctx context.Context, req compaction.Request) (compaction.Result, error) {
	r.reqs = append(r.reqs, req)
	return compaction.Noop{}.Compact(ctx, req)
}

func TestResumeFinalReplyNotFinalized(t *testing.T) {
	// Crash after the final reply was checkpointed but before finalization: resume
	// finalizes without calling the model again.
	ctx := context.Background()
	m := memStore()
	es := []transcript.Entry{transcript.UserInput("q"), transcript.AssistantText("the answer")}
	_ = m.Checkpoints.Append(ctx, "r", es, store.Head{Status: store.StatusRunning, Agent: "a", Turns: 1, SessionID: "s"})
	p := newFake()
	res, err := Resume(ctx, newAgent("a"), "r", withStores(opts1(p), m)).Result()
	if err != nil || res.Output != "the answer" || len(p.requests()) != 0 {
		t.Fatalf("%v %+v calls=%d", err, res, len(p.requests()))
	}
	if segs := m.Sessions.Segments("s"); len(segs) != 1 {
		t.Fatal("not appended to the session")
	}
}

func TestIfRunExists(t *testing.T) {
	ctx := context.Background()
	m := memStore()
	p := newFake(say("one"), say("two"), say("three"))
	a := newAgent("a")
	o := withStores(opts1(p), m)
	o.RunID = "r"
	if _, err := Start(ctx, a, Text("x"), o).Result(); err != nil {
		t.Fatal(err)
	}

	fail := o
	fail.IfRunExists = FailRun
	if _, err := Start(ctx, a, Text("x"), fail).Result(); errs.KindOf(err) != errs.KindRunConflict || errs.ExitCode(err) != 2 {
		t.Fatalf("fail: %v", err)
	}
	// The conflict must not touch the existing checkpoint.
	if snap, _ := m.Checkpoints.Load(ctx, "r"); snap.Head.Status != store.StatusCompleted {
		t.Fatalf("conflict changed the checkpoint: %s", snap.Head.Status)
	}

	restart := o
	restart.IfRunExists = RestartRun
	res, err := Start(ctx, a, Text("again"), restart).Result()
	if err != nil || res.Output != "two" || res.Replayed {
		t.Fatalf("restart: %v %+v", err, res)
	}
	if snap, _ := m.Checkpoints.Load(ctx, "r"); shape(snap.Entries) != "user:again text:two" {
		t.Fatalf("restarted snapshot %s", shape(snap.Entries))
	}

	if _, err := Resume(ctx, a, "missing", withStores(opts1(p), m)).Result(); errs.KindOf(err) != errs.KindNotFound {
		t.Fatalf("resume_only: %v", err)
	}
	if _, err := Resume(ctx, a, "r", opts1(p)).Result(); errs.KindOf(err) != errs.KindConfig {
		t.Fatalf("resume without a store: %v", err)
	}
}

func TestApprovals(t *testing.T) {
	var grants []string
	mkTool := func(ran *atomic.Int32, withGrant bool) tool.Tool {
		opts := []tool.Option{tool.NeedsApproval(true)}
		if withGrant {
			opts = append(opts, tool.OnGrant(func(a *event.Approval) { grants = append(grants, a.Summary) }))
		}
		return fnTool("deploy", func(context.Context, *tool.RunContext) (string, error) {
			ran.Add(1)
			return "deployed", nil
		}, opts...)
	}
	twoCalls := func() *fakeProvider {
		return newFake(calls(mkcall("c1", "deploy", `{}`)), calls(mkcall("c2", "deploy", `{}`)), say("done"))
	}

	t.Run("interactive allow and deny with message", func(t *testing.T) {
		var ran atomic.Int32
		p := twoCalls()
		o := opts1(p)
		o.Approvals = ApprovalInteractive
		h := Start(context.Background(), newAgent("a", mkTool(&ran, false)), Text("x"), o)
		var evs []event.Event
		for ev := range h.Events() {
			evs = append(evs, ev)
			if ev.Type == event.ApprovalRequired {
				if err := h.Approve("nope", tool.Decision{Allow: true}); err == nil {
					t.Error("approving an unknown call succeeded")
				}
				d := tool.Decision{Allow: true}
				if ev.CallID == "c2" {
					d = tool.Decision{Allow: false, Message: "not on a Friday"}
				}
				if err := h.Approve(ev.CallID, d); err != nil {
					t.Error(err)
				}
			}
		}
		if _, err := h.Result(); err != nil {
			t.Fatal(err)
		}
		if ran.Load() != 1 {
			t.Fatalf("ran %d", ran.Load())
		}
		ar := ofType(evs, event.ApprovalRequired)
		if len(ar) != 2 || ar[0].Approval == nil || ar[0].Name != "deploy" {
			t.Fatalf("approval events %+v", ar)
		}
		f := ofType(evs, event.ToolCallFailed)
		if len(f) != 1 || f[0].Approval.Decision != "denied" || f[0].Output != "error: denied by user: not on a Friday" {
			t.Fatalf("failed %+v", f)
		}
		if c := ofType(evs, event.ToolCallCompleted); c[0].Approval.Decision != "allowed" {
			t.Fatalf("completed %+v", c[0].Approval)
		}
		if v := shape(p.requests()[2].Entries); !strings.Contains(v, "errorresult:c2:error: denied by user: not on a Friday") {
			t.Fatalf("model does not see the denial: %s", v)
		}
	})

	t.Run("deny all", func(t *testing.T) {
		var ran atomic.Int32
		p := twoCalls()
		_, err, evs := collect(t, Start(context.Background(), newAgent("a", mkTool(&ran, false)), Text("x"), opts1(p)))
		if err != nil {
			t.Fatal(err)
		}
		if ran.Load() != 0 || len(ofType(evs, event.ApprovalRequired)) != 0 {
			t.Fatalf("ran %d", ran.Load())
		}
		f := ofType(evs, event.ToolCallFailed)
		if len(f) != 2 || f[0].Approval.Decision != "denied_by_default" || !strings.Contains(f[0].Output, "nobody can approve") {
			t.Fatalf("failed %+v", f)
		}
	})

	t.Run("allow all", func(t *testing.T) {
		var ran atomic.Int32
		o := opts1(twoCalls())
		o.Approvals = ApprovalAllowAll
		_, err, evs := collect(t, Start(context.Background(), newAgent("a", mkTool(&ran, false)), Text("x"), o))
		if err != nil || ran.Load() != 2 {
			t.Fatalf("%v ran %d", err, ran.Load())
		}
		if c := ofType(evs, event.ToolCallCompleted); c[0].Approval.Decision != "allowed_by_default" {
			t.Fatalf("decision %+v", c[0].Approval)
		}
	})

	for _, withGrant := range []bool{false, true} {
		t.Run("session grant", func(t *testing.T) {
			grants = nil
			var ran atomic.Int32
			o := opts1(twoCalls())
			o.Approvals = ApprovalInteractive
			tl := mkTool(&ran, withGrant)
			if withGrant {
				// A tool with Grant decides itself: after a grant its predicate passes.
				spec := tl.Spec()
				inner := spec.Approval
				ft := tl.(*tool.FuncTool)
				ft.S.Approval = func(ctx context.Context, rc *tool.RunContext, args json.RawMessage) (*event.Approval, error) {
					if len(grants) > 0 {
						return nil, nil
					}
					return inner(ctx, rc, args)
				}
			}
			h := Start(context.Background(), newAgent("a", tl), Text("x"), o)
			asked := 0
			for ev := range h.Events() {
				if ev.Type == event.ApprovalRequired {
					asked++
					_ = h.Approve(ev.CallID, tool.Decision{Allow: true, Session: true})
				}
			}
			if _, err := h.Result(); err != nil {
				t.Fatal(err)
			}
			if asked != 1 || ran.Load() != 2 {
				t.Fatalf("asked %d ran %d", asked, ran.Load())
			}
			if withGrant && len(grants) != 1 {
				t.Fatalf("grant callback calls %d", len(grants))
			}
		})
	}

	t.Run("approval predicate error denies", func(t *testing.T) {
		tl := fnTool("x", func(context.Context, *tool.RunContext) (string, error) { return "ran", nil },
			tool.ApprovalWhen(func(context.Context, *tool.RunContext, json.RawMessage) (*event.Approval, error) {
				return nil, errors.New("path is outside the workspace")
			}))
		p := newFake(calls(mkcall("c1", "x", `{}`)), say("ok"))
		if _, err := Start(context.Background(), newAgent("a", tl), Text("x"), opts1(p)).Result(); err != nil {
			t.Fatal(err)
		}
		if v := shape(p.requests()[1].Entries); !strings.Contains(v, "errorresult:c1:error: denied: path is outside the workspace") {
			t.Fatalf("view %s", v)
		}
	})

	t.Run("unanswered approval and cancel", func(t *testing.T) {
		var ran atomic.Int32
		o := opts1(twoCalls())
		o.Approvals = ApprovalInteractive
		h := Start(context.Background(), newAgent("a", mkTool(&ran, false)), Text("x"), o)
		for ev := range h.Events() {
			if ev.Type == event.ApprovalRequired {
				h.Cancel(nil)
			}
		}
		if _, err := h.Result(); errs.KindOf(err) != errs.KindCancelled || ran.Load() != 0 {
			t.Fatalf("%v ran %d", err, ran.Load())
		}
	})
}

type recorder struct {
	mu  sync.Mutex
	log []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.log = append(r.log, s)
	r.mu.Unlock()
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.log, " ")
}

func trackedPlugin(rec *recorder, name string, fail bool) plugin.Plugin {
	return plugin.Func{ID: name, Fn: func(context.Context, *tool.RunContext) (*plugin.Contribution, error) {
		rec.add("setup:" + name)
		if fail {
			return nil, errors.New("cannot start")
		}
		return &plugin.Contribution{Close: func(context.Context) error {
			rec.add("close:" + name)
			return nil
		}}, nil
	}}
}

func TestPluginSetupTeardownLIFO(t *testing.T) {
	rec := &recorder{}
	a := newAgent("a")
	a.Plugins = []plugin.Plugin{trackedPlugin(rec, "p2", false), trackedPlugin(rec, "p3", false)}
	o := opts1(newFake(say("ok")))
	o.Plugins = []plugin.Plugin{trackedPlugin(rec, "p1", false)}
	h := Start(context.Background(), a, Text("x"), o)
	for range h.Events() {
	}
	if _, err := h.Result(); err != nil {
		t.Fatal(err)
	}
	if got := rec.String(); got != "setup:p1 setup:p2 setup:p3 close:p3 close:p2 close:p1" {
		t.Fatalf("order %s", got)
	}

	// A failing setup still tears down what was set up, LIFO.
	rec = &recorder{}
	a.Plugins = []plugin.Plugin{trackedPlugin(rec, "p2", false), trackedPlugin(rec, "bad", true), trackedPlugin(rec, "p4", false)}
	o.Plugins = []plugin.Plugin{trackedPlugin(rec, "p1", false)}
	_, err := Start(context.Background(), a, Text("x"), o).Result()
	if errs.KindOf(err) != errs.KindConfig || !strings.Contains(err.Error(), `plugin "bad"`) {
		t.Fatalf("err %v", err)
	}
	if got := rec.String(); got != "setup:p1 setup:p2 setup:bad close:p2 close:p1" {
		t.Fatalf("order %s", got)
	}
}

func TestHandoffSetsUpTargetPlugins(t *testing.T) {
	rec := &recorder{}
	b := &agent.Agent{Name: "b", Model: "fake:m", Plugins: []plugin.Plugin{trackedPlugin(rec, "pb", false)}}
	a := &agent.Agent{Name: "a", Model: "fake:m", Handoffs: []*agent.Agent{b}, Plugins: []plugin.Plugin{trackedPlugin(rec, "pa", false)}}
	o := opts1(newFake(calls(mkcall("h", "transfer_to_b", `{}`)), say("ok")))
	o.Plugins = []plugin.Plugin{trackedPlugin(rec, "ws", false)}
	if _, err := Start(context.Background(), a, Text("x"), o).Result(); err != nil {
		t.Fatal(err)
	}
	if got := rec.String(); got != "setup:ws setup:pa setup:ws setup:pb close:pb close:ws close:pa close:ws" {
		t.Fatalf("order %s", got)
	}
}

func TestToolNameConflicts(t *testing.T) {
	dup := fnTool("search", func(context.Context, *tool.RunContext) (string, error) { return "", nil })
	pl := plugin.Func{ID: "web", Fn: func(context.Context, *tool.RunContext) (*plugin.Contribution, error) {
		return &plugin.Contribution{Tools: []tool.Tool{dup}}, nil
	}}
	a := newAgent("a", dup)
	a.Plugins = []plugin.Plugin{pl}
	_, err := Start(context.Background(), a, Text("x"), opts1(newFake())).Result()
	if errs.KindOf(err) != errs.KindConfig || !strings.Contains(err.Error(), `"search" is declared twice: by agent "a" and by plugin "web"`) {
		t.Fatalf("err %v", err)
	}

	// A handoff tool name clashing with an agent tool.
	b := &agent.Agent{Name: "b", Model: "fake:m"}
	a2 := newAgent("a", fnTool("transfer_to_b", func(context.Context, *tool.RunContext) (string, error) { return "", nil }))
	a2.Handoffs = []*agent.Agent{b}
	_, err = Start(context.Background(), a2, Text("x"), opts1(newFake())).Result()
	if errs.KindOf(err) != errs.KindConfig || !strings.Contains(err.Error(), "handoff") {
		t.Fatalf("err %v", err)
	}

	// Context-policy tools are shadowed silently by an explicit tool of the same name.
	recall := fnTool("recall_tool_result", func(context.Context, *tool.RunContext) (string, error) { return "mine", nil })
	p := newFake(calls(mkcall("c1", "recall_tool_result", `{}`)), say("ok"))
	o := opts1(p)
	o.ContextPolicy = policyWithTools{tools: []tool.Tool{
		fnTool("recall_tool_result", func(context.Context, *tool.RunContext) (string, error) { return "policy's", nil }),
		fnTool("extra_policy_tool", func(context.Context, *tool.RunContext) (string, error) { return "", nil }),
	}}
	if _, err := Start(context.Background(), newAgent("a", recall), Text("x"), o).Result(); err != nil {
		t.Fatal(err)
	}
	r := p.requests()
	if len(r[0].Tools) != 2 || r[0].Tools[1].Name != "extra_policy_tool" {
		t.Fatalf("tools %+v", r[0].Tools)
	}
	if !strings.Contains(shape(r[1].Entries), "result:c1:mine") {
		t.Fatalf("view %s", shape(r[1].Entries))
	}
}

type policyWithTools struct {
	compaction.Noop
	tools []tool.Tool
}

func (p policyWithTools) Tools() []tool.Tool { return p.tools }

func TestGuardrails(t *testing.T) {
	trip := func(word string) plugin.Guardrail {
		return func(_ context.Context, _ *tool.RunContext, text string) (plugin.GuardrailResult, error) {
			if strings.Contains(text, word) {
				return plugin.GuardrailResult{Tripped: true, Message: "contains " + word}, nil
			}
			return plugin.GuardrailResult{}, nil
		}
	}
	t.Run("input", func(t *testing.T) {
		p := newFake(say("never"))
		a := newAgent("a")
		a.InputGuardrails = []plugin.Guardrail{trip("password")}
		m := memStore()
		o := withStores(opts1(p), m)
		res, err, evs := collect(t, Start(context.Background(), a, Text("my password is x"), o))
		if errs.KindOf(err) != errs.KindGuardrail || errs.ExitCode(err) != 4 || !strings.Contains(err.Error(), "contains password") {
			t.Fatalf("err %v", err)
		}
		if len(p.requests()) != 0 || res.FinishReason != "guardrail" || evs[len(evs)-1].FinishReason != "guardrail" {
			t.Fatal("model called despite a tripped input guardrail")
		}
		_ = m
		if _, err := Resume(context.Background(), a, res.RunID, o).Result(); errs.KindOf(err) != errs.KindGuardrail || len(p.requests()) != 0 {
			t.Fatalf("resume of a guardrail-stopped run: %v", err)
		}
	})
	t.Run("output from plugin", func(t *testing.T) {
		p := newFake(say("the secret is 42"))
		a := newAgent("a")
		a.Plugins = []plugin.Plugin{plugin.Func{ID: "dlp", Fn: func(context.Context, *tool.RunContext) (*plugin.Contribution, error) {
			return &plugin.Contribution{OutputGuardrails: []plugin.Guardrail{trip("secret")}}, nil
		}}}
		m := memStore()
		o := withStores(opts1(p), m)
		o.SessionID = "s"
		res, err := Start(context.Background(), a, Text("tell me"), o).Result()
		if errs.KindOf(err) != errs.KindGuardrail || res.Output != "" {
			t.Fatalf("err %v output %q", err, res.Output)
		}
		snap, _ := m.Checkpoints.Load(context.Background(), res.RunID)
		if snap.Head.Status != store.StatusFailed || snap.Head.Result != nil || len(m.Sessions.Segments("s")) != 0 {
			t.Fatalf("a guardrail-failed run was finalized: %+v", snap.Head)
		}
	})
}

func TestHooksSeeEveryEvent(t *testing.T) {
	var agentSeen, pluginSeen []int64
	var mu sync.Mutex
	a := newAgent("a", addTool())
	a.Hooks = []plugin.Hook{func(_ context.Context, ev event.Event, rc *tool.RunContext) error {
		mu.Lock()
		defer mu.Unlock()
		if rc == nil || rc.RunID != ev.RunID {
			t.Error("hook got a wrong RunContext")
		}
		agentSeen = append(agentSeen, ev.Seq)
		return errors.New("hook errors are logged, not fatal")
	}}
	a.Plugins = []plugin.Plugin{plugin.Func{ID: "mem", Fn: func(context.Context, *tool.RunContext) (*plugin.Contribution, error) {
		return &plugin.Contribution{Hooks: []plugin.Hook{func(_ context.Context, ev event.Event, _ *tool.RunContext) error {
			mu.Lock()
			defer mu.Unlock()
			pluginSeen = append(pluginSeen, ev.Seq)
			return nil
		}}}, nil
	}}}
	p := newFake(calls(mkcall("c1", "add", `{"a":1,"b":2}`)), say("3"))
	_, err, evs := collect(t, Start(context.Background(), a, Text("x"), opts1(p)))
	if err != nil {
		t.Fatal(err)
	}
	if len(agentSeen) != len(evs) || len(pluginSeen) != len(evs) {
		t.Fatalf("hooks saw %d/%d of %d events", len(agentSeen), len(pluginSeen), len(evs))
	}
	for i := range evs {
		if agentSeen[i] != evs[i].Seq || pluginSeen[i] != evs[i].Seq {
			t.Fatal("hooks saw events out of order")
		}
	}
}

func TestAgentTool(t *testing.T) {
	hp := newFake(say("helper says 42"))
	pp := newFake(calls(mkcall("c1", "ask_helper", `{"input":"what is the answer?"}`)), say("it is 42"))
	helper := &agent.Agent{Name: "helper", Model: "fake:h", Instructions: "You help."}
	res := map[string]*fakeProvider{"fake:p": pp, "fake:h": hp}
	childOpts := Options{Resolve: resolver(res)}
	parent := &agent.Agent{Name: "parent", Model: "fake:p", Tools: []tool.Tool{AgentTool(helper, "", childOpts)}}
	out, err := Start(context.Background(), parent, Text("ask the helper"), Options{Resolve: resolver(res)}).Result()
	if err != nil {
		t.Fatal(err)
	}
	if out.Output != "it is 42" {
		t.Fatalf("output %q", out.Output)
	}
	if shape(hp.requests()[0].Entries) != "user:what is the answer?" || hp.requests()[0].System != "You help." {
		t.Fatalf("child view %s", shape(hp.requests()[0].Entries))
	}
	if !strings.Contains(shape(pp.requests()[1].Entries), "result:c1:helper says 42") {
		t.Fatalf("parent view %s", shape(pp.requests()[1].Entries))
	}
	if pp.requests()[0].Tools[0].Name != "ask_helper" {
		t.Fatal("tool name")
	}
}

func TestToolGates(t *testing.T) {
	var ran atomic.Int32
	rm := fnTool("rm", func(context.Context, *tool.RunContext) (string, error) {
		ran.Add(1)
		return "removed", nil
	})
	ls := fnTool("ls", func(context.Context, *tool.RunContext) (string, error) { return "a b", nil })
	var gated []string
	a := newAgent("a", rm, ls)
	a.Plugins = []plugin.Plugin{plugin.Func{ID: "hooks", Fn: func(context.Context, *tool.RunContext) (*plugin.Contribution, error) {
		return &plugin.Contribution{ToolGates: []plugin.ToolGate{
			func(_ context.Context, _ *tool.RunContext, c transcript.Entry) (plugin.GateResult, error) {
				gated = append(gated, c.CallID)
				return plugin.GateResult{Block: c.Name == "rm", Message: "rm is not allowed here"}, nil
			},
			func(context.Context, *tool.RunContext, transcript.Entry) (plugin.GateResult, error) {
				return plugin.GateResult{}, errors.New("gate crashed") // fail-open
			},
		}}, nil
	}}}
	p := newFake(calls(mkcall("c1", "rm", `{}`), mkcall("c2", "ls", `{}`)), say("ok"))
	if _, err := Start(context.Background(), a, Text("x"), opts1(p)).Result(); err != nil {
		t.Fatal(err)
	}
	if ran.Load() != 0 || strings.Join(gated, " ") != "c1 c2" {
		t.Fatalf("ran %d gated %v", ran.Load(), gated)
	}
	v := shape(p.requests()[1].Entries)
	if !strings.Contains(v, "errorresult:c1:error: blocked by a pre-tool hook: rm is not allowed here") || !strings.Contains(v, "result:c2:a b") {
		t.Fatalf("view %s", v)
	}
}

// flakyCheckpointer fails (or panics) from the n-th append on.
type flakyCheckpointer struct {
	store.MemoryCheckpointer
	failAt  int
	panics  bool
	appends int
}

func (f *flakyCheckpointer) Append(ctx context.Context, runID string, es []transcript.Entry, h store.Head) error {
	f.appends++
	if f.appends >= f.failAt {
		if f.panics {
			panic("disk driver bug")
		}
		return errors.New("disk full")
	}
	return f.MemoryCheckpointer.Append(ctx, runID, es, h)
}

func TestStoreFailuresEndTheRunClearly(t *testing.T) {
	for _, c := range []struct {
		name   string
		failAt int
		panics bool
		kind   errs.Kind
	}{
		{"first append", 1, false, errs.KindStore},
		{"after the reply", 2, false, errs.KindStore},
		{"finalize panics", 3, true, errs.KindInternal},
	} {
		t.Run(c.name, func(t *testing.T) {
			cp := &flakyCheckpointer{failAt: c.failAt, panics: c.panics}
			o := opts1(newFake(say("ok")))
			o.Checkpointer = cp
			res, err, evs := collect(t, Start(context.Background(), newAgent("a"), Text("x"), o))
			if errs.KindOf(err) != c.kind || res == nil {
				t.Fatalf("err %v (%s)", err, errs.KindOf(err))
			}
			if c.kind == errs.KindStore && !strings.Contains(err.Error(), "disk full") {
				t.Fatalf("message %q", err)
			}
			if evs[len(evs)-1].Type != event.RunFailed {
				t.Fatal("no run_failed")
			}
		})
	}
}

func TestPanickingGuardrailStillEndsStream(t *testing.T) {
	a := newAgent("a")
	a.OutputGuardrails = []plugin.Guardrail{func(context.Context, *tool.RunContext, string) (plugin.GuardrailResult, error) {
		panic("guardrail bug")
	}}
	_, err, evs := collect(t, Start(context.Background(), a, Text("x"), opts1(newFake(say("ok")))))
	if errs.KindOf(err) != errs.KindInternal || evs[len(evs)-1].Type != event.RunFailed {
		t.Fatalf("err %v", err)
	}
}

func TestRefusedResumeLeavesCheckpointAlone(t *testing.T) {
	ctx := context.Background()
	m := memStore()
	head := store.Head{Status: store.StatusInterrupted, Agent: "ghost", Turns: 7, SessionID: "s"}
	head.Usage.InputTokens = 999
	_ = m.Checkpoints.Append(ctx, "r", []transcript.Entry{transcript.UserInput("q")}, head)
	_, err, evs := collect(t, Resume(ctx, newAgent("a"), "r", withStores(opts1(newFake()), m)))
	if errs.KindOf(err) != errs.KindConfig || !strings.Contains(err.Error(), `agent "ghost"`) {
		t.Fatalf("err %v", err)
	}
	if got := strings.Join(types(evs), " "); got != "run_started run_failed" {
		t.Fatalf("events %s", got)
	}
	snap, _ := m.Checkpoints.Load(ctx, "r")
	if snap.Head.Turns != 7 || snap.Head.Usage.InputTokens != 999 || snap.Head.Status != store.StatusInterrupted || m.Checkpoints.Appends("r") != 1 {
		t.Fatalf("head clobbered: %+v", snap.Head)
	}
}

// heldCheckpointer simulates a run claimed by another live process.
type heldCheckpointer struct {
	store.MemoryCheckpointer
	attempts int
}

func (h *heldCheckpointer) Append(context.Context, string, []transcript.Entry, store.Head) error {
	h.attempts++
	return errs.New(errs.KindRunConflict, "run r is in use by another lovia process (pid 42)", "wait for it")
}

func TestResumeOfHeldRun(t *testing.T) {
	ctx := context.Background()
	cp := &heldCheckpointer{}
	_ = cp.MemoryCheckpointer.Append(ctx, "r", []transcript.Entry{transcript.UserInput("q")}, store.Head{Status: store.StatusRunning, Agent: "a"})
	o := opts1(newFake(say("never")))
	o.Checkpointer = cp
	_, err := Resume(ctx, newAgent("a"), "r", o).Result()
	if errs.KindOf(err) != errs.KindRunConflict || errs.ExitCode(err) != 2 || errs.HintOf(err) != "wait for it" {
		t.Fatalf("err %v kind %s hint %q", err, errs.KindOf(err), errs.HintOf(err))
	}
	if cp.attempts != 1 {
		t.Fatalf("wrote to a held run %d times", cp.attempts)
	}
}

// A turn interrupted before its reply was saved is redone by resume, not counted twice.
func TestResumeRedoesInterruptedTurn(t *testing.T) {
	ctx := context.Background()
	m := memStore()
	entries := []transcript.Entry{
		transcript.UserInput("go"),
		transcript.ToolCall("c1", "read", nil),
		transcript.ToolResult("c1", "read", "ok", false),
	}
	for i := range entries {
		entries[i].RunID = "r2"
	}
	// The head was saved when turn 2 started; its model call never finished.
	head := store.Head{Status: store.StatusInterrupted, SessionID: "s", Agent: "a", EntryAgent: "a", Turns: 2}
	if err := m.Checkpoints.Append(ctx, "r2", entries, head); err != nil {
		t.Fatal(err)
	}
	a := &agent.Agent{Name: "a", Model: "fake:m", Limits: agent.Limits{MaxTurns: 2}}
	res, err, evs := collect(t, Resume(ctx, a, "r2", withStores(opts1(newFake(say("done"))), m)))
	if err != nil {
		t.Fatalf("resume hit the turn limit it had not used: %v", err)
	}
	if res.Turns != 2 {
		t.Fatalf("turns = %d, want 2", res.Turns)
	}
	for _, e := range evs {
		if e.Type == event.TurnStarted && e.Turn != 2 {
			t.Fatalf("redone turn numbered %d", e.Turn)
		}
	}
}
