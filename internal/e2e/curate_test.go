package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const (
	curateFactA = "Deploys go through the zebracorn pipeline."
	curateFactB = "Integration tests need the quokkaflag setting."
)

// TestCurateInChat: with memory.curate on, a completed chat run asks the (scripted)
// curation model for facts; it proposes two, the picker shows them, the user keeps
// only the second, and search_memory then finds that one and not the other. A
// headless run only suggests (on stderr) and keeps nothing.
func TestCurateInChat(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	if testing.Short() {
		t.Skip("drives tmux")
	}
	e := newEnv(t)
	if out, err := exec.Command("git", "-C", e.dir, "init", "-q").CombinedOutput(); err != nil {
		t.Logf("git init: %v %s", err, out)
	}
	e.userConfig("memory:\n  curate: {enabled: true, model: \"script:cur.yaml\"}\n")
	e.write("chat.yaml", "turns:\n  - text: \"Shipped it.\"\n")
	e.write("cur.yaml", fmt.Sprintf("turns:\n  - text: |\n      - %s\n      - %s\n", curateFactA, curateFactB))

	s := &tmuxSession{t: t, socket: fmt.Sprintf("lovia-e2e-curate-%d", os.Getpid())}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", s.socket, "kill-server").Run() })
	command := "env TERM=xterm-256color " + strings.Join(e.vars, " ") + " " + bin + " chat -m script:chat.yaml; echo LOVIA-EXITED; sleep 600"
	s.run("new-session", "-d", "-s", "main", "-x", "120", "-y", "30", "-c", e.dir, command)
	s.waitFor("new session", 20*time.Second)
	s.text("ship it")
	s.keys("Enter")
	s.waitVisible("Remember these?", 30*time.Second)
	s.waitVisible("▸ keep none", 5*time.Second)
	// A "k" typed into the next prompt does not move this picker.
	s.text("k")
	time.Sleep(time.Second) // wall time for the picker's guard to pass (orders no events)
	if sc := s.visible(); !strings.Contains(sc, "▸ keep none") {
		t.Fatalf("typing moved the curation picker:\n%s", sc)
	}
	// The safe answer is preselected: one Up selects "keep only (2)".
	s.keys("Up")
	s.waitVisible("▸ keep only (2)", 10*time.Second)
	s.keys("Enter")
	s.waitFor("remembered 1 fact", 20*time.Second)
	s.keys("C-d")
	s.waitFor("LOVIA-EXITED", 20*time.Second)

	e.write("search.yaml", `turns:
  - tool_calls:
      - name: search_memory
        args: {query: "zebracorn"}
      - name: search_memory
        args: {query: "quokkaflag"}
  - text: done
`)
	for i := 0; i < 2; i++ {
		r := e.run(nil, "run", "-m", "script:search.yaml", "--output", "stream-json", "search")
		if r.code != 0 {
			t.Fatalf("search run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		var outs []string
		for _, ev := range parseStream(t, r.stdout) {
			if ev.Name == "search_memory" && (ev.Type == "tool_call_completed" || ev.Type == "tool_call_failed") {
				outs = append(outs, ev.Output)
			}
		}
		if len(outs) != 2 {
			t.Fatalf("want 2 search results, got %q", outs)
		}
		// The two calls may finish in either order.
		all := strings.Join(outs, "\n")
		if strings.Contains(all, "zebracorn pipeline") {
			t.Errorf("run %d: the declined fact was kept: %q", i, outs)
		}
		if strings.Count(all, curateFactB) != 1 {
			t.Errorf("run %d: want the accepted fact found once: %q", i, outs)
		}
		// Headless: the proposals are printed, never kept (the second search proves it).
		if !strings.Contains(r.stderr, "memory curation suggests") || !strings.Contains(r.stderr, "(1) "+curateFactA) {
			t.Errorf("run %d: want the suggestions on stderr, got:\n%s", i, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(e.home, "data", "memory.db")); err != nil {
		t.Errorf("memory.db: %v", err)
	}
}
