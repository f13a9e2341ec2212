package memory_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/plugin/memory"
	"github.com/lovia-dev/lovia/internal/plugin/plugintest"
	"github.com/lovia-dev/lovia/internal/provider/script"
)

func TestAcrossRuns(t *testing.T) {
	dir := t.TempDir()
	a, err := memory.OpenArchive(context.Background(), filepath.Join(dir, "memory.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	cfg := memory.DefaultConfig(filepath.Join(dir, "home"), filepath.Join(dir, "repo"))
	cfg.Archive = a
	p := memory.New(cfg, nil)

	r := plugintest.Start(t, "remember this", []script.Turn{
		plugintest.Calls(
			plugintest.Call("remember", map[string]any{"content": "The staging database is called orca", "pin": true}),
			plugintest.Call("remember", map[string]any{"content": "Flaky test TestUpload needs -count=1"}),
		),
		plugintest.Say("saved"),
	}, plugintest.Options{}, p)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	// A later run (another session) has the pinned note in its prompt and finds the
	// archived one by search.
	r = plugintest.Start(t, "what about uploads?", []script.Turn{
		plugintest.Calls(plugintest.Call("search_memory", map[string]any{"query": "upload flaky"})),
		plugintest.Say("ok"),
	}, plugintest.Options{}, p)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if sys := r.Request(t, 0).System; !strings.Contains(sys, "- The staging database is called orca") {
		t.Fatalf("pinned note missing from the prompt:\n%s", sys)
	}
	if res := r.ToolResult(t, "search_memory", 0); !strings.Contains(res.Text, "TestUpload needs -count=1") {
		t.Fatalf("search = %+v", res)
	}
}
