package todo_test

import (
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/plugin/plugintest"
	"github.com/lovia-dev/lovia/internal/plugin/todo"
	"github.com/lovia-dev/lovia/internal/provider/script"
)

func TestThroughTheLoop(t *testing.T) {
	list := []any{
		map[string]any{"content": "Read the code", "status": "completed"},
		map[string]any{"content": "Fix the bug", "status": "in_progress"},
		map[string]any{"content": "Run the tests", "status": "pending"},
	}
	r := plugintest.Start(t, "fix it", []script.Turn{
		plugintest.Calls(plugintest.Call(todo.ToolName, map[string]any{"todos": list})),
		plugintest.Calls(plugintest.Call(todo.ToolName, map[string]any{"todos": []any{
			map[string]any{"content": "a", "status": "in_progress"},
			map[string]any{"content": "b", "status": "in_progress"},
		}})),
		plugintest.Say("done"),
	}, plugintest.Options{}, todo.New())
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	res := r.ToolResult(t, todo.ToolName, 0)
	if res.IsError || !strings.Contains(res.Text, "[x] Read the code\n[>] Fix the bug\n[ ] Run the tests") {
		t.Fatalf("result = %+v", res)
	}
	if bad := r.ToolResult(t, todo.ToolName, 1); !bad.IsError || !strings.Contains(bad.Text, "in_progress") {
		t.Fatalf("invalid list accepted: %+v", bad)
	}

	first := r.Request(t, 0)
	if !plugintest.HasTool(first, todo.ToolName) || !strings.Contains(first.System, "todo_write") {
		t.Fatal("tool or instructions missing from the first request")
	}
	for _, e := range first.Entries {
		if strings.Contains(e.Text, "system-reminder") {
			t.Fatal("reminder before any list was written")
		}
	}
	// Both later requests end with the reminder of the last valid list.
	for _, n := range []int{1, 2} {
		req := r.Request(t, n)
		tail := req.Entries[len(req.Entries)-1]
		if !strings.Contains(tail.Text, "<system-reminder>") || !strings.Contains(tail.Text, "[>] Fix the bug") {
			t.Fatalf("request %d tail = %+v", n, tail)
		}
		count := 0
		for _, e := range req.Entries {
			if strings.Contains(e.Text, "<system-reminder>") {
				count++
			}
		}
		if count != 1 {
			t.Fatalf("request %d has %d reminders; they must not accumulate", n, count)
		}
	}
	for _, e := range r.Result.Entries {
		if strings.Contains(e.Text, "<system-reminder>") {
			t.Fatalf("reminder leaked into the transcript: %+v", e)
		}
	}
}
