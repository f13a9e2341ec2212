package compaction

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/transcript"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// renderFixture: a user turn, an offloaded huge result, a cleared error result, a
// result both cleared and offloaded, and a fresh result.
func renderFixture() ([]transcript.Entry, *State) {
	cv := &conv{}
	cv.user("Find the bug.")
	huge := cv.tool("shell", big("build", 5000), false)
	failed := cv.tool("grep_files", "grep: bad pattern", true)
	both := cv.tool("read_file", big("file", 6000), false)
	cv.say("Looking closer.")
	cv.tool("read_file", "package main", false)
	st := &State{Version: stateVersion}
	st.offload(huge, "/data/tool-results/s1/call_1.txt")
	st.clear(failed)
	st.offload(both, "")
	st.clear(both)
	return cv.body, st
}

func TestRenderMarkers(t *testing.T) {
	body, st := renderFixture()
	orig := make([]transcript.Entry, len(body))
	for i, e := range body {
		orig[i] = e.Clone()
	}
	view := Render(body, st, RenderOptions{RecallTool: true})
	if !reflect.DeepEqual(body, orig) {
		t.Fatal("Render modified the body")
	}
	if len(view) != len(body) {
		t.Fatalf("view has %d entries, body %d", len(view), len(body))
	}
	checkPairs(t, view)
	for i := range body {
		b, v := body[i], view[i]
		if b.Type != v.Type || b.CallID != v.CallID || b.Name != v.Name || b.IsError != v.IsError {
			t.Errorf("entry %d: marker lost its pairing fields: %+v -> %+v", i, b, v)
		}
	}
	off := view[2].Text
	for _, want := range []string{"offloaded", "5000 characters", "call_id call_1", "/data/tool-results/s1/call_1.txt",
		previewOf(body[2].Text, 400), "4600 more characters", RecallToolName} {
		if !strings.Contains(off, want) {
			t.Errorf("offload marker lacks %q:\n%s", want, off)
		}
	}
	if strings.Contains(off, previewOf(body[2].Text, 401)) {
		t.Errorf("offload marker keeps more than 400 characters")
	}
	if !view[2].Synthetic || view[2].IsError {
		t.Errorf("offload marker flags: %+v", view[2])
	}
	cl := view[4]
	if !cl.IsError || !cl.Synthetic || !strings.Contains(cl.Text, "error result cleared") || !strings.Contains(cl.Text, "call_id call_2") {
		t.Errorf("cleared error marker: %+v", cl)
	}
	// Cleared wins over offloaded (clearing is the later, stronger decision).
	if !strings.Contains(view[6].Text, "cleared") || strings.Contains(view[6].Text, "file line") {
		t.Errorf("cleared+offloaded renders as cleared: %q", view[6].Text)
	}
	if view[9].Text != "package main" || view[9].Synthetic {
		t.Errorf("undecided result changed: %+v", view[9])
	}
	// Pure: the same input renders the same bytes.
	if again := Render(body, st, RenderOptions{RecallTool: true}); !reflect.DeepEqual(view, again) {
		t.Error("Render is not deterministic")
	}
}

func TestRenderMentionsRecallOnlyWhenAvailable(t *testing.T) {
	body, st := renderFixture()
	for _, e := range Render(body, st, RenderOptions{RecallTool: false}) {
		if strings.Contains(e.Text, RecallToolName) {
			t.Errorf("marker mentions %s although the agent lacks it: %q", RecallToolName, e.Text)
		}
	}
	with := Render(body, st, RenderOptions{RecallTool: true})
	if !strings.Contains(with[4].Text, RecallToolName) {
		t.Errorf("cleared marker should mention %s: %q", RecallToolName, with[4].Text)
	}
}

func TestRenderSummaryReplacesPrefix(t *testing.T) {
	body, st := renderFixture()
	st.Summary = &Summary{Text: "## Goal\nfind the bug", Covered: 7, Fingerprint: Fingerprint(body[:7])}
	view := Render(body, st, RenderOptions{})
	if len(view) != len(body)-7+1 {
		t.Fatalf("view len %d, want %d", len(view), len(body)-6)
	}
	s := view[0]
	if !s.IsUser() || !s.Synthetic || !strings.Contains(s.Text, "find the bug") || !strings.Contains(s.Text, "7 entries") {
		t.Errorf("summary entry: %+v", s)
	}
	if !reflect.DeepEqual(view[1:], body[7:]) {
		t.Error("entries after the summary must render as they are")
	}
	checkPairs(t, view)
}

func TestPreviewCutsOnRuneBoundary(t *testing.T) {
	s := strings.Repeat("é漢", 300)
	p := previewOf(s, 401)
	if n := len([]rune(p)); n != 401 || !strings.HasPrefix(s, p) {
		t.Errorf("preview of %d runes, want 401 and a prefix", n)
	}
	if previewOf("short", 400) != "short" {
		t.Error("short text must be kept whole")
	}
}

// TestRenderGolden pins the exact marker wording (a change here changes every cached
// prefix of every running session; do it on purpose, with -update).
func TestRenderGolden(t *testing.T) {
	body, st := renderFixture()
	st.Summary = &Summary{Text: "## Goal\nFind the bug.", Covered: 1, Fingerprint: Fingerprint(body[:1])}
	view := Render(body, st, RenderOptions{RecallTool: true})
	got, err := json.MarshalIndent(view, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "testdata", "compaction", "render.golden.json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestRenderGolden -update to create it)", err)
	}
	if strings.TrimSpace(string(want)) != string(got) {
		t.Errorf("rendered view differs from %s; rerun with -update if the change is intended:\n%s", path, got)
	}
}
