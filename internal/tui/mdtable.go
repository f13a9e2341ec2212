package tui

import (
	"regexp"
	"strings"

	"charm.land/lipgloss/v2"
	"charm.land/lipgloss/v2/table"
	"github.com/charmbracelet/x/ansi"
)

// Tables are drawn here rather than by glamour: when a cell wraps, its lines and the
// next row's run together unless rows are ruled off, and glamour draws no row
// separators. A table without wrapped cells stays compact.

// mdSegment is a run of markdown source that is either a table or everything else.
type mdSegment struct {
	src   string
	table bool
}

var delimRow = regexp.MustCompile(`^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$`)

// splitTables cuts src into table and non-table segments; lines in code fences are
// never a table.
func splitTables(src string) []mdSegment {
	if !strings.Contains(src, "|") {
		return []mdSegment{{src: src}}
	}
	lines := strings.Split(src, "\n")
	var segs []mdSegment
	var cur []string
	inFence := false
	var fch byte
	var flen int
	flushText := func() {
		if len(cur) > 0 {
			segs = append(segs, mdSegment{src: strings.Join(cur, "\n")})
			cur = nil
		}
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		t := strings.TrimLeft(l, " \t")
		if inFence {
			if closesFence(t, fch, flen) {
				inFence = false
			}
			cur = append(cur, l)
			continue
		}
		if ch, n := fenceOpen(t); n > 0 && len(l)-len(t) <= 3 {
			inFence, fch, flen = true, ch, n
			cur = append(cur, l)
			continue
		}
		if strings.Contains(l, "|") && i+1 < len(lines) && delimRow.MatchString(lines[i+1]) &&
			len(tableCells(l)) == len(tableCells(lines[i+1])) && strings.Contains(lines[i+1], "-") {
			j := i + 2
			for j < len(lines) && strings.TrimSpace(lines[j]) != "" && strings.Contains(lines[j], "|") {
				j++
			}
			flushText()
			segs = append(segs, mdSegment{src: strings.Join(lines[i:j], "\n"), table: true})
			i = j - 1
			continue
		}
		cur = append(cur, l)
	}
	flushText()
	return segs
}

// tableCells splits one table row on its unescaped pipes.
func tableCells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, `\|`) {
		row = row[:len(row)-1]
	}
	var cells []string
	var b strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row) && row[i+1] == '|':
			b.WriteByte('|')
			i++
		case row[i] == '|':
			cells = append(cells, strings.TrimSpace(b.String()))
			b.Reset()
		default:
			b.WriteByte(row[i])
		}
	}
	return append(cells, strings.TrimSpace(b.String()))
}

// inlinePlain drops inline markdown markers from a cell (bold, italics, code
// ticks), so what is copied from the table is the text.
var inlineMarks = strings.NewReplacer("**", "", "__", "", "`", "")

// renderTable draws a GFM table at width (with the document's 2-column margin).
// Rows are ruled off from each other when any cell had to wrap.
func renderTable(src string, th Theme, width int) string {
	lines := strings.Split(src, "\n")
	if len(lines) < 2 {
		return src
	}
	header := tableCells(lines[0])
	aligns := tableCells(lines[1])
	n := len(header)
	var rows [][]string
	for _, l := range lines[2:] {
		cells := tableCells(l)
		row := make([]string, n)
		for i := range row {
			if i < len(cells) {
				row[i] = sanitize(inlineMarks.Replace(cells[i]))
			}
		}
		rows = append(rows, row)
	}
	for i := range header {
		header[i] = sanitize(inlineMarks.Replace(header[i]))
	}
	build := func(ruled bool) string {
		t := table.New().Headers(header...).Rows(rows...).Width(max(10, width-2)).Wrap(true).
			Border(lipgloss.NormalBorder()).BorderTop(false).BorderBottom(false).BorderLeft(false).BorderRight(false).
			BorderRow(ruled).BorderStyle(th.Border).
			StyleFunc(func(row, col int) lipgloss.Style {
				st := lipgloss.NewStyle().Padding(0, 1)
				if col < len(aligns) {
					a := aligns[col]
					switch {
					case strings.HasPrefix(a, ":") && strings.HasSuffix(a, ":"):
						st = st.Align(lipgloss.Center)
					case strings.HasSuffix(a, ":"):
						st = st.Align(lipgloss.Right)
					}
				}
				if row == table.HeaderRow {
					st = st.Inherit(th.ToolName)
				}
				return st
			})
		return t.String()
	}
	out := build(false)
	// One line per row, plus the header and its rule: nothing wrapped.
	if strings.Count(out, "\n")+1 > len(rows)+2 {
		out = build(true)
	}
	var b strings.Builder
	for i, l := range strings.Split(out, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("  " + strings.TrimRight(l, " "))
	}
	return trimStyledRight(b.String())
}

// trimStyledRight drops trailing spaces (styled or not) from each line.
func trimStyledRight(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if ansi.StringWidth(l) > 0 {
			lines[i] = trailingPad.ReplaceAllString(l, "")
			if strings.Contains(lines[i], "\x1b[") {
				lines[i] += "\x1b[m"
			}
		}
	}
	return strings.Join(lines, "\n")
}
