package hooks_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/plugin/hooks"
	"github.com/lovia-dev/lovia/internal/plugin/plugintest"
	"github.com/lovia-dev/lovia/internal/provider/script"
)

// TestNativeStopHookBlocks: a stop hook of lovia's own config answering
// {"decision":"block"} keeps the run going; the model's next request carries the
// reason; the second stop sees stop_hook_active and passes; the hook is not run
// again when the run completes.
func TestNativeStopHookBlocks(t *testing.T) {
	dir := t.TempDir()
	p, err := hooks.New(hooks.Config{Dir: dir, Hooks: []hooks.Hook{{Event: hooks.Stop,
		Command: `cat >> stops.log; echo >> stops.log; grep -q '"stop_hook_active":true' stops.log || echo '{"decision":"block","reason":"Update the changelog first."}'`}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := plugintest.Start(t, "work", []script.Turn{plugintest.Say("done"), plugintest.Say("changelog updated; done")}, plugintest.Options{}, p)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if r.Result.Output != "changelog updated; done" {
		t.Fatalf("output = %q", r.Result.Output)
	}
	reqs := r.Provider.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	seen := false
	for _, e := range reqs[1].Entries {
		seen = seen || strings.Contains(e.Text, "Stop hook feedback: Update the changelog first.")
	}
	if !seen {
		t.Fatalf("the second request does not carry the stop hook's reason: %+v", reqs[1].Entries)
	}
	data, err := os.ReadFile(filepath.Join(dir, "stops.log"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), `"hook_event_name":"stop"`); n != 2 {
		t.Fatalf("stop hook ran %d times, want 2:\n%s", n, data)
	}
}
