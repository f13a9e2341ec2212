// Package app assembles lovia from its parts: configuration, presets, the provider
// registry, the stores, the workspace and the plugins become an agent graph and the
// runtime.Options of a run. Every front end (run, chat, resume, eval) builds its runs
// here, so they all behave the same.
package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/lovia-dev/lovia/internal/agent"
	"github.com/lovia-dev/lovia/internal/buildinfo"
	"github.com/lovia-dev/lovia/internal/compaction"
	"github.com/lovia-dev/lovia/internal/config"
	"github.com/lovia-dev/lovia/internal/config/trust"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/instructions"
	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/plugin/hooks"
	"github.com/lovia-dev/lovia/internal/plugin/human"
	"github.com/lovia-dev/lovia/internal/plugin/mcp"
	"github.com/lovia-dev/lovia/internal/plugin/skills"
	"github.com/lovia-dev/lovia/internal/plugin/todo"
	"github.com/lovia-dev/lovia/internal/plugin/web"
	"github.com/lovia-dev/lovia/internal/preset"
	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/provider/builtin"
	"github.com/lovia-dev/lovia/internal/provider/script"
	"github.com/lovia-dev/lovia/internal/runtime"
	"github.com/lovia-dev/lovia/internal/safefile"
	"github.com/lovia-dev/lovia/internal/secret"
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/store/sqlite"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
	bundledskills "github.com/lovia-dev/lovia/skills"
)

// Options configure an App.
type Options struct {
	// Cwd is the working directory (-C); default the process's.
	Cwd string
	// Getenv reads the environment (default os.Getenv).
	Getenv func(string) string
	// Flags are the common flags the user set (model, preset, policy, max_turns,
	// budget_tokens, db).
	Flags []config.Override
	// Memory keeps sessions and checkpoints in memory: nothing is persisted (tests,
	// evals).
	Memory bool
	// Verbose logs at debug level.
	Verbose bool
	// LogWriter receives the log (default: Config.LogFile(), never the terminal).
	LogWriter io.Writer
	// ProviderEnv seeds the providers' environment (tests inject an HTTP client);
	// Getenv, ContextWindows and Dir are filled in by New.
	ProviderEnv provider.Env
	// Trust applies the project's loosening settings for this invocation (--trust).
	Trust bool
	// Warn, when set, shows the user a problem that does not stop the command (an
	// instructions, memory or skill file refused or unreadable). Each message is shown
	// once per App; every one is logged too.
	Warn func(msg string)
	// MCPServers are added to the configured MCP servers for this App (an editor's,
	// passed through ACP); a configured server of the same name is replaced.
	MCPServers map[string]mcp.ServerConfig
}

// App is an assembled lovia: everything a run needs except the run's own input.
// It is safe for concurrent use by many runs; Close releases it.
type App struct {
	Config       *config.Config
	Presets      *preset.Set
	Registry     *provider.Registry
	Log          *slog.Logger
	Instructions instructions.Result
	// DB is the SQLite database (nil with Options.Memory).
	DB           *sqlite.DB
	Session      store.Session
	Checkpointer store.Checkpointer
	Compaction   *compaction.Compaction
	// Prices price every model call of the App's runs (built-in table + pricing:).
	Prices *usage.Prices

	getenv func(string) string
	// memoryEphemeral keeps the memory plugin's archive off disk (Options.Memory).
	memoryEphemeral bool
	hooks           *hooks.Plugin // nil when no hooks are configured
	extra           extras        // workspace, mcp: wired in wire.go
	mu              sync.Mutex
	models          map[string]provider.Provider
	closers         []func() error
	warnTo          func(string)
	warnMu          sync.Mutex
	warned          map[string]bool // under warnMu
	// SubagentEvents, when set before runs start, receives every event of every
	// subagent (the TUI shows running children). It must not block.
	SubagentEvents func(childID string, ev event.Event)

	// scrub replaces the secrets lovia holds in tool results and hook output.
	scrub *secret.Scrubber
}

// New loads the configuration and presets, opens the stores and builds the shared
// parts. Errors are classified (errs.ExitCode maps them).
func New(ctx context.Context, opts Options) (*App, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	cfg, err := config.Load(config.Options{Cwd: opts.Cwd, Getenv: getenv, Flags: opts.Flags, Trust: opts.Trust})
	if err != nil {
		return nil, err
	}
	if len(opts.MCPServers) > 0 {
		servers := maps.Clone(cfg.MCP.Servers)
		if servers == nil {
			servers = map[string]mcp.ServerConfig{}
		}
		maps.Copy(servers, opts.MCPServers)
		cfg.MCP.Servers = servers
		if err := cfg.MCP.Validate(); err != nil {
			return nil, err
		}
	}
	a := &App{Config: cfg, getenv: getenv, models: map[string]provider.Provider{}, warnTo: opts.Warn, warned: map[string]bool{}}
	ok := false
	defer func() {
		if !ok {
			a.Close()
		}
	}()
	a.Log, err = a.openLog(opts)
	if err != nil {
		return nil, err
	}
	a.Presets, err = preset.Load(cfg.PresetDirs())
	if err != nil {
		return nil, err
	}
	if _, err := a.Presets.Get(cfg.Preset); err != nil {
		return nil, withSource(err, cfg.Source("preset"))
	}

	env := opts.ProviderEnv
	env.Getenv = getenv
	env.ContextWindows = cfg.ContextWindows()
	env.Vision = cfg.VisionOverrides()
	env.Warn = a.warn
	if env.Timeouts == (provider.Timeouts{}) {
		env.Timeouts = cfg.Provider.Timeouts()
	}
	// script:PATH is relative to where the user typed the command, not to -C.
	if env.Dir == "" {
		env.Dir, _ = os.Getwd()
	}
	a.Prices = cfg.Prices()
	a.Registry = provider.NewRegistry(env)
	builtin.Register(a.Registry)
	script.Register(a.Registry)

	if opts.Memory {
		a.memoryEphemeral = true
		m := store.NewMemory()
		a.Session, a.Checkpointer = m.Sessions, m.Checkpoints
	} else {
		db, err := sqlite.Open(ctx, cfg.DB)
		if err != nil {
			return nil, err
		}
		a.DB = db
		a.closers = append(a.closers, db.Close)
		a.Session, a.Checkpointer = db.Sessions(), db.Checkpoints()
	}

	var copts []compaction.Option
	copts = append(copts, compaction.WithLogger(a.Log), compaction.WithStore(compaction.NewDirStore(filepath.Join(cfg.Home, "offload"))))
	if !cfg.Compaction.Summary.Disabled {
		copts = append(copts, compaction.WithSummarizer(&lazySummarizer{app: a}))
	}
	a.Compaction = compaction.New(cfg.Compaction, copts...)

	var problems []error
	a.Instructions, problems = instructions.Load(InstructionsOptions(cfg, a.home()))
	for _, p := range problems {
		a.warn(p.Error())
	}
	for _, n := range a.Instructions.Notes {
		a.Log.Info("instructions import not followed", "note", n)
	}
	if a.Instructions.Truncated {
		a.Log.Warn("project instructions truncated", "files", len(a.Instructions.Files))
	}

	if cfg.Compat != nil {
		for _, n := range cfg.Compat.Notes {
			a.warn(n)
		}
	}
	a.scrub = secretScrubber(cfg, getenv)
	if len(cfg.Hooks) > 0 {
		hp, err := hooks.New(hooks.Config{Hooks: cfg.Hooks, Dir: cfg.Cwd, ProjectDir: cfg.Root, Scrub: a.scrub.Scrub}, a.Log)
		if err != nil {
			return nil, err
		}
		a.hooks = hp
	}
	if err := a.extra.init(ctx, a); err != nil {
		return nil, err
	}
	ok = true
	return a, nil
}

// InstructionsOptions says where cfg's instructions are read from (home is the
// user's home: ~/.claude and ~ imports).
func InstructionsOptions(cfg *config.Config, home string) instructions.Options {
	o := instructions.Options{UserDir: cfg.UserDir, Root: cfg.Root, Cwd: cfg.Cwd, Home: home,
		Denied: ReadDenied(cfg, cfg.EffectivePolicy(""))}
	if home != "" {
		o.ClaudeDir = filepath.Join(home, ".claude")
	}
	return o
}

func withSource(err error, src config.Source) error {
	if src.Layer == config.LayerDefault {
		return err
	}
	var e *errs.Error
	if errors.As(err, &e) {
		return &errs.Error{Kind: e.Kind, Msg: e.Msg + " (from " + src.String() + ")", Hint: e.Hint, Err: e.Err}
	}
	return err
}

// warn logs msg and shows it to the user once (Options.Warn).
func (a *App) warn(msg string) {
	a.Log.Warn(msg)
	a.warnMu.Lock()
	seen := a.warned[msg]
	a.warned[msg] = true
	a.warnMu.Unlock()
	if !seen && a.warnTo != nil {
		a.warnTo(msg)
	}
}

// maxLogBytes is the size past which the log file is rotated (one old file is kept).
const maxLogBytes = 10 << 20

func (a *App) openLog(opts Options) (*slog.Logger, error) {
	level := slog.LevelInfo
	if opts.Verbose {
		level = slog.LevelDebug
	}
	w := opts.LogWriter
	if w == nil {
		path := a.Config.LogFile()
		// The data directory and the log are private (0700, 0600), fixed if looser.
		if err := safefile.PrivateDir(a.Config.Home); err != nil {
			return nil, errs.Wrap(errs.KindConfig, err, "create the data directory", "check LOVIA_HOME ("+a.Config.Home+") is writable")
		}
		if err := safefile.PrivateDir(filepath.Dir(path)); err != nil {
			return nil, errs.Wrap(errs.KindConfig, err, "create log directory", "check LOVIA_HOME ("+a.Config.Home+") is writable")
		}
		// Keep the log bounded: past maxLogBytes the old one becomes lovia.log.1.
		if st, err := os.Stat(path); err == nil && st.Size() > maxLogBytes {
			_ = os.Rename(path, path+".1")
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, errs.Wrap(errs.KindConfig, err, "open log file", "check LOVIA_HOME ("+a.Config.Home+") is writable")
		}
		a.closers = append(a.closers, f.Close)
		for _, p := range []string{path, path + ".1"} {
			if err := safefile.PrivateFile(p); err != nil {
				return nil, errs.Wrap(errs.KindConfig, err, "make the log file private", "check the owner of "+p)
			}
		}
		w = f
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})).With("pid", os.Getpid()), nil
}

// Close releases the database, MCP servers, the workspace's background processes and
// the log file, in reverse order of acquisition.
func (a *App) Close() error {
	var all []error
	for i := len(a.closers) - 1; i >= 0; i-- {
		all = append(all, a.closers[i]())
	}
	a.closers = nil
	return errors.Join(all...)
}

// Model returns the effective model for the preset and where it came from ("" when
// none is configured).
func (a *App) Model(p *preset.Preset) (string, config.Source) {
	src := a.Config.Source("model")
	if p != nil && p.Model != "" && src.Layer == config.LayerDefault {
		return p.Model, config.Source{Layer: config.LayerPreset, Where: p.Name}
	}
	return a.Config.Model, src
}

// Policy returns the effective workspace policy for the preset (see
// config.EffectivePolicy).
func (a *App) Policy(p *preset.Preset) string {
	pp := ""
	if p != nil {
		pp = p.Policy
	}
	return a.Config.EffectivePolicy(pp)
}

// CeilingPolicy is the policy a run of the configured preset gets: the most a run
// started from an eval case may have (a case's preset may only tighten it).
func (a *App) CeilingPolicy() string {
	p, err := a.Presets.Get(a.Config.Preset)
	if err != nil {
		return a.Policy(nil)
	}
	return a.Policy(p)
}

// Resolve returns the provider for a "provider:model" spec, with the retry policy.
// Providers are cached per spec for the App's life (the script provider keeps its
// served-error state across the runs of one process).
func (a *App) Resolve(ctx context.Context, spec string) (provider.Provider, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if p, ok := a.models[spec]; ok {
		return p, nil
	}
	p, err := a.Registry.Resolve(ctx, spec)
	if err != nil {
		return nil, err
	}
	pol := provider.DefaultRetryPolicy()
	pol.Logger = a.Log
	if n := a.Config.Provider.MaxAttempts; n > 0 {
		pol.MaxAttempts = n
	}
	if strings.HasPrefix(spec, script.Prefix+":") {
		// A canned reply gains nothing from waiting; retry-after is still honoured.
		pol.BaseDelay = provider.DefaultRetryPolicy().BaseDelay / 100
	}
	p = provider.WithRetry(p, pol)
	a.models[spec] = p
	return p, nil
}

// RunOptions are one run's choices.
type RunOptions struct {
	// RunID is the run's id (--run-id); generated when empty.
	RunID string
	// SessionID continues a session (-s); Continue picks the latest session of the
	// repository (-c). Neither: a new session.
	SessionID string
	Continue  bool
	// Preset overrides the configured preset for this run ("" = configured).
	Preset string
	// Model overrides the configured model for every agent of this run ("" =
	// configured; eval cases, /model in the TUI).
	Model string
	// MaxTurns overrides the configured turn limit of this run (0 = configured).
	MaxTurns int
	// MaxBudgetUSD stops the run once it cost this many dollars (0 = no limit).
	MaxBudgetUSD float64
	IfRunExists  runtime.IfRunExists
	Approvals    runtime.ApprovalMode
	// OutputSchema is the JSON Schema of a structured final answer (--output-schema).
	OutputSchema json.RawMessage
	// Plugins are front-end plugins added to every agent of the run.
	Plugins []plugin.Plugin
	// Flags are recorded in the checkpoint's settings (e.g. output format, approve).
	Flags map[string]any
	// AllowedTools narrow the tools of the run's agent to these (a slash command's
	// or skill's allowed-tools; empty = no narrowing).
	AllowedTools []string
	// PolicyCeiling is the loosest policy the run may have ("" = none): a child
	// run's parent's, an eval's command line's. The preset's may only tighten it.
	PolicyCeiling string

	child bool // a subagent's run
}

// Settings are what a run records in its checkpoint head, so `lovia resume` can
// restore the run as it was.
type Settings struct {
	Model  string `json:"model"`
	Preset string `json:"preset"`
	Policy string `json:"policy"`
	Cwd    string `json:"cwd"`
	Root   string `json:"root,omitempty"`
	// Repo is the repository the run belongs to (the git root, else the cwd); the
	// session store files sessions under it for --continue.
	Repo         string          `json:"repo,omitempty"`
	MaxTurns     int             `json:"max_turns,omitempty"`
	BudgetTokens int             `json:"budget_tokens,omitempty"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	Flags        map[string]any  `json:"flags,omitempty"`
	Version      string          `json:"version,omitempty"`
}

// Prepared is a run ready to start.
type Prepared struct {
	Agent    *agent.Agent
	Options  runtime.Options
	Settings Settings
}

// Prepare builds the agent graph and the runtime options of one run.
func (a *App) Prepare(ctx context.Context, ro RunOptions) (*Prepared, error) {
	name := ro.Preset
	if name == "" {
		name = a.Config.Preset
	}
	p, err := a.Presets.Get(name)
	if err != nil {
		return nil, err
	}
	model, _ := a.Model(p)
	if ro.Model != "" {
		model = ro.Model
	}
	if model == "" {
		return nil, errs.New(errs.KindConfig, "no model configured",
			"pass --model PROVIDER:MODEL (e.g. script:testdata/demo/script.yaml or openai:gpt-4.1), set LOVIA_MODEL, model: in config, or OPENAI_API_KEY / ANTHROPIC_API_KEY")
	}
	policy := a.Policy(p)
	if ro.PolicyCeiling != "" {
		policy = trust.Stricter(policy, ro.PolicyCeiling)
	}
	ag, err := a.agentGraph(ctx, p, model, policy, ro.child, ro.Model != "")
	if err != nil {
		return nil, err
	}
	if len(ro.AllowedTools) > 0 {
		for i, pl := range ag.Plugins {
			ag.Plugins[i] = allowOnly(pl, ro.AllowedTools)
		}
	}
	schema := ro.OutputSchema
	if len(schema) == 0 {
		if schema, err = p.Schema(); err != nil {
			return nil, err
		}
	}
	if len(schema) > 0 {
		ag.OutputSchema = schema
	}

	sessionID := ro.SessionID
	if ro.Continue && sessionID == "" {
		sessionID, err = a.latestSession(ctx)
		if err != nil {
			return nil, err
		}
	}
	newSession := false
	if sessionID == "" && ro.IfRunExists != runtime.ResumeOnly {
		sessionID, newSession = newID("ses_"), true
	}
	if a.DB != nil && sessionID != "" && !ro.child {
		if err := a.DB.Sessions().EnsureSession(ctx, sessionID, sqlite.SessionMeta{Cwd: a.Config.Cwd, Repo: a.repo()}); err != nil {
			return nil, err
		}
	}

	st := Settings{Model: model, Preset: p.Name, Policy: policy, Cwd: a.Config.Cwd, Root: a.Config.Root, Repo: a.repo(),
		MaxTurns: a.Config.MaxTurns, BudgetTokens: a.Config.BudgetTokens, OutputSchema: ro.OutputSchema,
		Flags: ro.Flags, Version: Version()}
	raw, err := json.Marshal(st)
	if err != nil {
		return nil, errs.Wrap(errs.KindInternal, err, "encode settings", "")
	}
	opts := runtime.Options{
		Resolve:           a.Resolve,
		Session:           a.Session,
		SessionID:         sessionID,
		NewSession:        newSession,
		Checkpointer:      a.Checkpointer,
		RunID:             ro.RunID,
		IfRunExists:       ro.IfRunExists,
		ContextPolicy:     a.Compaction,
		Approvals:         ro.Approvals,
		ExtraInstructions: a.extraInstructions(),
		MaxTurns:          a.Config.MaxTurns,
		BudgetTokens:      a.Config.BudgetTokens,
		Settings:          raw,
		Logger:            a.Log,
		Scrub:             a.scrub.Scrub,
		Prices:            a.Prices,
		MaxBudgetUSD:      ro.MaxBudgetUSD,
	}
	if !a.Prices.Known(model) && ro.MaxBudgetUSD <= 0 {
		// Once per process: the cost shows as unknown until the user prices the model
		// (with a budget the run refuses to start, saying the same).
		a.warn(fmt.Sprintf("no price known for %s: its cost is shown as unknown; add it under pricing: in lovia's config (see docs/cost.md)", model))
	}
	if ro.MaxTurns > 0 {
		opts.MaxTurns = ro.MaxTurns
		st.MaxTurns = ro.MaxTurns
		if raw, err = json.Marshal(st); err != nil {
			return nil, errs.Wrap(errs.KindInternal, err, "encode settings", "")
		}
		opts.Settings = raw
	}
	if a.hooks != nil {
		// Hooks run through the run's workspace executor: sandboxed like its commands.
		w, err := a.Workspace(policy)
		if err != nil {
			return nil, err
		}
		opts.Plugins = append(opts.Plugins, a.hooks.WithCommand(w.Command))
	}
	if gp, err := a.outputGuardrails(p, policy, model); err != nil {
		return nil, err
	} else if gp != nil && !ro.child {
		opts.Plugins = append(opts.Plugins, gp)
	}
	opts.Plugins = append(opts.Plugins, ro.Plugins...)
	return &Prepared{Agent: ag, Options: opts, Settings: st}, nil
}

// Start prepares and starts a run on input.
func (a *App) Start(ctx context.Context, input []transcript.Entry, ro RunOptions) (*runtime.Handle, *Prepared, error) {
	pr, err := a.Prepare(ctx, ro)
	if err != nil {
		return nil, nil, err
	}
	if err := a.CheckImages(ctx, pr.Settings.Model, input); err != nil { // images.go
		return nil, nil, err
	}
	return runtime.Start(a.RunContext(ctx), pr.Agent, input, pr.Options), pr, nil
}

// Resume continues the checkpointed run runID. Build the App with the run's recorded
// settings (ReadSettings) so it resumes as it was.
func (a *App) Resume(ctx context.Context, runID string, ro RunOptions) (*runtime.Handle, *Prepared, error) {
	ro.RunID = runID
	ro.IfRunExists = runtime.ResumeOnly
	pr, err := a.Prepare(ctx, ro)
	if err != nil {
		return nil, nil, err
	}
	if ro.SessionID == "" {
		pr.Options.SessionID = "" // from the checkpoint
	}
	return runtime.Resume(a.RunContext(ctx), pr.Agent, runID, pr.Options), pr, nil
}

// ReadSettings returns the settings run runID recorded in its checkpoint, with the
// snapshot (errs.KindNotFound for an unknown run).
func ReadSettings(ctx context.Context, cp store.Checkpointer, runID string) (*Settings, *store.Snapshot, error) {
	snap, err := cp.Load(ctx, runID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, errs.Wrap(errs.KindNotFound, err, "no run "+runID, "list runs with `lovia runs`")
	}
	if err != nil {
		return nil, nil, err
	}
	var st Settings
	if len(snap.Head.Settings) > 0 {
		if err := json.Unmarshal(snap.Head.Settings, &st); err != nil {
			return nil, nil, errs.Wrap(errs.KindStore, err, "settings of run "+runID, "")
		}
	}
	return &st, snap, nil
}

// Overrides returns the flags that restore st (for an App built to resume a run).
func (st *Settings) Overrides() []config.Override {
	var out []config.Override
	add := func(k, v string) {
		if v != "" && v != "0" {
			out = append(out, config.Override{Key: k, Value: v, Flag: "(run settings)"})
		}
	}
	add("model", st.Model)
	add("preset", st.Preset)
	add("policy", st.Policy)
	add("max_turns", fmt.Sprint(st.MaxTurns))
	add("budget_tokens", fmt.Sprint(st.BudgetTokens))
	return out
}

func (a *App) repo() string {
	if a.Config.InGit {
		return a.Config.Root
	}
	return a.Config.Cwd
}

func (a *App) latestSession(ctx context.Context) (string, error) {
	if a.DB == nil {
		return "", errs.New(errs.KindUsage, "--continue needs the session database", "drop --continue, or run without the in-memory store")
	}
	info, err := a.DB.Sessions().LatestSession(ctx, a.repo())
	if err != nil {
		return "", err
	}
	return info.ID, nil
}

// extraInstructions are appended to every agent's system prompt: the environment and
// the project instructions.
func (a *App) extraInstructions() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Environment\n\nWorking directory: %s\n", a.Config.Cwd)
	if a.Config.InGit {
		fmt.Fprintf(&b, "Repository root: %s (git)\n", a.Config.Root)
	}
	if a.Instructions.Text != "" {
		b.WriteString("\n")
		b.WriteString(a.Instructions.Text)
	}
	return b.String()
}

// agentGraph builds the preset's agent and every agent reachable through handoffs.
func (a *App) agentGraph(ctx context.Context, root *preset.Preset, model, policy string, child, forceModel bool) (*agent.Agent, error) {
	built := map[string]*agent.Agent{}
	var order []*preset.Preset
	var visit func(p *preset.Preset) error
	visit = func(p *preset.Preset) error {
		if _, ok := built[p.Name]; ok {
			return nil
		}
		m := model
		if !forceModel && p != root && p.Model != "" && a.Config.Source("model").Layer == config.LayerDefault {
			m = p.Model
		}
		ag := &agent.Agent{
			Name:               p.Name,
			Instructions:       p.Instructions,
			Model:              m,
			HandoffDescription: p.HandoffDescription,
			Limits: agent.Limits{MaxTurns: p.Limits.MaxTurns, BudgetTokens: p.Limits.BudgetTokens,
				MaxToolOutputChars: p.Limits.MaxToolOutputChars},
		}
		// A handoff agent works under the run's policy, or its own preset's when that
		// is stricter: never looser than the run.
		pol := policy
		if p != root {
			pol = trust.Stricter(policy, a.Policy(p))
		}
		plugins, err := a.plugins(ctx, p, pol, m, child)
		if err != nil {
			return err
		}
		ag.Plugins = plugins
		built[p.Name] = ag
		order = append(order, p)
		for _, h := range p.Handoffs {
			hp, err := a.Presets.Get(h)
			if err != nil {
				return err
			}
			if err := visit(hp); err != nil {
				return err
			}
		}
		return nil
	}
	if err := visit(root); err != nil {
		return nil, err
	}
	for _, p := range order {
		for _, h := range p.Handoffs {
			built[p.Name].Handoffs = append(built[p.Name].Handoffs, built[h])
		}
	}
	return built[root.Name], nil
}

// webPolicy maps the workspace policy to network access (SPEC §7's spirit: readonly
// reaches nothing, coding asks, trusted is trusted).
func webPolicy(policy string) string {
	switch policy {
	case "trusted":
		return web.PolicyAllow
	case "readonly":
		return web.PolicyDeny
	}
	return web.PolicyAsk
}

// plugins returns the preset's plugins (the workspace first), filtered by its tool
// allow-list.
func (a *App) plugins(ctx context.Context, p *preset.Preset, policy, model string, child bool) ([]plugin.Plugin, error) {
	out, err := a.extra.agentPlugins(a, policy, model)
	if err != nil {
		return nil, err
	}
	for _, name := range p.Plugins {
		switch name {
		case "todo":
			out = append(out, todo.New())
		case "skills":
			out = append(out, skills.New(skills.Config{Bundled: bundledskills.FS, Dirs: a.skillDirs(), NoWatch: a.Config.Skills.NoWatch, Repo: a.Config.Root, Warn: a.warn,
				Denied: ReadDenied(a.Config, policy)}, a.Log))
		case "mcp":
			// Added by agentPlugins whenever servers are configured.
		case "web":
			out = append(out, web.New(web.Config{Policy: webPolicy(policy), TavilyAPIKey: a.getenv("TAVILY_API_KEY")}, a.Log))
		case "human":
			out = append(out, human.New())
		case "subagents":
			if child {
				continue // children do not spawn children
			}
			fallthrough
		default:
			pl, err := a.extra.named(ctx, a, name, policy)
			if err != nil {
				return nil, err
			}
			if pl != nil {
				out = append(out, pl)
			}
		}
	}
	if len(p.AgentsAsTools) > 0 && !child { // children do not ask other agents
		pl, err := a.agentToolsPlugin(p, policy)
		if err != nil {
			return nil, err
		}
		out = append(out, pl)
	}
	if len(p.Tools) == 0 {
		return out, nil
	}
	for i, pl := range out {
		out[i] = allowOnly(pl, p.Tools)
	}
	return out, nil
}

func (a *App) home() string {
	if h := a.getenv("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// allowOnly wraps pl so it contributes only the allowed tools.
func allowOnly(pl plugin.Plugin, allowed []string) plugin.Plugin {
	return plugin.Func{ID: pl.Name(), Fn: func(ctx context.Context, rc *tool.RunContext) (*plugin.Contribution, error) {
		c, err := pl.Setup(ctx, rc)
		if err != nil || c == nil {
			return c, err
		}
		cp := *c
		cp.Tools = slices.DeleteFunc(slices.Clone(c.Tools), func(t tool.Tool) bool {
			return !slices.Contains(allowed, t.Spec().Name)
		})
		return &cp, nil
	}}
}

// lazySummarizer resolves the summary model on first use, so a bad model only fails
// the summary stage (which the policy survives), never the app.
type lazySummarizer struct {
	app *App
}

func (s *lazySummarizer) Summarize(ctx context.Context, req compaction.SummaryRequest) (string, error) {
	model := s.app.Config.Compaction.Summary.Model
	if model == "" {
		model = s.app.Config.Model
		if p, err := s.app.Presets.Get(s.app.Config.Preset); err == nil {
			model, _ = s.app.Model(p)
		}
	}
	if model == "" {
		return "", errors.New("no model for summaries")
	}
	if s.app.Config.Compaction.Summary.Model == "" && strings.HasPrefix(model, script.Prefix+":") {
		// A scripted model's turns are the run's; summaries would consume them.
		return "", errors.New("no summaries with a scripted model (set compaction.summary.model)")
	}
	p, err := s.app.Resolve(ctx, model)
	if err != nil {
		return "", err
	}
	_, name, _ := strings.Cut(model, ":")
	return compaction.NewLLMSummarizer(p, name).Summarize(ctx, req)
}

// Version is lovia's version ("devel" for a local build).
func Version() string { return buildinfo.Get().Version }

func newID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
