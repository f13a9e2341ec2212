package cmd

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/lovia-dev/lovia/internal/app"
	"github.com/lovia-dev/lovia/internal/config"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/headless"
	"github.com/lovia-dev/lovia/internal/runtime"
	"github.com/lovia-dev/lovia/internal/store"
)

// ResumeOptions are the inputs of `lovia resume`.
type ResumeOptions struct {
	F       *Factory
	RunID   string
	Output  string
	Approve string
	// Force takes over a run claimed by a process on another host (which lovia cannot
	// check).
	Force bool
	// MaxBudgetUSD replaces the run's recorded --max-budget-usd when typed.
	MaxBudgetUSD float64
	// outputSet / approveSet / budgetSet report the flags were typed (otherwise the run's own).
	outputSet, approveSet, budgetSet bool
	// Signals delivers SIGINT/SIGTERM (nil: the process's).
	Signals <-chan os.Signal
}

// NewCmdResume builds `lovia resume`. runF replaces the behaviour in flag tests.
func NewCmdResume(f *Factory, runF func(*ResumeOptions) error) *cobra.Command {
	opts := &ResumeOptions{F: f}
	c := &cobra.Command{
		Use:   "resume RUN_ID",
		Short: "Continue an interrupted run from its checkpoint",
		Long: `Continue a run from its last checkpoint, with the settings it was started with
(model, preset, policy, working directory, limits, output format, --approve). A flag
typed here overrides the recorded value, and lovia says so on stderr.

Tool calls the run made that have a recorded result are never run again; a call
that was cut off before its result is run again. A completed run is not run again:
its stored result is printed (the model is not called).

Exit codes as for lovia run: 0 completed, 1 failed, 2 usage error or unknown run,
3 limit reached, 4 guardrail, 130 interrupted (SIGINT), 143 terminated (SIGTERM).`,
		Example: `  lovia resume run_3f2a9c1e0b7d4a55
  lovia resume run_3f2a9c1e0b7d4a55 --output stream-json
  lovia resume job-42 -m anthropic:claude-sonnet-4-5   # continue with another model`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 1 {
				return errs.New(errs.KindUsage, "lovia resume takes one run id",
					"`lovia runs` lists the runs and their ids")
			}
			return nil
		},
		ValidArgsFunction: completeRunIDs(f, true),
		RunE: func(c *cobra.Command, args []string) error {
			opts.RunID = args[0]
			opts.outputSet = c.Flags().Changed("output")
			opts.approveSet = c.Flags().Changed("approve")
			opts.budgetSet = c.Flags().Changed("max-budget-usd")
			if runF != nil {
				return runF(opts)
			}
			return runResume(c.Context(), opts)
		},
	}
	fl := c.Flags()
	addTrustFlag(fl, f)
	fl.StringVar(&opts.Output, "output", "", "output format: text, json or stream-json (default: the run's, else text)")
	fl.StringVar(&opts.Approve, "approve", "", "answer for actions that need approval: none or all (default: the run's, else none)")
	fl.Float64Var(&opts.MaxBudgetUSD, "max-budget-usd", 0, "stop once the run cost `USD` dollars in all (default: the run's; 0 = no limit)")
	fl.BoolVar(&opts.Force, "force", false, "take over a run held by a process on another machine sharing the database (only if that process is gone)")
	_ = c.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json", "stream-json"}, cobra.ShellCompDirectiveNoFileComp))
	_ = c.RegisterFlagCompletionFunc("approve", cobra.FixedCompletions([]string{"none", "all"}, cobra.ShellCompDirectiveNoFileComp))
	return c
}

func runResume(ctx context.Context, opts *ResumeOptions) error {
	f := opts.F
	runID := opts.RunID
	base := f.AppOptions()

	// Find the run and what it recorded, in the database the flags point at.
	s, err := app.OpenStore(ctx, base)
	if err != nil {
		return err
	}
	runID, err = resolveRunID(ctx, s, runID)
	var st *app.Settings
	var snap *store.Snapshot
	if err == nil {
		st, snap, err = app.ReadSettings(ctx, s.DB.Checkpoints(), runID)
	}
	if err == nil {
		err = refuseHeld(ctx, s, runID, opts.Force)
	}
	dbPath := s.Config.DB
	s.Close()
	if err != nil {
		if errs.KindOf(err) == errs.KindNotFound {
			return errs.Wrap(errs.KindNotFound, store.ErrNotFound, fmt.Sprintf("no run %q in %s", runID, dbPath),
				"`lovia runs --all` lists the runs; pass the --db the run used if it was another database")
		}
		return err
	}

	// The run's own output format and approvals, unless typed.
	output, approve := opts.Output, opts.Approve
	var notices []string
	restore := func(typed bool, val *string, key, flag string) {
		rec := st.FlagString(key)
		switch {
		case !typed && rec != "":
			*val = rec
		case typed && rec != "" && rec != *val:
			notices = append(notices, fmt.Sprintf("%s overrides the run's %s", flag, rec))
		}
	}
	restore(opts.outputSet, &output, "output", "--output")
	restore(opts.approveSet, &approve, "approve", "--approve")
	budget, err := resumeBudget(opts, st, &notices)
	if err != nil {
		return err
	}
	if output == "" {
		output = string(headless.Text)
	}
	if approve == "" {
		approve = "none"
	}
	format, err := headless.ParseFormat(output)
	if err != nil {
		return err
	}
	approvals, err := approvalMode(approve)
	if err != nil {
		return err
	}

	cwdSet := f.Common.flags != nil && f.Common.flags.Changed("cwd")
	plan, err := app.PlanResume(base, st, dbPath, cwdSet)
	if err != nil {
		return err
	}
	notices = append(plan.Notices, notices...)
	if f.Common.Session != "" || f.Common.Continue {
		notices = append(notices, fmt.Sprintf("a run resumes in its own session (%s); --session/--continue ignored", snap.Head.SessionID))
	}
	for _, n := range notices {
		fmt.Fprintf(f.IO.ErrOut, "lovia: %s\n", n)
	}

	if o, ok, err := app.RestoreModel(plan.Options, st); err != nil {
		return err
	} else if ok {
		plan.Options.Flags = append([]config.Override{o}, plan.Options.Flags...)
	}
	a, err := f.NewApp(ctx, plan.Options)
	if err != nil {
		return err
	}
	defer a.Close()
	printTrustNotice(f, a)

	flags := maps.Clone(st.Flags)
	if flags == nil {
		flags = map[string]any{}
	}
	flags["output"], flags["approve"] = string(format), approve
	delete(flags, "max_budget_usd")
	if budget > 0 {
		flags["max_budget_usd"] = budget
	}

	ctx, stop := context.WithCancel(ctx)
	defer stop()
	sigs := opts.Signals
	if sigs == nil {
		ch := make(chan os.Signal, 2)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(ch)
		sigs = ch
	}
	// Hold the run from here on, so of two resumes started at once the loser is refused
	// before it emits anything (the runtime's first checkpoint write would refuse it
	// too, after its run_started event).
	if a.DB != nil {
		release, err := a.DB.Claim(ctx, runID)
		if err != nil {
			return err
		}
		defer release()
	}
	h, pr, err := a.Resume(ctx, runID, app.RunOptions{Approvals: approvals, OutputSchema: st.OutputSchema, Flags: flags, MaxBudgetUSD: budget})
	if err != nil {
		return err
	}
	a.Log.Info("run resumed", "run", runID, "model", pr.Settings.Model, "preset", pr.Settings.Preset, "policy", pr.Settings.Policy)
	return followRun(f, a, h, format, sigs)
}

// refuseHeld fails when a live lovia process is running runID. With force, a claim
// from another host (whose process lovia cannot check) is broken instead.
func refuseHeld(ctx context.Context, s *app.Store, runID string, force bool) error {
	h, err := s.DB.HolderOf(ctx, runID)
	if err != nil || h == nil {
		return err
	}
	host, _ := os.Hostname()
	if h.Host != host {
		if force {
			_, err := s.DB.BreakClaim(ctx, runID)
			return err
		}
		return errs.Newf(errs.KindRunConflict,
			fmt.Sprintf("lovia cannot check processes on %s; if that process is gone, take the run over with: lovia resume %s --force", h.Host, runID),
			"run %s is held by a lovia process on another machine (%s)", runID, h)
	}
	return errs.Newf(errs.KindRunConflict,
		fmt.Sprintf("wait for it to finish, or stop it (kill -INT %d) and resume it then; `lovia runs show %s` shows its state", h.PID, runID),
		"run %s is being run by another lovia process (%s)", runID, h)
}

func approvalMode(s string) (runtime.ApprovalMode, error) {
	switch s {
	case "none", "":
		return runtime.ApprovalDenyAll, nil
	case "all":
		return runtime.ApprovalAllowAll, nil
	}
	return 0, errs.Newf(errs.KindUsage, "use --approve none or --approve all", "unknown --approve value %q", s)
}

// followRun writes a started run's events in format until it ends, turning the first
// SIGINT/SIGTERM into a cancellation (the checkpoint stays resumable) and a second
// SIGINT into an immediate exit. It returns the exit status as an *exitError (nil for
// 0). It mirrors the loop of `lovia run`.
func followRun(f *Factory, a *app.App, h *runtime.Handle, format headless.Format, sigs <-chan os.Signal) error {
	w := headless.New(format, f.IO.Out, f.IO.ErrOut, headless.Options{
		Progress: !f.Common.Quiet && (f.IO.StderrTTY || f.Common.Verbose),
		Verbose:  f.Common.Verbose && !f.Common.Quiet,
	})
	var term *event.Event
	var writeErr error
	interrupted := false
	events := h.Events()
	for events != nil {
		select {
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if ev.Type.Terminal() {
				e := ev
				term = &e
			}
			if writeErr == nil {
				if writeErr = w.Event(ev); writeErr != nil {
					a.Log.Warn("output failed; cancelling the run", "err", writeErr)
					h.Cancel(errs.Wrap(errs.KindCancelled, writeErr, "output closed", ""))
				}
			}
		case sig := <-sigs:
			if interrupted {
				if sig == os.Interrupt {
					if runRecorded(a, h.RunID()) {
						fmt.Fprintln(f.IO.ErrOut, "\nlovia: interrupted again — exiting now; the run stays resumable: "+resumeCommand(f, a, h.RunID()))
					} else {
						fmt.Fprintln(f.IO.ErrOut, "\nlovia: interrupted again — exiting now; the run was not recorded yet")
					}
					f.Exit(130)
					return &exitError{130}
				}
				continue
			}
			interrupted = true
			if sig == syscall.SIGTERM {
				h.Cancel(errs.New(errs.KindTerminated, "terminated (SIGTERM)", ""))
			} else {
				h.Cancel(errs.New(errs.KindCancelled, "interrupted (SIGINT)", ""))
			}
		}
	}
	res, runErr := h.Result()
	if err := w.Finish(res, runErr); err != nil && writeErr == nil {
		writeErr = err
	}
	code := headless.ExitCode(term, runErr)
	a.Log.Info("run ended", "run", h.RunID(), "exit", code, "err", runErr)
	if code == 0 {
		suggestCurated(f, a, res)
	}
	switch {
	case code == 130 || code == 143:
		if runRecorded(a, h.RunID()) {
			fmt.Fprintf(f.IO.ErrOut, "lovia: interrupted — continue with: %s\n", resumeCommand(f, a, h.RunID()))
		} else {
			fmt.Fprintln(f.IO.ErrOut, "lovia: interrupted before the run was recorded; nothing to resume")
		}
	case code != 0:
		if runErr == nil && term != nil && term.Error != nil {
			runErr = &errs.Error{Kind: errs.Kind(term.Error.Kind), Msg: term.Error.Message, Hint: term.Error.Hint}
		}
		if runErr != nil {
			PrintError(f.IO.ErrOut, headless.WithHint(runErr, h.RunID()))
			// A provider that kept failing (down, rate limited, timing out) leaves
			// the run checkpointed: say how to pick it up.
			if errs.KindOf(runErr) == errs.KindProvider {
				fmt.Fprintf(f.IO.ErrOut, "lovia: the run is saved — once the server answers, continue with: %s\n", resumeCommand(f, a, h.RunID()))
			}
		}
	}
	if code == 0 && writeErr != nil {
		return errs.Wrap(errs.KindInternal, writeErr, "writing the output", "")
	}
	if code != 0 {
		return &exitError{code}
	}
	return nil
}

func resumeCommand(f *Factory, a *app.App, runID string) string {
	s := "lovia resume " + runID
	if f.Common.flags != nil && f.Common.flags.Changed("db") {
		s += " --db " + a.Config.DB
	}
	return s
}

// runRecorded reports whether the run has a checkpoint to resume from (an interrupt
// during setup leaves none, and a resume hint would point at nothing).
func runRecorded(a *app.App, runID string) bool {
	if a.Checkpointer == nil || runID == "" {
		return false
	}
	_, err := a.Checkpointer.Load(context.Background(), runID)
	return err == nil
}

// resumeBudget is the cost budget a resumed run keeps: the typed --max-budget-usd,
// else the one the run recorded. The budget counts the whole run, before and after
// the resume.
func resumeBudget(opts *ResumeOptions, st *app.Settings, notices *[]string) (float64, error) {
	rec, _ := strconv.ParseFloat(st.FlagString("max_budget_usd"), 64)
	if !opts.budgetSet {
		return rec, nil
	}
	if err := validBudgetUSD(opts.MaxBudgetUSD); err != nil {
		return 0, err
	}
	if rec > 0 && rec != opts.MaxBudgetUSD {
		*notices = append(*notices, fmt.Sprintf("--max-budget-usd overrides the run's %s", strconv.FormatFloat(rec, 'f', -1, 64)))
	}
	return opts.MaxBudgetUSD, nil
}
