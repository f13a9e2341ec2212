package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/mailbox"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

// Messages the model receives from its commands.
type (
	runStartedMsg struct {
		run    Handle
		err    error
		resume bool
	}
	eventsMsg struct {
		run    Handle
		evs    []event.Event
		closed bool
	}
	printedMsg  struct{}
	tickMsg     struct{ gen int }
	filesMsg    struct{ files []string }
	sessionsMsg struct {
		list []SessionInfo
		err  error
	}
	historyMsg struct {
		id      string
		entries []transcript.Entry
		err     error
	}
	editorMsg struct {
		text string
		err  error
	}
)

// printFunc turns text into a command that prints it above the live region. The
// default is tea.Println; tests capture instead.
type printFunc func(string) tea.Cmd

// Config configures the root model.
type Config struct {
	Backend   Backend
	Model     string
	SessionID string
	// Prompt, when set, is sent as soon as the program starts.
	Prompt string
	// Root is the directory @ completes files in ("" disables the index).
	Root  string
	Dark  bool
	Color bool
	// ThemeFixed: the user chose light or dark; ignore the terminal's answer.
	ThemeFixed bool
	Width      int
	Height     int
	// Editor is the external editor command for ctrl+g ("" = $VISUAL, $EDITOR, vi).
	Editor string
	Now    func() time.Time
	// Location shows session times (default time.Local).
	Location *time.Location
	// Profile downsamples printed scrollback (the live region is downsampled by
	// Bubble Tea itself). Zero means no conversion.
	Profile colorprofile.Profile
	// ShowHistory prints the session's transcript at start (-c / -s).
	ShowHistory bool
	// Usage is the continued session's token use so far.
	Usage usage.Usage
}

// queuedMsg is a steering message pushed to the mailbox, not yet delivered.
type queuedMsg struct {
	id     string
	text   string
	pushed bool
}

// picker is the /sessions or /model chooser drawn in the live region.
type picker struct {
	title  string
	kind   string // "session" | "model"
	labels []string
	values []string
	usage  []usage.Usage
	sel    int
}

// Model is the root Bubble Tea model: it owns Update; components are plain render
// functions. Update does no I/O: backend calls, file walks and the editor run in
// commands that report back as messages.
type Model struct {
	custom  []slashCommand // the backend's custom commands (custom.go), nil until asked
	ctx     context.Context
	backend Backend
	cfg     Config
	theme   Theme
	md      markdown
	now     func() time.Time
	width   int
	height  int

	input     textarea.Model
	curation  *curation // the proposal the "curate" picker answers (curate.go)
	history   []string
	histPos   int
	histDraft string
	comp      *completion
	files     []string
	escArmed  bool
	editor    string

	// session
	sessionID      string
	model          string
	usage          usage.Usage // finished runs of this TUI session
	runUsage       usage.Usage // the live run's totals
	turn           int
	lastContext    int
	todos          json.RawMessage
	interrupted    string // last interrupted run id
	carry          string // unfinished run the next message carries on (continue.go)
	pendingPrompt  string // initial prompt waiting for the history to print
	evTime         time.Time
	pendingCompact bool

	// live run
	run            Handle
	starting       bool
	stream         mdStream
	reasoning      strings.Builder
	reasoningStart time.Time
	showReasoning  bool
	tools          map[string]*toolCall
	toolOrder      []string
	children       map[string]*child // running subagents
	childOrder     []string
	approvals      []string
	apHead         string // the approval the selection and guard belong to
	apSel          int    // selected answer, -1 for none
	apArmed        bool   // the guard after the approval appeared is over
	apGen          int
	denyMsg        bool // the prompt takes the message of a chosen answer
	textAllow      bool // that answer allows (ask_human) or denies
	quitArmed      bool // one Ctrl-C on an empty prompt; a second quits
	quitGen        int
	interrupting   bool
	denyDraft      string
	queued         []queuedMsg
	queueSeq       int
	spin           int
	tickGen        int
	ticking        bool
	notice         string
	picker         *picker
	rw             rewindState // /undo, /rewind (rewind.go)

	// scrollback output
	outbox   []string
	printing bool
	print    printFunc
	wait     func(Handle) tea.Cmd
	tick     func(time.Duration, func(time.Time) tea.Msg) tea.Cmd
	lastKind byte
	quitting bool
	frames   frames // recent frame heights (render.go)
	pastes   pastes // folded pastes in the prompt (paste.go)
}

// NewModel builds the root model.
func NewModel(ctx context.Context, cfg Config) *Model {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Width == 0 {
		cfg.Width = 80
	}
	if cfg.Height == 0 {
		cfg.Height = 24
	}
	m := &Model{
		ctx:       ctx,
		backend:   cfg.Backend,
		cfg:       cfg,
		theme:     NewTheme(cfg.Dark, cfg.Color),
		now:       cfg.Now,
		width:     cfg.Width,
		height:    cfg.Height,
		sessionID: cfg.SessionID,
		model:     cfg.Model,
		usage:     cfg.Usage,
		tools:     map[string]*toolCall{},
		editor:    cfg.Editor,
	}
	m.print = func(s string) tea.Cmd { return tea.Println(s) }
	m.wait = waitEvents
	m.tick = tea.Tick
	m.input = newInput(m.theme)
	m.input.SetWidth(m.width)
	return m
}

const (
	idlePlaceholder = "Message lovia · / commands · @ files · ctrl+j newline"
	busyPlaceholder = "Type to steer: Enter queues a message for the next turn · Esc interrupts"
)

func newInput(th Theme) textarea.Model {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.Placeholder = idlePlaceholder
	ta.CharLimit = 0
	ta.MaxWidth = 0
	ta.DynamicHeight = true
	ta.MinHeight = 1
	ta.MaxHeight = 8
	ta.MaxContentHeight = 5000
	ta.SetPromptFunc(2, func(pi textarea.PromptInfo) string {
		if pi.LineNumber == 0 {
			return th.UserMark.Render("›") + " "
		}
		return "  "
	})
	st := textarea.DefaultStyles(th.Dark)
	plain := lipgloss.NewStyle()
	for _, s := range []*textarea.StyleState{&st.Focused, &st.Blurred} {
		s.CursorLine = plain
		s.Base = plain
		s.Text = plain
		s.EndOfBuffer = plain
		s.Prompt = plain
		s.Placeholder = th.Dim
	}
	ta.SetStyles(st)
	ta.SetVirtualCursor(false)
	ta.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("shift+enter", "ctrl+j", "alt+enter"))
	ta.Focus()
	return ta
}

// Init starts the file index and the initial prompt or history.
func (m *Model) Init() tea.Cmd {
	var cmds []tea.Cmd
	cmds = append(cmds, m.reindex())
	if m.cfg.Color && !m.cfg.ThemeFixed {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	p := strings.TrimSpace(m.cfg.Prompt)
	if m.cfg.ShowHistory && m.sessionID != "" {
		// The history prints first; an initial prompt follows it (onHistory).
		m.pendingPrompt = p
		cmds = append(cmds, m.loadHistory(m.sessionID))
	} else if p != "" {
		cmds = append(cmds, m.submit(p))
	}
	cmds = append(cmds, m.flush())
	return tea.Batch(cmds...)
}

// SessionID is the current session ("" before the first run).
func (m *Model) SessionID() string { return m.sessionID }

// ActiveRun is the live run, if any.
func (m *Model) ActiveRun() Handle { return m.run }

// Update handles one message. It never blocks and does no I/O.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	return m, tea.Batch(cmd, m.syncApproval(), m.flush(), m.ensureTick())
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	if cmd, ok := m.rewindMsg(msg); ok {
		return cmd
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 20), max(msg.Height, 5)
		m.input.SetWidth(m.width)
		return nil
	case tea.BackgroundColorMsg:
		if m.cfg.Color && msg.IsDark() != m.theme.Dark {
			m.theme = NewTheme(msg.IsDark(), true)
			v := m.input.Value()
			m.input = newInput(m.theme)
			m.input.SetWidth(m.width)
			m.input.SetValue(v)
		}
		return nil
	case printedMsg:
		m.printing = false
		return nil
	case applyMsg:
		return msg(m) // habits.go
	case ChildEventMsg:
		m.handleChild(msg)
		return nil
	case tickMsg:
		if msg.gen != m.tickGen {
			return nil
		}
		m.ticking = false
		m.spin++
		return nil
	case approvalArmMsg:
		if msg.gen == m.apGen {
			m.apArmed = true
		}
		return nil
	case quitDisarmMsg:
		if msg.gen == m.quitGen {
			m.quitArmed = false
		}
		return nil
	case filesMsg:
		m.files = msg.files
		return nil
	case curateMsg:
		return m.openCuration(msg)
	case curateArmMsg:
		if msg.cur == m.curation && msg.cur != nil {
			msg.cur.armed = true
		}
		return nil
	case curateKeptMsg:
		if msg.err != nil {
			m.notice = "memory: " + msg.err.Error()
		} else {
			m.emit('n', m.theme.Dim.Render(renderNotice(m.theme, fmt.Sprintf("✓ remembered %d fact(s)", msg.n), m.width)))
		}
		return nil
	case runStartedMsg:
		return m.onRunStarted(msg)
	case eventsMsg:
		return m.onEvents(msg)
	case sessionsMsg:
		return m.onSessions(msg)
	case historyMsg:
		return m.onHistory(msg)
	case lastRunMsg:
		return m.onLastRun(msg)
	case editorStartMsg:
		return m.runEditor(msg)
	case editorDoneMsg:
		return readBack(msg.path, msg.err)
	case editorMsg:
		if msg.err != nil {
			m.notice = "editor: " + msg.err.Error()
			return nil
		}
		m.input.SetValue(strings.TrimRight(msg.text, "\n"))
		return nil
	case tea.PasteMsg:
		return m.onPaste(msg) // paste.go
	case tea.KeyPressMsg:
		return m.onKey(msg)
	}
	// The prompt's own messages (clipboard paste, ...) go back to it.
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return cmd
}

// ---- keys ----

func (m *Model) onKey(k tea.KeyPressMsg) tea.Cmd {
	s := k.String()
	if s != "ctrl+c" {
		m.quitArmed = false
	}
	if s == "ctrl+c" {
		switch {
		case m.run != nil && m.interrupting:
			// The run did not stop yet: a second ctrl+c leaves anyway (the run is
			// cancelled; its checkpoint stays resumable).
			return m.quit()
		case m.run != nil:
			m.interrupt()
		case m.input.Value() != "":
			m.input.Reset()
			m.comp = nil
		default:
			return m.ctrlCQuit()
		}
		return nil
	}
	if s == "ctrl+d" && m.input.Value() == "" && m.run == nil {
		return m.quit()
	}
	if m.picker != nil {
		return m.pickerKey(s)
	}
	if len(m.approvals) > 0 && !m.denyMsg {
		if cmd, handled := m.approvalKey(k); handled {
			return cmd
		}
	}
	if m.denyMsg {
		switch s {
		case "enter":
			msg := strings.TrimSpace(m.expandPastes(m.input.Value()))
			m.denyMsg = false
			m.input.SetValue(m.denyDraft)
			m.answer(tool.Decision{Allow: m.textAllow, Message: msg})
			return nil
		case "esc":
			m.denyMsg = false
			m.input.SetValue(m.denyDraft)
			m.apSel = -1 // going back chooses afresh
			return nil
		}
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(k)
		return cmd
	}
	if m.comp != nil {
		switch s {
		case "up", "ctrl+p":
			m.comp.sel = (m.comp.sel + len(m.comp.items) - 1) % len(m.comp.items)
			return nil
		case "down", "ctrl+n":
			m.comp.sel = (m.comp.sel + 1) % len(m.comp.items)
			return nil
		case "esc":
			m.comp = nil
			return nil
		case "tab":
			m.acceptCompletion()
			return nil
		case "enter":
			kind := m.comp.kind
			m.acceptCompletion()
			if kind == '@' {
				return nil
			}
			// a slash command: run it at once
		}
	}
	switch s {
	case "esc":
		if m.run != nil || m.starting {
			m.interrupt()
			return nil
		}
		if m.input.Value() == "" {
			m.escArmed = false
			m.notice = ""
			return nil
		}
		if m.escArmed {
			m.input.Reset()
			m.escArmed = false
			m.notice = ""
			return nil
		}
		m.escArmed = true
		m.notice = "press Esc again to clear the prompt"
		return nil
	case "enter":
		text := m.input.Value()
		if strings.TrimSpace(text) == "" {
			return nil
		}
		m.input.Reset()
		m.comp = nil
		m.escArmed = false
		m.notice = ""
		return m.submit(m.expandPastes(text))
	case "ctrl+g":
		return m.openEditor()
	case "ctrl+o":
		m.showReasoning = !m.showReasoning
		if m.showReasoning {
			m.notice = "reasoning: shown in full"
		} else {
			m.notice = "reasoning: collapsed"
		}
		return nil
	case "up":
		if m.input.Line() == 0 && len(m.history) > 0 {
			if m.histPos == len(m.history) {
				m.histDraft = m.input.Value()
			}
			if m.histPos > 0 {
				m.histPos--
				m.input.SetValue(m.history[m.histPos])
			}
			return nil
		}
	case "down":
		if m.input.Line() == m.input.LineCount()-1 && m.histPos < len(m.history) {
			m.histPos++
			if m.histPos == len(m.history) {
				m.input.SetValue(m.histDraft)
			} else {
				m.input.SetValue(m.history[m.histPos])
			}
			return nil
		}
	}
	m.escArmed = false
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	m.updateCompletion()
	return cmd
}

// currentWord is the whitespace-delimited word before the cursor.
func (m *Model) currentWord() string {
	lines := strings.Split(m.input.Value(), "\n")
	row := m.input.Line()
	if row >= len(lines) {
		return ""
	}
	runes := []rune(lines[row])
	col := min(m.input.Column(), len(runes))
	start := col
	for start > 0 && runes[start-1] != ' ' && runes[start-1] != '\t' {
		start--
	}
	return string(runes[start:col])
}

func (m *Model) updateCompletion() {
	m.comp = nil
	w := m.currentWord()
	switch {
	case strings.HasPrefix(w, "/") && m.input.Line() == 0 && strings.HasPrefix(m.input.Value(), w) && !strings.Contains(m.input.Value(), " "):
		m.comp = completeSlash(w, m.customCommands()...)
	case strings.HasPrefix(w, "@") && m.files != nil:
		m.comp = completeFile(w, m.files, 8)
	case strings.HasPrefix(m.input.Value(), "/model ") && m.input.Line() == 0 && m.backend != nil:
		c := &completion{kind: 'm', word: w}
		for _, mo := range m.backend.Models() {
			if strings.HasPrefix(mo, w) && mo != w {
				c.items = append(c.items, mo)
			}
		}
		if len(c.items) > 0 {
			m.comp = c
		}
	}
}

// acceptCompletion replaces the word before the cursor by the selected item.
func (m *Model) acceptCompletion() {
	c := m.comp
	m.comp = nil
	if c == nil || len(c.items) == 0 {
		return
	}
	for range []rune(c.word) {
		m.input, _ = m.input.Update(tea.KeyPressMsg{Code: tea.KeyBackspace})
	}
	item := c.items[c.sel]
	if c.kind == '@' {
		item += " "
	}
	m.input.InsertString(item)
}

// answer decides the first pending approval.
func (m *Model) answer(d tool.Decision) {
	if len(m.approvals) == 0 {
		return
	}
	id := m.approvals[0]
	m.approvals = m.approvals[1:]
	m.notice = ""
	if c := m.tools[id]; c != nil {
		c.Approval = nil
		c.Started = m.now()
	}
	if m.run != nil {
		if err := m.run.Approve(id, d); err != nil {
			m.notice = "approval: " + err.Error()
		}
	}
}

func (m *Model) pickerKey(s string) tea.Cmd {
	p := m.picker
	if p.kind == "curate" && m.curateKey(s) {
		return nil
	}
	switch s {
	case "up", "ctrl+p", "k":
		if p.sel > 0 {
			p.sel--
		}
	case "down", "ctrl+n", "j":
		if p.sel < len(p.values)-1 {
			p.sel++
		}
	case "esc", "q":
		m.picker = nil
		if p.kind == "curate" {
			return m.keepCurated("none")
		}
	case "enter":
		m.picker = nil
		if len(p.values) == 0 {
			return nil
		}
		v := p.values[p.sel]
		if cmd, ok := m.rewindPick(p.kind, v); ok {
			return cmd
		}
		switch p.kind {
		case "session":
			cmd := m.switchSession(v)
			if p.sel < len(p.usage) && m.sessionID == v {
				m.usage = p.usage[p.sel]
			}
			return cmd
		case "model":
			return m.chooseModel(v)
		case "curate":
			return m.keepCurated(v)
		}
	}
	return nil
}

// ---- submitting ----

func (m *Model) submit(text string) tea.Cmd {
	text = strings.TrimRight(text, "\n ")
	if strings.TrimSpace(text) == "" {
		return nil
	}
	m.pushHistory(text)
	if first := strings.Fields(text)[0]; strings.HasPrefix(first, "/") && strings.Count(first, "/") == 1 {
		// A command; a path such as "/etc/hosts is wrong" is a message.
		if cmd, ok := m.command(text); ok {
			return cmd
		}
		if cmd, ok := m.customCommand(text); ok {
			return cmd
		}
		m.notice = "unknown command " + first + " · /help lists the commands"
		m.input.SetValue(text)
		return nil
	}
	if m.run != nil || m.starting {
		m.queueSeq++
		q := queuedMsg{id: fmt.Sprintf("q%d", m.queueSeq), text: text}
		if m.run != nil {
			m.run.Mailbox().Push(mailbox.Message{ID: q.id, Text: text, Source: "user"})
			q.pushed = true
		}
		m.queued = append(m.queued, q)
		return nil
	}
	m.emit('u', renderUser(m.theme, text, m.width, ""))
	return m.start(StartRequest{SessionID: m.sessionID, Prompt: text, Model: m.model, CarryRunID: m.carry})
}

func (m *Model) pushHistory(text string) {
	if n := len(m.history); n == 0 || m.history[n-1] != text {
		m.history = append(m.history, text)
		if len(m.history) > 500 {
			m.history = m.history[len(m.history)-500:]
		}
	}
	m.histPos = len(m.history)
	m.histDraft = ""
}

func (m *Model) start(req StartRequest) tea.Cmd {
	m.starting = true
	m.notice = ""
	b, ctx := m.backend, m.ctx
	resume := req.ResumeRunID != ""
	return func() tea.Msg {
		var notes []string
		req.Prompt, notes = attachMentions(ctx, b, req.Prompt) // attach.go
		r, err := b.Start(ctx, req)
		msg := runStartedMsg{run: r, err: err, resume: resume}
		if len(notes) == 0 {
			return msg
		}
		return applyMsg(func(m *Model) tea.Cmd {
			for _, n := range notes {
				m.emit('n', m.theme.Dim.Render(renderNotice(m.theme, "↳ "+n, m.width)))
			}
			return m.onRunStarted(msg)
		})
	}
}

func (m *Model) onRunStarted(msg runStartedMsg) tea.Cmd {
	m.starting = false
	if msg.err != nil {
		m.emitError(msg.err)
		m.restoreQueued(nil)
		return nil
	}
	m.run = msg.run
	m.carry, m.interrupted = "", "" // this run resumes or carries on the unfinished one
	m.input.Placeholder = busyPlaceholder
	m.runUsage = usage.Usage{}
	m.turn = 0
	m.resetLive()
	if id := msg.run.SessionID(); id != "" {
		m.sessionID = id
	}
	for i := range m.queued {
		if !m.queued[i].pushed {
			m.run.Mailbox().Push(mailbox.Message{ID: m.queued[i].id, Text: m.queued[i].text, Source: "user"})
			m.queued[i].pushed = true
		}
	}
	if m.pendingCompact {
		m.run.Compact()
		m.pendingCompact = false
	}
	return m.wait(m.run)
}

func (m *Model) resetLive() {
	m.stream = mdStream{}
	m.reasoning.Reset()
	m.tools = map[string]*toolCall{}
	m.toolOrder = nil
	m.approvals = nil
	m.denyMsg = false
}

// waitEvents reads the next events of r: it blocks for one, then takes whatever else
// is already waiting, so a burst of deltas costs one Update and one frame.
func waitEvents(r Handle) tea.Cmd {
	ch := r.Events()
	return func() tea.Msg {
		ev, ok := <-ch
		if !ok {
			return eventsMsg{run: r, closed: true}
		}
		evs := []event.Event{ev}
		for len(evs) < 512 && !ev.Type.Terminal() {
			select {
			case ev, ok = <-ch:
				if !ok {
					return eventsMsg{run: r, evs: evs, closed: true}
				}
				evs = append(evs, ev)
			default:
				return eventsMsg{run: r, evs: evs}
			}
		}
		return eventsMsg{run: r, evs: evs}
	}
}

func (m *Model) interrupt() {
	if m.run == nil {
		if m.starting {
			m.notice = "starting… Esc again once the run is live"
		}
		return
	}
	m.run.Cancel(errs.New(errs.KindCancelled, "interrupted by the user (Esc)", ""))
	m.interrupting = true
	m.notice = "interrupting… (ctrl+c again quits)"
}

// ---- events ----

func (m *Model) onEvents(msg eventsMsg) tea.Cmd {
	if msg.run != m.run || m.run == nil {
		return nil
	}
	done := msg.closed
	for _, ev := range msg.evs {
		m.handleEvent(ev)
		if ev.Type.Terminal() {
			done = true
		}
	}
	if done {
		return m.finishRun(msg.evs)
	}
	// Settled markdown blocks go to scrollback right away.
	m.flushSettled()
	return m.wait(m.run)
}

func (m *Model) handleEvent(ev event.Event) {
	// Durations come from the events' own clock when they carry one: a burst of
	// events handled in one Update must not read as "0ms".
	m.evTime = ev.Time
	switch ev.Type {
	case event.RunStarted:
		if ev.SessionID != "" {
			m.sessionID = ev.SessionID
		}
	case event.TurnStarted:
		m.turn = ev.Turn
	case event.ReasoningDelta:
		if m.reasoning.Len() == 0 {
			m.reasoningStart = m.eventNow()
		}
		m.reasoning.WriteString(ev.Text)
	case event.TextDelta:
		m.closeReasoning()
		m.stream.AppendRaw(ev.Text)
	case event.OutputDiscarded:
		m.reasoning.Reset()
		printed := m.stream.settled > 0
		m.stream = mdStream{}
		note := "↻ the reply restarted"
		if ev.Text != "" {
			note += " (" + ev.Text + ")"
		}
		if printed {
			note += "; the text above was discarded"
		}
		m.emit('n', m.theme.Warn.Render(renderNotice(m.theme, note, m.width)))
	case event.MessageCompleted:
		m.closeReasoning()
		full := sanitize(ev.Text)
		if m.stream.Len() == 0 && full != "" {
			m.stream.Append(full)
		} else if full != "" && strings.HasPrefix(full, m.stream.String()) && len(full) > m.stream.Len() {
			m.stream.Append(full[m.stream.Len():])
		}
		m.flushSettled()
		if t := m.stream.tail(); strings.TrimSpace(t) != "" {
			m.emit('a', m.md.render(t, m.theme, m.width))
		}
		m.stream = mdStream{}
		if ev.Usage != nil {
			m.lastContext = ev.Usage.InputTokens + ev.Usage.OutputTokens
		}
	case event.UserMessageInjected:
		note := "(steering)"
		found := false
		for i, q := range m.queued {
			if q.text == ev.Text || strings.TrimSpace(q.text) == strings.TrimSpace(ev.Text) {
				m.queued = append(m.queued[:i], m.queued[i+1:]...)
				found = true
				break
			}
		}
		if !found {
			note = "(injected)"
		}
		m.emit('u', renderUser(m.theme, ev.Text, m.width, note))
	case event.ToolCallStarted:
		m.flushStreamForTool()
		c := m.tools[ev.CallID]
		if c == nil {
			c = &toolCall{ID: ev.CallID}
			m.tools[ev.CallID] = c
			m.toolOrder = append(m.toolOrder, ev.CallID)
		}
		c.Name, c.Args, c.Started = ev.Name, ev.Args, m.now()
		if ev.Name == "todo_write" {
			m.todos = ev.Args
		}
	case event.ApprovalRequired:
		c := m.tools[ev.CallID]
		if c == nil {
			c = &toolCall{ID: ev.CallID, Name: ev.Name, Args: ev.Args, Started: m.now()}
			m.tools[ev.CallID] = c
			m.toolOrder = append(m.toolOrder, ev.CallID)
		}
		c.Approval = ev.Approval
		if c.Approval == nil {
			c.Approval = &event.Approval{Kind: "tool", Summary: ev.Name}
		}
		m.approvals = append(m.approvals, ev.CallID)
	case event.ToolCallCompleted, event.ToolCallFailed:
		c := m.tools[ev.CallID]
		if c == nil {
			c = &toolCall{ID: ev.CallID, Name: ev.Name, Args: ev.Args}
		}
		if c.Name == "" {
			c.Name = ev.Name
		}
		if len(c.Args) == 0 {
			c.Args = ev.Args
		}
		c.Done = true
		c.Output, c.Diff = ev.Output, ev.Diff
		c.IsError = ev.IsError || ev.Type == event.ToolCallFailed
		c.Trunc = ev.Truncated
		c.Duration = time.Duration(ev.DurationMS) * time.Millisecond
		if ev.Approval != nil && strings.HasPrefix(ev.Approval.Decision, "denied") {
			c.Denied = ev.Approval.Decision
		}
		diffSrc := c.Approval
		if ev.Approval != nil && ev.Approval.Diff != "" {
			diffSrc = ev.Approval
		}
		c.Approval = diffSrc
		m.dropApproval(ev.CallID)
		delete(m.tools, ev.CallID)
		for i, id := range m.toolOrder {
			if id == ev.CallID {
				m.toolOrder = append(m.toolOrder[:i], m.toolOrder[i+1:]...)
				break
			}
		}
		m.emit('t', renderTool(m.theme, c, m.width))
	case event.HandoffOccurred:
		m.emit('n', m.theme.Accent.Render(renderNotice(m.theme, fmt.Sprintf("⇄ handoff: %s → %s", ev.From, ev.To), m.width)))
	case event.ContextCompacted:
		if c := ev.Compaction; c != nil {
			m.emit('n', m.theme.Dim.Render(renderNotice(m.theme, fmt.Sprintf("⊘ context compacted: %s → %s tokens (%s)",
				fmtTokens(c.TokensBefore), fmtTokens(c.TokensAfter), strings.Join(c.Stages, ", ")), m.width)))
			m.lastContext = c.TokensAfter
		}
	case event.TurnEnded:
		if ev.Usage != nil {
			m.runUsage = *ev.Usage
		}
	case event.RunCompleted, event.RunFailed:
		if ev.Usage != nil {
			m.runUsage = *ev.Usage
		}
		if ev.SessionID != "" {
			m.sessionID = ev.SessionID
		}
		m.closeReasoning()
		if t := m.stream.tail(); strings.TrimSpace(t) != "" {
			m.flushSettled()
			m.emit('a', m.md.render(m.stream.tail(), m.theme, m.width))
			m.stream = mdStream{}
		}
		if ev.Type == event.RunFailed {
			m.reportFailure(ev)
		}
	}
}

// flushStreamForTool prints the reply text that precedes a tool call, so the call's
// line lands after it in scrollback.
func (m *Model) flushStreamForTool() {
	m.closeReasoning()
	m.flushSettled()
	if t := m.stream.tail(); strings.TrimSpace(t) != "" {
		m.emit('a', m.md.render(t, m.theme, m.width))
	}
	m.stream = mdStream{}
}

// eventNow is the time of the event being handled, or the clock.
func (m *Model) eventNow() time.Time {
	if !m.evTime.IsZero() {
		return m.evTime
	}
	return m.now()
}

func (m *Model) closeReasoning() {
	if m.reasoning.Len() == 0 {
		return
	}
	m.emit('r', renderReasoning(m.theme, m.reasoning.String(), m.eventNow().Sub(m.reasoningStart), m.width, m.showReasoning))
	m.reasoning.Reset()
}

// flushSettled renders and prints the reply's settled blocks.
func (m *Model) flushSettled() {
	if chunk := m.stream.takeSettled(); strings.TrimSpace(chunk) != "" {
		m.emit('a', m.md.render(chunk, m.theme, m.width))
	}
}

func (m *Model) dropApproval(id string) {
	for i, a := range m.approvals {
		if a == id {
			m.approvals = append(m.approvals[:i], m.approvals[i+1:]...)
			if i == 0 {
				m.denyMsg = false
			}
			return
		}
	}
}

func (m *Model) reportFailure(ev event.Event) {
	if ev.Status == "interrupted" || (ev.Error != nil && ev.Error.Kind == string(errs.KindCancelled)) {
		m.interrupted = ev.RunID
		m.noteUnfinished(ev)
		m.emit('n', m.theme.Warn.Render(renderNotice(m.theme, "⏹ interrupted · /resume continues run "+ev.RunID+" · or just type", m.width)))
		return
	}
	msg := "run failed"
	hint := ""
	if ev.Error != nil {
		msg = ev.Error.Message
		hint = chatHint(ev.Error.Kind, ev.Error.Hint)
	}
	m.noteUnfinished(ev)
	out := m.theme.Err.Render(renderNotice(m.theme, "✗ "+msg, m.width))
	if hint != "" {
		out += "\n" + m.theme.Dim.Render(renderNotice(m.theme, "hint: "+hint, m.width))
	}
	m.emit('n', out)
}

func (m *Model) emitError(err error) {
	out := m.theme.Err.Render(renderNotice(m.theme, "✗ "+err.Error(), m.width))
	if h := errs.HintOf(err); h != "" {
		out += "\n" + m.theme.Dim.Render(renderNotice(m.theme, "hint: "+h, m.width))
	}
	m.emit('n', out)
}

// finishRun closes the live run. Steering messages it never delivered are sent as a
// new run after a completion, or put back in the prompt after a failure.
// reindex rebuilds the @ file index in the background (at start, and after each run,
// which may have created files).
func (m *Model) reindex() tea.Cmd {
	if m.cfg.Root == "" {
		return nil
	}
	root, ctx := m.cfg.Root, m.ctx
	return func() tea.Msg { return filesMsg{indexFiles(ctx, root)} }
}

func (m *Model) finishRun(evs []event.Event) tea.Cmd {
	h := m.run
	var cur tea.Cmd
	if n := len(evs); n > 0 && evs[n-1].Type == event.RunCompleted && h != nil {
		cur = m.curate(h)
	}
	return tea.Batch(m.endRun(evs), m.reindex(), cur)
}

func (m *Model) endRun(evs []event.Event) tea.Cmd {
	r := m.run
	m.run = nil
	m.input.Placeholder = idlePlaceholder
	m.usage = m.usage.Add(m.runUsage)
	m.runUsage = usage.Usage{}
	failed := true
	if n := len(evs); n > 0 && evs[n-1].Type == event.RunCompleted {
		failed = false
	}
	// Unanswered approvals and running tools are gone with the run.
	for _, id := range m.toolOrder {
		if c := m.tools[id]; c != nil && !c.Done {
			c.Done, c.IsError, c.Output = true, true, "not finished: the run ended"
			if c.Approval != nil {
				c.Denied = "not answered"
			}
			m.emit('t', renderTool(m.theme, c, m.width))
		}
	}
	m.resetLive()
	if m.interrupting {
		m.interrupting = false
		m.notice = ""
	}
	left := r.Mailbox().Drain()
	if len(left) == 0 {
		m.queued = nil
		return nil
	}
	var texts []string
	for _, l := range left {
		texts = append(texts, l.Text)
	}
	m.queued = nil
	if failed {
		m.restoreQueued(texts)
		return nil
	}
	text := strings.Join(texts, "\n\n")
	m.emit('u', renderUser(m.theme, text, m.width, "(queued)"))
	return m.start(StartRequest{SessionID: m.sessionID, Prompt: text, Model: m.model})
}

// restoreQueued puts undelivered steering messages back into the prompt.
func (m *Model) restoreQueued(texts []string) {
	if texts == nil {
		for _, q := range m.queued {
			texts = append(texts, q.text)
		}
	}
	m.queued = nil
	if len(texts) == 0 {
		return
	}
	cur := m.input.Value()
	all := strings.Join(texts, "\n\n")
	if cur != "" {
		all = cur + "\n\n" + all
	}
	m.input.SetValue(all)
	m.notice = "queued messages were not delivered; they are back in the prompt"
}

// ---- commands ----

func (m *Model) command(text string) (tea.Cmd, bool) {
	name, arg, _ := strings.Cut(text, " ")
	arg = strings.TrimSpace(arg)
	if cmd, ok := m.rewindCommand(name); ok {
		return cmd, true
	}
	switch name {
	case "/quit", "/exit", "/q":
		return m.quit(), true
	case "/help", "/?":
		m.emit('n', m.helpText())
		return nil, true
	case "/new":
		if m.busy() {
			m.notice = "a run is active: Esc to interrupt it first"
			return nil, true
		}
		m.sessionID = ""
		m.usage = usage.Usage{}
		m.lastContext = 0
		m.todos = nil
		m.interrupted, m.carry = "", ""
		m.emit('n', m.theme.Dim.Render(rule("new session", m.width)))
		return nil, true
	case "/sessions":
		if m.busy() {
			m.notice = "a run is active: Esc to interrupt it first"
			return nil, true
		}
		b, ctx := m.backend, m.ctx
		m.notice = "loading sessions…"
		return func() tea.Msg {
			l, err := b.Sessions(ctx)
			return sessionsMsg{list: l, err: err}
		}, true
	case "/resume":
		if m.busy() {
			m.notice = "a run is active"
			return nil, true
		}
		id := arg
		if id == "" {
			id = m.interrupted
		}
		if id == "" {
			m.notice = "nothing to resume: no interrupted run in this chat (use /resume RUN_ID)"
			return nil, true
		}
		m.emit('n', m.theme.Dim.Render(renderNotice(m.theme, "↻ resuming run "+id, m.width)))
		m.interrupted = ""
		return m.start(StartRequest{SessionID: m.sessionID, ResumeRunID: id, Model: m.model}), true
	case "/continue":
		return m.continueRun(arg), true
	case "/model":
		if arg != "" {
			return m.chooseModel(arg), true
		}
		models := m.backend.Models()
		if len(models) == 0 {
			m.notice = "model: " + m.model + " (switch with /model PROVIDER:MODEL)"
			return nil, true
		}
		p := &picker{title: "Switch model (Enter picks, Esc cancels)", kind: "model"}
		for i, mo := range models {
			p.values = append(p.values, mo)
			l := mo
			if mo == m.model {
				l += "  (current)"
				p.sel = i
			}
			p.labels = append(p.labels, l)
		}
		m.picker = p
		return nil, true
	case "/compact":
		return m.compactNow(), true
	case "/todo":
		if t := renderTodos(m.theme, m.todos); t != "" {
			m.emit('n', "  "+m.theme.ToolName.Render("Todo")+"\n"+t)
		} else {
			m.emit('n', renderNotice(m.theme, "no todo list yet", m.width))
		}
		return nil, true
	case "/cost":
		m.emit('n', m.costText())
		return nil, true
	}
	return nil, false
}

func (m *Model) loc() *time.Location {
	if m.cfg.Location != nil {
		return m.cfg.Location
	}
	return time.Local
}

func (m *Model) busy() bool { return m.run != nil || m.starting }

func (m *Model) setModel(mo string) {
	m.model = mo
	m.notice = "model: " + mo + " (from the next run)"
}

func (m *Model) quit() tea.Cmd {
	m.quitting = true
	if m.run != nil {
		m.run.Cancel(errs.New(errs.KindCancelled, "interrupted: the TUI was closed", ""))
	}
	return tea.Quit
}

func (m *Model) helpText() string {
	th := m.theme
	var b strings.Builder
	b.WriteString("  " + th.ToolName.Render("Commands") + "\n")
	for _, c := range slashCommands {
		b.WriteString(fmt.Sprintf("    %-10s %-18s %s\n", c.Name, c.Args, th.Dim.Render(c.Help)))
	}
	b.WriteString("  " + th.ToolName.Render("Keys") + "\n")
	keys := [][2]string{
		{"enter", "send (while the agent works: queue a steering message)"},
		{"ctrl+j, shift+enter", "new line"},
		{"esc", "interrupt the run · twice: clear the prompt"},
		{"up / down", "prompt history"},
		{"tab", "complete /commands and @files"},
		{"ctrl+g", "edit the prompt in $EDITOR"},
		{"ctrl+o", "show or collapse reasoning"},
		{"↑↓ or 1-4, enter", "approvals: choose an answer, then confirm (typing goes to the prompt)"},
		{"ctrl+c", "interrupt · clear · twice on an empty prompt: quit"},
	}
	for i, k := range keys {
		b.WriteString(fmt.Sprintf("    %-20s %s", k[0], th.Dim.Render(k[1])))
		if i < len(keys)-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func (m *Model) costText() string {
	u := m.usage.Add(m.runUsage)
	th := m.theme
	var b strings.Builder
	b.WriteString("  " + th.ToolName.Render("Usage this session") + "\n")
	fmt.Fprintf(&b, "    input %s (cached %s) · output %s · requests %d", fmtTokens(u.InputTokens),
		fmtTokens(u.CachedInputTokens), fmtTokens(u.OutputTokens), u.Requests)
	if c, ok := estimateCost(m.model, u); ok {
		fmt.Fprintf(&b, "\n    estimated cost $%.4f (%s)", c, m.model)
	} else {
		fmt.Fprintf(&b, "\n    no price known for %s", m.model)
	}
	return b.String()
}

func rule(title string, width int) string {
	t := "── " + title + " "
	return t + strings.Repeat("─", max(0, width-ansi.StringWidth(t)))
}

func (m *Model) onSessions(msg sessionsMsg) tea.Cmd {
	m.notice = ""
	if msg.err != nil {
		m.emitError(msg.err)
		return nil
	}
	if len(msg.list) == 0 {
		m.notice = "no sessions yet in this repository"
		return nil
	}
	p := &picker{title: "Sessions (Enter switches, Esc cancels)", kind: "session"}
	for i, s := range msg.list {
		label := fmt.Sprintf("%s  %s  %s", s.ID, s.Updated.In(m.loc()).Format("Jan 02 15:04"), oneLine(s.Title))
		if s.ID == m.sessionID {
			label += "  (current)"
			p.sel = i
		}
		p.labels = append(p.labels, label)
		p.values = append(p.values, s.ID)
		p.usage = append(p.usage, s.Usage)
	}
	m.picker = p
	return nil
}

func (m *Model) switchSession(id string) tea.Cmd {
	if m.busy() {
		m.notice = "a run is active: Esc to interrupt it first"
		return nil
	}
	m.sessionID = id
	m.usage = usage.Usage{}
	m.lastContext = 0
	m.todos = nil
	m.interrupted, m.carry = "", ""
	return m.loadHistory(id)
}

func (m *Model) loadHistory(id string) tea.Cmd {
	b, ctx := m.backend, m.ctx
	return func() tea.Msg {
		e, err := b.History(ctx, id)
		return historyMsg{id: id, entries: e, err: err}
	}
}

// historyShown bounds how much of a session is re-printed when switching to it.
const historyShown = 200

func (m *Model) onHistory(msg historyMsg) tea.Cmd {
	m.printHistory(msg)
	if check := m.checkLastRun(msg.id); check != nil {
		return check // an initial prompt follows the answer (onLastRun)
	}
	if p := m.pendingPrompt; p != "" {
		m.pendingPrompt = ""
		return m.submit(p)
	}
	return nil
}

func (m *Model) printHistory(msg historyMsg) {
	if msg.err != nil {
		m.emitError(msg.err)
		return
	}
	m.emit('n', m.theme.Dim.Render(rule("session "+msg.id, m.width)))
	entries := msg.entries
	if len(entries) > historyShown {
		m.emit('n', m.theme.Dim.Render(renderNotice(m.theme,
			fmt.Sprintf("… %d earlier entries (lovia sessions show %s)", len(entries)-historyShown, msg.id), m.width)))
		entries = entries[len(entries)-historyShown:]
	}
	results := map[string]transcript.Entry{}
	for _, e := range msg.entries {
		if e.Type == transcript.TypeToolResult {
			results[e.CallID] = e
		}
		if e.Type == transcript.TypeToolCall && e.Name == "todo_write" {
			m.todos = e.Args
		}
	}
	for _, e := range entries {
		switch e.Type {
		case transcript.TypeInput:
			if e.IsUser() && !m.historyNote(e) {
				m.emit('u', renderUser(m.theme, e.Text, m.width, ""))
			}
		case transcript.TypeAssistantText:
			if strings.TrimSpace(e.Text) != "" {
				m.emit('a', m.md.render(sanitize(e.Text), m.theme, m.width))
			}
		case transcript.TypeReasoning:
			if strings.TrimSpace(e.Text) != "" {
				m.emit('r', renderReasoning(m.theme, e.Text, 0, m.width, m.showReasoning))
			}
		case transcript.TypeToolCall:
			c := &toolCall{ID: e.CallID, Name: e.Name, Args: e.Args, Done: true}
			if r, ok := results[e.CallID]; ok {
				c.Output, c.IsError, c.Trunc = r.Text, r.IsError, r.Truncated
			} else {
				c.Output, c.IsError = "no result recorded", true
			}
			m.emit('t', renderTool(m.theme, c, m.width))
		}
	}
}

// ---- editor ----

func (m *Model) openEditor() tea.Cmd {
	text := m.input.Value()
	editor := m.editor
	return func() tea.Msg {
		f, err := createTemp(text)
		if err != nil {
			return editorMsg{err: err}
		}
		return editorStartMsg{path: f, editor: editor}
	}
}

// ---- output ----

// emit queues a finished block for scrollback. Blocks are separated by a blank line,
// except consecutive tool lines, which stay compact.
func (m *Model) emit(kind byte, s string) {
	if m.lastKind != 0 && !(kind == 't' && m.lastKind == 't') {
		s = "\n" + s
	}
	m.lastKind = kind
	if m.cfg.Profile != 0 && m.cfg.Profile < colorprofile.TrueColor {
		var buf bytes.Buffer
		w := &colorprofile.Writer{Forward: &buf, Profile: m.cfg.Profile}
		_, _ = w.WriteString(s)
		s = buf.String()
	}
	m.outbox = append(m.outbox, s)
}

// ensureTick keeps the spinner going while a run is live, and only then: an idle TUI
// schedules nothing.
func (m *Model) ensureTick() tea.Cmd {
	if m.ticking || (m.run == nil && !m.starting && len(m.childOrder) == 0) {
		return nil
	}
	m.ticking = true
	m.tickGen++
	gen := m.tickGen
	return m.tick(120*time.Millisecond, func(time.Time) tea.Msg { return tickMsg{gen: gen} })
}
