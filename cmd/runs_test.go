package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/app"
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/store/sqlite"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

// storeEnv is a private home with a database and two working directories (two
// "repositories"), driven through the whole command tree with buffers.
type storeEnv struct {
	t          *testing.T
	home       string
	repoA      string
	repoB      string
	out, errb  *bytes.Buffer
	stdin      string
	stdinTTY   bool
	stdoutTTY  bool
	extraEnv   map[string]string
	lastDBPath string
}

func newStoreEnv(t *testing.T) *storeEnv {
	t.Helper()
	base := t.TempDir()
	e := &storeEnv{t: t, home: filepath.Join(base, "home"), repoA: filepath.Join(base, "a"), repoB: filepath.Join(base, "b")}
	for _, d := range []string{e.home, e.repoA, e.repoB, filepath.Join(e.home, ".config", "lovia")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The sandbox probe would re-execute the test binary as its helper.
	if err := os.WriteFile(filepath.Join(e.home, ".config", "lovia", "config.yaml"), []byte("workspace:\n  sandbox: \"off\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *storeEnv) getenv(k string) string {
	switch k {
	case "LOVIA_HOME":
		return filepath.Join(e.home, "data")
	case "HOME":
		return e.home
	case "XDG_CONFIG_HOME":
		return filepath.Join(e.home, ".config")
	}
	return e.extraEnv[k]
}

func (e *storeEnv) dbPath() string { return filepath.Join(e.home, "data", "lovia.db") }

// run executes lovia args in dir (with -C; "" for none) and returns the exit code.
func (e *storeEnv) run(dir string, args ...string) int {
	e.t.Helper()
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	e.out, e.errb = &bytes.Buffer{}, &bytes.Buffer{}
	f := &Factory{
		IO:     &IOStreams{In: strings.NewReader(e.stdin), Out: e.out, ErrOut: e.errb, StdinTTY: e.stdinTTY, StdoutTTY: e.stdoutTTY},
		Getenv: e.getenv, Common: &CommonFlags{}, NewApp: app.New, Exit: func(int) {},
	}
	return Run(context.Background(), f, args)
}

// seedRun writes a run (checkpoint) and, when completed, its session segment.
func (e *storeEnv) seedRun(repo, sessionID, runID string, status store.Status, entries []transcript.Entry, u usage.Usage) {
	e.t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, e.dbPath())
	if err != nil {
		e.t.Fatal(err)
	}
	defer db.Close()
	if err := db.Sessions().EnsureSession(ctx, sessionID, sqlite.SessionMeta{Cwd: repo, Repo: repo}); err != nil {
		e.t.Fatal(err)
	}
	settings, _ := json.Marshal(app.Settings{Model: "script:s.yaml", Preset: "coder", Policy: "coding", Cwd: repo, Repo: repo})
	h := store.Head{Status: status, SessionID: sessionID, Agent: "coder", EntryAgent: "coder", Usage: u, Turns: 2,
		Settings: settings, StartedAt: time.Now().Add(-time.Hour), UpdatedAt: time.Now()}
	if status == store.StatusCompleted {
		h.Result = &store.RunRecord{Output: "all done", FinishReason: "stop", FinalAgent: "coder"}
	}
	if status == store.StatusFailed {
		h.Error, h.ErrorKind = "provider said no", "provider"
	}
	if err := db.Checkpoints().Append(ctx, runID, entries, h); err != nil {
		e.t.Fatal(err)
	}
	if status == store.StatusCompleted {
		if err := db.Sessions().Append(ctx, sessionID, runID, entries, nil); err != nil {
			e.t.Fatal(err)
		}
	}
}

func sampleEntries(runID, prompt string) []transcript.Entry {
	in := transcript.UserInput(prompt)
	in.RunID = runID
	call := transcript.ToolCall("call_1", "shell", json.RawMessage(`{"command":"go test ./... > out.txt"}`))
	return []transcript.Entry{
		in,
		transcript.Reasoning("look at the tests first"),
		transcript.AssistantText("Running the tests."),
		call,
		transcript.ToolResult("call_1", "shell", "ok  \tpkg\t0.1s\n```inner fence```", false),
		transcript.ToolCall("call_2", "read_file", json.RawMessage(`{"path":"main.go"}`)),
		transcript.ToolResult("call_2", "read_file", "no such file", true),
		transcript.AssistantText("All tests pass."),
	}
}

// seedStandard: two completed runs and one failed in repo A, one completed in repo B.
func (e *storeEnv) seedStandard() {
	e.seedRun(e.repoA, "ses_a", "run_a1", store.StatusCompleted, sampleEntries("run_a1", "fix the tests"), usage.Usage{InputTokens: 12000, OutputTokens: 345})
	e.seedRun(e.repoA, "ses_a", "run_a2", store.StatusFailed, sampleEntries("run_a2", "and the docs")[:4], usage.Usage{InputTokens: 900, OutputTokens: 10})
	e.seedRun(e.repoB, "ses_b", "run_b1", store.StatusCompleted, sampleEntries("run_b1", "other repo"), usage.Usage{InputTokens: 5, OutputTokens: 5})
}

func TestRunsList(t *testing.T) {
	e := newStoreEnv(t)
	if code := e.run(e.repoA, "runs"); code != 0 || !strings.Contains(e.errb.String(), "no runs in "+e.repoA) {
		t.Fatalf("empty: exit %d stderr %q", code, e.errb)
	}
	e.seedStandard()
	tests := []struct {
		name    string
		tty     bool
		args    []string
		want    []*regexp.Regexp
		notWant []string
	}{
		{"table in a terminal", true, []string{"runs"}, []*regexp.Regexp{
			regexp.MustCompile(`ID\s+STATUS\s+AGENT\s+TURNS\s+TOKENS\s+COST\s+MODEL\s+UPDATED`),
			regexp.MustCompile(`run_a1\s+completed\s+coder\s+2\s+12.3k\s+\$0\s+script:s.yaml\s+just now`),
			regexp.MustCompile(`run_a2\s+failed\s+coder\s+2\s+910\s+`),
		}, []string{"run_b1"}},
		{"tab-separated otherwise", false, []string{"runs", "list"}, []*regexp.Regexp{
			regexp.MustCompile(`(?m)^run_a1\tcompleted\tcoder\t2\t12345\tscript:s.yaml\t\d{4}-\d\d-\d\dT`),
		}, []string{"ID\t", "run_b1"}},
		{"all repositories", false, []string{"runs", "--all"}, []*regexp.Regexp{regexp.MustCompile(`run_b1`), regexp.MustCompile(`run_a1`)}, nil},
		{"status filter", false, []string{"runs", "--status", "failed"}, []*regexp.Regexp{regexp.MustCompile(`run_a2`)}, []string{"run_a1"}},
		{"limit", false, []string{"runs", "--all", "-L", "1"}, []*regexp.Regexp{regexp.MustCompile(`^run_\w+\t[^\n]*\n$`)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.stdoutTTY = tt.tty
			if code := e.run(e.repoA, tt.args...); code != 0 {
				t.Fatalf("exit %d: %s", code, e.errb)
			}
			for _, re := range tt.want {
				if !re.MatchString(e.out.String()) {
					t.Errorf("output lacks %s:\n%s", re, e.out)
				}
			}
			for _, s := range tt.notWant {
				if strings.Contains(e.out.String(), s) {
					t.Errorf("output has %q:\n%s", s, e.out)
				}
			}
		})
	}
	e.stdoutTTY = false

	if code := e.run(e.repoA, "runs", "--json"); code != 0 {
		t.Fatal(e.errb)
	}
	var runs []sqlite.RunInfo
	if err := json.Unmarshal(e.out.Bytes(), &runs); err != nil || len(runs) != 2 {
		t.Fatalf("--json: %v %s", err, e.out)
	}
	byID := map[string]sqlite.RunInfo{}
	for _, r := range runs {
		byID[r.ID] = r
	}
	if r := byID["run_a1"]; r.Status != store.StatusCompleted || r.Usage.InputTokens != 12000 || r.SessionID != "ses_a" || r.Model != "script:s.yaml" || r.Entries != 8 {
		t.Errorf("json run_a1: %+v", r)
	}
	if r := byID["run_a2"]; r.Status != store.StatusFailed || r.Error != "provider said no" {
		t.Errorf("json run_a2: %+v", r)
	}

	if code := e.run(e.repoA, "runs", "--status", "paused"); code != 2 || !strings.Contains(e.errb.String(), "hint:") {
		t.Errorf("bad status: exit %d %s", code, e.errb)
	}
	if code := e.run(e.repoA, "runs", "frobnicate"); code != 2 {
		t.Errorf("unknown subcommand: exit %d", code)
	}
}

func TestRunsShow(t *testing.T) {
	e := newStoreEnv(t)
	e.seedStandard()
	if code := e.run(e.repoA, "runs", "show", "run_a2"); code != 0 {
		t.Fatalf("exit %d: %s", code, e.errb)
	}
	for _, want := range []string{
		"run      run_a2", "status   failed — continue with: lovia resume run_a2", "session  ses_a",
		"model    script:s.yaml", "policy   coding", "error    provider said no [provider]",
		"900 in, 10 out", "entries (4):", "1  user       and the docs",
		`4  call       shell {"command":"go test ./... > out.txt"}  [call_1]  (no result yet: runs again on resume)`,
	} {
		if !strings.Contains(e.out.String(), want) {
			t.Errorf("show lacks %q:\n%s", want, e.out)
		}
	}
	if code := e.run(e.repoA, "runs", "show", "run_a1", "--json"); code != 0 {
		t.Fatal(e.errb)
	}
	var d RunDetail
	if err := json.Unmarshal(e.out.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	if d.Status != store.StatusCompleted || d.Result == nil || d.Result.Output != "all done" || len(d.Entries) != 8 || d.Entries[3].CallID != "call_1" {
		t.Errorf("json %+v", d)
	}
	if code := e.run(e.repoA, "runs", "show", "run_nope"); code != 2 || !strings.Contains(e.errb.String(), "hint:") {
		t.Errorf("unknown run: exit %d %s", code, e.errb)
	}
	if code := e.run(e.repoA, "runs", "show"); code != 2 {
		t.Errorf("no id: exit %d", code)
	}
}

func TestCompletion(t *testing.T) {
	e := newStoreEnv(t)
	e.seedStandard()
	e.seedRun(e.repoA, "ses_a", "run_a3", store.StatusInterrupted, sampleEntries("run_a3", "third")[:3], usage.Usage{})
	tests := []struct {
		args    []string
		want    []string
		notWant []string
	}{
		{[]string{"resume", ""}, []string{"run_a2\tfailed", "run_a3\tinterrupted"}, []string{"run_a1", "run_b1"}},
		{[]string{"runs", "show", "run_a"}, []string{"run_a1\tcompleted · script:s.yaml", "run_a2", "run_a3"}, []string{"run_b1"}},
		{[]string{"sessions", "show", ""}, []string{"ses_a\tfix the tests", "ses_b\tother repo"}, nil},
		{[]string{"sessions", "rm", "ses_b"}, []string{"ses_b"}, []string{"ses_a"}},
		{[]string{"sessions", "export", "ses_a", ""}, nil, []string{"ses_"}},
		{[]string{"run", "--session", ""}, []string{"ses_a", "ses_b"}, nil},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			if code := e.run(e.repoA, append([]string{"__complete"}, tt.args...)...); code != 0 {
				t.Fatalf("exit %d: %s", code, e.errb)
			}
			for _, w := range tt.want {
				if !strings.Contains(e.out.String(), w) {
					t.Errorf("completions lack %q:\n%s", w, e.out)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(e.out.String(), w) {
					t.Errorf("completions have %q:\n%s", w, e.out)
				}
			}
		})
	}
}

func TestCompactAndAgo(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		n    int
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1k"}, {12345, "12.3k"}, {2_500_000, "2.5M"}} {
		if got := compact(tt.n); got != tt.want {
			t.Errorf("compact(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{{10 * time.Second, "just now"}, {5 * time.Minute, "5m ago"}, {3 * time.Hour, "3h ago"}, {50 * time.Hour, "2d ago"}} {
		if got := ago(now, now.Add(-tt.d)); got != tt.want {
			t.Errorf("ago(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
	if got := ago(now, now.Add(-60*24*time.Hour)); !regexp.MustCompile(`^2026-10-0[12]$`).MatchString(got) {
		t.Errorf("old date %q", got)
	}
	if got := argsText(json.RawMessage(`{"command":"a > b && c"}`)); got != `{"command":"a > b && c"}` {
		t.Errorf("argsText %q", got)
	}
}

// TestRunsListRepoWindow: the repository's runs are found even behind many newer
// runs of other repositories.
func TestRunsListRepoWindow(t *testing.T) {
	e := newStoreEnv(t)
	e.seedRun(e.repoA, "ses_a", "run_old_a", store.StatusCompleted, sampleEntries("run_old_a", "old"), usage.Usage{})
	ctx := context.Background()
	db, err := sqlite.Open(ctx, e.dbPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Sessions().EnsureSession(ctx, "ses_b", sqlite.SessionMeta{Cwd: e.repoB, Repo: e.repoB}); err != nil {
		t.Fatal(err)
	}
	for i := range 130 {
		id := "run_b_" + strconv.Itoa(i)
		if err := db.Checkpoints().Append(ctx, id, sampleEntries(id, "b")[:1], store.Head{Status: store.StatusFailed, SessionID: "ses_b", Agent: "coder"}); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if code := e.run(e.repoA, "runs", "-L", "1"); code != 0 || !strings.HasPrefix(e.out.String(), "run_old_a\t") || strings.Count(e.out.String(), "\n") != 1 {
		t.Fatalf("exit %d: %q %s", code, e.out, e.errb)
	}
	if code := e.run(e.repoB, "runs", "-L", "0"); code != 0 || strings.Count(e.out.String(), "\n") != 130 {
		t.Errorf("repo B, no limit: %d lines", strings.Count(e.out.String(), "\n"))
	}
}

func TestIDPrefixes(t *testing.T) {
	e := newStoreEnv(t)
	e.seedStandard()
	tests := []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"runs", "show", "run_b"}, 0, "run      run_b1", ""},
		{[]string{"runs", "show", "run_a"}, 2, "", `run id "run_a" is ambiguous: 2 ids start with it (run_a1, run_a2)`},
		{[]string{"runs", "show", "zzz"}, 2, "", "run zzz not found"},
		{[]string{"sessions", "show", "ses_b"}, 0, "ses_b — other repo", ""},
		{[]string{"sessions", "export", "ses_"}, 2, "", "type more of the id"},
		{[]string{"resume", "run_"}, 2, "", "ambiguous"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code := e.run(e.repoA, tt.args...)
			if code != tt.code || !strings.Contains(e.out.String(), tt.stdout) || !strings.Contains(e.errb.String(), tt.stderr) {
				t.Errorf("exit %d\nstdout %s\nstderr %s", code, e.out, e.errb)
			}
		})
	}
	e.seedRun(e.repoA, "ses_cccc", "run_c1", store.StatusCompleted, sampleEntries("run_c1", "c"), usage.Usage{})
	if code := e.run(e.repoA, "sessions", "rm", "ses_cc", "--yes"); code != 0 || !strings.Contains(e.errb.String(), "deleted session ses_cccc") {
		t.Errorf("rm by prefix: %d %s", code, e.errb)
	}
}

func TestRunAndSessionIDCompletion(t *testing.T) {
	e := newStoreEnv(t)
	e.seedStandard()
	tests := []struct {
		args       []string
		want, deny []string
	}{
		{[]string{"__complete", "runs", "show", "run_a"}, []string{"run_a1"}, []string{"run_b"}},
		{[]string{"__complete", "resume", "run_"}, nil, []string{"run_a1\t"}}, // completed runs are not resumable
		{[]string{"__complete", "sessions", "show", "ses_"}, []string{"ses_a"}, nil},
		{[]string{"__complete", "sessions", "show", "ses_a", ""}, nil, []string{"ses_"}}, // one id only
	}
	for _, tc := range tests {
		args := append([]string{"__complete", "-C", e.repoA}, tc.args[1:]...)
		if code := e.run("", args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, e.errb)
		}
		got := e.out.String()
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%v: %q lacks %q", tc.args, got, w)
			}
		}
		for _, d := range tc.deny {
			if strings.Contains(got, d) {
				t.Errorf("%v: %q offers %q", tc.args, got, d)
			}
		}
	}
}
