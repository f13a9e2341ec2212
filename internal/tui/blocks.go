package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/termtext"
)

// sanitize makes text from a model or a tool safe to draw (termtext: escape
// sequences removed, other controls shown as escapes; a stray ESC could corrupt the
// terminal or the frame); tabs become spaces for the width arithmetic.
func sanitize(s string) string {
	s = termtext.String(s)
	if strings.IndexByte(s, '\t') < 0 {
		return s
	}
	return strings.ReplaceAll(s, "\t", "    ")
}

// wrap soft-wraps s to width cells (words first, hard breaks when a word is longer).
func wrap(s string, width int) string {
	if width < 4 {
		width = 4
	}
	return ansi.Wrap(s, width, "")
}

// indent prefixes every line of s.
func indent(s, first, rest string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		if i == 0 {
			lines[i] = first + lines[i]
		} else {
			lines[i] = rest + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

// renderUser draws a user message: a marker and the text, wrapped.
func renderUser(th Theme, text string, width int, note string) string {
	text = strings.TrimRight(sanitize(text), "\n ")
	body := wrap(text, width-2)
	lines := strings.Split(body, "\n")
	for i := range lines {
		lines[i] = th.User.Render(lines[i])
	}
	out := indent(strings.Join(lines, "\n"), th.UserMark.Render("›")+" ", "  ")
	if note != "" {
		out += "  " + th.Dim.Render(note)
	}
	return out
}

// renderNotice draws a one-line system note (dimmed, indented like replies).
func renderNotice(th Theme, text string, width int) string {
	return indent(wrap(sanitize(text), width-2), "  ", "  ")
}

// renderReasoning draws a finished reasoning block: collapsed to one line unless
// expanded is set.
func renderReasoning(th Theme, text string, d time.Duration, width int, expanded bool) string {
	text = strings.TrimSpace(sanitize(text))
	words := len(strings.Fields(text))
	head := fmt.Sprintf("✻ thought for %s · %d words", fmtDuration(d), words)
	if !expanded {
		return "  " + th.Reasoning.Render(head+" (ctrl+o shows reasoning)")
	}
	body := wrap(text, width-4)
	lines := strings.Split(body, "\n")
	for i := range lines {
		lines[i] = "  │ " + th.Reasoning.Render(lines[i])
	}
	return "  " + th.Reasoning.Render(head) + "\n" + strings.Join(lines, "\n")
}

// liveReasoning draws reasoning while it streams: its last few lines, dimmed.
func liveReasoning(th Theme, text string, width, maxLines int) string {
	text = strings.TrimSpace(sanitize(text))
	body := lastLines(wrap(text, width-4), maxLines)
	lines := strings.Split(body, "\n")
	for i := range lines {
		lines[i] = "  │ " + th.Reasoning.Render(lines[i])
	}
	return "  " + th.Reasoning.Render("✻ thinking…") + "\n" + strings.Join(lines, "\n")
}

// toolCall is one tool call as the TUI tracks it.
type toolCall struct {
	ID       string
	Name     string
	Args     json.RawMessage
	Started  time.Time
	Approval *event.Approval
	// Progress is the running call's latest tool_call_progress.
	Progress *event.Progress
	// Filled when it ends.
	Done     bool
	Output   string
	Diff     string // the change the tool computed (tool.Result.Diff)
	IsError  bool
	Denied   string // "" or the decision ("denied", "denied_by_default")
	Duration time.Duration
	Trunc    bool
}

// keyArgNames: the argument worth showing on a tool's one line, per tool.
var keyArgNames = map[string][]string{
	"shell":        {"command", "cmd"},
	"read_file":    {"path", "file"},
	"write_file":   {"path", "file"},
	"edit_file":    {"path", "file"},
	"list_files":   {"path", "dir", "pattern"},
	"grep_files":   {"pattern", "query"},
	"load_skill":   {"name"},
	"kill_process": {"id", "pid"},
}

// keyArg picks the one argument that identifies a call: a known key for known tools,
// otherwise the first string argument in the order the model wrote them.
func keyArg(name string, args json.RawMessage) string {
	if len(args) == 0 {
		return ""
	}
	var m map[string]any
	if err := json.Unmarshal(args, &m); err != nil {
		return ""
	}
	if name == "todo_write" {
		if l, ok := m["todos"].([]any); ok {
			return fmt.Sprintf("%d items", len(l))
		}
	}
	for _, k := range keyArgNames[name] {
		if v, ok := m[k]; ok {
			return oneLine(fmt.Sprint(v))
		}
	}
	for _, k := range orderedKeys(args) {
		if v, ok := m[k].(string); ok && v != "" {
			return oneLine(v)
		}
	}
	return ""
}

// orderedKeys lists the top-level keys of a JSON object in source order.
func orderedKeys(raw json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		k, _ := t.(string)
		keys = append(keys, k)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return keys
		}
	}
	return keys
}

func oneLine(s string) string {
	s = sanitize(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return strings.TrimSpace(s)
}

func fmtDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	default:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
}

// toolHeader is the compact line of a call: marker, name, key argument, status and
// duration. spin is the spinner frame for a running call.
func toolHeader(th Theme, c *toolCall, width int, now time.Time, spin string) string {
	var mark, status string
	switch {
	case !c.Done && c.Approval != nil:
		mark, status = th.Warn.Render("?"), th.Warn.Render("awaiting approval")
	case !c.Done:
		mark, status = th.Accent.Render(spin), th.Dim.Render(fmtDuration(now.Sub(c.Started).Truncate(100*time.Millisecond)))
		if c.Progress != nil {
			// The tool's own words (an MCP server's): sanitized, and never more than
			// half the line.
			p := ansi.Truncate(oneLine(c.Progress.String()), max(8, width/2), "…")
			status = th.Accent.Render(p) + "  " + status
		}
	case c.Denied != "":
		mark, status = th.Err.Render("⊘"), th.Err.Render(strings.ReplaceAll(c.Denied, "_", " "))
	case c.IsError && c.Duration == 0:
		mark, status = th.Err.Render("✗"), th.Err.Render("failed")
	case c.IsError:
		mark, status = th.Err.Render("✗"), th.Err.Render("failed "+fmtDuration(c.Duration))
	case c.Duration == 0:
		mark = th.OK.Render("✓")
	default:
		mark, status = th.OK.Render("✓"), th.Dim.Render(fmtDuration(c.Duration))
	}
	arg := keyArg(c.Name, c.Args)
	name := sanitize(c.Name) // the model names the tool, even an unknown one
	statusW := ansi.StringWidth(status)
	room := width - 4 - ansi.StringWidth(name) - 1 - statusW - 2
	if room < 8 {
		arg = ""
	} else {
		arg = ansi.Truncate(arg, room, "…")
	}
	line := "  " + mark + " " + th.ToolName.Render(name)
	if arg != "" {
		line += " " + arg
	}
	if status == "" {
		return line
	}
	return line + "  " + status
}

// renderTool draws a finished call: the header, then a diff for edits and writes, or
// a short preview of the output (errors in red).
func renderTool(th Theme, c *toolCall, width int) string {
	var b strings.Builder
	b.WriteString(toolHeader(th, c, width, time.Time{}, ""))
	body := toolBody(th, c, width-4)
	if body != "" {
		b.WriteString("\n")
		b.WriteString(body)
	}
	return b.String()
}

const (
	previewLines = 6
	diffLines    = 24
)

func toolBody(th Theme, c *toolCall, width int) string {
	if c.Denied != "" {
		msg := strings.TrimSpace(sanitize(c.Output))
		if msg == "" {
			return ""
		}
		return prefixLines(th.Err, firstLines(wrap(msg, width-2), 2), "    ")
	}
	if !c.IsError {
		if d := toolDiff(c); d != "" {
			return renderDiff(th, d, width, diffLines)
		}
	}
	out := strings.TrimRight(sanitize(c.Output), "\n ")
	if out == "" {
		return ""
	}
	style := th.Dim
	if c.IsError {
		style = th.Err
	}
	if c.Name == "todo_write" && !c.IsError {
		if t := renderTodos(th, c.Args); t != "" {
			return t
		}
	}
	lines := strings.Split(out, "\n")
	n := len(lines)
	shown := lines
	if n > previewLines {
		shown = lines[:previewLines]
	}
	var b strings.Builder
	for i, l := range shown {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("    ")
		b.WriteString(style.Render(ansi.Truncate(l, width-2, "…")))
	}
	if n > previewLines {
		b.WriteString("\n    " + th.Dim.Render(fmt.Sprintf("… %d more lines", n-previewLines)))
	}
	return b.String()
}

func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, "\n")
}

func prefixLines(st interface{ Render(...string) string }, s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = prefix + st.Render(lines[i])
	}
	return strings.Join(lines, "\n")
}

// toolDiff returns the diff to show for a call: the one the tool computed, else the
// one its approval showed, else its output when that is a diff (MCP and other tools
// that print one).
func toolDiff(c *toolCall) string {
	if c.Diff != "" {
		return c.Diff
	}
	if c.Approval != nil && c.Approval.Diff != "" {
		return c.Approval.Diff
	}
	if looksLikeDiff(c.Output) {
		// "edited main.go (1 replacement)\n--- a/main.go ...": keep the diff itself.
		if i := strings.Index(c.Output, "\n--- "); i >= 0 {
			return c.Output[i+1:]
		}
		return c.Output
	}
	return ""
}

func looksLikeDiff(s string) bool {
	return strings.HasPrefix(s, "--- ") || strings.HasPrefix(s, "diff ") || strings.Contains(s, "\n@@ ") || strings.HasPrefix(s, "@@ ")
}

// renderDiff colours a unified diff, keeping at most maxLines lines.
func renderDiff(th Theme, d string, width, maxLines int) string {
	d = strings.TrimRight(sanitize(d), "\n")
	lines := strings.Split(d, "\n")
	extra := 0
	if len(lines) > maxLines {
		extra = len(lines) - maxLines
		lines = lines[:maxLines]
	}
	for i, l := range lines {
		l = ansi.Truncate(l, width, "…")
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			l = th.ToolName.Render(l)
		case strings.HasPrefix(l, "@@"):
			l = th.DiffHunk.Render(l)
		case strings.HasPrefix(l, "+"):
			l = th.DiffAdd.Render(l)
		case strings.HasPrefix(l, "-"):
			l = th.DiffDel.Render(l)
		default:
			l = th.Dim.Render(l)
		}
		lines[i] = "    " + l
	}
	if extra > 0 {
		lines = append(lines, "    "+th.Dim.Render(fmt.Sprintf("… %d more diff lines", extra)))
	}
	return strings.Join(lines, "\n")
}

// todoItem is the todo plugin's item (its todo_write arguments).
type todoItem struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

func parseTodos(args json.RawMessage) ([]todoItem, bool) {
	var a struct {
		Todos []todoItem `json:"todos"`
	}
	if json.Unmarshal(args, &a) != nil || a.Todos == nil {
		return nil, false
	}
	return a.Todos, true
}

func renderTodos(th Theme, args json.RawMessage) string {
	items, ok := parseTodos(args)
	if !ok {
		return ""
	}
	if len(items) == 0 {
		return "    " + th.Dim.Render("(empty list)")
	}
	lines := make([]string, len(items))
	for i, it := range items {
		switch it.Status {
		case "completed":
			lines[i] = "    " + th.OK.Render("☒ ") + th.Dim.Render(sanitize(it.Content))
		case "in_progress":
			lines[i] = "    " + th.Accent.Render("▶ "+sanitize(it.Content))
		default:
			lines[i] = "    ☐ " + sanitize(it.Content)
		}
	}
	return strings.Join(lines, "\n")
}

// renderApproval draws a pending approval: what is asked (the command split into its
// subcommands, or the path and diff) and the numbered answers, sel highlighted.
func renderApproval(th Theme, c *toolCall, width int, more int, sel int, armed bool) string {
	a := c.Approval
	var b strings.Builder
	title := "Allow " + sanitize(c.Name) + "?"
	switch a.Kind {
	case "command":
		title = "Run this command?"
	case "path":
		title = "Allow access to " + a.Path + "?"
	case "network":
		title = "Allow network access?"
	case "mcp":
		title = "Allow the MCP tool " + c.Name + "?"
	case "question":
		title = "The agent asks you"
	case "sampling":
		title = "Let an MCP server use your model? (" + c.Name + ")"
	case "url":
		title = "An MCP server asks you to open a URL (lovia does not open it)"
	}
	if more > 0 {
		title += fmt.Sprintf("  (+%d more waiting)", more)
	}
	bar := th.Warn.Render("│ ")
	b.WriteString(th.Warn.Render("╭ ") + th.ToolName.Render(ansi.Truncate(sanitize(title), width-4, "…")) + "\n")
	if s := strings.TrimSpace(sanitize(a.Summary)); s != "" {
		for _, l := range strings.Split(wrap(s, width-4), "\n") {
			b.WriteString(bar + l + "\n")
		}
	}
	if len(a.Subcommands) > 1 && a.Kind != "question" {
		for _, sc := range a.Subcommands {
			b.WriteString(bar + th.Dim.Render("  • ") + ansi.Truncate(oneLine(sc), width-8, "…") + "\n")
		}
	}
	if a.URL != "" {
		b.WriteString(bar + th.ToolName.Render("URL: ") + ansi.Truncate(sanitize(a.URL), width-9, "…") + "\n")
	}
	if a.Path != "" && a.Kind != "path" {
		b.WriteString(bar + th.Dim.Render("path: ") + sanitize(a.Path) + "\n")
	}
	if a.Diff != "" {
		for _, l := range strings.Split(renderDiff(th, a.Diff, width-6, 12), "\n") {
			b.WriteString(bar + l[min(2, len(l)):] + "\n")
		}
	}
	opts := approvalOptions(a)
	for i, o := range opts {
		mark := "  "
		label := th.OK.Render(fmt.Sprintf("%d.", i+1)) + " " + o.label
		if o.danger {
			label = th.Err.Render(fmt.Sprintf("%d.", i+1)) + " " + o.label
		}
		if i == sel {
			mark = th.Warn.Render("› ")
			label = th.ToolName.Render(fmt.Sprintf("%d. %s", i+1, o.label))
		}
		b.WriteString(bar + ansi.Truncate(mark+label, width-4, "…") + "\n")
	}
	hint := fmt.Sprintf("↑/↓ or 1–%d to choose, Enter to confirm · typing goes to the prompt", len(opts))
	if sel >= 0 && armed {
		hint = "Enter confirms " + opts[sel].label
	}
	b.WriteString(th.Warn.Render("╰ ") + th.Dim.Render(ansi.Truncate(hint, width-2, "…")))
	return b.String()
}
