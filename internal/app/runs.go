package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/lovia-dev/lovia/internal/config"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/preset"
	"github.com/lovia-dev/lovia/internal/store/sqlite"
)

// Store is the configuration and the database without the rest of an App: what
// `lovia runs` and `lovia sessions` need (no presets, providers or plugins, so a
// broken preset or MCP server cannot stop you from looking at your runs).
type Store struct {
	Config *config.Config
	DB     *sqlite.DB
}

// OpenStore loads the configuration of opts and opens its database.
func OpenStore(ctx context.Context, opts Options) (*Store, error) {
	return openStore(ctx, opts, sqlite.Open)
}

// OpenStoreReadOnly is OpenStore for commands that only look: it creates and locks
// nothing, so it works on a read-only LOVIA_HOME and while a run writes.
func OpenStoreReadOnly(ctx context.Context, opts Options) (*Store, error) {
	return openStore(ctx, opts, sqlite.OpenReadOnly)
}

func openStore(ctx context.Context, opts Options, open func(context.Context, string) (*sqlite.DB, error)) (*Store, error) {
	cfg, err := config.Load(config.Options{Cwd: opts.Cwd, Getenv: opts.Getenv, Flags: opts.Flags, Trust: opts.Trust})
	if err != nil {
		return nil, err
	}
	db, err := open(ctx, cfg.DB)
	if err != nil {
		return nil, err
	}
	return &Store{Config: cfg, DB: db}, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.DB.Close() }

// Repo is the repository sessions of cfg's working directory are filed under (the
// git root, else the working directory), as --continue and `lovia runs` use it.
func Repo(cfg *config.Config) string {
	if cfg.InGit {
		return cfg.Root
	}
	return cfg.Cwd
}

// Repo is the repository this App files its sessions under.
func (a *App) Repo() string { return Repo(a.Config) }

// ResumeSetup is how `lovia resume` rebuilds a run's App: the recorded settings
// restored, then the flags the user typed on top.
type ResumeSetup struct {
	// Options build the App the run resumes in.
	Options Options
	// Notices say which typed flags override what the run recorded
	// ("--model overrides the run's openai:x").
	Notices []string
}

// PlanResume returns the App options that restore st, with base's explicit flags
// (base.Flags, set by the user) winning over the recorded values. dbPath pins the
// database the run was found in; cwdSet reports -C was typed (otherwise the run's own
// working directory is used). The model is not restored here: see RestoreModel.
func PlanResume(base Options, st *Settings, dbPath string, cwdSet bool) (*ResumeSetup, error) {
	typed := map[string]config.Override{}
	for _, o := range base.Flags {
		typed[o.Key] = o
	}
	var notices []string
	note := func(key, recorded string) {
		if o, ok := typed[key]; ok && recorded != "" && recorded != "0" && o.Value != recorded {
			notices = append(notices, fmt.Sprintf("%s overrides the run's %s", o.Flag, recorded))
		}
	}
	note("model", st.Model)
	note("preset", st.Preset)
	note("policy", st.Policy)
	note("max_turns", fmt.Sprint(st.MaxTurns))
	note("budget_tokens", fmt.Sprint(st.BudgetTokens))

	opts := base
	opts.Flags = nil
	for _, o := range st.Overrides() {
		if o.Key != "model" {
			opts.Flags = append(opts.Flags, o)
		}
	}
	if dbPath != "" {
		opts.Flags = append(opts.Flags, config.Override{Key: "db", Value: dbPath, Flag: "(the run's database)"})
	}
	opts.Flags = append(opts.Flags, base.Flags...)

	if !cwdSet && st.Cwd != "" {
		if fi, err := os.Stat(st.Cwd); err != nil || !fi.IsDir() {
			return nil, errs.Newf(errs.KindUsage, "pass -C DIR to resume it in another directory",
				"the run's working directory %s no longer exists", st.Cwd)
		}
		opts.Cwd = st.Cwd
	} else if cwdSet && st.Cwd != "" && base.Cwd != st.Cwd {
		notices = append(notices, fmt.Sprintf("--cwd overrides the run's %s", st.Cwd))
	}
	return &ResumeSetup{Options: opts, Notices: notices}, nil
}

// RestoreModel reports the model override that makes the App built from opts pick
// the run's recorded model, or false when it already does (or the user typed
// --model). Only a model that differs is pinned: pinning it as a flag would also
// change the models of handoff agents that have their own. It reads the
// configuration and presets only; nothing is started.
func RestoreModel(opts Options, st *Settings) (config.Override, bool, error) {
	if st.Model == "" {
		return config.Override{}, false, nil
	}
	cfg, err := config.Load(config.Options{Cwd: opts.Cwd, Getenv: opts.Getenv, Flags: opts.Flags, Trust: opts.Trust})
	if err != nil {
		return config.Override{}, false, err
	}
	if cfg.Source("model").Layer == config.LayerFlag {
		return config.Override{}, false, nil
	}
	set, err := preset.Load(cfg.PresetDirs())
	if err != nil {
		return config.Override{}, false, err
	}
	p, err := set.Get(cfg.Preset)
	if err != nil {
		return config.Override{}, false, err
	}
	a := &App{Config: cfg, Presets: set}
	if m, _ := a.Model(p); m == st.Model {
		return config.Override{}, false, nil
	}
	return config.Override{Key: "model", Value: st.Model, Flag: "(run settings)"}, true, nil
}

// FlagString returns the recorded string flag key of st ("" when absent).
func (st *Settings) FlagString(key string) string {
	if st == nil || st.Flags == nil {
		return ""
	}
	switch v := st.Flags[key].(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}
