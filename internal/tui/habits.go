package tui

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/lovia-dev/lovia/internal/event"
)

// Optional backend abilities. A backend without them keeps the older behaviour:
// /model switches without a check, /compact arms compaction for the next run.

// ModelChecker tells at once whether a model can be used, so /model reports an
// unknown provider or a missing key now rather than at the next message.
type ModelChecker interface {
	CheckModel(ctx context.Context, model string) error
}

// SessionCompacter compacts a session's context now (/compact while no run is
// live) and reports what it saved.
type SessionCompacter interface {
	CompactSession(ctx context.Context, sessionID, model string) (*event.Compaction, error)
}

// applyMsg is the result of a command, applied to the model in Update: commands do
// the I/O, Update only takes in what they found.
type applyMsg func(m *Model) tea.Cmd

// chooseModel switches to mo once the backend accepted it; the current model stays
// when it did not.
func (m *Model) chooseModel(mo string) tea.Cmd {
	mc, ok := m.backend.(ModelChecker)
	if !ok {
		m.setModel(mo)
		return nil
	}
	ctx := m.ctx
	m.notice = "checking " + oneLine(mo) + "…"
	return func() tea.Msg {
		err := mc.CheckModel(ctx, mo)
		return applyMsg(func(m *Model) tea.Cmd {
			m.notice = ""
			if err != nil {
				m.emitError(fmt.Errorf("model %s not switched: %w", oneLine(mo), err))
				m.notice = "model unchanged: " + m.model
				return nil
			}
			m.setModel(mo)
			return nil
		})
	}
}

// compactNow is /compact: with a run live, the run compacts at its next turn; with
// none, the session is compacted now and what it saved is printed.
func (m *Model) compactNow() tea.Cmd {
	if m.run != nil {
		m.run.Compact()
		m.notice = "context will be compacted at the next turn"
		return nil
	}
	sc, ok := m.backend.(SessionCompacter)
	if !ok {
		m.pendingCompact = true
		m.notice = "context will be compacted at the start of the next run"
		return nil
	}
	if m.starting {
		m.pendingCompact = true
		m.notice = "context will be compacted at the start of the run"
		return nil
	}
	if m.sessionID == "" {
		m.notice = "nothing to compact: the session has no messages yet"
		return nil
	}
	ctx, id, mo := m.ctx, m.sessionID, m.model
	m.notice = "compacting…"
	return func() tea.Msg {
		info, err := sc.CompactSession(ctx, id, mo)
		return applyMsg(func(m *Model) tea.Cmd {
			m.notice = ""
			if err != nil {
				m.emitError(fmt.Errorf("compact: %w", err))
				return nil
			}
			m.emit('n', m.theme.Dim.Render(renderNotice(m.theme, compactReport(info), m.width)))
			if info != nil && info.TokensAfter > 0 && m.sessionID == id {
				m.lastContext = info.TokensAfter
			}
			return nil
		})
	}
}

// compactReport says what a compaction saved.
func compactReport(c *event.Compaction) string {
	if c == nil {
		return "⊘ nothing to compact"
	}
	saved := c.TokensBefore - c.TokensAfter
	if saved <= 0 {
		return fmt.Sprintf("⊘ nothing to compact: the context is %s tokens", fmtTokens(c.TokensBefore))
	}
	s := fmt.Sprintf("⊘ compacted: %s → %s tokens (saved %s", fmtTokens(c.TokensBefore), fmtTokens(c.TokensAfter), fmtTokens(saved))
	var what []string
	if c.Offloaded > 0 {
		what = append(what, fmt.Sprintf("%d results offloaded", c.Offloaded))
	}
	if c.Cleared > 0 {
		what = append(what, fmt.Sprintf("%d results cleared", c.Cleared))
	}
	if c.Summarized > 0 {
		what = append(what, fmt.Sprintf("%d entries summarized", c.Summarized))
	}
	if len(what) > 0 {
		s += "; " + strings.Join(what, ", ")
	}
	return s + ")"
}
