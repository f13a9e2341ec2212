package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// cancelOn runs h to its end, cancelling it at the first event for which at is true.
func cancelOn(t *testing.T, h *Handle, at func(event.Event) bool) (*Result, error) {
	t.Helper()
	done := false
	for ev := range h.Events() {
		if !done && at(ev) {
			done = true
			h.Cancel(nil)
		}
	}
	return h.Result()
}

// pairsOK reports whether every call in es is answered by a result after it, with no
// user input between a call and its result (as chat providers require).
func pairsOK(es []transcript.Entry) bool {
	open := map[string]bool{}
	for _, e := range es {
		switch {
		case e.Type == transcript.TypeToolCall:
			open[e.CallID] = true
		case e.Type == transcript.TypeToolResult:
			if !open[e.CallID] {
				return false // an orphan result
			}
			delete(open, e.CallID)
		case e.IsUser() && len(open) > 0:
			return false
		}
	}
	return len(open) == 0
}

func TestCarryAfterInterruptMidText(t *testing.T) {
	p := newFake(reply{text: "Half of an ans", block: true}, say("all done"))
	m := memStore()
	o := withStores(opts1(p), m)
	o.SessionID = "ses_1"
	h1 := Start(context.Background(), newAgent("a"), Text("explain the parser"), o)
	res1, err := cancelOn(t, h1, func(ev event.Event) bool { return ev.Type == event.TextDelta })
	if errs.KindOf(err) != errs.KindCancelled || res1.Status != store.StatusInterrupted {
		t.Fatalf("run 1: %v %s", err, res1.Status)
	}
	// The interrupted reply's text is in the run's record, marked by a note.
	if got := shape(res1.Entries); !strings.HasPrefix(got, "user:explain the parser text:Half of an ans user:"+NotePrefix) {
		t.Fatalf("run 1 entries: %s", got)
	}

	o2 := o
	o2.CarryRunID = res1.RunID
	res2, err, _ := collect(t, Start(context.Background(), newAgent("a"), Text("go on"), o2))
	if err != nil || res2.Output != "all done" {
		t.Fatalf("run 2: %v %q", err, res2.Output)
	}
	reqs := p.requests()
	view := shape(reqs[1].Entries)
	if !strings.HasPrefix(view, "user:explain the parser text:Half of an ans user:"+NotePrefix) ||
		!strings.HasSuffix(view, "user:go on") || !strings.Contains(view, "interrupted") {
		t.Fatalf("run 2 view: %s", view)
	}
	// The session holds the whole conversation once.
	hist, _ := m.Sessions.Load(context.Background(), "ses_1")
	if got := shape(hist); strings.Count(got, "explain the parser") != 1 || !strings.HasSuffix(got, "user:go on text:all done") {
		t.Fatalf("session: %s", got)
	}
	// The carried run cannot be resumed (its work would be counted twice).
	_, err, _ = collect(t, Resume(context.Background(), newAgent("a"), res1.RunID, o))
	if !errors.Is(err, ErrCarried) || errs.KindOf(err) != errs.KindRunConflict {
		t.Fatalf("resume of a carried run: %v", err)
	}
	// Carrying it again is a no-op: the next run sees it once, from the session.
	o3 := o
	o3.CarryRunID = res1.RunID
	p.replies = append(p.replies, say("ok"))
	if _, err, _ := collect(t, Start(context.Background(), newAgent("a"), Text("third"), o3)); err != nil {
		t.Fatal(err)
	}
	if v := shape(p.requests()[2].Entries); strings.Count(v, "explain the parser") != 1 {
		t.Fatalf("run 3 view: %s", v)
	}
}

func TestCarryAfterInterruptDuringTools(t *testing.T) {
	quick := fnTool("quick", func(context.Context, *tool.RunContext) (string, error) { return "quick result", nil })
	slow := fnTool("slow", func(ctx context.Context, _ *tool.RunContext) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	p := newFake(calls(mkcall("c1", "quick", `{}`), mkcall("c2", "slow", `{}`), mkcall("c3", "quick", `{}`)), say("fine"))
	m := memStore()
	o := withStores(opts1(p), m)
	o.SessionID = "ses_t"
	h1 := Start(context.Background(), newAgent("a", quick, slow), Text("run both"), o)
	c1done, c2started := false, false
	res1, err := cancelOn(t, h1, func(ev event.Event) bool {
		c1done = c1done || ev.Type == event.ToolCallCompleted && ev.CallID == "c1"
		c2started = c2started || ev.Type == event.ToolCallStarted && ev.CallID == "c2"
		return c1done && c2started
	})
	if errs.KindOf(err) != errs.KindCancelled {
		t.Fatalf("run 1: %v", err)
	}

	o2 := o
	o2.CarryRunID = res1.RunID
	if _, err, _ := collect(t, Start(context.Background(), newAgent("a", quick, slow), Text("and then?"), o2)); err != nil {
		t.Fatal(err)
	}
	view := p.requests()[1].Entries
	got := shape(view)
	for _, want := range []string{"user:run both", "call:c1:quick", "result:c1:quick result", "call:c2:slow", "call:c3:quick", "user:and then?"} {
		if !strings.Contains(got, want) {
			t.Fatalf("run 2 view lacks %q: %s", want, got)
		}
	}
	if !pairsOK(view) {
		t.Fatalf("calls and results not paired: %s", got)
	}
	// Calls that never finished are answered with an error the model can read, and
	// the answer is part of the record (not made up per view).
	hist, _ := m.Sessions.Load(context.Background(), "ses_t")
	n := 0
	for _, e := range hist {
		if e.Type == transcript.TypeToolResult && e.Text == transcript.DanglingResultText {
			n++
			if !e.IsError || e.Synthetic {
				t.Fatalf("repaired result: %+v", e)
			}
		}
	}
	if n == 0 || !pairsOK(hist) {
		t.Fatalf("session: %s", shape(hist))
	}
}

func TestCarryAfterMaxTurns(t *testing.T) {
	again := fnTool("again", func(context.Context, *tool.RunContext) (string, error) { return "more", nil })
	p := newFake(calls(mkcall("t1", "again", `{}`)), calls(mkcall("t2", "again", `{}`)), say("finished"))
	m := memStore()
	o := withStores(opts1(p), m)
	o.SessionID = "ses_m"
	o.MaxTurns = 2
	res1, err, _ := collect(t, Start(context.Background(), newAgent("a", again), Text("loop"), o))
	if errs.KindOf(err) != errs.KindMaxTurns {
		t.Fatalf("run 1: %v", err)
	}
	if h := errs.HintOf(err); strings.Contains(h, "--max-turns") || strings.Contains(h, "lovia") {
		t.Fatalf("the core words a CLI hint: %q", h)
	}
	// In a chat the limit is per message: "continue" carries on with a fresh budget.
	o2 := o
	o2.CarryRunID = res1.RunID
	res2, err, _ := collect(t, Start(context.Background(), newAgent("a", again), Text("continue"), o2))
	if err != nil || res2.Output != "finished" {
		t.Fatalf("run 2: %v", err)
	}
	view := shape(p.requests()[2].Entries)
	for _, want := range []string{"user:loop call:t1:again result:t1:more call:t2:again result:t2:more user:" + NotePrefix, "limit", "user:continue"} {
		if !strings.Contains(view, want) {
			t.Fatalf("continue view lacks %q: %s", want, view)
		}
	}
}

func TestCarryEntriesRepairsDangling(t *testing.T) {
	run := []transcript.Entry{
		transcript.UserInput("go"),
		transcript.ToolCall("a", "x", nil), transcript.ToolCall("b", "y", nil),
		transcript.ToolResult("a", "x", "ok", false),
	}
	got := CarryEntries(run, string(errs.KindCancelled), "interrupted")
	want := "user:go call:a:x call:b:y result:a:ok errorresult:b:" + transcript.DanglingResultText + " user:" + endNote("cancelled", "")
	if shape(got) != want {
		t.Fatalf("got  %s\nwant %s", shape(got), want)
	}
	if got[4].Synthetic {
		t.Fatal("a carried repair is a real record")
	}
	// A note already closing the run is not repeated.
	withNote := append(run[:1:1], transcript.AssistantText("half"), transcript.UserInput(endNote("cancelled", "")))
	if got := CarryEntries(withNote, "cancelled", ""); strings.Count(shape(got), NotePrefix) != 1 {
		t.Fatalf("notes: %s", shape(got))
	}
	if CarryEntries(nil, "", "") != nil {
		t.Fatal("nothing to carry")
	}
}

// A run interrupted mid-reply and then resumed continues after the kept text.
func TestResumeAfterPartialText(t *testing.T) {
	p := newFake(reply{text: "Part", block: true}, say("rest"))
	m := memStore()
	o := withStores(opts1(p), m)
	h1 := Start(context.Background(), newAgent("a"), Text("q"), o)
	res1, _ := cancelOn(t, h1, func(ev event.Event) bool { return ev.Type == event.TextDelta })
	res2, err, _ := collect(t, Resume(context.Background(), newAgent("a"), res1.RunID, o))
	if err != nil || res2.Output != "rest" {
		t.Fatalf("resume: %v %q", err, res2.Output)
	}
	if v := shape(p.requests()[1].Entries); !strings.HasPrefix(v, "user:q text:Part user:"+NotePrefix) {
		t.Fatalf("resumed view: %s", v)
	}
}
