package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// TestScrubAppliesToEveryToolResult: the secret never reaches the model's next
// request, the run's entries (what is checkpointed) or the events.
func TestScrubAppliesToEveryToolResult(t *testing.T) {
	const key = "sk-live-0123456789abcdef"
	leak := fnTool("leak", func(context.Context, *tool.RunContext) (string, error) { return "the key is " + key, nil })
	fails := fnTool("fails", func(context.Context, *tool.RunContext) (string, error) { return "", &toolErr{"denied: " + key} })
	p := newFake(calls(mkcall("c1", "leak", `{}`), mkcall("c2", "fails", `{}`)), say("ok"))
	o := opts1(p)
	o.Scrub = func(s string) string { return strings.ReplaceAll(s, key, "[redacted]") }
	res, err, evs := collect(t, Start(context.Background(), newAgent("a", leak, fails), Text("x"), o))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range res.Entries {
		if e.Type == transcript.TypeToolResult {
			n++
			if strings.Contains(e.Text, key) || !strings.Contains(e.Text, "[redacted]") {
				t.Fatalf("entry not scrubbed: %q", e.Text)
			}
		}
	}
	if n != 2 {
		t.Fatalf("%d tool results", n)
	}
	for _, ev := range evs {
		if (ev.Type == event.ToolCallCompleted || ev.Type == event.ToolCallFailed) && strings.Contains(ev.Output, key) {
			t.Fatalf("event carries the key: %+v", ev)
		}
	}
	for _, req := range p.requests() {
		for _, e := range req.Entries {
			if strings.Contains(e.Text, key) {
				t.Fatalf("the model saw the key: %q", e.Text)
			}
		}
	}
}

type toolErr struct{ s string }

func (e *toolErr) Error() string { return e.s }
