package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

const upkeepScript = `
turns:
  - text: "Reading it."
    tool_calls:
      - name: read_file
        args: {path: big.txt}
  - text: "Read."
`

type upkeepEntry struct {
	Type      string `json:"type"`
	RunID     string `json:"run_id"`
	Text      string `json:"text"`
	CallID    string `json:"call_id"`
	Truncated bool   `json:"truncated"`
}

// upkeepSession makes a session of two runs that each read big.txt and returns its id.
func upkeepSession(t *testing.T, e *env) string {
	t.Helper()
	var b strings.Builder
	for i := range 400 {
		fmt.Fprintf(&b, "line %d of a long file that fills the context\n", i)
	}
	e.write("big.txt", b.String())
	e.write("script.yaml", upkeepScript)
	if r := e.run(nil, "run", "-m", "script:script.yaml", "first question"); r.code != 0 {
		t.Fatalf("run 1: exit %d\n%s", r.code, r.stderr)
	}
	if r := e.run(nil, "run", "-c", "-m", "script:script.yaml", "second question"); r.code != 0 {
		t.Fatalf("run 2: exit %d\n%s", r.code, r.stderr)
	}
	r := e.run(nil, "sessions", "--json")
	var list []struct {
		ID   string `json:"session_id"`
		Runs int    `json:"runs"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list) != 1 || list[0].Runs != 2 {
		t.Fatalf("sessions --json: %v\n%s", err, r.stdout)
	}
	return list[0].ID
}

func upkeepExport(t *testing.T, e *env, id string) []upkeepEntry {
	t.Helper()
	r := e.run(nil, "sessions", "export", id)
	if r.code != 0 {
		t.Fatalf("export: exit %d\n%s", r.code, r.stderr)
	}
	var out []upkeepEntry
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var en upkeepEntry
		if err := json.Unmarshal([]byte(line), &en); err != nil {
			t.Fatalf("export line %q: %v", line, err)
		}
		out = append(out, en)
	}
	return out
}

func upkeepResults(entries []upkeepEntry) []upkeepEntry {
	var out []upkeepEntry
	for _, en := range entries {
		if en.Type == "tool_result" {
			out = append(out, en)
		}
	}
	return out
}

func TestSessionsTrim(t *testing.T) {
	e := newEnv(t)
	id := upkeepSession(t, e)
	before := upkeepResults(upkeepExport(t, e, id))
	if len(before) != 2 || !strings.Contains(before[0].Text, "line 399") {
		t.Fatalf("tool results before trim: %+v", before)
	}

	r := e.run(nil, "sessions", "trim", id)
	if r.code != 0 || !strings.Contains(r.stderr, "trimmed 1 tool output of session "+id) {
		t.Fatalf("trim: exit %d\n%s", r.code, r.stderr)
	}
	after := upkeepResults(upkeepExport(t, e, id))
	if !after[0].Truncated || !strings.Contains(after[0].Text, "characters trimmed") || len([]rune(after[0].Text)) > 1000 {
		t.Errorf("the older run's output is not trimmed to 1000 characters: %d chars, truncated=%v", len([]rune(after[0].Text)), after[0].Truncated)
	}
	if after[1].Text != before[1].Text {
		t.Errorf("the latest run's output changed")
	}
	// Again with the same limits: nothing changes.
	if r := e.run(nil, "sessions", "trim", id); r.code != 0 || !strings.Contains(r.stderr, "trimmed 0 tool outputs") {
		t.Errorf("second trim: exit %d\n%s", r.code, r.stderr)
	}
	// Every run's outputs, to a tighter limit.
	r = e.run(nil, "sessions", "trim", id, "--tool-outputs-older-than", "0", "--max-chars", "200")
	if r.code != 0 || !strings.Contains(r.stderr, "trimmed 2 tool outputs") {
		t.Fatalf("trim all: exit %d\n%s", r.code, r.stderr)
	}
	for i, res := range upkeepResults(upkeepExport(t, e, id)) {
		if n := len([]rune(res.Text)); n > 200 || !res.Truncated {
			t.Errorf("result %d: %d chars, truncated=%v", i, n, res.Truncated)
		}
	}
	// The trimmed session still continues.
	if r := e.run(nil, "run", "-s", id, "-m", "script:script.yaml", "third question"); r.code != 0 {
		t.Errorf("continue after trim: exit %d\n%s", r.code, r.stderr)
	}
	if r := e.run(nil, "sessions", "trim", "ses_0000000000000000"); r.code == 0 || !strings.Contains(r.stderr, "not found") {
		t.Errorf("unknown session: exit %d\n%s", r.code, r.stderr)
	}
}

func TestSessionsRewind(t *testing.T) {
	e := newEnv(t)
	id := upkeepSession(t, e)
	entries := upkeepExport(t, e, id)
	second, result := -1, -1
	for i, en := range entries {
		if en.Type == "input" && en.Text == "second question" {
			second = i + 1
		}
		if en.Type == "tool_result" && result < 0 {
			result = i + 1
		}
	}
	if second < 0 || result < 0 {
		t.Fatalf("entries: %+v", entries)
	}

	// Without a terminal it wants --yes, and changes nothing.
	r := e.run(nil, "sessions", "rewind", id, "--to", fmt.Sprint(second))
	if r.code == 0 || !strings.Contains(r.stderr, "--yes") || len(upkeepExport(t, e, id)) != len(entries) {
		t.Fatalf("rewind without --yes: exit %d\n%s", r.code, r.stderr)
	}
	if r := e.run(nil, "sessions", "rewind", id, "--to", fmt.Sprint(len(entries)+1), "--yes"); r.code == 0 || !strings.Contains(r.stderr, "not an entry") {
		t.Errorf("out of range: exit %d\n%s", r.code, r.stderr)
	}

	// Cut before the second question: the first run's entries stay as they were.
	r = e.run(nil, "sessions", "rewind", id, "--to", fmt.Sprint(second), "--yes")
	want := fmt.Sprintf("%d of %d entries dropped", len(entries)-second+1, len(entries))
	if r.code != 0 || !strings.Contains(r.stderr, want) {
		t.Fatalf("rewind: exit %d, want %q\n%s", r.code, want, r.stderr)
	}
	got := upkeepExport(t, e, id)
	if len(got) != second-1 || got[len(got)-1] != entries[second-2] {
		t.Fatalf("after rewind: %+v", got)
	}
	// The session continues from the cut: the new run follows the first.
	if r := e.run(nil, "run", "-s", id, "-m", "script:script.yaml", "another question"); r.code != 0 {
		t.Fatalf("continue: exit %d\n%s", r.code, r.stderr)
	}
	got = upkeepExport(t, e, id)
	var inputs []string
	for _, en := range got {
		if en.Type == "input" {
			inputs = append(inputs, en.Text)
		}
	}
	if strings.Join(inputs, "|") != "first question|another question" {
		t.Errorf("inputs after continuing: %v", inputs)
	}

	// By run id: cut before that run, as `lovia rewind RUN_ID --conversation` does.
	lastRun := got[len(got)-1].RunID
	if r := e.run(nil, "sessions", "rewind", id, "--to", lastRun, "--yes"); r.code != 0 {
		t.Fatalf("rewind to run: exit %d\n%s", r.code, r.stderr)
	}
	if got := upkeepExport(t, e, id); len(got) != second-1 {
		t.Errorf("after rewind to run %s: %d entries, want %d", lastRun, len(got), second-1)
	}

	// A cut between a tool call and its result drops the call too: no dangling call.
	if r := e.run(nil, "sessions", "rewind", id, "--to", fmt.Sprint(result), "--yes"); r.code != 0 {
		t.Fatalf("rewind to the result: exit %d\n%s", r.code, r.stderr)
	}
	for _, en := range upkeepExport(t, e, id) {
		if en.Type == "tool_call" || en.Type == "tool_result" {
			t.Errorf("left after cutting at the result: %+v", en)
		}
	}
	if r := e.run(nil, "run", "-s", id, "-m", "script:script.yaml", "after the cut"); r.code != 0 {
		t.Errorf("continue after a mid-turn cut: exit %d\n%s", r.code, r.stderr)
	}
}

// TestSessionsRewindLiveRun: a session with a run still going is not cut (that run
// would append a turn built on the entries cut).
func TestSessionsRewindLiveRun(t *testing.T) {
	e := newEnv(t)
	id := upkeepSession(t, e)
	e.write("slow.yaml", "turns:\n  - delay: 10m\n    text: \"never\"\n")
	_, events, _ := e.startStream("run", "-s", id, "-m", "script:slow.yaml", "--output", "stream-json", "a long one")
	waitEvent(t, events, "turn_started")
	r := e.run(nil, "sessions", "rewind", id, "--to", "1", "--yes")
	if r.code == 0 || !strings.Contains(r.stderr, "still running") {
		t.Errorf("rewind during a live run: exit %d\n%s", r.code, r.stderr)
	}
	if got := upkeepExport(t, e, id); len(got) == 0 {
		t.Errorf("the session was cut during a live run")
	}
}
