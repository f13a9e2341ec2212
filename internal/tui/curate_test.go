package tui

import (
	"context"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/lovia-dev/lovia/internal/event"
)

// curatingBackend proposes two facts after every run and records what is kept.
type curatingBackend struct {
	*fakeBackend
	kept [][]string
}

func (b *curatingBackend) Curate(context.Context, Handle) ([]string, error) {
	return []string{"fact one", "fact two"}, nil
}

func (b *curatingBackend) KeepCurated(_ context.Context, _ Handle, facts []string) (int, error) {
	b.kept = append(b.kept, facts)
	return len(facts), nil
}

func curateHarness(t *testing.T) (*harness, *curatingBackend) {
	h := newHarness(t, 100, 30)
	cb := &curatingBackend{fakeBackend: h.b}
	h.m.backend = cb
	h.typeText("go")
	h.enter()
	h.events(ev(event.RunCompleted))
	if v := h.view(); !strings.Contains(v, "Remember these? (1) fact one (2) fact two") || !strings.Contains(v, "▸ keep none") {
		t.Fatalf("no curation picker with keep none selected:\n%s", v)
	}
	return h, cb
}

func TestCurationNeedsAnExplicitChoice(t *testing.T) {
	h, cb := curateHarness(t)
	// Typed-ahead text and an early Enter choose nothing.
	h.typeText("k")
	h.enter()
	if len(cb.kept) != 0 || !strings.Contains(h.view(), "▸ keep none") {
		t.Fatalf("kept %q before an explicit choice:\n%s", cb.kept, h.view())
	}
	h.advance(approvalGuard)
	h.key(tea.KeyUp)
	h.enter()
	if len(cb.kept) != 1 || strings.Join(cb.kept[0], "|") != "fact two" {
		t.Fatalf("kept %q, want only fact two", cb.kept)
	}
	if !strings.Contains(h.scrollback(), "remembered 1 fact") {
		t.Fatalf("no confirmation:\n%s", h.scrollback())
	}
}

func TestCurationEscKeepsNone(t *testing.T) {
	h, cb := curateHarness(t)
	h.esc()
	if len(cb.kept) != 0 || strings.Contains(h.view(), "Remember these?") {
		t.Fatalf("esc: kept %q\n%s", cb.kept, h.view())
	}
}

func TestCurationAllKeepsBoth(t *testing.T) {
	h, cb := curateHarness(t)
	h.advance(approvalGuard)
	for range 3 {
		h.key(tea.KeyUp)
	}
	h.enter()
	if len(cb.kept) != 1 || len(cb.kept[0]) != 2 {
		t.Fatalf("keep all: kept %q", cb.kept)
	}
}
