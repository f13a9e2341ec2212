package tui

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
)

// WelcomeInfo is what the one-line welcome names.
type WelcomeInfo struct {
	Version string // "0.4.0" or "devel"
	Dir     string // the working directory
	Model   string
	Policy  string // the workspace policy (readonly, coding, trusted)
	Home    string // the user's home directory, shown as ~ ("" = os.UserHomeDir)
}

// welcomeLine is the line printed before the program starts: version, directory,
// model, policy, where help is and how to quit. It is written to the terminal before
// Bubble Tea takes over, so the live region never starts on the screen's top row,
// where a redraw's erase-below is a screen clear that tmux copies into scrollback.
func welcomeLine(w WelcomeInfo, th Theme, width int) string {
	dir := w.Dir
	home := w.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home != "" && dir != "" {
		if rel, err := filepath.Rel(home, dir); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			if rel == "." {
				dir = "~"
			} else {
				dir = "~" + string(filepath.Separator) + rel
			}
		}
	}
	version := w.Version
	if version == "" {
		version = "devel"
	}
	dir = oneLine(dir)
	compose := func(dir, policy string) string {
		parts := []string{"lovia " + version}
		for _, p := range []string{dir, oneLine(w.Model), policy, "/help", "Ctrl-C twice quits"} {
			if p != "" {
				parts = append(parts, p)
			}
		}
		return strings.Join(parts, " · ")
	}
	policy := ""
	if w.Policy != "" {
		policy = "policy " + oneLine(w.Policy)
	}
	line := compose(dir, policy)
	// Too wide: the directory gives way first, from the left (its end names it),
	// down to its last element; then the word "policy"; then the end of the line.
	if over := ansi.StringWidth(line) - (width - 1); width > 0 && over > 0 && dir != "" {
		base := filepath.Base(dir)
		keep := max(ansi.StringWidth(base), ansi.StringWidth(dir)-over-1)
		if keep < ansi.StringWidth(dir) {
			line = compose("…"+ansi.TruncateLeft(dir, ansi.StringWidth(dir)-keep, ""), policy)
		}
	}
	if ansi.StringWidth(line) > width-1 && width > 0 && w.Policy != "" {
		line = strings.Replace(line, "policy "+oneLine(w.Policy), oneLine(w.Policy), 1)
	}
	if width > 0 {
		line = ansi.Truncate(line, width-1, "…")
	}
	head, rest, _ := strings.Cut(line, " · ")
	return th.ToolName.Render(head) + th.Dim.Render(" · "+rest)
}

// downsample converts s's colors to what the terminal shows.
func downsample(s string, p colorprofile.Profile) string {
	if p == 0 || p >= colorprofile.TrueColor {
		return s
	}
	var buf bytes.Buffer
	w := &colorprofile.Writer{Forward: &buf, Profile: p}
	_, _ = w.WriteString(s)
	return buf.String()
}
