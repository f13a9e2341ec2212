package cmd

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lovia-dev/lovia/internal/app"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/eval"
	"github.com/lovia-dev/lovia/internal/runtime"
	"github.com/lovia-dev/lovia/internal/termtext"
)

// EvalOptions are the inputs of `lovia eval`.
type EvalOptions struct {
	F           *Factory
	File        string
	Baseline    string
	Save        string
	JSON        bool
	Concurrency int
	FailFast    bool
}

// NewCmdEval builds `lovia eval FILE`.
func NewCmdEval(f *Factory, runF func(*EvalOptions) error) *cobra.Command {
	opts := &EvalOptions{F: f}
	c := &cobra.Command{
		Use:   "eval FILE",
		Short: "Run declarative eval cases and report (and diff against a baseline)",
		Long: `Run the cases of an eval file (input, preset, model or script:PATH, checks), each
sample as its own run with nothing persisted and every approval denied, then print a
report. With --out, also write the report as JSON (for later comparison); with
--baseline, compare pass rates with a saved JSON report and list what improved and
what regressed. On a terminal, a progress line is printed on stderr per sample.

Exit codes: 0 every case passed (and nothing regressed against the baseline),
1 a case failed or regressed, 2 usage or configuration error.`,
		Example: `  lovia eval evals/smoke.yaml
  lovia eval evals/smoke.yaml --out baseline.json
  lovia eval evals/smoke.yaml --baseline baseline.json --json`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 1 {
				return errs.New(errs.KindUsage, "lovia eval takes one eval file", "lovia eval cases.yaml")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.File = args[0]
			if !c.Flags().Changed("concurrency") {
				opts.Concurrency = 0 // the file's defaults.concurrency, else eval.DefaultConcurrency
			} else if opts.Concurrency < 1 {
				return errs.New(errs.KindUsage, "--concurrency must be at least 1", "lovia eval --concurrency 4 FILE")
			}
			if runF != nil {
				return runF(opts)
			}
			return evalRun(c.Context(), opts)
		},
	}
	fl := c.Flags()
	addTrustFlag(fl, f)
	fl.StringVar(&opts.Baseline, "baseline", "", "compare with the JSON report in `FILE`")
	fl.StringVar(&opts.Save, "out", "", "also write the report as JSON to `FILE`")
	// --save is the earlier name of --out.
	fl.StringVar(&opts.Save, "save", "", "same as --out")
	_ = fl.MarkHidden("save")
	fl.BoolVar(&opts.JSON, "json", false, "print the report as JSON instead of a table")
	fl.IntVar(&opts.Concurrency, "concurrency", eval.DefaultConcurrency, "samples run at once (when not given: the file's defaults.concurrency, else this)")
	fl.BoolVar(&opts.FailFast, "fail-fast", false, "stop scheduling samples after the first failure")
	return c
}

func evalRun(ctx context.Context, opts *EvalOptions) error {
	f := opts.F
	file, err := eval.Load(opts.File)
	if err != nil {
		return err
	}
	var baseline *eval.Report
	if opts.Baseline != "" {
		if baseline, err = eval.LoadReport(opts.Baseline); err != nil {
			return err
		}
	}
	aopts := f.AppOptions()
	aopts.Memory = true
	a, err := f.NewApp(ctx, aopts)
	if err != nil {
		return err
	}
	defer a.Close()
	printTrustNotice(f, a)
	// A case's preset may tighten the policy the command line (or configuration)
	// gives, never loosen it: case files are often repository content.
	ceiling := a.CeilingPolicy()

	run := func(ctx context.Context, c eval.Case, sample int) eval.Outcome {
		start := time.Now()
		// eval.Run already made script: paths relative to the cases file.
		h, _, err := a.Start(ctx, runtime.Text(c.Input), app.RunOptions{
			Preset: c.Preset, Model: c.Model, MaxTurns: c.MaxTurns, Approvals: runtime.ApprovalDenyAll,
			PolicyCeiling: ceiling,
		})
		if err != nil {
			return eval.Outcome{Err: err, Duration: time.Since(start)}
		}
		for range h.Events() {
		}
		res, err := h.Result()
		o := eval.Outcome{Err: err, Duration: time.Since(start)}
		if res != nil {
			o.Output, o.Structured, o.Entries, o.Turns, o.Usage = res.Output, res.StructuredOutput, res.Entries, res.Turns, res.Usage
		}
		return o
	}
	eopts := eval.Options{Concurrency: opts.Concurrency, FailFast: opts.FailFast, Judge: eval.ProviderJudge(a.Resolve)}
	if f.IO.StderrTTY && !f.Common.Quiet {
		eopts.Progress = func(done, total int, r eval.SampleResult) {
			fmt.Fprintln(f.IO.ErrOut, progressLine(done, total, r))
		}
	}
	rep := eval.Run(ctx, file, run, eopts)
	if opts.JSON {
		err = rep.WriteJSON(f.IO.Out)
	} else {
		err = rep.WriteTable(f.IO.Out)
	}
	if err != nil {
		return err
	}
	if opts.Save != "" {
		out, err := os.Create(opts.Save)
		if err != nil {
			return errs.Wrap(errs.KindUsage, err, "cannot write --out "+opts.Save, "check that the directory exists and is writable")
		}
		err = rep.WriteJSON(out)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return errs.Wrap(errs.KindUsage, err, "cannot write --out "+opts.Save, "check that the directory exists and is writable")
		}
	}
	regressed := false
	if baseline != nil {
		changes := eval.Diff(baseline, rep)
		w := f.IO.Out
		if opts.JSON {
			w = f.IO.ErrOut
		}
		eval.WriteDiff(w, changes)
		regressed = eval.Regressed(changes)
	}
	if !rep.OK() || regressed {
		return &exitError{1}
	}
	return nil
}

// progressLine is one sample's line on a terminal: "[3/8] case name ✓" (with the
// sample number when a case has several, and why a failed sample failed).
func progressLine(done, total int, r eval.SampleResult) string {
	mark := "✓"
	if !r.Pass {
		mark = "✗"
	}
	name := r.Case
	if r.Sample > 0 {
		name += fmt.Sprintf(" #%d", r.Sample+1)
	}
	line := fmt.Sprintf("[%d/%d] %s %s", done, total, name, mark)
	why := r.Error
	for _, c := range r.Checks {
		if why == "" && !c.Pass {
			why = c.Name + ": " + c.Detail
		}
	}
	if !r.Pass && why != "" {
		line += "  " + strings.Join(strings.Fields(why), " ")
	}
	return termtext.String(line) // check details quote model output
}
