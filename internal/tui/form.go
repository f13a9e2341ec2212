package tui

import (
	"encoding/json"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/lovia-dev/lovia/internal/elicit"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/tool"
)

// An MCP server's elicitation (an approval of kind "form") is a small form: one row
// per field, then accept, decline and cancel. ↑/↓ choose a row; Enter on a field
// edits it in the prompt (a yes/no field toggles), Enter on accept sends the values
// once they satisfy the schema; Esc cancels. Values start at the schema's defaults.

// formState is the form of the approval on screen.
type formState struct {
	ap      *event.Approval
	form    *elicit.Form
	err     string // the last problem, shown under the form
	values  map[string]any
	sel     int
	editing bool
	draft   string // the prompt's text while a field is edited
}

// formActions follow the fields.
var formActions = []string{"accept (send the form)", "decline", "cancel"}

// formFor returns the state of a's form, starting it afresh for a new approval.
func (m *Model) formFor(a *event.Approval) *formState {
	if m.form != nil && m.form.ap == a {
		return m.form
	}
	f, err := elicit.Parse(a.Form)
	st := &formState{ap: a, values: map[string]any{}, sel: 0}
	if err != nil {
		st.err = "this form cannot be shown: " + err.Error()
		st.form = &elicit.Form{}
	} else {
		st.form = f
		st.values = f.Defaults()
	}
	m.form = st
	return st
}

func (st *formState) rows() int { return len(st.form.Fields) + len(formActions) }

// formKey handles k while a form is the approval on screen.
func (m *Model) formKey(k tea.KeyPressMsg) (tea.Cmd, bool) {
	st := m.formFor(m.headApproval())
	s := k.String()
	if st.editing {
		fd := st.form.Fields[st.sel]
		switch s {
		case "enter":
			v, err := fd.Input(m.expandPastes(m.input.Value()))
			if err != nil {
				st.err = err.Error()
				return nil, true
			}
			if v == nil {
				delete(st.values, fd.Name)
			} else {
				st.values[fd.Name] = v
			}
			st.err, st.editing = "", false
			m.input.SetValue(st.draft)
			return nil, true
		case "esc":
			st.err, st.editing = "", false
			m.input.SetValue(st.draft)
			return nil, true
		}
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(k)
		return cmd, true
	}
	switch s {
	case "up", "shift+tab":
		if st.sel > 0 {
			st.sel--
		}
		return nil, true
	case "down", "tab":
		if st.sel < st.rows()-1 {
			st.sel++
		}
		return nil, true
	case "esc":
		m.answerForm(tool.Decision{Message: elicit.CancelMessage})
		return nil, true
	case "enter":
		if strings.TrimSpace(m.input.Value()) != "" {
			return nil, false // the prompt's text is queued as steering
		}
		if st.sel < len(st.form.Fields) {
			fd := st.form.Fields[st.sel]
			if fd.Type == elicit.TypeBoolean {
				b, _ := st.values[fd.Name].(bool)
				st.values[fd.Name] = !b
				return nil, true
			}
			st.editing, st.draft = true, m.input.Value()
			m.input.SetValue(fd.Show(st.values[fd.Name]))
			return nil, true
		}
		if !m.apArmed {
			return nil, true // too soon after the form appeared
		}
		switch st.sel - len(st.form.Fields) {
		case 0:
			if st.ap != nil && len(st.ap.Form) > 0 && st.err != "" && strings.HasPrefix(st.err, "this form cannot") {
				return nil, true
			}
			if err := st.form.Validate(st.values); err != nil {
				st.err = err.Error()
				return nil, true
			}
			b, err := json.Marshal(st.values)
			if err != nil {
				st.err = err.Error()
				return nil, true
			}
			m.answerForm(tool.Decision{Allow: true, Message: string(b)})
		case 1:
			m.answerForm(tool.Decision{})
		default:
			m.answerForm(tool.Decision{Message: elicit.CancelMessage})
		}
		return nil, true
	}
	return nil, false
}

func (m *Model) answerForm(d tool.Decision) {
	m.form = nil
	m.answer(d)
}

// renderForm draws the form of c's approval.
func (m *Model) renderForm(th Theme, c *toolCall, width int, more int) string {
	st := m.formFor(c.Approval)
	var b strings.Builder
	title := "An MCP server asks you to fill in a form"
	if more > 0 {
		title += fmt.Sprintf("  (+%d more waiting)", more)
	}
	bar := th.Warn.Render("│ ")
	b.WriteString(th.Warn.Render("╭ ") + th.ToolName.Render(ansi.Truncate(title, width-4, "…")) + "\n")
	if s := strings.TrimSpace(sanitize(c.Approval.Summary)); s != "" {
		for _, l := range strings.Split(wrap(s, width-4), "\n") {
			b.WriteString(bar + l + "\n")
		}
	}
	for i, fd := range st.form.Fields {
		label := sanitize(oneLine(fd.Label()))
		if fd.Required {
			label += "*"
		}
		val := sanitize(oneLine(fd.Show(st.values[fd.Name])))
		if val == "" {
			val = th.Dim.Render("(empty)")
		}
		hint := fd.Type
		switch fd.Type {
		case elicit.TypeEnum, elicit.TypeMulti:
			var opts []string
			for j, o := range fd.Options {
				opts = append(opts, fmt.Sprintf("%d %s", j+1, sanitize(oneLine(o.Label))))
			}
			hint = strings.Join(opts, " · ")
			if fd.Type == elicit.TypeMulti {
				hint = "several, comma-separated: " + hint
			}
		case elicit.TypeBoolean:
			hint = "Enter toggles"
		case elicit.TypeString:
			hint = ""
			if fd.Format != "" {
				hint = sanitize(fd.Format)
			}
		}
		line := label + ": " + val
		if hint != "" {
			line += th.Dim.Render("  " + hint)
		}
		mark := "  "
		if i == st.sel {
			mark = th.Warn.Render("› ")
			if st.editing {
				mark = th.Warn.Render("✎ ")
			}
		}
		b.WriteString(bar + ansi.Truncate(mark+line, width-4, "…") + "\n")
		if i == st.sel && fd.Description != "" {
			b.WriteString(bar + th.Dim.Render(ansi.Truncate("    "+sanitize(oneLine(fd.Description)), width-4, "…")) + "\n")
		}
	}
	for j, a := range formActions {
		i := len(st.form.Fields) + j
		style := th.OK
		if j > 0 {
			style = th.Err
		}
		label := style.Render(a)
		mark := "  "
		if i == st.sel {
			mark = th.Warn.Render("› ")
			label = th.ToolName.Render(a)
		}
		b.WriteString(bar + mark + label + "\n")
	}
	if st.err != "" {
		b.WriteString(bar + th.Err.Render(ansi.Truncate(sanitize(st.err), width-4, "…")) + "\n")
	}
	hint := "↑/↓ choose · Enter edits a field or confirms · Esc cancels · * required"
	if st.editing {
		hint = "type the value in the prompt · Enter sets it · Esc goes back"
	}
	b.WriteString(th.Warn.Render("╰ ") + th.Dim.Render(ansi.Truncate(hint, width-2, "…")))
	return b.String()
}
