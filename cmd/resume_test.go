package cmd

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/usage"
)

func TestResumeFlags(t *testing.T) {
	tests := []struct {
		args                  []string
		output, approve       string
		outputSet, approveSet bool
	}{
		{[]string{"resume", "r1"}, "", "", false, false},
		{[]string{"resume", "r1", "--output", "json"}, "json", "", true, false},
		{[]string{"resume", "--approve", "all", "r1"}, "", "all", false, true},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			f, _, _ := testFactory("", false)
			root := NewRootCmd(f)
			for _, c := range root.Commands() {
				if c.Name() == "resume" {
					root.RemoveCommand(c)
				}
			}
			var got *ResumeOptions
			root.AddCommand(NewCmdResume(f, func(o *ResumeOptions) error { got = o; return nil }))
			root.SetArgs(tt.args)
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			if got.RunID != "r1" || got.Output != tt.output || got.Approve != tt.approve || got.outputSet != tt.outputSet || got.approveSet != tt.approveSet {
				t.Errorf("got %+v", got)
			}
		})
	}
}

func TestResumeErrorsInProcess(t *testing.T) {
	e := newStoreEnv(t)
	if code := e.run(e.repoA, "resume"); code != 2 || !strings.Contains(e.errb.String(), "lovia runs") {
		t.Errorf("no id: %d %s", code, e.errb)
	}
	if code := e.run(e.repoA, "resume", "a", "b"); code != 2 {
		t.Errorf("two ids: %d %s", code, e.errb)
	}
	if code := e.run(e.repoA, "resume", "run_nope"); code != 2 || !strings.Contains(e.errb.String(), `no run "run_nope" in `+e.dbPath()) ||
		!strings.Contains(e.errb.String(), "hint: `lovia runs --all` lists the runs") {
		t.Errorf("unknown id: %d %s", code, e.errb)
	}
	// A running head written by this (live) process: resume refuses to run it twice.
	e.seedRun(e.repoA, "ses_a", "run_live", store.StatusRunning, sampleEntries("run_live", "x")[:3], usage.Usage{})
	if code := e.run(e.repoA, "resume", "run_live"); code != 2 || !strings.Contains(e.errb.String(), "is being run by another lovia process") ||
		!strings.Contains(e.errb.String(), "kill -INT") {
		t.Errorf("held: %d %s", code, e.errb)
	}
	// The run's working directory is gone.
	e.seedRun(filepath.Join(e.home, "gone"), "ses_g", "run_gone", store.StatusFailed, sampleEntries("run_gone", "x")[:3], usage.Usage{})
	if code := e.run("", "resume", "run_gone"); code != 2 || !strings.Contains(e.errb.String(), "no longer exists") || !strings.Contains(e.errb.String(), "-C DIR") {
		t.Errorf("gone cwd: %d %s", code, e.errb)
	}
}

// TestResumeInProcess: a run that failed (its script ran out) resumes with its own
// model, approvals, output format and working directory, after the script is fixed;
// the tool call that already has a result is not run again.
func TestResumeInProcess(t *testing.T) {
	e := newStoreEnv(t)
	script := filepath.Join(e.home, "s.yaml")
	turn1 := "turns:\n  - text: working\n    tool_calls:\n      - {name: shell, args: {command: \"echo ran >> side.log\"}}\n"
	if err := os.WriteFile(script, []byte(turn1), 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	code := e.run(e.repoA, "run", "--run-id", "job", "-m", "script:"+script, "--approve", "all", "--output", "json", "go")
	if code != 1 || !strings.Contains(e.errb.String(), "add a turn") {
		t.Fatalf("first run: exit %d: %s", code, e.errb)
	}
	t.Logf("run took %v", time.Since(t0))
	if err := os.WriteFile(script, []byte(turn1+"  - text: finished\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// From another directory (the test's), with no model configured anywhere.
	t0 = time.Now()
	if code := e.run("", "resume", "job", "--approve", "all"); code != 0 {
		t.Fatalf("resume: exit %d: %s", code, e.errb)
	}
	if strings.Contains(e.errb.String(), "overrides") {
		t.Errorf("a flag equal to the recorded one is not an override: %s", e.errb)
	}
	t.Logf("resume took %v", time.Since(t0))
	var out struct{ Status, Output string }
	if err := json.Unmarshal(e.out.Bytes(), &out); err != nil || out.Status != "completed" || out.Output != "finished" {
		t.Fatalf("output (format restored?) %v: %s", err, e.out)
	}
	side, _ := os.ReadFile(filepath.Join(e.repoA, "side.log"))
	if string(side) != "ran\n" {
		t.Errorf("side effects in the run's directory: %q", side)
	}
	// Replay with overrides: announced, and the stored result is printed.
	if code := e.run(e.repoB, "resume", "job", "--output", "text", "--approve", "none", "--policy", "readonly"); code != 0 {
		t.Fatalf("replay: %d %s", code, e.errb)
	}
	for _, want := range []string{"--policy overrides the run's coding", "--output overrides the run's json", "--approve overrides the run's all"} {
		if !strings.Contains(e.errb.String(), want) {
			t.Errorf("stderr lacks %q: %s", want, e.errb)
		}
	}
	if e.out.String() != "finished\n" {
		t.Errorf("replay stdout %q", e.out)
	}
	if code := e.run(e.repoB, "-s", "ses_other", "resume", "job"); code != 0 || !strings.Contains(e.errb.String(), "--session/--continue ignored") {
		t.Errorf("resume -s: %d %s", code, e.errb)
	}
}

// TestResumeForeignClaim: a run claimed by a process on another machine is refused
// with a --force hint; --force breaks the claim and resumes.
func TestResumeForeignClaim(t *testing.T) {
	e := newStoreEnv(t)
	e.seedRun(e.repoA, "ses_a", "run_x", store.StatusRunning, sampleEntries("run_x", "x")[:3], usage.Usage{})
	db, err := sql.Open("sqlite", e.dbPath())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE run_claims SET host = 'build-box-7', pid = 4242 WHERE run_id = 'run_x'`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if code := e.run(e.repoA, "resume", "run_x"); code != 2 || !strings.Contains(e.errb.String(), "on another machine") ||
		!strings.Contains(e.errb.String(), "lovia resume run_x --force") {
		t.Fatalf("foreign claim: %d %s", code, e.errb)
	}
	// With --force the claim is gone; the seeded run's relative script path then
	// fails to resolve, which proves the resume got past the claim.
	code := e.run(e.repoA, "resume", "run_x", "--force")
	if strings.Contains(e.errb.String(), "another machine") || !strings.Contains(e.errb.String(), "s.yaml") {
		t.Fatalf("--force: %d %s", code, e.errb)
	}
}
