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

	"github.com/lovia-dev/lovia/internal/event"
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
	form           *formState // the MCP elicitation form on screen (form.go)
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
	frames   frames     // recent frame heights (render.go)
	pastes   pastes     // folded pastes in the prompt (paste.go)
	imgs     imageState // images attached to the prompt (images.go)
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

func (m *Model) loc() *time.Location {
	if m.cfg.Location != nil {
		return m.cfg.Location
	}
	return time.Local
}

func (m *Model) busy() bool { return m.run != nil || m.starting }

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
