package subagents_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/agent"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/plugin/plugintest"
	"github.com/lovia-dev/lovia/internal/plugin/subagents"
	"github.com/lovia-dev/lovia/internal/provider/script"
	"github.com/lovia-dev/lovia/internal/runtime"
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// children builds child agents whose scripted replies depend on the task: "fast ..."
// answers at once, "slow ..." takes a minute (cancellable), "ask ..." calls a tool that
// needs approval, "gated ..." reports once gate is closed.
type children struct {
	mu    sync.Mutex
	specs []subagents.ChildSpec
	store *store.Memory
	gate  chan struct{}
}

func (c *children) build(_ context.Context, spec subagents.ChildSpec) (*agent.Agent, runtime.Options, error) {
	c.mu.Lock()
	c.specs = append(c.specs, spec)
	c.mu.Unlock()
	var turns []script.Turn
	switch {
	case strings.HasPrefix(spec.Task, "slow"):
		turns = []script.Turn{{Text: "slow report", Delay: time.Minute}}
	case strings.HasPrefix(spec.Task, "soon"):
		turns = []script.Turn{{Text: "report for " + spec.Task, Delay: 500 * time.Millisecond}}
	case strings.HasPrefix(spec.Task, "gated"):
		turns = []script.Turn{plugintest.Calls(plugintest.Call("gate", map[string]any{})), plugintest.Say("report for " + spec.Task)}
	case strings.HasPrefix(spec.Task, "ask"):
		turns = []script.Turn{plugintest.Calls(plugintest.Call("danger", map[string]any{})), plugintest.Say("asked")}
	default:
		turns = []script.Turn{plugintest.Say("report for " + spec.Task)}
	}
	p := script.New("child", &script.Script{Turns: turns})
	danger := tool.New("danger", "needs approval", func(context.Context, *tool.RunContext, struct{}) (string, error) {
		return "did the dangerous thing", nil
	}, tool.NeedsApproval(true))
	gate := tool.New("gate", "waits for the test", func(ctx context.Context, _ *tool.RunContext, _ struct{}) (string, error) {
		select {
		case <-c.gate:
			return "open", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	a := &agent.Agent{Name: "child", Instructions: "You are a subagent.", Model: "script:child", Tools: []tool.Tool{danger, gate}}
	return a, runtime.Options{Resolve: plugintest.Resolver(p), Checkpointer: c.store.Checkpoints}, nil
}

func TestSpawnWaitCancel(t *testing.T) {
	kids := &children{store: store.NewMemory()}
	var evMu sync.Mutex
	started := map[string]bool{}
	p, err := subagents.New(subagents.Config{Build: kids.build, OnEvent: func(id string, ev event.Event) {
		evMu.Lock()
		defer evMu.Unlock()
		if ev.Type == event.RunStarted {
			started[id] = true
		}
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const parent = "run_parent"
	a, b := parent+".sub1", parent+".sub2"
	start := time.Now()
	r := plugintest.Start(t, "split the work", []script.Turn{
		plugintest.Calls(
			plugintest.Call("spawn_subagent", map[string]any{"task": "soon: list the files"}),
			plugintest.Call("spawn_subagent", map[string]any{"task": "slow: read everything"}),
		),
		plugintest.Calls(plugintest.Call("wait_subagents", map[string]any{"ids": []any{a}, "timeout_seconds": 30})),
		plugintest.Calls(plugintest.Call("wait_subagents", map[string]any{"ids": []any{b}, "timeout_seconds": 1})),
		plugintest.Calls(plugintest.Call("cancel_subagent", map[string]any{"id": b})),
		plugintest.Say("done"),
	}, plugintest.Options{Runtime: func(o *runtime.Options) { o.RunID = parent }}, p)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("run took %v: the slow child was not cancelled", d)
	}
	if res := r.ToolResult(t, "spawn_subagent", 1); res.IsError || !strings.Contains(res.Text, b) {
		t.Fatalf("spawn = %+v", res)
	}
	// A finishes while wait_subagents waits for it (it takes 500ms): the report comes
	// back as the tool result and is withdrawn from the mailbox.
	if res := r.ToolResult(t, "wait_subagents", 0); !strings.Contains(res.Text, "[subagent "+a+" completed") {
		t.Fatalf("wait A = %+v", res)
	}
	if res := r.ToolResult(t, "wait_subagents", 1); !strings.Contains(res.Text, "Timed out after 1s") || !strings.Contains(res.Text, "[subagent "+b+" still running]") {
		t.Fatalf("wait B = %+v", res)
	}
	if res := r.ToolResult(t, "cancel_subagent", 0); res.IsError || !strings.Contains(res.Text, "cancelled") {
		t.Fatalf("cancel = %+v", res)
	}
	// Whichever way it came (wait result, or a message if A beat the wait), A's report
	// reaches the model exactly once; B was cancelled, so it sends none.
	seen := 0
	for _, e := range r.Result.Entries {
		seen += strings.Count(e.Text, "report for soon: list the files")
		if strings.Contains(e.Text, "slow report") {
			t.Fatalf("cancelled child reported: %+v", e)
		}
	}
	if seen != 1 {
		t.Fatalf("A's report reached the model %d times: %s", seen, r.Dump())
	}
	for _, id := range []string{a, b} {
		snap, err := kids.store.Checkpoints.Load(context.Background(), id)
		if err != nil || snap == nil {
			t.Fatalf("child %s has no checkpoint: %v", id, err)
		}
		if snap.Head.ParentRunID != parent {
			t.Fatalf("child %s parent = %q", id, snap.Head.ParentRunID)
		}
	}
	evMu.Lock()
	defer evMu.Unlock()
	if !started[a] || !started[b] {
		t.Fatalf("child events not forwarded: %v", started)
	}
}

func TestReportThroughMailbox(t *testing.T) {
	kids := &children{store: store.NewMemory(), gate: make(chan struct{})}
	p, _ := subagents.New(subagents.Config{Build: kids.build}, nil)
	// pause lets the child finish, then returns once its report is in the parent's
	// mailbox: the report arrives while the parent is busy with another tool.
	pause := tool.New("pause", "wait for the report", func(ctx context.Context, rc *tool.RunContext, _ struct{}) (string, error) {
		close(kids.gate)
		select {
		case <-rc.Mailbox.Wait():
			return "paused", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	r := plugintest.Start(t, "go", []script.Turn{
		plugintest.Calls(plugintest.Call("spawn_subagent", map[string]any{"task": "gated: check the docs"})),
		plugintest.Calls(plugintest.Call("pause", map[string]any{})),
		plugintest.Say("done"),
	}, plugintest.Options{
		Agent:   func(a *agent.Agent) { a.Tools = append(a.Tools, pause) },
		Runtime: func(o *runtime.Options) { o.RunID = "run_p2" },
	}, p)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	var found bool
	for _, e := range r.Request(t, 2).Entries {
		if e.Type == transcript.TypeInput && strings.Contains(e.Text, "[subagent run_p2.sub1 completed") && strings.Contains(e.Text, "report for gated: check the docs") {
			found = true
		}
	}
	if !found {
		t.Fatalf("report did not re-enter through the mailbox: %s", r.Dump())
	}
}

func TestLimitAndApprovals(t *testing.T) {
	kids := &children{store: store.NewMemory()}
	p, _ := subagents.New(subagents.Config{Build: kids.build, MaxConcurrent: 2}, nil)
	spawn := func(task string) script.Call {
		return plugintest.Call("spawn_subagent", map[string]any{"task": task})
	}
	r := plugintest.Start(t, "go", []script.Turn{
		plugintest.Calls(spawn("slow one"), spawn("slow two"), spawn("slow three")),
		plugintest.Calls(spawn("ask permission")), // still at the limit
		plugintest.Calls(plugintest.Call("cancel_subagent", map[string]any{"id": "run_p3.sub1"})),
		plugintest.Calls(spawn("ask permission")),
		plugintest.Calls(plugintest.Call("wait_subagents", map[string]any{"ids": []any{"run_p3.sub3"}, "timeout_seconds": 30})),
		plugintest.Say("done"),
	}, plugintest.Options{Runtime: func(o *runtime.Options) { o.RunID = "run_p3" }}, p)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if res := r.ToolResult(t, "spawn_subagent", 2); !res.IsError || !strings.Contains(res.Text, "2 subagents are already running") {
		t.Fatalf("third spawn = %+v", res)
	}
	if res := r.ToolResult(t, "spawn_subagent", 4); res.IsError {
		t.Fatalf("spawn after cancel = %+v", res)
	}
	// The child's approval was denied (headless child), and it said so.
	res := r.ToolResult(t, "wait_subagents", 0)
	if !strings.Contains(res.Text, "[subagent run_p3.sub3 completed") {
		t.Fatalf("wait = %+v", res)
	}
	snap, _ := kids.store.Checkpoints.Load(context.Background(), "run_p3.sub3")
	var denied bool
	for _, e := range snap.Entries {
		if e.Type == transcript.TypeToolResult && e.Name == "danger" && e.IsError && strings.Contains(e.Text, "denied") {
			denied = true
		}
	}
	if !denied {
		t.Fatalf("child approval not denied: %+v", snap.Entries)
	}
	// The run ended with sub2 still running: Close cancelled it.
	snap2, _ := kids.store.Checkpoints.Load(context.Background(), "run_p3.sub2")
	if snap2 == nil || snap2.Head.Status == store.StatusRunning || snap2.Head.Status == store.StatusCompleted {
		t.Fatalf("leftover child not cancelled: %+v", snap2)
	}
}

// TestResumedParent: a parent run resumed after a crash knows its earlier children
// only from its transcript. They are reported lost, and new children get fresh ids
// (the old ones still exist in the checkpointer).
func TestResumedParent(t *testing.T) {
	kids := &children{store: store.NewMemory()}
	p, _ := subagents.New(subagents.Config{Build: kids.build}, nil)
	// What the crashed attempt left in the transcript.
	history := []transcript.Entry{
		transcript.UserInput("go"),
		transcript.ToolCall("c1", "spawn_subagent", []byte(`{"task":"slow: old"}`)),
		transcript.ToolResult("c1", "spawn_subagent", "Started subagent run_r.sub1. Its report will arrive as a message, or call wait_subagents.", false),
	}
	// The old child's run exists (it was interrupted with the parent).
	kids.store.Checkpoints.Append(context.Background(), "run_r.sub1", nil, store.Head{Status: store.StatusInterrupted})
	rc := &tool.RunContext{RunID: "run_r", Entries: func() []transcript.Entry { return history }}
	c, err := p.Setup(context.Background(), rc)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	call := func(name, args string) tool.Result {
		for _, tl := range c.Tools {
			if tl.Spec().Name == name {
				res, err := tl.Invoke(context.Background(), rc, []byte(args))
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
		}
		t.Fatalf("no tool %s", name)
		return tool.Result{}
	}
	if res := call("spawn_subagent", `{"task":"fast: new"}`); res.IsError || !strings.Contains(res.Text, "run_r.sub2") {
		t.Fatalf("spawn after resume = %+v", res)
	}
	res := call("wait_subagents", `{"timeout_seconds":30}`)
	if !strings.Contains(res.Text, "[subagent run_r.sub1 lost]") || !strings.Contains(res.Text, "Spawn it again") || !strings.Contains(res.Text, "[subagent run_r.sub2 completed") {
		t.Fatalf("wait after resume = %s", res.Text)
	}
}

// TestCrashAndResumeParent interrupts the parent while it waits for a child, then
// resumes it from its checkpoint: the pending wait is re-run and reports the child lost.
func TestCrashAndResumeParent(t *testing.T) {
	kids := &children{store: store.NewMemory()}
	parentStore := store.NewMemory()
	p, _ := subagents.New(subagents.Config{Build: kids.build}, nil)
	sc := &script.Script{Turns: []script.Turn{
		plugintest.Calls(plugintest.Call("spawn_subagent", map[string]any{"task": "slow: big job"})),
		plugintest.Calls(plugintest.Call("wait_subagents", map[string]any{"timeout_seconds": 60})),
		plugintest.Say("recovered"),
	}}
	a := plugintest.Agent(p)
	opts := func() runtime.Options {
		return runtime.Options{
			Resolve:      plugintest.Resolver(script.New("parent", sc)),
			Checkpointer: parentStore.Checkpoints,
			RunID:        "run_c",
			Approvals:    runtime.ApprovalDenyAll,
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h := runtime.Start(ctx, a, runtime.Text("go"), opts())
	for ev := range h.Events() {
		if ev.Type == event.ToolCallStarted && ev.Name == "wait_subagents" {
			h.Cancel(nil) // the "crash": the run stops mid-wait
		}
	}
	if _, err := h.Result(); err == nil {
		t.Fatal("interrupted run reported success")
	}
	h = runtime.Resume(ctx, a, "run_c", opts())
	for range h.Events() {
	}
	res, err := h.Result()
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "recovered" {
		t.Fatalf("output = %q", res.Output)
	}
	var wait string
	for _, e := range res.Entries {
		if e.Type == transcript.TypeToolResult && e.Name == "wait_subagents" {
			wait = e.Text
		}
	}
	if !strings.Contains(wait, "[subagent run_c.sub1 lost]") {
		t.Fatalf("wait after resume = %q", wait)
	}
	// The child of the crashed attempt did not keep running.
	snap, _ := kids.store.Checkpoints.Load(context.Background(), "run_c.sub1")
	if snap == nil || snap.Head.Status == store.StatusRunning {
		t.Fatalf("old child still running: %+v", snap)
	}
}

func TestForwardedApproval(t *testing.T) {
	kids := &children{store: store.NewMemory()}
	p, _ := subagents.New(subagents.Config{Build: kids.build, ForwardApprovals: true}, nil)
	var shown []string
	r := plugintest.Start(t, "go", []script.Turn{
		plugintest.Calls(plugintest.Call("spawn_subagent", map[string]any{"task": "ask permission"})),
		plugintest.Calls(plugintest.Call("wait_subagents", map[string]any{"timeout_seconds": 30})),
		plugintest.Say("done"),
	}, plugintest.Options{
		Runtime: func(o *runtime.Options) { o.RunID = "run_f"; o.Approvals = runtime.ApprovalInteractive },
		OnEvent: func(h *runtime.Handle, ev event.Event) {
			if ev.Type == event.ApprovalRequired {
				shown = append(shown, ev.Approval.Summary)
				h.Approve(ev.CallID, tool.Decision{Allow: true})
			}
		},
	}, p)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if len(shown) != 1 || !strings.HasPrefix(shown[0], "[subagent run_f.sub1] danger") {
		t.Fatalf("approvals shown to the parent's front end = %q", shown)
	}
	snap, _ := kids.store.Checkpoints.Load(context.Background(), "run_f.sub1")
	var ran bool
	for _, e := range snap.Entries {
		if e.Type == transcript.TypeToolResult && e.Name == "danger" && !e.IsError && e.Text == "did the dangerous thing" {
			ran = true
		}
	}
	if !ran {
		t.Fatalf("approved child call did not run: %+v", snap.Entries)
	}
}
