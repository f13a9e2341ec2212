package runtime

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/compaction"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
)

func viewTokens(req provider.Request) int {
	n := len(req.System)
	for _, e := range req.Entries {
		n += len(e.Text) + len(e.Args)
	}
	return n / 4
}

// TestLongRunWithDefaultPolicy drives the real default context policy through the
// loop: tool outputs far beyond the window keep every view under it, the transcript
// keeps every output in full, the policy's sticky state reaches the checkpoint head,
// and a resume continues with that state.
func TestLongRunWithDefaultPolicy(t *testing.T) {
	const turns, window = 60, 40000
	usable := compaction.Config{}.BudgetFor(window).Usable
	big := strings.Repeat("0123456789abcdef", 400) // 6,400 chars ≈ 1,600 tokens
	dump := fnTool("dump", func(context.Context, *tool.RunContext) (string, error) { return big, nil })
	p := newFake()
	p.info.ContextWindow = window
	p.next = func(n int, req provider.Request) reply {
		r := calls(mkcall(fmt.Sprintf("c%d", n), "dump", `{}`))
		if n == turns-1 {
			r = say("done")
		}
		r.usage.InputTokens = viewTokens(req)
		return r
	}
	m := memStore()
	o := withStores(opts1(p), m)
	o.ContextPolicy = compaction.New(compaction.Config{})
	a := newAgent("a", dump)
	a.Limits.MaxTurns = turns + 5
	res, err, evs := collect(t, Start(context.Background(), a, Text("dump a lot"), o))
	if err != nil {
		t.Fatal(err)
	}
	reqs := p.requests()
	if len(reqs) != turns {
		t.Fatalf("%d model calls", len(reqs))
	}
	for i, r := range reqs {
		if tok := viewTokens(r); tok > usable {
			t.Fatalf("view %d is %d tokens, beyond the usable window of %d", i, tok, usable)
		}
		if len(transcript.Pending(r.Entries)) != 0 {
			t.Fatalf("view %d has a call without its result", i)
		}
	}
	if reqs[0].Tools[len(reqs[0].Tools)-1].Name != "recall_tool_result" {
		t.Fatalf("policy tool missing: %+v", reqs[0].Tools)
	}
	if len(ofType(evs, event.ContextCompacted)) == 0 {
		t.Fatal("no context_compacted event")
	}
	full := 0
	for _, e := range res.Entries {
		if e.Type == transcript.TypeToolResult && e.Text == big {
			full++
		}
	}
	if full != turns-1 {
		t.Fatalf("transcript lost outputs: %d of %d intact", full, turns-1)
	}
	snap, _ := m.Checkpoints.Load(context.Background(), res.RunID)
	if len(snap.Head.ContextState) == 0 || snap.Head.LastInputTokens == 0 {
		t.Fatalf("head lacks policy state: %s / %d", snap.Head.ContextState, snap.Head.LastInputTokens)
	}
	if snap.Head.Status != store.StatusCompleted {
		t.Fatal(snap.Head.Status)
	}
}
