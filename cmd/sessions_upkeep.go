package cmd

import (
	"bufio"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/store/sqlite"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// upkeepOptions are the inputs of `lovia sessions trim` and `lovia sessions rewind`.
type upkeepOptions struct {
	F  *Factory
	ID string
	// OlderThan is trim's number of latest runs whose tool outputs stay intact;
	// MaxChars is the length older outputs are shortened to.
	OlderThan int
	MaxChars  int
	// To is rewind's cut: a 1-based entry number or a run id.
	To  string
	Yes bool
}

// addSessionUpkeep adds trim and rewind to `lovia sessions`: explicit session
// maintenance (not compaction) through the store's own functions.
func addSessionUpkeep(c *cobra.Command, f *Factory) {
	opts := &upkeepOptions{F: f}
	do := func(fn func(context.Context, *upkeepOptions) error) func(*cobra.Command, []string) error {
		return func(c *cobra.Command, args []string) error {
			opts.ID = args[0]
			return fn(c.Context(), opts)
		}
	}
	idArgs := oneID("session", "`lovia sessions` lists the sessions")
	trim := &cobra.Command{
		Use:   "trim SESSION_ID",
		Short: "Shorten the stored tool outputs of a session's older runs",
		Long: `Shorten the tool outputs stored in a session, so that continuing it sends the
model less. Outputs of the latest --tool-outputs-older-than runs stay intact; older
ones keep their head and tail around a marker saying how much was cut. Trimming again
with the same limits changes nothing. The cut text is gone from the session (the
runs' own checkpoints are not touched).`,
		Example: `  lovia sessions trim ses_1a2b3c4d5e6f7a8b
  lovia sessions trim ses_1a2b3c4d5e6f7a8b --tool-outputs-older-than 0 --max-chars 200`,
		Args: idArgs, ValidArgsFunction: completeSessionIDs(f), RunE: do(sessionsTrim),
	}
	trim.Flags().IntVar(&opts.OlderThan, "tool-outputs-older-than", 1, "keep the tool outputs of the latest `N` runs intact")
	trim.Flags().IntVar(&opts.MaxChars, "max-chars", 1000, "shorten older outputs to at most `N` characters (at least 100)")
	rewind := &cobra.Command{
		Use:   "rewind SESSION_ID --to ENTRY",
		Short: "Cut a session back to before one of its entries",
		Long: `Cut a session's conversation back to before ENTRY: that entry and everything after
it are dropped, so the next lovia run -s SESSION_ID continues from there. ENTRY is an
entry number (the line number in lovia sessions export SESSION_ID, from 1) or a run
id, which cuts before that run as lovia rewind RUN_ID --conversation does. A tool call
whose result would be cut is dropped with it. Files are not touched (lovia rewind
restores them) and the runs' checkpoints stay. It asks for confirmation in a terminal;
without one, pass --yes.`,
		Example: `  lovia sessions export ses_1a2b3c4d5e6f7a8b | grep -n '"type":"input"'
  lovia sessions rewind ses_1a2b3c4d5e6f7a8b --to 7 --yes`,
		Args: idArgs, ValidArgsFunction: completeSessionIDs(f), RunE: do(sessionsRewind),
	}
	rewind.Flags().StringVar(&opts.To, "to", "", "cut before this `ENTRY` (entry number from 1, or a run id)")
	rewind.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation")
	_ = rewind.MarkFlagRequired("to")
	c.AddCommand(trim, rewind)
}

func sessionsTrim(ctx context.Context, opts *upkeepOptions) error {
	f := opts.F
	if opts.OlderThan < 0 || opts.MaxChars < 0 {
		return errs.New(errs.KindUsage, "--tool-outputs-older-than and --max-chars must not be negative", "use 0 or more")
	}
	s, id, err := openSessionRW(ctx, f, opts.ID)
	if err != nil {
		return err
	}
	defer s.Close()
	opts.ID = id
	ss := s.DB.Sessions()
	runs, err := ss.SessionRuns(ctx, opts.ID)
	if err != nil {
		return err
	}
	// The store counts kept results; the CLI counts kept runs: the results of the
	// latest N segments.
	keep := 0
	if n := min(opts.OlderThan, len(runs)); n > 0 {
		entries, err := ss.Load(ctx, opts.ID)
		if err != nil {
			return err
		}
		from := 0
		for _, r := range runs[:len(runs)-n] {
			from += r.Entries
		}
		for _, e := range entries[min(from, len(entries)):] {
			if e.Type == transcript.TypeToolResult {
				keep++
			}
		}
	}
	n, err := ss.TrimToolOutputs(ctx, opts.ID, keep, opts.MaxChars)
	if err != nil {
		return err
	}
	fmt.Fprintf(f.IO.ErrOut, "trimmed %s of session %s\n", plural(n, "tool output"), opts.ID)
	return nil
}

func sessionsRewind(ctx context.Context, opts *upkeepOptions) error {
	f := opts.F
	s, id, err := openSessionRW(ctx, f, opts.ID)
	if err != nil {
		return err
	}
	defer s.Close()
	opts.ID = id
	ss := s.DB.Sessions()
	runs, err := ss.SessionRuns(ctx, opts.ID)
	if err != nil {
		return err
	}
	total := 0
	for _, r := range runs {
		total += r.Entries
	}
	cut := -1
	if n, err := strconv.Atoi(opts.To); err == nil {
		if n < 1 || n > total {
			return errs.Newf(errs.KindUsage, "lovia sessions export "+opts.ID+" numbers the entries by line",
				"--to %d is not an entry of session %s (it has %d)", n, opts.ID, total)
		}
		cut = n - 1
	} else {
		pos := 0
		for _, r := range runs {
			if r.RunID == opts.To || (strings.HasPrefix(r.RunID, opts.To) && len(opts.To) >= 8) {
				cut = pos
				break
			}
			pos += r.Entries
		}
		if cut < 0 {
			return errs.Newf(errs.KindUsage, "lovia sessions show "+opts.ID+" lists its runs",
				"--to %q is neither an entry number nor a run of session %s", opts.To, opts.ID)
		}
	}
	// A live run of the session would append a turn built on the entries cut here.
	live, err := s.DB.Checkpoints().ListRuns(ctx, sqlite.RunFilter{SessionID: opts.ID, Status: store.StatusRunning})
	if err != nil {
		return err
	}
	for _, r := range live {
		if r.Holder != nil {
			return errs.Newf(errs.KindRunConflict, "wait for it to finish or interrupt it", "run %s of session %s is still running (%s)", r.ID, opts.ID, r.Holder)
		}
	}
	if !opts.Yes {
		if !f.IO.StdinTTY {
			return errs.Newf(errs.KindUsage, "pass --yes to rewind without confirmation",
				"not rewinding session %s without confirmation (standard input is not a terminal)", opts.ID)
		}
		fmt.Fprintf(f.IO.ErrOut, "Drop entries %d to %d of session %s? [y/N] ", cut+1, total, opts.ID)
		line, _ := bufio.NewReader(f.IO.In).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(f.IO.ErrOut, "not rewound")
			return &exitError{1}
		}
	}
	n, err := ss.RewindToEntry(ctx, opts.ID, cut)
	if err != nil {
		return err
	}
	fmt.Fprintf(f.IO.ErrOut, "rewound session %s: %d of %d entries dropped\n", opts.ID, n, total)
	return nil
}
