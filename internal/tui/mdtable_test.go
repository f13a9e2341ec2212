package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func renderMD(t *testing.T, src string, width int) string {
	t.Helper()
	var md markdown
	return ansi.Strip(md.render(src, NewTheme(true, true), width))
}

// Headings show their text without the markdown "#" marks (color and weight mark
// them), so text copied from the scrollback is the heading itself.
func TestMarkdownHeadingsWithoutHashes(t *testing.T) {
	out := renderMD(t, "# Title\n\n## Section two\n\n### Third level\n\nBody text.", 80)
	for _, want := range []string{"Title", "Section two", "Third level", "Body text."} {
		if !strings.Contains(out, want) {
			t.Fatalf("lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "#") {
		t.Fatalf("headings keep their # marks:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "Title") && strings.TrimSpace(l) != "Title" {
			t.Fatalf("the H1 line is padded: %q", l)
		}
	}
}

// Inline code is colored, not padded: copying "run `go test` now" gives back
// exactly that sentence without the ticks and without non-breaking spaces.
func TestMarkdownInlineCodeUnpadded(t *testing.T) {
	out := renderMD(t, "Run `go test ./...` now.", 80)
	if !strings.Contains(out, "Run go test ./... now.") {
		t.Fatalf("inline code is padded or marked: %q", out)
	}
	if strings.ContainsRune(out, '\u00a0') {
		t.Fatalf("non-breaking spaces around inline code: %q", out)
	}
}

// A table whose cells wrap has a rule between its rows, so the wrapped lines of one
// row cannot be read as the next row; a table that fits has none.
func TestMarkdownTableRowSeparatorsWhenCellsWrap(t *testing.T) {
	src := "| Name | Description |\n|------|-------------|\n| alpha | " + strings.Repeat("a long description that wraps ", 4) + "|\n| beta | short |\n"
	out := renderMD(t, "Before.\n\n"+src+"\nAfter.", 60)
	lines := strings.Split(out, "\n")
	var rules int
	for _, l := range lines {
		if strings.Contains(l, "┼") {
			rules++
		}
	}
	if rules < 2 {
		t.Fatalf("want the header rule and a rule between the rows, got %d rules:\n%s", rules, out)
	}
	alpha, beta := -1, -1
	for i, l := range lines {
		if strings.Contains(l, "alpha") {
			alpha = i
		}
		if strings.Contains(l, "beta") {
			beta = i
		}
	}
	if alpha < 0 || beta < 0 {
		t.Fatalf("rows missing:\n%s", out)
	}
	sep := false
	for _, l := range lines[alpha:beta] {
		sep = sep || strings.Contains(l, "┼")
	}
	if !sep {
		t.Fatalf("no rule between the wrapped row and the next:\n%s", out)
	}
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > 60 {
			t.Fatalf("line wider than the screen (%d): %q", w, l)
		}
		if strings.HasSuffix(l, " ") {
			t.Fatalf("trailing padding: %q", l)
		}
	}
	if !strings.HasPrefix(strings.TrimSpace(out), "Before.") || !strings.HasSuffix(strings.TrimSpace(out), "After.") {
		t.Fatalf("the text around the table is lost:\n%s", out)
	}

	compact := renderMD(t, "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n", 60)
	if n := strings.Count(compact, "┼"); n != 1 {
		t.Fatalf("a table that fits wants only the header rule, got %d:\n%s", n, compact)
	}
}

// A table inside a code fence is code, not a table.
func TestMarkdownTableInFenceIsCode(t *testing.T) {
	out := renderMD(t, "```\n| a | b |\n|---|---|\n| 1 | 2 |\n```", 60)
	if !strings.Contains(out, "| a | b |") || strings.Contains(out, "┼") {
		t.Fatalf("a fenced table was drawn as a table:\n%s", out)
	}
}
