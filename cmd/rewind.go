package cmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"

	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lovia-dev/lovia/internal/app"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/rewind"
	"github.com/lovia-dev/lovia/internal/termtext"
	"github.com/lovia-dev/lovia/internal/textutil"
)

// RewindOptions are the inputs of `lovia rewind`.
type RewindOptions struct {
	F            *Factory
	RunID        string
	Files        bool
	Conversation bool
	Both         bool
	Yes          bool
	Force        bool
}

// NewCmdRewind builds `lovia rewind RUN_ID`. runF replaces the behaviour in flag tests.
func NewCmdRewind(f *Factory, runF func(*RewindOptions) error) *cobra.Command {
	opts := &RewindOptions{F: f}
	c := &cobra.Command{
		Use:   "rewind RUN_ID",
		Short: "Undo what a run changed in the files and/or the conversation",
		Long: `Restore the working directory's files to their state before run RUN_ID, undoing
what that run and the later runs of its session changed: edits by the file tools
and whatever shell commands changed (files created are removed, deleted ones come
back, modes are kept). Ignored files (.gitignore, node_modules) and .git are never
touched. With --conversation the session is cut back to before the run instead, so
the next chat -c continues from there; --both does both.

lovia shows what will change and asks first (--yes skips the question). It refuses,
naming them, when files it would restore were changed outside lovia since the run
(by you or another program); --force restores them anyway.`,
		Example: `  lovia checkpoints                 # runs that can be rewound
  lovia rewind run_3f2a9c1e0b7d4a55
  lovia rewind run_3f2a9c1e0b7d4a55 --both --yes`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 1 {
				return errs.New(errs.KindUsage, "lovia rewind takes one run id", "`lovia checkpoints` lists the runs that can be rewound")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.RunID = args[0]
			n := 0
			for _, b := range []bool{opts.Files, opts.Conversation, opts.Both} {
				if b {
					n++
				}
			}
			if n > 1 {
				return errs.New(errs.KindUsage, "--files, --conversation and --both exclude each other", "pass one of them")
			}
			if runF != nil {
				return runF(opts)
			}
			return rewindRun(c.Context(), opts)
		},
	}
	c.Flags().BoolVar(&opts.Files, "files", false, "restore the files only (the default)")
	c.Flags().BoolVar(&opts.Conversation, "conversation", false, "cut the conversation back only")
	c.Flags().BoolVar(&opts.Both, "both", false, "restore the files and cut the conversation")
	c.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation")
	c.Flags().BoolVar(&opts.Force, "force", false, "restore files changed outside lovia since the run too")
	return c
}

func rewindRun(ctx context.Context, opts *RewindOptions) error {
	f := opts.F
	if ctx == nil {
		ctx = context.Background()
	}
	s, err := openStoreRW(ctx, f)
	if err != nil {
		return err
	}
	defer s.Close()
	files := !opts.Conversation
	convo := opts.Conversation || opts.Both
	out := termtext.NewWriter(f.IO.ErrOut)

	if _, err := s.DB.Checkpoints().GetRun(ctx, opts.RunID); err != nil {
		return err
	}
	var plan *rewind.Plan
	st, rec := app.RewindRecorder(s.Config, nil)
	if files {
		plan, err = st.Plan(ctx, rec, opts.RunID)
		switch {
		case errors.Is(err, os.ErrNotExist):
			fmt.Fprintf(out, "run %s changed no files through lovia's tools: no files to restore\n", opts.RunID)
			plan = nil
		case err != nil:
			return errs.Wrap(errs.KindUsage, err, "rewind", "")
		}
	}
	if plan != nil {
		if len(plan.Runs) > 1 {
			fmt.Fprintf(out, "Rewinding the files of run %s and of %d later run(s) (%s) in %s:\n", opts.RunID, len(plan.Runs)-1, strings.Join(plan.RunIDs[1:], ", "), plan.Root)
		} else {
			fmt.Fprintf(out, "Rewinding the files of run %s in %s:\n", opts.RunID, plan.Root)
		}
		if len(plan.Changes) == 0 {
			fmt.Fprintln(out, "  nothing to change: the files are as they were before the run")
		}
		for _, c := range plan.Changes {
			line := fmt.Sprintf("  %-8s %s", c.Action, c.Path)
			if c.Note != "" {
				line += " (" + c.Note + ")"
			}
			fmt.Fprintln(out, line)
		}
		if len(plan.Conflicts) > 0 && !opts.Force {
			return errs.Newf(errs.KindRunConflict, "check them, then pass --force to restore them anyway",
				"not rewinding: changed outside lovia since the run: %s", termtext.String(strings.Join(plan.Conflicts, ", ")))
		}
	}
	if convo {
		fmt.Fprintf(out, "The conversation is cut back to before run %s.\n", opts.RunID)
	}
	if !opts.Yes {
		if !f.IO.StdinTTY {
			return errs.New(errs.KindUsage, "pass --yes to rewind without confirmation", "not rewinding without confirmation (standard input is not a terminal)")
		}
		fmt.Fprint(f.IO.ErrOut, "Rewind? [y/N] ")
		line, _ := bufio.NewReader(f.IO.In).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(f.IO.ErrOut, "not rewound")
			return &exitError{1}
		}
	}
	if plan != nil {
		res, err := st.Apply(ctx, plan, opts.Force)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "files: %d restored, %d deleted\n", res.Restored, res.Deleted)
		for _, sk := range res.Skipped {
			fmt.Fprintf(out, "  not restored: %s\n", sk)
		}
	}
	if convo {
		sid, n, err := app.RewindConversation(ctx, s.DB, opts.RunID)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "conversation: %d run(s) dropped from session %s\n", n, sid)
	}
	return nil
}

// CheckpointsOptions are the inputs of `lovia checkpoints`.
type CheckpointsOptions struct {
	F     *Factory
	RunID string
	JSON  bool
	All   bool
}

// NewCmdCheckpoints builds `lovia checkpoints [RUN_ID]`.
func NewCmdCheckpoints(f *Factory, runF func(*CheckpointsOptions) error) *cobra.Command {
	opts := &CheckpointsOptions{F: f}
	c := &cobra.Command{
		Use:   "checkpoints [RUN_ID]",
		Short: "List the file checkpoints of runs (what lovia rewind can undo)",
		Long: `Without an argument, list the runs that took file checkpoints in this directory,
most recent first, with the files each changed. With RUN_ID, list that run's
checkpoints (one before each file edit or shell command, and its end state).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.RunID = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return checkpointsRun(c.Context(), opts)
		},
	}
	c.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	c.Flags().BoolVar(&opts.All, "all", false, "all directories, not only this one")
	return c
}

type checkpointRow struct {
	RunID     string          `json:"run_id"`
	SessionID string          `json:"session_id,omitempty"`
	Root      string          `json:"root"`
	Input     string          `json:"input,omitempty"`
	Start     time.Time       `json:"started_at"`
	Calls     int             `json:"checkpoints"`
	Rewound   bool            `json:"rewound,omitempty"`
	Files     []string        `json:"files"`
	Notes     []string        `json:"notes,omitempty"`
	Records   []rewind.Record `json:"records,omitempty"`
}

func checkpointsRun(ctx context.Context, opts *CheckpointsOptions) error {
	f := opts.F
	s, err := openStore(ctx, f)
	if err != nil {
		return err
	}
	defer s.Close()
	st, rec := app.RewindRecorder(s.Config, nil)
	var runs []*rewind.Run
	if opts.RunID != "" {
		r, err := st.FindRun(opts.RunID)
		if err != nil {
			return errs.Wrap(errs.KindNotFound, err, "checkpoints", "`lovia checkpoints` lists the runs that have some")
		}
		runs = []*rewind.Run{r}
	} else if runs, err = st.AllRuns(); err != nil {
		return err
	}
	var rows []checkpointRow
	for i := len(runs) - 1; i >= 0; i-- {
		r := runs[i]
		if !opts.All && opts.RunID == "" && r.Root != rec.Root() {
			continue
		}
		files, err := st.ChangedFiles(r, "")
		if err != nil {
			return err
		}
		row := checkpointRow{RunID: r.RunID, SessionID: r.SessionID, Root: r.Root, Input: r.Input, Start: r.Start,
			Calls: len(r.Trees), Rewound: r.Rewound, Files: files, Notes: r.Notes}
		if r.Ended {
			row.Calls--
		}
		if opts.RunID != "" {
			row.Records = r.Trees
		}
		rows = append(rows, row)
	}
	if opts.JSON {
		if rows == nil {
			rows = []checkpointRow{}
		}
		return writeJSON(f.IO.Out, rows)
	}
	w := termtext.NewWriter(f.IO.Out)
	if len(rows) == 0 {
		fmt.Fprintln(f.IO.ErrOut, "no checkpoints here (runs take them before file edits and shell commands)")
		return nil
	}
	for _, r := range rows {
		state := ""
		if r.Rewound {
			state = " (rewound)"
		}
		fmt.Fprintf(w, "%s\t%s\t%d checkpoint(s)%s\t%s\n", r.RunID, r.Start.Local().Format("2006-01-02 15:04"), r.Calls, state, textutil.Clip(termtext.String(r.Input), 60))
		for _, p := range r.Files {
			fmt.Fprintf(w, "  %s\n", p)
		}
		for _, rc := range r.Records {
			fmt.Fprintf(w, "  #%d %s %s %s\n", rc.Seq, rc.Kind, rc.Tool, textutil.Clip(termtext.String(rc.Summary), 80))
		}
		for _, n := range r.Notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
	}
	return nil
}

// removeCheckpoints deletes a removed session's file checkpoints and the objects
// only they used (failures are not fatal: the session is gone either way).
func removeCheckpoints(s *app.Store, sessionID string) {
	st := rewind.Open(s.Config.Home)
	if err := st.DeleteSession(sessionID); err == nil {
		_, _ = st.Prune(rewind.DefaultBudget, "")
	}
}
