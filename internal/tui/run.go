package tui

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/term"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/usage"
)

// Options start the TUI.
type Options struct {
	Backend Backend
	// Model is the configured "provider:model" (shown, and sent with each run).
	Model string
	// SessionID continues a session (-s). Continue picks the newest session of the
	// repository (-c) when SessionID is empty.
	SessionID string
	Continue  bool
	// Prompt is sent at once when set (`lovia chat PROMPT`).
	Prompt string
	// Root is the repository root for @ file completion.
	Root string

	In  *os.File // default os.Stdin
	Out *os.File // default os.Stdout
	// Env is the environment (NO_COLOR, TERM, EDITOR...); default os.Environ().
	Env []string
	// ChildEvents, when set, delivers subagent events; running children are shown in
	// the live region.
	ChildEvents <-chan ChildEventMsg
	// Welcome is what the one-line welcome names (Model is filled from Model).
	Welcome WelcomeInfo
}

// Outcome is what the caller prints after the TUI exits.
type Outcome struct {
	SessionID string
}

// Run runs the interactive TUI until the user quits. It refuses to start when
// stdout is not a terminal (the hint names `lovia run`). On return the terminal is
// restored; the caller prints how to continue (ContinueHint).
func Run(ctx context.Context, o Options) (*Outcome, error) {
	if o.In == nil {
		o.In = os.Stdin
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
	if o.Env == nil {
		o.Env = os.Environ()
	}
	if o.Backend == nil {
		return nil, errs.New(errs.KindInternal, "tui: no backend", "")
	}
	if !term.IsTerminal(o.Out.Fd()) {
		return nil, errs.New(errs.KindUsage, "lovia chat needs a terminal: stdout is not a TTY",
			`use "lovia run PROMPT" (or "echo PROMPT | lovia run -") for non-interactive use`)
	}
	if !term.IsTerminal(o.In.Fd()) {
		return nil, errs.New(errs.KindUsage, "lovia chat needs a terminal: stdin is not a TTY",
			`use "lovia run -" to read the prompt from stdin`)
	}
	sessionID, used, err := resolveSession(ctx, o)
	if err != nil {
		return nil, err
	}

	profile := colorprofile.Detect(o.Out, o.Env)
	w, h, err := term.GetSize(o.Out.Fd())
	if err != nil || w <= 0 || h <= 0 {
		w, h = 80, 24
	}
	cfg := Config{
		Backend:     o.Backend,
		Model:       o.Model,
		SessionID:   sessionID,
		Prompt:      o.Prompt,
		Root:        o.Root,
		Dark:        darkFromEnv(o.Env),
		ThemeFixed:  envLookup(o.Env, "LOVIA_THEME") != "",
		Color:       profile > colorprofile.Ascii,
		Width:       w,
		Height:      h,
		Editor:      envLookup(o.Env, "VISUAL", "EDITOR"),
		Profile:     profile,
		ShowHistory: sessionID != "",
		Usage:       used,
	}
	m := NewModel(ctx, cfg)
	m.custom = loadCustom(o.Backend)
	// The welcome line goes out before Bubble Tea starts: the live region then never
	// sits on the screen's top row (see welcomeLine).
	wi := o.Welcome
	if wi.Model == "" {
		wi.Model = o.Model
	}
	if wi.Dir == "" {
		wi.Dir = o.Root
	}
	if _, err := io.WriteString(o.Out, downsample(welcomeLine(wi, m.theme, w), profile)+"\n"); err != nil {
		return nil, fmt.Errorf("tui: %w", err)
	}
	p := tea.NewProgram(m,
		tea.WithContext(ctx),
		tea.WithInput(o.In),
		tea.WithOutput(o.Out),
		tea.WithEnvironment(o.Env),
		tea.WithColorProfile(profile),
		// Bubble Tea's renderer wakes at a fixed rate even when nothing changed; 30 fps
		// keeps streaming smooth and halves the idle wake-ups of the default 60.
		tea.WithFPS(30),
	)
	if o.ChildEvents != nil {
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case ce := <-o.ChildEvents:
					p.Send(ce)
				}
			}
		}()
	}
	final, err := p.Run()
	fm, _ := final.(*Model)
	if fm == nil {
		fm = m
	}
	// A run still live at exit was cancelled by quit; give it a moment to write its
	// interrupted checkpoint so it stays resumable.
	if r := fm.ActiveRun(); r != nil {
		r.Cancel(errs.New(errs.KindCancelled, "interrupted: the TUI was closed", ""))
		drain(r, 5*time.Second)
	}
	out := &Outcome{SessionID: fm.SessionID()}
	if err != nil && !isQuitErr(err) {
		return out, fmt.Errorf("tui: %w", err)
	}
	return out, nil
}

// ContinueHint is the line printed on exit: how to come back to this session.
func ContinueHint(o *Outcome) string {
	if o == nil || o.SessionID == "" {
		return ""
	}
	return fmt.Sprintf("Continue this session with: lovia chat -s %s", o.SessionID)
}

// PrintContinueHint writes ContinueHint to w, if there is one.
func PrintContinueHint(w io.Writer, o *Outcome) {
	if s := ContinueHint(o); s != "" {
		fmt.Fprintln(w, s)
	}
}

func isQuitErr(err error) bool {
	return err == tea.ErrInterrupted || err == tea.ErrProgramKilled || err == context.Canceled
}

func drain(r Handle, timeout time.Duration) {
	ch := r.Events()
	if ch == nil {
		return
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-t.C:
			return
		}
	}
}

func envLookup(env []string, keys ...string) string {
	for _, k := range keys {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], k+"="); ok && v != "" {
				return v
			}
		}
	}
	return ""
}

// darkFromEnv guesses the background before the terminal answers the query:
// LOVIA_THEME=light|dark wins, then COLORFGBG ("15;0" is light text on dark).
func darkFromEnv(env []string) bool {
	switch envLookup(env, "LOVIA_THEME") {
	case "light":
		return false
	case "dark":
		return true
	}
	if v := envLookup(env, "COLORFGBG"); v != "" {
		parts := strings.Split(v, ";")
		bg := parts[len(parts)-1]
		return !(bg == "7" || bg == "15")
	}
	return true
}

// resolveSession picks the session to continue (-s, -c) and its recorded usage; an
// unknown -s id is an error rather than a silently new session.
func resolveSession(ctx context.Context, o Options) (string, usage.Usage, error) {
	sessionID := o.SessionID
	var used usage.Usage
	if sessionID != "" || o.Continue {
		list, err := o.Backend.Sessions(ctx)
		if err != nil {
			return "", used, err
		}
		if sessionID == "" {
			if len(list) == 0 {
				return "", used, errs.New(errs.KindNotFound, "no session to continue in this repository",
					`start one with "lovia chat"`)
			}
			sessionID = list[0].ID
		}
		found := false
		for _, s := range list {
			if s.ID == sessionID {
				used, found = s.Usage, true
			}
		}
		if !found {
			// Maybe a session of another directory: it exists if it has entries.
			h, err := o.Backend.History(ctx, sessionID)
			if err != nil {
				return "", used, err
			}
			if len(h) == 0 {
				return "", used, errs.Newf(errs.KindNotFound, `list sessions with "lovia sessions", or drop -s to start a new one`,
					"no session %q", sessionID)
			}
		}
	}

	return sessionID, used, nil
}
