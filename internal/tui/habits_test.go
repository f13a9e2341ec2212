package tui

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

// habitsBackend adds the optional abilities to the fake backend.
type habitsBackend struct {
	*fakeBackend
	checked   []string
	compacted []string
	files     map[string]string
}

func (b *habitsBackend) CheckModel(_ context.Context, model string) error {
	b.checked = append(b.checked, model)
	if strings.HasPrefix(model, "nosuch:") {
		return errors.New(`unknown model provider "nosuch"`)
	}
	return nil
}

func (b *habitsBackend) CompactSession(_ context.Context, id, _ string) (*event.Compaction, error) {
	b.compacted = append(b.compacted, id)
	return &event.Compaction{TokensBefore: 62000, TokensAfter: 25000, Cleared: 2, Offloaded: 3}, nil
}

func (b *habitsBackend) AttachFile(_ context.Context, path string, limit int) (string, bool, error) {
	text, ok := b.files[path]
	if !ok {
		return "", false, fmt.Errorf("%s: %w", path, fs.ErrNotExist)
	}
	if text == "DENIED" {
		return "", false, errors.New("read denied by the policy")
	}
	if len(text) > limit {
		return text[:limit], true, nil
	}
	return text, false, nil
}

func newHabitsHarness(t *testing.T) (*harness, *habitsBackend) {
	h := newHarness(t, 100, 30)
	hb := &habitsBackend{fakeBackend: h.b, files: map[string]string{}}
	h.m.backend = hb
	return h, hb
}

// /model with a model the backend rejects reports the error at once and keeps the
// model; an accepted one switches.
func TestModelCheckedAtOnce(t *testing.T) {
	h, hb := newHabitsHarness(t)
	h.typeText("/model nosuch:thing")
	h.enter()
	if h.m.model != "script:demo.yaml" {
		t.Fatalf("model switched to %q", h.m.model)
	}
	if !strings.Contains(h.scrollback(), `unknown model provider "nosuch"`) || !strings.Contains(h.view(), "model unchanged: script:demo.yaml") {
		t.Fatalf("no error shown:\n%s\n%s", h.scrollback(), h.view())
	}
	h.typeText("/model openai:gpt-4.1")
	h.enter()
	if h.m.model != "openai:gpt-4.1" || len(hb.checked) != 2 {
		t.Fatalf("model %q, checked %v", h.m.model, hb.checked)
	}
}

// /compact between runs compacts the session now and prints what it saved; with a
// run live it arms the run's next turn.
func TestCompactNow(t *testing.T) {
	h, hb := newHabitsHarness(t)
	h.typeText("/compact")
	h.enter()
	if len(hb.compacted) != 0 || !strings.Contains(h.view(), "nothing to compact") {
		t.Fatalf("compacted a session that has no messages: %v\n%s", hb.compacted, h.view())
	}
	h.typeText("hello")
	h.enter()
	h.events(completed(usageZero()))
	h.typeText("/compact")
	h.enter()
	if len(hb.compacted) != 1 || hb.compacted[0] != "sess_1" {
		t.Fatalf("compacted %v", hb.compacted)
	}
	if sb := h.scrollback(); !strings.Contains(sb, "compacted: 62.0k → 25.0k tokens (saved 37.0k; 3 results offloaded, 2 results cleared)") {
		t.Fatalf("no report:\n%s", sb)
	}
	h.typeText("more")
	h.enter()
	h.typeText("/compact")
	h.enter()
	if h.run().compacted != 1 || len(hb.compacted) != 1 {
		t.Fatalf("with a run live /compact arms the run: run %d, backend %v", h.run().compacted, hb.compacted)
	}
}

// A long paste is a token in the prompt and the full text in the request.
func TestLongPasteFolded(t *testing.T) {
	h, _ := newHabitsHarness(t)
	var lines []string
	for i := 1; i <= 50; i++ {
		lines = append(lines, fmt.Sprintf("row %d", i))
	}
	h.typeText("look: ")
	h.send(tea.PasteMsg{Content: strings.Join(lines, "\r\n") + "\r\n"})
	h.typeText(" ok")
	if v := h.m.input.Value(); v != "look: [pasted 50 lines] ok" {
		t.Fatalf("prompt %q", v)
	}
	if n := strings.Count(h.view(), "\n"); n > 4 {
		t.Fatalf("the prompt grew with the paste (%d lines):\n%s", n, h.view())
	}
	// A second paste of the same size gets its own token.
	h.send(tea.PasteMsg{Content: strings.Join(lines, "\n")})
	if v := h.m.input.Value(); !strings.HasSuffix(v, "[pasted 50 lines #2]") {
		t.Fatalf("prompt %q", v)
	}
	h.enter()
	want := "look: " + strings.Join(lines, "\n") + " ok" + strings.Join(lines, "\n")
	if got := h.b.reqs[0].Prompt; got != want {
		t.Fatalf("request prompt\n%q\nwant\n%q", got, want)
	}
	// A short paste goes in as typed.
	h.events(completed(usageZero()))
	h.send(tea.PasteMsg{Content: "two\nlines"})
	if v := h.m.input.Value(); v != "two\nlines" {
		t.Fatalf("short paste %q", v)
	}
}

// @path mentions attach the files the backend reads; a word naming no file stays
// a word, a refused file is reported and not attached, a long one is cut with a note.
func TestAttachMentions(t *testing.T) {
	h, hb := newHabitsHarness(t)
	hb.files["notes/plan.md"] = "step one\n"
	hb.files["secret.md"] = "DENIED"
	hb.files["big.log"] = strings.Repeat("x", attachLimit+10)
	h.typeText("see @notes/plan.md, @secret.md and @big.log, ask @alice")
	h.m.comp = nil
	h.enter()
	p := h.b.reqs[0].Prompt
	if !strings.HasPrefix(p, "see @notes/plan.md, @secret.md and @big.log, ask @alice\n\n<attached_file path=\"notes/plan.md\">\nstep one\n</attached_file>") {
		t.Fatalf("prompt %.300q", p)
	}
	if strings.Contains(p, "DENIED") || strings.Contains(p, `path="alice"`) {
		t.Fatalf("attached what it should not: %.300q", p)
	}
	if !strings.Contains(p, "[truncated: only the first 256.0 KiB") || strings.Count(p, "x") > attachLimit+5 {
		t.Fatalf("the big file is not cut with a note")
	}
	sb := h.scrollback()
	for _, want := range []string{"attached notes/plan.md (9 bytes)", "@secret.md not attached: read denied", "attached big.log, truncated to its first 256.0 KiB"} {
		if !strings.Contains(sb, want) {
			t.Errorf("scrollback lacks %q:\n%s", want, sb)
		}
	}
}

// Printing is cut into slices that fit above the live region: a 1,000-line replay
// goes out in prints no taller than the screen less the frame, in order, whole.
func TestPrintsFitTheScreen(t *testing.T) {
	h := newHarness(t, 100, 30)
	var prints []string
	h.m.print = func(s string) tea.Cmd {
		prints = append(prints, s)
		return nil
	}
	var entries []transcript.Entry
	var lines []string
	for i := 1; i <= 1000; i++ {
		lines = append(lines, fmt.Sprintf("line %04d", i))
	}
	entries = append(entries, transcript.Entry{Type: transcript.TypeAssistantText, Text: "```\n" + strings.Join(lines, "\n") + "\n```"})
	_ = h.m.View()
	h.send(historyMsg{id: "ses_1", entries: entries})
	if len(prints) < 1000/30 {
		t.Fatalf("%d prints for 1,000 lines", len(prints))
	}
	frame := strings.Count(h.m.View().Content, "\n") + 1
	for i, p := range prints {
		if n := strings.Count(p, "\n") + 1; n > 30-frame {
			t.Fatalf("print %d has %d lines; the screen has room for %d above a %d-line frame", i, n, 30-frame, frame)
		}
		for _, l := range strings.Split(p, "\n") {
			if w := ansi.StringWidth(l); w > 100 {
				t.Fatalf("print %d has a line of width %d", i, w)
			}
		}
	}
	all := ansi.Strip(strings.Join(prints, "\n"))
	last := -1
	for _, l := range lines {
		i := strings.Index(all, l)
		if i < last {
			t.Fatalf("%s missing or out of order", l)
		}
		last = i
	}
}

// A frame replaced a moment ago may still be on screen; one replaced long ago is not.
func TestFramesHigh(t *testing.T) {
	var f frames
	t0 := time.Unix(1000, 0)
	f.note(t0, 20)
	f.note(t0.Add(time.Second), 3)
	if got := f.high(t0.Add(time.Second + 100*time.Millisecond)); got != 20 {
		t.Fatalf("just after the change: %d, want 20", got)
	}
	if got := f.high(t0.Add(2 * time.Second)); got != 3 {
		t.Fatalf("long after: %d, want 3", got)
	}
}

// The welcome line says version, directory, model, policy, /help and how to quit,
// on one line that fits.
func TestWelcomeLine(t *testing.T) {
	th := NewTheme(true, false)
	w := ansi.Strip(welcomeLine(WelcomeInfo{Version: "1.2.3", Dir: "/home/ann/src/app", Home: "/home/ann", Model: "openai:gpt-4.1", Policy: "coding"}, th, 120))
	if w != "lovia 1.2.3 · ~/src/app · openai:gpt-4.1 · policy coding · /help · Ctrl-C twice quits" {
		t.Fatalf("welcome %q", w)
	}
	long := ansi.Strip(welcomeLine(WelcomeInfo{Version: "1.2.3", Dir: "/very/long/" + strings.Repeat("deep/", 20) + "project", Model: "m:x", Policy: "coding"}, th, 80))
	if ansi.StringWidth(long) >= 80 || !strings.HasSuffix(long, "Ctrl-C twice quits") || !strings.Contains(long, "…") || !strings.Contains(long, "project") {
		t.Fatalf("long welcome %q", long)
	}
}

func usageZero() usage.Usage { return usage.Usage{} }
