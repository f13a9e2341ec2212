package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStopHookBlocksOnce: a stop hook from lovia's own config (hooks:) refuses the
// first final answer (exit 2): the model gets the reason as a user message and answers
// again; the hook's second invocation says stop_hook_active and lets the run end. The
// hook runs at the final answer only, not a second time when the run completes.
func TestStopHookBlocksOnce(t *testing.T) {
	e := newEnv(t)
	log := filepath.Join(e.dir, "stops.log")
	e.userConfig(`hooks:
  - event: stop
    command: 'cat >> stops.log; echo >> stops.log; if [ -f blocked ]; then exit 0; fi; touch blocked; echo "Run the linter before you stop." >&2; exit 2'
`)
	e.write("s.yaml", `
turns:
  - text: "First answer."
  - text: "Linted; done."
`)
	r := e.run(nil, "run", "--approve", "all", "--output", "stream-json", "-m", "script:s.yaml", "finish up")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	var injected []string
	final, sawInjectBeforeEnd := "", false
	for _, ev := range parseStream(t, r.stdout) {
		switch ev.Type {
		case "user_message_injected":
			injected = append(injected, ev.Text)
			sawInjectBeforeEnd = final == ""
		case "run_completed":
			final = ev.FinalOutput
		}
	}
	if len(injected) != 1 || !strings.Contains(injected[0], "Run the linter before you stop.") || !sawInjectBeforeEnd {
		t.Fatalf("want the stop hook's reason injected once before the end, got %q", injected)
	}
	if final != "Linted; done." {
		t.Fatalf("final output = %q, want the answer given after the block", final)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var inputs []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if strings.TrimSpace(l) != "" {
			inputs = append(inputs, l)
		}
	}
	if len(inputs) != 2 {
		t.Fatalf("stop hook ran %d times, want 2 (refused, then accepted):\n%s", len(inputs), data)
	}
	if strings.Contains(inputs[0], `"stop_hook_active":true`) || !strings.Contains(inputs[0], `"final_output":"First answer."`) {
		t.Errorf("first stop input: %s", inputs[0])
	}
	if !strings.Contains(inputs[1], `"stop_hook_active":true`) || !strings.Contains(inputs[1], `"final_output":"Linted; done."`) {
		t.Errorf("second stop input: want stop_hook_active and the new answer: %s", inputs[1])
	}
}
