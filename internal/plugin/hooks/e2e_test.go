package hooks_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lovia-dev/lovia/internal/agent"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/plugin/hooks"
	"github.com/lovia-dev/lovia/internal/plugin/plugintest"
	"github.com/lovia-dev/lovia/internal/provider/script"
	"github.com/lovia-dev/lovia/internal/tool"
)

type pathArgs struct {
	Path string `json:"path"`
}

func TestThroughTheLoop(t *testing.T) {
	var ran atomic.Int32
	write := tool.New("write_file", "write", func(_ context.Context, _ *tool.RunContext, a pathArgs) (string, error) {
		ran.Add(1)
		return "wrote " + a.Path, nil
	})
	p, err := hooks.New(hooks.Config{Dir: t.TempDir(), Hooks: []hooks.Hook{
		// Block writes to .env files, allow the rest.
		{Event: hooks.PreToolUse, Matcher: "write_file", Command: `grep -q '"path":"[^"]*\.env"' && { echo "writing .env files is forbidden" >&2; exit 2; }; exit 0`},
		// A hook that hangs on "slow" paths is cut off by its timeout; the call proceeds.
		{Event: hooks.PreToolUse, Matcher: "write_file", Command: `if grep -q slow; then sleep 20; exit 2; fi; exit 0`, Timeout: 0.5},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	call := func(path string) script.Turn {
		return plugintest.Calls(plugintest.Call("write_file", map[string]any{"path": path}))
	}
	r := plugintest.Start(t, "write files", []script.Turn{
		call("prod.env"), call("main.go"), call("slow.txt"), plugintest.Say("done"),
	}, plugintest.Options{Agent: func(a *agent.Agent) { a.Tools = append(a.Tools, write) }}, p)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	blocked := r.ToolResult(t, "write_file", 0)
	if !blocked.IsError || !strings.Contains(blocked.Text, "writing .env files is forbidden") {
		t.Fatalf("blocked call = %+v", blocked)
	}
	if res := r.ToolResult(t, "write_file", 1); res.IsError || res.Text != "wrote main.go" {
		t.Fatalf("allowed call = %+v", res)
	}
	if res := r.ToolResult(t, "write_file", 2); res.IsError || res.Text != "wrote slow.txt" {
		t.Fatalf("call after a timed-out hook = %+v", res)
	}
	if got := ran.Load(); got != 2 {
		t.Fatalf("tool ran %d times, want 2 (the blocked call must not run)", got)
	}
}

func TestUserPromptSubmitBlocks(t *testing.T) {
	p, err := hooks.New(hooks.Config{Hooks: []hooks.Hook{
		{Event: hooks.UserPromptSubmit, Command: `grep -qi password && { echo "do not paste passwords" >&2; exit 2; }; exit 0`},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := plugintest.Start(t, "my password is hunter2", []script.Turn{plugintest.Say("ok")}, plugintest.Options{}, p)
	if errs.KindOf(r.Err) != errs.KindGuardrail || !strings.Contains(r.Err.Error(), "do not paste passwords") {
		t.Fatalf("err = %v", r.Err)
	}
	if n := len(r.Provider.Requests()); n != 0 {
		t.Fatalf("the model was called %d times for a blocked prompt", n)
	}
	r = plugintest.Start(t, "hello", []script.Turn{plugintest.Say("ok")}, plugintest.Options{}, p)
	if r.Err != nil || r.Result.Output != "ok" {
		t.Fatalf("harmless prompt: %v %+v", r.Err, r.Result)
	}
}
