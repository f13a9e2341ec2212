package e2e

import (
	"strings"
	"testing"
)

// TestHonestUsageErrors: mistakes on the command line get an error that names the
// cause and the fix, instead of doing something else.
func TestHonestUsageErrors(t *testing.T) {
	e := newEnv(t)
	e.write("script.yaml", "turns:\n  - text: first answer\n")
	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"mistyped command", []string{"resme"}, 2, []string{`unknown command "resme"`, "lovia resume", "lovia chat resme"}},
		{"unknown word", []string{"frobnicate"}, 2, []string{`unknown command "frobnicate"`, "lovia chat frobnicate"}},
		{"negative max turns", []string{"run", "-m", "script:script.yaml", "--max-turns", "-5", "go"}, 2, []string{"--max-turns", "negative", "positive"}},
		{"run id with a newline", []string{"run", "-m", "script:script.yaml", "--run-id", "a\nb", "go"}, 2, []string{"not a valid run id", "letters, digits"}},
		{"run id with a tab", []string{"run", "-m", "script:script.yaml", "--run-id", "a\tb", "go"}, 2, []string{"not a valid run id"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.run(nil, c.args...)
			if r.code != c.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, c.code, r.stdout, r.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
		})
	}
}

// TestRunIDConflict: a completed run id re-issued with a different prompt is an
// error that says so (not a silent replay of the old answer).
func TestRunIDConflict(t *testing.T) {
	e := newEnv(t)
	e.write("script.yaml", "turns:\n  - text: first answer\n")
	if r := e.run(nil, "run", "-m", "script:script.yaml", "--run-id", "job-7", "go"); r.code != 0 {
		t.Fatalf("first run: exit %d: %s", r.code, r.stderr)
	}
	r := e.run(nil, "run", "-m", "script:script.yaml", "--run-id", "job-7", "do something else")
	if r.code != 2 || !strings.Contains(r.stderr, "different prompt") || !strings.Contains(r.stderr, "--run-id") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "first answer") {
		t.Errorf("the old answer was replayed for a new prompt: %s", r.stdout)
	}
}
