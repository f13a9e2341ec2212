package runtime

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/tool"
)

// A tool that reports progress in a tight loop: the reports become a few
// tool_call_progress events (coalesced), all between the call's start and its
// completion, cleaned and scrubbed; none reaches the transcript.
func TestToolProgressIsCoalescedAndNotRecorded(t *testing.T) {
	const reports = 2000
	chatty := fnTool("chatty", func(ctx context.Context, _ *tool.RunContext) (string, error) {
		for i := 1; i <= reports; i++ {
			tool.ReportProgress(ctx, event.Progress{Progress: float64(i), Total: reports, Message: fmt.Sprintf("step\x1b[2J %d\nof SECRET", i)})
		}
		return "finished", nil
	})
	p := newFake(calls(mkcall("c1", "chatty", `{}`)), say("ok"))
	m := memStore()
	o := withStores(opts1(p), m)
	o.Scrub = func(s string) string { return strings.ReplaceAll(s, "SECRET", "[redacted]") }
	h := Start(context.Background(), newAgent("a", chatty), Text("go"), o)
	res, err, evs := collect(t, h)
	if err != nil {
		t.Fatal(err)
	}
	prog := ofType(evs, event.ToolCallProgress)
	if len(prog) == 0 || len(prog) > reports/2 {
		t.Fatalf("%d progress events for %d reports; want a few (coalesced)", len(prog), reports)
	}
	first := prog[0]
	if first.CallID != "c1" || first.Name != "chatty" || first.Turn != 1 || first.Progress == nil {
		t.Fatalf("first progress event %+v", first)
	}
	if got := first.Progress; got.Progress != 1 || got.Total != reports || got.Message != "step [2J 1 of [redacted]" {
		t.Fatalf("first progress %+v", *got)
	}
	started, completed := -1, -1
	for i, ev := range evs {
		switch ev.Type {
		case event.ToolCallStarted:
			started = i
		case event.ToolCallCompleted:
			completed = i
		case event.ToolCallProgress:
			if started < 0 || completed >= 0 {
				t.Fatalf("progress outside its call: %v", types(evs))
			}
		}
	}
	snap, err := m.Checkpoints.Load(context.Background(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range snap.Entries {
		if strings.Contains(e.Text, "step") {
			t.Fatalf("progress reached the transcript: %+v", e)
		}
	}
	if got := shape(p.requests()[1].Entries); got != "user:go call:c1:chatty result:c1:finished" {
		t.Fatalf("view 2: %s", got)
	}
	if res.Status != store.StatusCompleted {
		t.Fatalf("status %s", res.Status)
	}
}

// The latest report of a burst is delivered (trailing edge), not only the first.
func TestToolProgressDeliversLatest(t *testing.T) {
	seen := make(chan struct{})
	burst := fnTool("burst", func(ctx context.Context, _ *tool.RunContext) (string, error) {
		for i := 1; i <= 3; i++ {
			tool.ReportProgress(ctx, event.Progress{Progress: float64(i), Total: 3})
		}
		select {
		case <-seen:
			return "saw 3", nil
		case <-time.After(20 * time.Second):
			return "the last progress report never arrived", nil
		}
	})
	p := newFake(calls(mkcall("c1", "burst", `{}`)), say("ok"))
	h := Start(context.Background(), newAgent("a", burst), Text("go"), opts1(p))
	var evs []event.Event
	for ev := range h.Events() {
		evs = append(evs, ev)
		if ev.Type == event.ToolCallProgress && ev.Progress.Progress == 3 {
			close(seen)
		}
	}
	checkStream(t, evs)
	done := ofType(evs, event.ToolCallCompleted)
	if len(done) != 1 || done[0].Output != "saw 3" {
		t.Fatalf("completed %+v; progress %+v", done, ofType(evs, event.ToolCallProgress))
	}
}
