package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/app"
	"github.com/lovia-dev/lovia/internal/eval"
)

// shippedEvals is the offline cases file in testdata/evals.
func shippedEvals(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "testdata", "evals", "smoke.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// copyDir copies the files of src (one level of subdirectories) to dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestEvalShippedCases(t *testing.T) {
	e := newStoreEnv(t)
	if code := e.run(e.repoA, "eval", shippedEvals(t)); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, e.out, e.errb)
	}
	out := e.out.String()
	for _, name := range []string{"greeting", "plans-with-todos", "loads-skill", "json-report", "explores"} {
		if !strings.Contains(out, name) {
			t.Errorf("report lacks case %s:\n%s", name, out)
		}
	}
	if !strings.Contains(out, "5 passed, 0 failed") {
		t.Errorf("report:\n%s", out)
	}

	// --json: every case passed, every check of every sample passed.
	if code := e.run(e.repoA, "eval", "--json", shippedEvals(t)); code != 0 {
		t.Fatalf("--json exit %d", code)
	}
	var rep struct {
		Passed, Failed int
		Cases          []struct {
			Name    string
			Pass    bool
			Samples []struct {
				Checks []struct {
					Name string
					Pass bool
				}
			}
		}
	}
	if err := json.Unmarshal(e.out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, c := range rep.Cases {
		for _, s := range c.Samples {
			for _, ch := range s.Checks {
				kinds[strings.Fields(ch.Name)[0]] = true
				if !ch.Pass {
					t.Errorf("%s: check %s failed", c.Name, ch.Name)
				}
			}
		}
	}
	if rep.Passed != 5 || rep.Failed != 0 {
		t.Errorf("passed %d failed %d", rep.Passed, rep.Failed)
	}
	for _, want := range []string{"contains", "regex", "tool_called", "max_turns", "no_error", "all_of", "any_of", "matches", "weighted"} {
		found := false
		for k := range kinds {
			found = found || k == want || strings.HasPrefix(k, want+"(")
		}
		if !found {
			t.Errorf("the shipped cases do not exercise %s (have %v)", want, kinds)
		}
	}
}

func TestEvalBaselineRegression(t *testing.T) {
	e := newStoreEnv(t)
	dir := filepath.Join(t.TempDir(), "evals")
	copyDir(t, filepath.Dir(shippedEvals(t)), dir)
	cases := filepath.Join(dir, "smoke.yaml")
	base := filepath.Join(dir, "baseline.json")

	if code := e.run(e.repoA, "eval", cases, "--out", base); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, e.out)
	}
	if _, err := os.Stat(base); err != nil {
		t.Fatalf("--out did not write the baseline: %v", err)
	}
	// Same cases again: nothing changed, exit 0.
	if code := e.run(e.repoA, "eval", cases, "--baseline", base); code != 0 || !strings.Contains(e.out.String(), "no change against the baseline") {
		t.Fatalf("unchanged: exit %d\n%s", code, e.out)
	}

	// The greeting model now answers differently: that case regresses.
	writeFile(t, filepath.Join(dir, "scripts", "greeting.yaml"), "turns:\n  - text: \"Goodbye.\"\n")
	code := e.run(e.repoA, "eval", cases, "--baseline", base, "--save", filepath.Join(dir, "second.json"))
	if code != 1 {
		t.Fatalf("regression: exit %d, want 1\n%s", code, e.out)
	}
	out := e.out.String()
	if !strings.Contains(out, "regressed") || !strings.Contains(out, "greeting") || !strings.Contains(out, "100% → 0%") {
		t.Errorf("diff does not name the regression:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "second.json")); err != nil {
		t.Errorf("--save (alias of --out) did not write: %v", err)
	}

	// Fixed again, compared with the failing report: an improvement, exit 0.
	writeFile(t, filepath.Join(dir, "scripts", "greeting.yaml"), "turns:\n  - text: \"Hello! I am lovia.\"\n")
	if code := e.run(e.repoA, "eval", cases, "--baseline", filepath.Join(dir, "second.json")); code != 0 || !strings.Contains(e.out.String(), "improved") {
		t.Fatalf("improvement: exit %d\n%s", code, e.out)
	}
}

func TestEvalProgressOnTerminal(t *testing.T) {
	e := newStoreEnv(t)
	var out, errb bytes.Buffer
	f := &Factory{
		IO:     &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb, StderrTTY: true},
		Getenv: e.getenv, Common: &CommonFlags{}, NewApp: app.New, Exit: func(int) {},
	}
	if code := Run(context.Background(), f, []string{"-C", e.repoA, "eval", "--concurrency", "1", shippedEvals(t)}); code != 0 {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
	if len(lines) != 6 || lines[0] != "[1/6] greeting ✓" || lines[5] != "[6/6] explores #2 ✓" {
		t.Fatalf("progress lines:\n%s", errb.String())
	}
	// Not a terminal: no progress at all.
	e.run(e.repoA, "eval", shippedEvals(t))
	if e.errb.Len() != 0 {
		t.Errorf("progress on a non-terminal stderr: %q", e.errb)
	}
}

func TestEvalProgressLine(t *testing.T) {
	tests := []struct {
		done, total int
		r           eval.SampleResult
		want        string
	}{
		{1, 2, eval.SampleResult{Case: "greeting", Pass: true}, "[1/2] greeting ✓"},
		{2, 4, eval.SampleResult{Case: "explores", Sample: 1, Pass: true}, "[2/4] explores #2 ✓"},
		{3, 4, eval.SampleResult{Case: "explores", Checks: []eval.CheckResult{
			{Name: "contains \"x\"", Verdict: eval.Verdict{Pass: true}},
			{Name: "max_turns 2", Verdict: eval.Verdict{Detail: "took 3 turns (max 2)"}},
		}}, "[3/4] explores ✗  max_turns 2: took 3 turns (max 2)"},
		{4, 4, eval.SampleResult{Case: "boom", Error: "provider said\nno"}, "[4/4] boom ✗  provider said no"},
	}
	for _, tt := range tests {
		if got := progressLine(tt.done, tt.total, tt.r); got != tt.want {
			t.Errorf("progressLine = %q, want %q", got, tt.want)
		}
	}
}
