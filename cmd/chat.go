package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/lovia-dev/lovia/internal/agent"
	"github.com/lovia-dev/lovia/internal/app"
	"github.com/lovia-dev/lovia/internal/buildinfo"
	"github.com/lovia-dev/lovia/internal/config"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/runtime"
	"github.com/lovia-dev/lovia/internal/store/sqlite"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/tui"
)

// ChatOptions are the inputs of `lovia chat`.
type ChatOptions struct {
	F *Factory
	// Args are the words of an initial prompt.
	Args []string
}

// NewCmdChat builds `lovia chat` (also what `lovia` alone runs). runF replaces the
// behaviour in flag tests.
func NewCmdChat(f *Factory, runF func(*ChatOptions) error) *cobra.Command {
	opts := &ChatOptions{F: f}
	c := &cobra.Command{
		Use:   "chat [PROMPT]",
		Short: "Talk with the agent in an interactive terminal UI",
		Long: `Start the interactive TUI in the current repository. Finished messages go to the
terminal's own scrollback (scroll, search and copy as usual); only the live part —
the streaming reply, running tools, approvals, the prompt and the status line — is
redrawn.

While the agent works, typing queues a steering message it receives at its next
turn; Esc interrupts the turn (the run stays resumable, and the next message
carries on from it). The turn limit applies per message: after it, /continue or any
message carries on. Slash commands: /new, /sessions, /resume, /continue, /model,
/compact, /todo, /cost, /help, /quit. @ completes file
paths; ctrl+j (or shift+enter) adds a line; ctrl+g edits the prompt in $EDITOR.

It needs a terminal; for scripts and CI use lovia run.`,
		Example: `  lovia
  lovia chat "why does the login test fail?"
  lovia chat -c                       # continue the latest session here
  lovia chat -s ses_0123abcd          # continue a given session
  lovia chat -m script:testdata/demo/script.yaml`,
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Args = args
			if runF != nil {
				return runF(opts)
			}
			ctx := c.Context()
			if ctx == nil {
				// `lovia` alone calls this RunE directly, without cobra's context.
				ctx = context.Background()
			}
			return runChat(ctx, opts)
		},
	}
	addTrustFlag(c.Flags(), f)
	return c
}

func runChat(ctx context.Context, opts *ChatOptions) error {
	f := opts.F
	in, inOK := f.IO.In.(*os.File)
	out, outOK := f.IO.Out.(*os.File)
	if !f.IO.StdoutTTY || !outOK {
		return errs.New(errs.KindUsage, "lovia chat needs a terminal: stdout is not a TTY",
			`use "lovia run PROMPT" (or "echo PROMPT | lovia run -") for non-interactive use`)
	}
	if !f.IO.StdinTTY || !inOK {
		return errs.New(errs.KindUsage, "lovia chat needs a terminal: stdin is not a TTY",
			`use "lovia run -" to read the prompt from stdin`)
	}
	aopts := f.AppOptions()
	if !aopts.Trust {
		chatTrustPrompt(f, aopts)
	}
	// Warnings (a refused AGENTS.md, MEMORY.md or SKILL.md) go to stderr before the
	// TUI starts; those raised while it owns the terminal are printed when it exits.
	var warnMu sync.Mutex
	inTUI := false
	var later []string
	aopts.Warn = func(msg string) {
		warnMu.Lock()
		defer warnMu.Unlock()
		if inTUI {
			later = append(later, msg)
			return
		}
		fmt.Fprintf(f.IO.ErrOut, "lovia: warning: %s\n", msg)
	}
	defer func() {
		warnMu.Lock()
		defer warnMu.Unlock()
		for _, msg := range later {
			fmt.Fprintf(f.IO.ErrOut, "lovia: warning: %s\n", msg)
		}
		later, inTUI = nil, false
	}()
	a, err := f.NewApp(ctx, aopts)
	if err != nil {
		return err
	}
	defer a.Close()

	p, err := a.Presets.Get(a.Config.Preset)
	if err != nil {
		return err
	}
	model, _ := a.Model(p)
	if model == "" {
		return errs.New(errs.KindConfig, "no model configured",
			"pass --model PROVIDER:MODEL (e.g. script:testdata/demo/script.yaml or openai:gpt-4.1), set LOVIA_MODEL, model: in config, or OPENAI_API_KEY / ANTHROPIC_API_KEY")
	}
	// Subagent events reach the TUI through a buffer; deltas are dropped (the TUI shows
	// a child's turn and tool, not its text) and a full buffer never stalls a child.
	children := make(chan tui.ChildEventMsg, 256)
	a.SubagentEvents = func(id string, ev event.Event) {
		if ev.Type == event.TextDelta || ev.Type == event.ReasoningDelta {
			return
		}
		select {
		case children <- tui.ChildEventMsg{ID: id, Event: ev}:
		default:
		}
	}
	b := &chatBackend{app: a, model: model, windows: map[string]int{}}
	sessionID := f.Common.Session
	warnMu.Lock()
	inTUI = true
	warnMu.Unlock()
	oc, err := tui.Run(ctx, tui.Options{
		Backend:     b,
		Model:       model,
		SessionID:   sessionID,
		Continue:    f.Common.Continue,
		Prompt:      strings.Join(opts.Args, " "),
		Root:        a.Config.Root,
		In:          in,
		ChildEvents: children,
		Out:         out,
		Welcome:     tui.WelcomeInfo{Version: buildinfo.Get().Version, Dir: a.Config.Cwd, Policy: a.Policy(p)},
	})
	tui.PrintContinueHint(f.IO.ErrOut, oc)
	return err
}

// chatBackend adapts the App to the TUI: runs in interactive approval mode, the
// repository's sessions, per-run model switching (/model).
type chatBackend struct {
	app   *app.App
	model string // the configured model

	mu      sync.Mutex
	windows map[string]int
	// policies records each started run's workspace policy, which judges the
	// memory writes of its curation (curate.go).
	policies map[string]string
}

func (b *chatBackend) Start(ctx context.Context, req tui.StartRequest) (tui.Handle, error) {
	ro := app.RunOptions{SessionID: req.SessionID, Approvals: runtime.ApprovalInteractive,
		Flags: map[string]any{"frontend": "chat"}}
	if req.ResumeRunID != "" {
		h, _, err := b.app.Resume(ctx, req.ResumeRunID, ro)
		if err != nil {
			return nil, err
		}
		return h, nil
	}
	prompt := req.Prompt
	if inv, err := b.app.Slash(ctx, prompt); err != nil {
		return nil, err
	} else if inv != nil {
		prompt, ro.AllowedTools = inv.Prompt, inv.AllowedTools
		if inv.Model != "" {
			req.Model = inv.Model
		}
	}
	pr, err := b.app.Prepare(ctx, ro)
	if err != nil {
		return nil, err
	}
	model := pr.Settings.Model
	if req.Model != "" && req.Model != model {
		if err := b.switchModel(pr, req.Model); err != nil {
			return nil, err
		}
		model = req.Model
	}
	if prov, err := b.app.Resolve(ctx, model); err == nil {
		b.mu.Lock()
		b.windows[model] = prov.Info().ContextWindow
		b.mu.Unlock()
	} else {
		return nil, err
	}
	pr.Options.CarryRunID = req.CarryRunID
	input, err := b.chatInput(ctx, model, prompt, req.Images) // chat_images.go
	if err != nil {
		return nil, err
	}
	h := runtime.Start(b.app.RunContext(ctx), pr.Agent, input, pr.Options)
	b.mu.Lock()
	if b.policies == nil {
		b.policies = map[string]string{}
	}
	b.policies[h.RunID()] = pr.Settings.Policy
	b.mu.Unlock()
	return h, nil
}

// switchModel points the run's agents at model (/model): every agent of the graph
// that used the configured model, and the recorded settings, so a resume keeps it.
func (b *chatBackend) switchModel(pr *app.Prepared, model string) error {
	old := pr.Settings.Model
	seen := map[*agent.Agent]*agent.Agent{}
	var clone func(a *agent.Agent) *agent.Agent
	clone = func(a *agent.Agent) *agent.Agent {
		if c, ok := seen[a]; ok {
			return c
		}
		c := a.Clone()
		seen[a] = c
		if c.Model == old || c.Model == "" {
			c.Model = model
		}
		for i, h := range c.Handoffs {
			c.Handoffs[i] = clone(h)
		}
		return c
	}
	pr.Agent = clone(pr.Agent)
	pr.Settings.Model = model
	raw, err := json.Marshal(pr.Settings)
	if err != nil {
		return errs.Wrap(errs.KindInternal, err, "encode settings", "")
	}
	pr.Options.Settings = raw
	return nil
}

func (b *chatBackend) Sessions(ctx context.Context) ([]tui.SessionInfo, error) {
	if b.app.DB == nil {
		return nil, nil
	}
	repo := b.app.Config.Cwd
	if b.app.Config.InGit {
		repo = b.app.Config.Root
	}
	list, err := b.app.DB.Sessions().ListSessions(ctx, sqlite.SessionFilter{Repo: repo, Limit: 50})
	if err != nil {
		return nil, err
	}
	out := make([]tui.SessionInfo, 0, len(list))
	for _, s := range list {
		out = append(out, tui.SessionInfo{ID: s.ID, Title: s.Title, Updated: s.UpdatedAt, Runs: s.Runs, Usage: s.Usage})
	}
	return out, nil
}

func (b *chatBackend) History(ctx context.Context, id string) ([]transcript.Entry, error) {
	return b.app.Session.Load(ctx, id)
}

func (b *chatBackend) Models() []string {
	models := []string{b.model}
	for name := range b.app.Config.Models {
		if strings.Contains(name, ":") && !slices.Contains(models, name) {
			models = append(models, name)
		}
	}
	slices.Sort(models[1:])
	return models
}

// ContextWindow is known once a run resolved the model (Start caches it); the TUI
// calls this while drawing, so it never does I/O.
func (b *chatBackend) ContextWindow(model string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.windows[model]
}

// chatTrustPrompt asks, before the TUI starts, whether to trust the folder when its
// project settings ask for more than they get untrusted: it shows exactly those
// settings; trusting records the folder (as `lovia trust` does), anything else
// continues without them.
func chatTrustPrompt(f *Factory, aopts app.Options) {
	cfg, err := config.Load(config.Options{Cwd: aopts.Cwd, Getenv: aopts.Getenv, Flags: aopts.Flags})
	if err != nil || len(cfg.Trust.Ignored()) == 0 {
		return // a config error is reported by NewApp
	}
	t := cfg.Trust
	w := f.IO.ErrOut
	fmt.Fprintf(w, "This folder (%s) has project settings that widen what the agent may do or run code:\n", t.Root)
	for _, e := range t.Entries {
		fmt.Fprintf(w, "  %s\n", e.String(t.Root))
	}
	if askYesNo(f.IO.In, w, "Trust this folder and use them? [y/N] (N continues without them) ") {
		if err := t.Record(); err != nil {
			fmt.Fprintf(w, "lovia: could not record trust: %v; continuing without them\n", err)
			return
		}
		fmt.Fprintf(w, "Trusted %s (lovia trust --untrust forgets it).\n", t.Root)
		return
	}
	fmt.Fprintf(w, "lovia: continuing without these %d setting(s); run `lovia trust` to use them.\n", len(t.Entries))
}
