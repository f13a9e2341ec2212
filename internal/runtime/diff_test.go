package runtime

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/tool"
)

// TestToolDiffReachesTheEventScrubbed: the diff a tool computed rides on its
// tool_call_completed event, scrubbed like the output; the model sees only the text.
func TestToolDiffReachesTheEventScrubbed(t *testing.T) {
	const key = "sk-diffsecret123"
	edit := &tool.FuncTool{
		S: tool.Spec{Name: "edit", Schema: json.RawMessage(`{"type":"object"}`)},
		Fn: func(context.Context, *tool.RunContext, json.RawMessage) (tool.Result, error) {
			return tool.Result{Text: "edited a.go", Diff: "--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-x\n+KEY=" + key}, nil
		},
	}
	p := newFake(calls(mkcall("c1", "edit", `{}`)), say("done"))
	o := opts1(p)
	o.Scrub = func(s string) string { return strings.ReplaceAll(s, key, "[redacted]") }
	_, err, evs := collect(t, Start(context.Background(), newAgent("a", edit), Text("go"), o))
	if err != nil {
		t.Fatal(err)
	}
	done := ofType(evs, event.ToolCallCompleted)
	if len(done) != 1 || done[0].Diff != "--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-x\n+KEY=[redacted]" {
		t.Fatalf("completed events %+v", done)
	}
	if v := shape(p.requests()[1].Entries); strings.Contains(v, "KEY=") {
		t.Fatalf("the diff reached the model: %s", v)
	}
}
