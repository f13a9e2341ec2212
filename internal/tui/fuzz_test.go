package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/usage"
)

// FuzzModel feeds arbitrary event and key sequences: the model must not panic and
// every frame must fit the terminal.
func FuzzModel(f *testing.F) {
	f.Add([]byte("\x01hello\n\n\x02```go\nx\x03\x04\x05\x06"), uint8(40), uint8(12))
	f.Add([]byte("\x07\x08\x09\x0a\x0b\x0c\x0d"), uint8(80), uint8(24))
	f.Fuzz(func(t *testing.T, data []byte, w, h uint8) {
		width, height := int(w%120)+20, int(h%40)+5
		hs := newHarness(t, width, height)
		hs.typeText("go")
		hs.enter()
		var text []byte
		flush := func() string { s := string(text); text = text[:0]; return s }
		for i, b := range data {
			if b >= 0x20 {
				text = append(text, b)
				continue
			}
			id := fmt.Sprintf("c%d", i%3)
			switch b % 14 {
			case 0, 10:
				text = append(text, '\n')
			case 1:
				hs.events(textDelta(flush()))
			case 2:
				e := ev(event.ReasoningDelta)
				e.Text = flush()
				hs.events(e)
			case 3:
				hs.events(toolStarted(id, "shell", fmt.Sprintf(`{"command":%q}`, flush())))
			case 4:
				a := ev(event.ApprovalRequired)
				a.CallID, a.Name = id, "shell"
				a.Approval = &event.Approval{Kind: "command", Summary: flush(), Subcommands: strings.Fields("a b c")}
				hs.events(a)
			case 5:
				hs.events(toolDone(id, "edit_file", flush(), 3, i%2 == 0))
			case 6:
				mc := ev(event.MessageCompleted)
				mc.Text = flush()
				mc.Usage = &usage.Usage{InputTokens: i}
				hs.events(mc)
			case 7:
				hs.typeText(flush())
			case 8:
				hs.enter()
			case 9:
				hs.esc()
			case 11:
				hs.send(tea.WindowSizeMsg{Width: int(b) + 20, Height: height})
			case 12:
				if hs.m.run != nil {
					hs.events(completed(usage.Usage{}))
				}
			case 13:
				hs.choose(1)
			}
			if hs.m.run == nil && !hs.m.starting && i%5 == 0 {
				hs.typeText("more")
				hs.enter()
			}
			frame := hs.m.View().Content
			lines := strings.Split(frame, "\n")
			if len(lines) > hs.m.height {
				t.Fatalf("frame of %d lines in a %d-line terminal", len(lines), hs.m.height)
			}
			for _, l := range lines {
				if n := ansi.StringWidth(l); n > hs.m.width {
					t.Fatalf("line of %d cells in %d columns: %q", n, hs.m.width, l)
				}
			}
		}
	})
}
