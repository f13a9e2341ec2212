package tui

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/event"
)

var update = flag.Bool("update", false, "rewrite testdata/tui/*.golden")

// plainHarness renders without colour so golden frames are readable text.
func plainHarness(t *testing.T, w, h int) *harness {
	hs := newHarness(t, w, h)
	hs.m.cfg.Color = false
	hs.m.theme = NewTheme(true, false)
	hs.m.input = newInput(hs.m.theme)
	hs.m.input.SetWidth(w)
	return hs
}

func TestGoldenFrames(t *testing.T) {
	states := []struct {
		name string
		set  func(h *harness)
	}{
		{"idle", func(h *harness) {}},
		{"streaming", func(h *harness) {
			h.typeText("fix the failing test")
			h.enter()
			tu := ev(event.TurnStarted)
			tu.Turn = 2
			h.events(tu, textDelta("First I will run the tests.\n\nThen:\n\n```go\nfunc TestX(t *testing.T) {\n\tt.Fatal(\"boom\")\n"))
		}},
		{"tool_running", func(h *harness) {
			h.typeText("fix the failing test")
			h.enter()
			h.events(toolStarted("c1", "shell", `{"command":"go test ./internal/..."}`),
				toolStarted("c2", "read_file", `{"path":"internal/tui/model.go"}`))
			h.clock = h.clock.Add(2300 * time.Millisecond)
		}},
		{"approval", func(h *harness) {
			h.typeText("clean up")
			h.enter()
			a := ev(event.ApprovalRequired)
			a.CallID, a.Name, a.Args = "c1", "shell", json.RawMessage(`{"command":"make clean && rm -rf dist"}`)
			a.Approval = &event.Approval{Kind: "command", Summary: "make clean && rm -rf dist",
				Subcommands: []string{"make clean", "rm -rf dist"}, Rules: []string{"make clean", "rm"}}
			h.events(toolStarted("c1", "shell", `{"command":"make clean && rm -rf dist"}`), a)
		}},
		{"edit_approval", func(h *harness) {
			h.typeText("edit")
			h.enter()
			a := ev(event.ApprovalRequired)
			a.CallID, a.Name, a.Args = "c1", "write_file", json.RawMessage(`{"path":"/etc/motd"}`)
			a.Approval = &event.Approval{Kind: "path", Summary: "write outside the repository", Path: "/etc/motd",
				Diff: "--- /etc/motd\n+++ /etc/motd\n@@ -1,1 +1,2 @@\n hello\n+world"}
			h.events(a)
		}},
		{"completion", func(h *harness) { h.typeText("/") }},
		{"queued", func(h *harness) {
			h.typeText("refactor")
			h.enter()
			h.events(textDelta("Working"))
			h.typeText("and keep the API stable")
			h.enter()
		}},
		{"picker", func(h *harness) {
			h.b.sessions = []SessionInfo{
				{ID: "sess_b", Title: "add retries", Updated: time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)},
				{ID: "sess_a", Title: "fix the login form", Updated: time.Date(2026, 1, 1, 9, 30, 0, 0, time.UTC)},
			}
			h.typeText("/sessions")
			h.enter()
		}},
	}
	for _, size := range [][2]int{{80, 24}, {100, 30}} {
		for _, st := range states {
			name := fmt.Sprintf("%s_%dx%d", st.name, size[0], size[1])
			t.Run(name, func(t *testing.T) {
				h := plainHarness(t, size[0], size[1])
				st.set(h)
				got := h.m.View().Content
				if strings.Contains(got, "\x1b") {
					t.Fatalf("plain frame has escape codes: %q", got)
				}
				lines := strings.Split(got, "\n")
				if len(lines) > size[1] {
					t.Fatalf("frame is %d lines, terminal %d", len(lines), size[1])
				}
				for _, l := range lines {
					if n := len([]rune(l)); n > size[0] {
						t.Fatalf("line of %d cells in %d columns: %q", n, size[0], l)
					}
				}
				path := filepath.Join("..", "..", "testdata", "tui", name+".golden")
				if *update {
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test -run TestGoldenFrames -update)", err)
				}
				if string(want) != got {
					t.Errorf("frame differs from %s:\n--- got\n%s\n--- want\n%s", path, got, want)
				}
			})
		}
	}
}
