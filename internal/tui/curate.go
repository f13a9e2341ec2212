package tui

import (
	"context"
	"fmt"
	"strconv"

	tea "charm.land/bubbletea/v2"
)

// Curator is the optional part of a Backend for memory curation: at the end of a
// completed run, a cheap model proposes facts; the user keeps all, one or none of
// them with an explicit choice in a picker, and only then are they saved.
type Curator interface {
	// Curate returns the proposals for the finished run h (nil: none, or curation off).
	Curate(ctx context.Context, h Handle) ([]string, error)
	// KeepCurated saves the accepted facts of run runID; it returns how many it kept.
	KeepCurated(ctx context.Context, h Handle, facts []string) (int, error)
}

// curateMsg carries a run's curation proposals.
type curateMsg struct {
	h     Handle
	facts []string
	err   error
}

// curateKeptMsg reports what KeepCurated saved.
type curateKeptMsg struct {
	n   int
	err error
}

// curation is the proposal the "curate" picker answers.
type curation struct {
	h     Handle
	facts []string
}

// curate asks the backend for h's proposals, when it curates.
func (m *Model) curate(h Handle) tea.Cmd {
	c, ok := m.backend.(Curator)
	if !ok || h == nil {
		return nil
	}
	ctx := m.ctx
	return func() tea.Msg {
		facts, err := c.Curate(ctx, h)
		return curateMsg{h: h, facts: facts, err: err}
	}
}

// openCuration shows the proposals as a picker: keep all, keep one, keep none.
// Nothing is kept without Enter on a choice; Esc keeps none.
func (m *Model) openCuration(msg curateMsg) {
	if msg.err != nil {
		m.notice = "memory curation: " + msg.err.Error()
		return
	}
	if len(msg.facts) == 0 || m.picker != nil {
		return
	}
	title := "Remember these?"
	for i, f := range msg.facts {
		title += fmt.Sprintf(" (%d) %s", i+1, oneLine(f))
	}
	p := &picker{title: title, kind: "curate"}
	p.labels = append(p.labels, fmt.Sprintf("keep all %d", len(msg.facts)))
	p.values = append(p.values, "all")
	for i, f := range msg.facts {
		p.labels = append(p.labels, fmt.Sprintf("keep only (%d) %s", i+1, oneLine(f)))
		p.values = append(p.values, strconv.Itoa(i))
	}
	p.labels = append(p.labels, "keep none")
	p.values = append(p.values, "none")
	// The safe answer is preselected, so a stray Enter keeps nothing.
	p.sel = len(p.values) - 1
	m.picker = p
	m.curation = &curation{h: msg.h, facts: msg.facts}
}

// keepCurated applies the picker's choice v.
func (m *Model) keepCurated(v string) tea.Cmd {
	cur := m.curation
	m.curation = nil
	c, ok := m.backend.(Curator)
	if cur == nil || !ok || v == "none" {
		m.notice = "memory: nothing kept"
		return nil
	}
	facts := cur.facts
	if v != "all" {
		i, err := strconv.Atoi(v)
		if err != nil || i < 0 || i >= len(facts) {
			return nil
		}
		facts = []string{facts[i]}
	}
	ctx := m.ctx
	return func() tea.Msg {
		n, err := c.KeepCurated(ctx, cur.h, facts)
		return curateKeptMsg{n: n, err: err}
	}
}
