package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/transcript"
)

func TestSessionsList(t *testing.T) {
	e := newStoreEnv(t)
	if code := e.run(e.repoA, "sessions"); code != 0 || !strings.Contains(e.errb.String(), "no sessions in") {
		t.Fatalf("empty: %d %q", code, e.errb)
	}
	e.seedStandard()
	e.stdoutTTY = true
	if code := e.run(e.repoA, "sessions"); code != 0 {
		t.Fatal(e.errb)
	}
	for _, re := range []string{`ID\s+TITLE\s+RUNS\s+TOKENS\s+UPDATED`, `ses_a\s+fix the tests\s+1\s+12.3k\s+just now`, `lovia run -s ID`} {
		if !regexp.MustCompile(re).MatchString(e.out.String()) {
			t.Errorf("table lacks %s:\n%s", re, e.out)
		}
	}
	if strings.Contains(e.out.String(), "ses_b") {
		t.Errorf("another repository's session listed:\n%s", e.out)
	}
	e.stdoutTTY = false
	if code := e.run(e.repoA, "sessions", "list", "--all"); code != 0 {
		t.Fatal(e.errb)
	}
	if !regexp.MustCompile(`(?m)^ses_b\tother repo\t1\t10\t\d{4}-`).MatchString(e.out.String()) || !strings.Contains(e.out.String(), "ses_a\t") {
		t.Errorf("--all, not a terminal:\n%s", e.out)
	}
	if code := e.run(e.repoB, "sessions", "--json"); code != 0 {
		t.Fatal(e.errb)
	}
	var list []struct {
		ID   string `json:"session_id"`
		Repo string `json:"repo"`
		Runs int    `json:"runs"`
	}
	if err := json.Unmarshal(e.out.Bytes(), &list); err != nil || len(list) != 1 || list[0].ID != "ses_b" || list[0].Repo != e.repoB {
		t.Errorf("--json from repo B: %v %s", err, e.out)
	}
}

func TestSessionsShow(t *testing.T) {
	e := newStoreEnv(t)
	e.seedStandard()
	if code := e.run(e.repoA, "sessions", "show", "ses_a"); code != 0 {
		t.Fatal(e.errb)
	}
	got := e.out.String()
	for _, want := range []string{
		"ses_a — fix the tests", "── run run_a1", "> fix the tests", "Running the tests.",
		"(thinking) look at the tests first",
		`• shell {"command":"go test ./... > out.txt"}`, "✓ ok pkg 0.1s", "• read_file", "✗ no such file", "All tests pass.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("show lacks %q:\n%s", want, got)
		}
	}
	// The failed run has no session segment: only completed runs join the conversation.
	if strings.Contains(got, "and the docs") {
		t.Errorf("a failed run's input is shown:\n%s", got)
	}
	if code := e.run(e.repoA, "sessions", "show", "ses_a", "--json"); code != 0 {
		t.Fatal(e.errb)
	}
	var d sessionData
	if err := json.Unmarshal(e.out.Bytes(), &d); err != nil || d.Session.ID != "ses_a" || len(d.Runs) != 1 || len(d.Entries) != 8 {
		t.Errorf("--json: %v %+v", err, d)
	}
	if code := e.run(e.repoA, "sessions", "show", "ses_zzz"); code != 2 || !strings.Contains(e.errb.String(), "ses_zzz") {
		t.Errorf("unknown: %d %s", code, e.errb)
	}
}

func TestSessionsExport(t *testing.T) {
	e := newStoreEnv(t)
	e.seedStandard()
	if code := e.run(e.repoA, "sessions", "export", "ses_a"); code != 0 {
		t.Fatal(e.errb)
	}
	lines := strings.Split(strings.TrimRight(e.out.String(), "\n"), "\n")
	want := sampleEntries("run_a1", "fix the tests")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), e.out)
	}
	for i, l := range lines {
		var en transcript.Entry
		if err := json.Unmarshal([]byte(l), &en); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if en.Type != want[i].Type || en.Text != want[i].Text || en.CallID != want[i].CallID {
			t.Errorf("line %d = %+v, want %+v", i+1, en, want[i])
		}
	}

	out := filepath.Join(t.TempDir(), "conv.md")
	if code := e.run(e.repoA, "sessions", "export", "ses_a", "--format", "md", "-o", out); code != 0 {
		t.Fatal(e.errb)
	}
	if e.out.Len() != 0 || !strings.Contains(e.errb.String(), "exported session ses_a (8 entries) to "+out) {
		t.Errorf("stdout %q stderr %q", e.out, e.errb)
	}
	md, _ := os.ReadFile(out)
	for _, want := range []string{
		"# fix the tests\n", "- session: `ses_a`", "## User\n\nfix the tests\n", "<details><summary>Reasoning</summary>",
		"## Assistant\n\nRunning the tests.", "**Tool call** `shell` (`call_1`)\n\n```json\n{\n  \"command\": \"go test ./... > out.txt\"\n}\n```",
		// The result holds ``` so its fence is longer.
		"**Result** of `shell` (`call_1`)\n\n````\nok  \tpkg\t0.1s\n```inner fence```\n````", "**Error** of `read_file`",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}

	if code := e.run(e.repoA, "sessions", "export", "ses_a", "--format", "html"); code != 2 || !strings.Contains(e.errb.String(), "--format jsonl or --format md") {
		t.Errorf("bad format: %d %s", code, e.errb)
	}
	if code := e.run(e.repoA, "sessions", "export", "ses_a", "-o", filepath.Join(t.TempDir(), "no", "such", "dir", "x.jsonl")); code != 2 || !strings.Contains(e.errb.String(), "cannot write") {
		t.Errorf("unwritable -o: %d %s", code, e.errb)
	}
}

func TestSessionsRm(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		stdinTTY bool
		stdin    string
		code     int
		deleted  bool
		stderr   string
	}{
		{"no terminal, no --yes", nil, false, "y\n", 2, false, "pass --yes"},
		{"terminal, answered no", nil, true, "n\n", 1, false, "not deleted"},
		{"terminal, empty answer", nil, true, "\n", 1, false, "not deleted"},
		{"terminal, answered yes", nil, true, "yes\n", 0, true, "deleted session ses_a (1 run)"},
		{"--yes", []string{"--yes"}, false, "", 0, true, "deleted session ses_a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newStoreEnv(t)
			e.seedStandard()
			e.stdinTTY, e.stdin = tt.stdinTTY, tt.stdin
			code := e.run(e.repoA, append([]string{"sessions", "rm", "ses_a"}, tt.args...)...)
			if code != tt.code || !strings.Contains(e.errb.String(), tt.stderr) {
				t.Fatalf("exit %d stderr %q, want %d and %q", code, e.errb, tt.code, tt.stderr)
			}
			e.stdinTTY = false
			e.run(e.repoA, "runs", "--all")
			gone := !strings.Contains(e.out.String(), "run_a1") && !strings.Contains(e.out.String(), "run_a2")
			if gone != tt.deleted || !strings.Contains(e.out.String(), "run_b1") {
				t.Errorf("runs after rm (deleted=%v):\n%s", tt.deleted, e.out)
			}
		})
	}
}

func TestFenced(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"x", "```\nx\n```\n"},
		{"a ``` b", "````\na ``` b\n````\n"},
		{"````\n", "`````\n````\n`````\n"},
	} {
		if got := fenced("", tt.in); got != tt.want {
			t.Errorf("fenced(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
