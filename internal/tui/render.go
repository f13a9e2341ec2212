package tui

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// Printing above the live region.
//
// Bubble Tea prints a block above an inline program by scrolling the screen up by
// the block's height, moving to the top of the live region and inserting lines
// there. That arithmetic only holds while the block and the live region fit on the
// screen together: a taller block (a replayed session, a long reply) scrolls blank
// lines into the scrollback, leaves the cursor where the renderer does not think it
// is, and the prompt and status line vanish until a resize repaints them. So blocks
// go out in slices that always fit: each slice is at most the screen height minus
// the tallest frame the renderer may still be showing, and every line is wrapped to
// the width first so that no line takes more rows than it is counted for.

// frameMemory is how long a frame height may still be the one on screen after a
// newer frame replaced it: the renderer repaints the newest frame at 30 fps, so
// after this long a replaced frame is certainly gone.
const frameMemory = 500 * time.Millisecond

// frameMark is a frame height and when the model first drew a frame of that height.
type frameMark struct {
	at time.Time
	h  int
}

// frames remembers recent frame heights (only their changes, so it stays tiny).
type frames struct {
	marks []frameMark
}

// note records the height of a frame just drawn.
func (f *frames) note(now time.Time, h int) {
	if n := len(f.marks); n > 0 && f.marks[n-1].h == h {
		return
	}
	f.marks = append(f.marks, frameMark{at: now, h: h})
	if len(f.marks) > 32 {
		f.marks = append(f.marks[:0], f.marks[len(f.marks)-32:]...)
	}
}

// high is the tallest frame the renderer may still be showing at now: the current
// one, and any replaced less than frameMemory ago.
func (f *frames) high(now time.Time) int {
	h := 0
	for i, mk := range f.marks {
		if i == len(f.marks)-1 || now.Sub(f.marks[i+1].at) < frameMemory {
			h = max(h, mk.h)
		}
	}
	return h
}

// printRoom is how many lines one print may carry: the screen less the tallest
// frame still possibly on screen, less one row to spare.
func (m *Model) printRoom() int {
	if len(m.frames.marks) == 0 {
		// Nothing drawn yet (a print from Init): count the frame about to be.
		content, _ := m.render()
		m.frames.note(time.Now(), strings.Count(content, "\n")+1)
	}
	return max(1, m.height-1-m.frames.high(time.Now()))
}

// flush prints queued blocks, one slice at a time so their order is kept (commands
// run concurrently; a Sequence with an acknowledgement serializes them) and each
// slice fits on the screen above the live region; the acknowledgement of one slice
// sends the next (Update calls flush after every message).
func (m *Model) flush() tea.Cmd {
	if m.printing || len(m.outbox) == 0 {
		return nil
	}
	s := strings.Join(m.outbox, "\n")
	m.outbox = m.outbox[:0]
	chunk, rest := cutLines(fitWidth(s, m.width), m.printRoom())
	if rest != "" {
		m.outbox = append(m.outbox, rest)
	}
	m.printing = true
	return tea.Sequence(m.print(chunk), func() tea.Msg { return printedMsg{} })
}

// fitWidth hard-wraps every line wider than width, so the terminal never wraps a
// printed line on its own (the renderer would count it as one row).
func fitWidth(s string, width int) string {
	if width <= 0 {
		return s
	}
	lines := strings.Split(s, "\n")
	changed := false
	for i, l := range lines {
		if ansi.StringWidth(l) > width {
			lines[i] = ansi.Hardwrap(l, width, true)
			changed = true
		}
	}
	if !changed {
		return s
	}
	return strings.Join(lines, "\n")
}

// cutLines cuts s after its first n lines.
func cutLines(s string, n int) (head, rest string) {
	i := 0
	for k := 0; k < n; k++ {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			return s, ""
		}
		i += j + 1
	}
	return s[:i-1], s[i:]
}

// clampFrame keeps a frame one row shorter than the screen: a frame as tall as the
// screen would sit on its top row, where a redraw's erase is a screen clear that
// tmux copies into the scrollback. Lines go from the top; row is the input's first
// row, shifted with them.
func clampFrame(lines []string, height, row int) ([]string, int) {
	if over := len(lines) - max(1, height-1); over > 0 {
		return lines[over:], row - over
	}
	return lines, row
}
