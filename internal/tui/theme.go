package tui

import (
	"image/color"

	"charm.land/lipgloss/v2"
	"github.com/lovia-dev/lovia/internal/termmd"
)

// Theme holds every style the TUI draws with. It is a value: switching between light
// and dark (or to plain text for NO_COLOR) builds a new one.
type Theme struct {
	Dark  bool
	Color bool

	User      lipgloss.Style // the "›" marker and the user's text
	UserMark  lipgloss.Style
	Dim       lipgloss.Style // reasoning, previews, hints
	Accent    lipgloss.Style
	OK        lipgloss.Style
	Err       lipgloss.Style
	Warn      lipgloss.Style
	ToolName  lipgloss.Style
	DiffAdd   lipgloss.Style
	DiffDel   lipgloss.Style
	DiffHunk  lipgloss.Style
	Status    lipgloss.Style
	Border    lipgloss.Style
	Selected  lipgloss.Style
	Queued    lipgloss.Style
	Reasoning lipgloss.Style
}

// NewTheme returns the theme for a dark or light background; colorful=false gives
// plain text with no styling at all (NO_COLOR, non-TTY, golden tests).
func NewTheme(dark, colorful bool) Theme {
	t := Theme{Dark: dark, Color: colorful}
	base := lipgloss.NewStyle()
	if !colorful {
		for _, s := range []*lipgloss.Style{&t.User, &t.UserMark, &t.Dim, &t.Accent, &t.OK, &t.Err,
			&t.Warn, &t.ToolName, &t.DiffAdd, &t.DiffDel, &t.DiffHunk, &t.Status, &t.Border,
			&t.Selected, &t.Queued, &t.Reasoning} {
			*s = base
		}
		return t
	}
	ld := lipgloss.LightDark(dark)
	c := func(light, darkc string) color.Color { return ld(lipgloss.Color(light), lipgloss.Color(darkc)) }
	t.UserMark = base.Foreground(c("#5A56E0", "#9D9BFF")).Bold(true)
	t.User = base.Bold(true)
	t.Dim = base.Foreground(c("#7A7A7A", "#8A8A8A"))
	t.Reasoning = base.Foreground(c("#8A8A8A", "#767676")).Italic(true)
	t.Accent = base.Foreground(c("#5A56E0", "#9D9BFF"))
	t.OK = base.Foreground(c("#1F8A3B", "#5FD787"))
	t.Err = base.Foreground(c("#C0282D", "#FF6B6B"))
	t.Warn = base.Foreground(c("#A66A00", "#FFC857"))
	t.ToolName = base.Bold(true)
	t.DiffAdd = base.Foreground(c("#1F8A3B", "#5FD787"))
	t.DiffDel = base.Foreground(c("#C0282D", "#FF6B6B"))
	t.DiffHunk = base.Foreground(c("#0E7490", "#5FD7FF"))
	t.Status = base.Foreground(c("#6A6A6A", "#9A9A9A"))
	t.Border = base.Foreground(c("#B0B0B0", "#4E4E4E"))
	t.Selected = base.Foreground(c("#5A56E0", "#9D9BFF")).Bold(true)
	t.Queued = base.Foreground(c("#A66A00", "#FFC857"))
	return t
}

// glamourStyle is the markdown style for the theme: the standard dark/light styles
// (ascii for plain text) without the document's leading and trailing blank lines,
// which the TUI manages itself.
func (t Theme) glamourStyle() termmd.StyleConfig {
	yes := true
	var s termmd.StyleConfig
	switch {
	case !t.Color:
		s = termmd.ASCIIStyle()
	case t.Dark:
		s = termmd.DarkStyle()
	default:
		s = termmd.LightStyle()
	}
	s.Document.BlockPrefix = ""
	s.Document.BlockSuffix = ""
	if t.Color {
		// Color and weight mark headings and inline code; the markdown's own "##" and
		// the padding around code would end up in text copied from the scrollback.
		for _, h := range []*termmd.StyleBlock{&s.H1, &s.H2, &s.H3, &s.H4, &s.H5, &s.H6} {
			h.Prefix, h.Suffix = "", ""
		}
		s.H1.BackgroundColor = nil
		s.H1.Underline = &yes
		s.Code.Prefix, s.Code.Suffix = "", ""
	}
	return s
}
