package human_test

import (
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/plugin/human"
	"github.com/lovia-dev/lovia/internal/plugin/plugintest"
	"github.com/lovia-dev/lovia/internal/provider/script"
	"github.com/lovia-dev/lovia/internal/runtime"
	"github.com/lovia-dev/lovia/internal/tool"
)

func turns() []script.Turn {
	return []script.Turn{
		plugintest.Calls(plugintest.Call(human.ToolName, map[string]any{"question": "Which database?", "options": []any{"postgres", "sqlite"}})),
		plugintest.Say("ok"),
	}
}

func TestInteractiveAnswer(t *testing.T) {
	var asked *event.Approval
	r := plugintest.Start(t, "set up storage", turns(), plugintest.Options{
		Runtime: func(o *runtime.Options) { o.Approvals = runtime.ApprovalInteractive },
		OnEvent: func(h *runtime.Handle, ev event.Event) {
			if ev.Type == event.ApprovalRequired {
				asked = ev.Approval
				h.Approve(ev.CallID, tool.Decision{Allow: true, Message: "sqlite, please"})
			}
		},
	}, human.New())
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if asked == nil || asked.Kind != human.Kind || !strings.Contains(asked.Summary, "Which database?") || len(asked.Subcommands) != 2 {
		t.Fatalf("approval shown = %+v", asked)
	}
	if res := r.ToolResult(t, human.ToolName, 0); res.IsError || res.Text != "The user answered: sqlite, please" {
		t.Fatalf("result = %+v", res)
	}
}

func TestHeadlessDenied(t *testing.T) {
	r := plugintest.Start(t, "set up storage", turns(), plugintest.Options{}, human.New())
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if res := r.ToolResult(t, human.ToolName, 0); !res.IsError || !strings.Contains(res.Text, "did not answer") || !strings.Contains(res.Text, "best judgment") {
		t.Fatalf("result = %+v", res)
	}
}
