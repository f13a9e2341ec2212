package tui

import (
	"regexp"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/lovia-dev/lovia/internal/termmd"
	"github.com/lovia-dev/lovia/internal/termtext"
)

// markdown renders markdown with one renderer (glamour's, in internal/termmd),
// rebuilt only when the width or theme changes.
type markdown struct {
	theme Theme
	width int
	r     *termmd.Markdown
}

func (md *markdown) render(src string, theme Theme, width int) string {
	width = max(width, 20)
	if md.r == nil || md.width != width || md.theme.Dark != theme.Dark || md.theme.Color != theme.Color {
		md.r = termmd.New(termmd.Options{
			Styles:          theme.glamourStyle(),
			WordWrap:        width - 2, // the document margin is 2
			ChromaFormatter: "terminal256",
		})
		md.width, md.theme = width, theme
	}
	segs := splitTables(src)
	if len(segs) == 1 && !segs[0].table {
		out, err := md.r.Render(src)
		if err != nil {
			return src
		}
		return tidy(out)
	}
	// Tables are drawn by renderTable (mdtable.go); the rest by glamour, the blocks
	// separated by one blank line as glamour separates its own.
	var parts []string
	for _, sg := range segs {
		if sg.table {
			parts = append(parts, renderTable(sg.src, theme, width))
			continue
		}
		if strings.TrimSpace(sg.src) == "" {
			continue
		}
		out, err := md.r.Render(sg.src)
		if err != nil {
			out = sg.src
		}
		if t := tidy(out); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n\n")
}

// trailingPad matches what glamour pads each line with: spaces wrapped in SGR codes.
var trailingPad = regexp.MustCompile(`(?:\x1b\[[0-9;]*m| )+$`)

// tidy strips glamour's right padding (styled spaces up to the wrap width) from
// every line, so scrollback copies cleanly and narrow terminals do not wrap, and drops
// leading and trailing blank lines. Styles are reset at each line end.
func tidy(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		t := trailingPad.ReplaceAllString(l, "")
		if t != l && strings.Contains(l, "\x1b[") && strings.Contains(t, "\x1b[") {
			t += "\x1b[m"
		}
		lines[i] = t
	}
	start, end := 0, len(lines)
	for start < end && ansi.Strip(lines[start]) == "" {
		start++
	}
	for end > start && ansi.Strip(lines[end-1]) == "" {
		end--
	}
	return strings.Join(lines[start:end], "\n")
}

// mdStream accumulates a streaming markdown reply and splits off settled top-level
// blocks (paragraphs, closed code fences, headings, lists once something else starts)
// as soon as they can no longer change. Settled blocks are rendered and printed once;
// only the unsettled tail is re-rendered per delta.
type mdStream struct {
	// san sanitizes the raw deltas with state, so an escape sequence split across
	// two deltas is still removed.
	san      termtext.Stream
	buf      strings.Builder
	settled  int // bytes handed out by takeSettled
	scan     int // bytes scanned (always at a line start)
	boundary int // latest block boundary found

	inFence       bool
	fenceChar     byte
	fenceLen      int
	fenceIndented bool
	fenceStart    int // offset of the opening fence line
	blank         bool
	ended         bool // the previous line ended a block (closing fence, heading)
	prevList      bool

	// tail render cache
	cacheKey  [4]int
	cacheOut  string
	cacheHave bool
}

func (s *mdStream) Len() int       { return s.buf.Len() }
func (s *mdStream) String() string { return s.buf.String() }

// Append adds a delta and scans any newly completed lines for block boundaries.
// AppendRaw sanitizes a raw model delta and appends it.
func (s *mdStream) AppendRaw(delta string) {
	if d := sanitize(s.san.String(delta)); d != "" {
		s.Append(d)
	}
}

func (s *mdStream) Append(delta string) {
	s.buf.WriteString(delta)
	text := s.buf.String()
	last := strings.LastIndexByte(text, '\n')
	for s.scan <= last {
		nl := strings.IndexByte(text[s.scan:], '\n')
		ls, le := s.scan, s.scan+nl
		s.line(text, ls, le)
		s.scan = le + 1
	}
	// A started line after a blank one begins a new block as soon as its first
	// character rules out a list, fence, heading or indented continuation.
	if !s.inFence && (s.blank || s.ended) && s.scan < len(text) && !strings.ContainsRune(" \t-*+#>|`~=_0123456789", rune(text[s.scan])) {
		s.mark(s.scan)
	}
}

func (s *mdStream) mark(off int) {
	if off > s.settled && off > s.boundary {
		s.boundary = off
	}
}

// line classifies one complete line [ls, le) of text.
func (s *mdStream) line(text string, ls, le int) {
	line := text[ls:le]
	trimmed := strings.TrimLeft(line, " \t")
	indent := len(line) - len(trimmed)
	if s.inFence {
		if closesFence(trimmed, s.fenceChar, s.fenceLen) {
			s.inFence = false
			if !s.fenceIndented {
				s.mark(le + 1)
				s.ended = true
			}
			s.blank, s.prevList = false, false
		}
		return
	}
	if ch, n := fenceOpen(trimmed); n > 0 && indent <= 3 {
		if indent == 0 {
			s.mark(ls)
		}
		s.inFence, s.fenceChar, s.fenceLen, s.fenceIndented, s.fenceStart = true, ch, n, indent > 0, ls
		s.blank, s.ended = false, false
		return
	}
	if strings.TrimSpace(trimmed) == "" {
		s.blank = true
		return
	}
	isList := isListItem(trimmed)
	if indent == 0 {
		heading := strings.HasPrefix(trimmed, "#")
		if s.blank || s.ended || heading {
			if !(isList && s.prevList) {
				s.mark(ls)
			}
		}
		s.prevList = isList || (s.prevList && !s.blank)
		s.ended = heading
		if heading {
			s.mark(le + 1)
		}
	}
	s.blank = false
}

// takeSettled returns the markdown source settled since the last call ("" if none).
func (s *mdStream) takeSettled() string {
	if s.boundary <= s.settled {
		return ""
	}
	chunk := s.buf.String()[s.settled:s.boundary]
	s.settled = s.boundary
	s.cacheHave = false
	return chunk
}

// tail returns the unsettled source.
func (s *mdStream) tail() string { return s.buf.String()[s.settled:] }

// renderTail renders the unsettled tail, keeping at most maxLines of output. A long
// open code fence is cut to its last lines before rendering, so a growing code block
// costs the same per delta however long it gets.
func (s *mdStream) renderTail(md *markdown, th Theme, width, maxLines int) string {
	key := [4]int{s.settled, s.buf.Len(), width, maxLines}
	if s.cacheHave && s.cacheKey == key {
		return s.cacheOut
	}
	src := s.tail()
	if s.inFence && !s.fenceIndented && s.fenceStart >= s.settled {
		text := s.buf.String()
		body := text[s.fenceStart:]
		if nl := strings.IndexByte(body, '\n'); nl >= 0 {
			head, code := body[:nl+1], body[nl+1:]
			if lines := strings.Split(code, "\n"); len(lines) > maxLines {
				code = strings.Join(lines[len(lines)-maxLines:], "\n")
			}
			src = text[s.settled:s.fenceStart] + head + code
		}
	}
	out := ""
	if strings.TrimSpace(src) != "" {
		out = md.render(src, th, width)
	}
	out = lastLines(out, maxLines)
	s.cacheKey, s.cacheOut, s.cacheHave = key, out, true
	return out
}

func fenceOpen(t string) (byte, int) {
	if len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return 0, 0
	}
	ch := t[0]
	n := 0
	for n < len(t) && t[n] == ch {
		n++
	}
	if n < 3 || (ch == '`' && strings.Contains(t[n:], "`")) {
		return 0, 0
	}
	return ch, n
}

func closesFence(t string, ch byte, n int) bool {
	t = strings.TrimRight(t, " \t\r")
	if len(t) < n {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] != ch {
			return false
		}
	}
	return true
}

func isListItem(t string) bool {
	if len(t) >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && (t[1] == ' ' || t[1] == '\t') {
		return true
	}
	i := 0
	for i < len(t) && i < 9 && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	return i > 0 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && (t[i+1] == ' ' || t[i+1] == '\t')
}

// lastLines keeps the last n lines of s.
func lastLines(s string, n int) string {
	if n <= 0 {
		return ""
	}
	count := 0
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' {
			count++
			if count == n {
				return s[i+1:]
			}
		}
	}
	return s
}
