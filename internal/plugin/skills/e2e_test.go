package skills_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/agent"
	"github.com/lovia-dev/lovia/internal/plugin/plugintest"
	"github.com/lovia-dev/lovia/internal/plugin/skills"
	"github.com/lovia-dev/lovia/internal/provider/script"
	"github.com/lovia-dev/lovia/internal/tool"
	bundled "github.com/lovia-dev/lovia/skills"
)

func write(t *testing.T, root, name, desc, body string) {
	t.Helper()
	os.MkdirAll(filepath.Join(root, name), 0o755)
	if err := os.WriteFile(filepath.Join(root, name, "SKILL.md"), []byte("---\nname: "+name+"\ndescription: "+desc+"\n---\n"+body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLiveChanges adds, edits and deletes a SKILL.md while a run is live (from a tool
// the scripted model calls) and checks what the model sees at the next turns.
func TestLiveChanges(t *testing.T) {
	root := t.TempDir()
	write(t, root, "alpha", "the first skill", "alpha v1")
	type opArgs struct {
		Op string `json:"op"`
	}
	mutate := tool.New("mutate", "change skills on disk", func(_ context.Context, _ *tool.RunContext, a opArgs) (string, error) {
		switch a.Op {
		case "add":
			write(t, root, "beta", "the second skill", "beta body")
		case "edit":
			write(t, root, "alpha", "the first skill", "alpha v2")
		case "delete":
			os.RemoveAll(filepath.Join(root, "alpha"))
		}
		time.Sleep(500 * time.Millisecond) // let fsnotify deliver before the next turn
		return "ok", nil
	})
	op := func(o string) script.Turn {
		return plugintest.Calls(plugintest.Call("mutate", map[string]any{"op": o}))
	}
	load := func(n string) script.Turn {
		return plugintest.Calls(plugintest.Call(skills.LoadToolName, map[string]any{"name": n}))
	}
	r := plugintest.Start(t, "go", []script.Turn{
		op("add"), load("beta"),
		op("edit"), load("alpha"),
		op("delete"), load("alpha"),
		plugintest.Say("done"),
	}, plugintest.Options{Agent: func(a *agent.Agent) { a.Tools = append(a.Tools, mutate) }},
		skills.New(skills.Config{Bundled: bundled.FS, Dirs: []string{root}}, nil))
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	first := r.Request(t, 0)
	if !strings.Contains(first.System, "- alpha: the first skill") || !strings.Contains(first.System, "- code-review:") || strings.Contains(first.System, "alpha v1") {
		t.Fatalf("system prompt skills section:\n%s", first.System)
	}
	tail := func(n int) string {
		req := r.Request(t, n)
		return req.Entries[len(req.Entries)-1].Text
	}
	if got := tail(1); !strings.Contains(got, "New skills:\n- beta: the second skill") {
		t.Fatalf("after add, tail = %q", got)
	}
	if res := r.ToolResult(t, skills.LoadToolName, 0); res.IsError || !strings.Contains(res.Text, "beta body") {
		t.Fatalf("load beta = %+v", res)
	}
	if got := tail(3); !strings.Contains(got, "Updated skills") || !strings.Contains(got, "- alpha") {
		t.Fatalf("after edit, tail = %q", got)
	}
	if res := r.ToolResult(t, skills.LoadToolName, 1); !strings.Contains(res.Text, "alpha v2") {
		t.Fatalf("load edited alpha = %+v", res)
	}
	if got := tail(5); !strings.Contains(got, "Removed skills (no longer available):\n- alpha") {
		t.Fatalf("after delete, tail = %q", got)
	}
	if res := r.ToolResult(t, skills.LoadToolName, 2); !res.IsError || !strings.Contains(res.Text, `no skill named "alpha"`) {
		t.Fatalf("load deleted alpha = %+v", res)
	}
	// The system prompt never changed (cache-friendly); changes live in the view only.
	for i := range r.Provider.Requests() {
		if r.Request(t, i).System != first.System {
			t.Fatalf("system prompt changed at request %d", i)
		}
	}
	for _, e := range r.Result.Entries {
		if strings.Contains(e.Text, "<system-reminder>") {
			t.Fatal("skills notice leaked into the transcript")
		}
	}
}
