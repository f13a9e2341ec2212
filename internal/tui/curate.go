package tui

import (
	"context"
	"fmt"
	"strconv"
	"time"

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
	// armed: approvalGuard has passed since the picker appeared. The picker opens
	// on its own after a run, maybe while the user types the next prompt, so an
	// early Enter must not choose (and j/k, which move other pickers, do not here).
	armed bool
}

// curateArmMsg ends the guard of the curation picker cur.
type curateArmMsg struct{ cur *curation }

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
func (m *Model) openCuration(msg curateMsg) tea.Cmd {
	if msg.err != nil {
		m.notice = "memory curation: " + msg.err.Error()
		return nil
	}
	if len(msg.facts) == 0 {
		return nil
	}
	if m.picker != nil || m.run != nil {
		// Another choice or a new run holds the keys; nothing is kept unasked.
		m.notice = fmt.Sprintf("memory curation: %d proposal(s) dropped (busy); nothing kept", len(msg.facts))
		return nil
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
	cur := &curation{h: msg.h, facts: msg.facts}
	m.curation = cur
	return m.tick(approvalGuard, func(time.Time) tea.Msg { return curateArmMsg{cur: cur} })
}

// curateKey filters the curation picker's keys: only arrows move, Enter chooses once
// armed; handled=true swallows the key.
func (m *Model) curateKey(s string) (handled bool) {
	switch s {
	case "j", "k":
		return true
	case "enter":
		return m.curation == nil || !m.curation.armed
	}
	return false
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
