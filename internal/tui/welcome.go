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
	parts := []string{}
	if dir != "" {
		parts = append(parts, dir)
	}
	if w.Model != "" {
		parts = append(parts, oneLine(w.Model))
	}
	if w.Policy != "" {
		parts = append(parts, "policy "+oneLine(w.Policy))
	}
	parts = append(parts, "/help", "Ctrl-C twice quits")
	line := "lovia " + version + " · " + strings.Join(parts, " · ")
	if over := ansi.StringWidth(line) - (width - 1); width > 0 && over > 0 && dir != "" {
		// A long directory gives way first, from the left: its end names it.
		keep := max(1, ansi.StringWidth(dir)-over-1)
		short := "…" + ansi.TruncateLeft(dir, ansi.StringWidth(dir)-keep, "")
		line = strings.Replace(line, dir, short, 1)
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
