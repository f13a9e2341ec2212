package skills_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/agent"
	"github.com/lovia-dev/lovia/internal/plugin"
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

// seen wraps the skills plugin to keep its contribution, so a test can read what
// the view injector would tell the model at the next turn.
type seen struct {
	plugin.Plugin
	contrib *plugin.Contribution
}

func (s *seen) Setup(ctx context.Context, rc *tool.RunContext) (*plugin.Contribution, error) {
	c, err := s.Plugin.Setup(ctx, rc)
	s.contrib = c
	return c, err
}

// notice is what the skills view injector reports now (it compares the skills on
// disk with those of the system prompt, so reading it changes nothing).
func (s *seen) notice(ctx context.Context, rc *tool.RunContext) string {
	es, err := s.contrib.ViewInjectors[0](ctx, rc)
	if err != nil || len(es) == 0 {
		return ""
	}
	return es[0].Text
}

// TestLiveChanges adds, edits and deletes a SKILL.md while a run is live (from a tool
// the scripted model calls) and checks what the model sees at the next turns.
func TestLiveChanges(t *testing.T) {
	root := t.TempDir()
	write(t, root, "alpha", "the first skill", "alpha v1")
	type opArgs struct {
		Op string `json:"op"`
	}
	sk := &seen{Plugin: skills.New(skills.Config{Bundled: bundled.FS, Dirs: []string{root}}, nil)}
	mutate := tool.New("mutate", "change skills on disk", func(ctx context.Context, rc *tool.RunContext, a opArgs) (string, error) {
		var want string
		switch a.Op {
		case "add":
			write(t, root, "beta", "the second skill", "beta body")
			want = "New skills:"
		case "edit":
			write(t, root, "alpha", "the first skill", "alpha v2")
			want = "Updated skills"
		case "delete":
			os.RemoveAll(filepath.Join(root, "alpha"))
			want = "Removed skills"
		}
		// The watcher delivers asynchronously: wait until the plugin has seen the
		// change, so the next turn is sure to carry it.
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(sk.notice(ctx, rc), want) {
			if time.Now().After(deadline) {
				return "", fmt.Errorf("the skills plugin never saw the %s", a.Op)
			}
			time.Sleep(10 * time.Millisecond)
		}
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
		sk)
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
