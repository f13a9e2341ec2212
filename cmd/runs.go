package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/lovia-dev/lovia/internal/textutil"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lovia-dev/lovia/internal/app"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/runtime"
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/store/sqlite"
	"github.com/lovia-dev/lovia/internal/termtext"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

// RunsOptions are the inputs of `lovia runs` and `lovia runs show`.
type RunsOptions struct {
	F       *Factory
	JSON    bool
	All     bool
	Limit   int
	Status  string
	Session string
	// ID is the run of `runs show`.
	ID string
	// Now is the clock for relative times (tests).
	Now func() time.Time
}

// NewCmdRuns builds `lovia runs [list | show ID]`. runF replaces the behaviour of
// list and show in flag tests.
func NewCmdRuns(f *Factory, runF func(*RunsOptions) error) *cobra.Command {
	opts := &RunsOptions{F: f}
	list := func(c *cobra.Command, _ []string) error {
		if runF != nil {
			return runF(opts)
		}
		return runsList(c.Context(), opts)
	}
	c := &cobra.Command{
		Use:   "runs",
		Short: "List runs and their status",
		Long: `List the runs of this repository, most recent first: id, status, agent, turns,
tokens, model and when it was last updated. Status is running, interrupted,
completed or failed; a run whose process died (kill -9, a crash) shows as
interrupted and can be continued with lovia resume RUN_ID.

In a terminal the list is a table; otherwise tab-separated lines. --json prints
JSON for scripts.`,
		Example: `  lovia runs
  lovia runs --all --status interrupted
  lovia runs show run_3f2a9c1e0b7d4a55
  lovia runs --json | jq -r '.[] | select(.status=="interrupted") | .run_id'`,
		Args: noArgs,
		RunE: list,
	}
	addListFlags := func(c *cobra.Command) {
		fl := c.Flags()
		fl.BoolVar(&opts.JSON, "json", false, "print JSON")
		fl.BoolVarP(&opts.All, "all", "a", false, "runs of every repository, not just this one")
		fl.IntVarP(&opts.Limit, "limit", "L", 20, "show at most `N` runs (0: all)")
		fl.StringVar(&opts.Status, "status", "", "only runs with this `STATUS`: running, interrupted, completed or failed")
		_ = c.RegisterFlagCompletionFunc("status", cobra.FixedCompletions([]string{"running", "interrupted", "completed", "failed"}, cobra.ShellCompDirectiveNoFileComp))
	}
	addListFlags(c)
	lc := &cobra.Command{Use: "list", Aliases: []string{"ls"}, Short: "List runs (the default)", Args: noArgs, RunE: list}
	addListFlags(lc)
	show := &cobra.Command{
		Use:               "show RUN_ID",
		Short:             "Show a run: its state, settings and transcript",
		Args:              oneID("run", "`lovia runs` lists the runs"),
		ValidArgsFunction: completeRunIDs(f, false),
		RunE: func(c *cobra.Command, args []string) error {
			opts.ID = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runsShow(c.Context(), opts)
		},
	}
	show.Flags().BoolVar(&opts.JSON, "json", false, "print JSON (with the full entries)")
	c.AddCommand(lc, show)
	return c
}

func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return errs.Newf(errs.KindUsage, "run `"+c.CommandPath()+" --help` for the subcommands", "unknown command %q for %s", args[0], c.CommandPath())
	}
	return nil
}

func oneID(what, hint string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != 1 {
			return errs.Newf(errs.KindUsage, hint, "%s takes one %s id", c.CommandPath(), what)
		}
		return nil
	}
}

func (o *RunsOptions) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// openStore opens the database for reading: listings, show, export and completion
// never take the write lock.
func openStore(ctx context.Context, f *Factory) (*app.Store, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	return app.OpenStoreReadOnly(ctx, f.AppOptions())
}

// openStoreRW opens the database for commands that change it.
func openStoreRW(ctx context.Context, f *Factory) (*app.Store, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	return app.OpenStore(ctx, f.AppOptions())
}

// openSessionRW opens the store for writing and resolves a session id (or prefix);
// the store is closed again when that fails.
func openSessionRW(ctx context.Context, f *Factory, id string) (*app.Store, string, error) {
	s, err := openStoreRW(ctx, f)
	if err != nil {
		return nil, "", err
	}
	if id, err = resolveSessionID(ctx, s, id); err != nil {
		s.Close()
		return nil, "", err
	}
	return s, id, nil
}

func runsList(ctx context.Context, opts *RunsOptions) error {
	f := opts.F
	status := store.Status(opts.Status)
	switch status {
	case "", store.StatusRunning, store.StatusInterrupted, store.StatusCompleted, store.StatusFailed:
	default:
		return errs.Newf(errs.KindUsage, "use running, interrupted, completed or failed", "unknown --status %q", opts.Status)
	}
	if opts.Limit < 0 {
		return errs.New(errs.KindUsage, "--limit must not be negative", "use --limit 0 for all runs")
	}
	s, err := openStore(ctx, f)
	if err != nil {
		return err
	}
	defer s.Close()
	filter := sqlite.RunFilter{Status: status, Limit: opts.Limit}
	repo := app.Repo(s.Config)
	if !opts.All {
		filter.Repo = repo
	}
	runs, err := s.DB.Checkpoints().ListRuns(ctx, filter)
	if err != nil {
		return err
	}
	if runs == nil {
		runs = []sqlite.RunInfo{}
	}
	prices := s.Config.Prices()
	for i := range runs {
		// Runs recorded before lovia priced calls get today's prices for their model.
		runs[i].Usage = prices.Fill(runs[i].Model, runs[i].Usage)
	}
	if opts.JSON {
		return writeJSON(f.IO.Out, runs)
	}
	if len(runs) == 0 {
		where := " in " + repo
		if opts.All {
			where = ""
		}
		fmt.Fprintf(f.IO.ErrOut, "no runs%s%s\n", statusWord(status), where)
		if !opts.All {
			fmt.Fprintln(f.IO.ErrOut, "  hint: lovia runs --all lists the runs of every repository")
		}
		return nil
	}
	tty := f.IO.StdoutTTY
	// Agent and model names come from presets and the database: shown sanitized.
	out := termtext.NewWriter(f.IO.Out)
	defer out.Flush()
	tw := newTable(out)
	if tty {
		fmt.Fprintln(tw, "ID\tSTATUS\tAGENT\tTURNS\tTOKENS\tCOST\tMODEL\tUPDATED")
	}
	for _, r := range runs {
		cost := r.Usage.CostPtr()
		if tty {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", r.ID, r.Status, r.Agent, r.Turns, tokens(r.Usage), dollars(cost, "-"), r.Model, ago(opts.now(), r.UpdatedAt))
		} else {
			// COST is the last column: scripts reading the earlier ones keep working.
			fmt.Fprintf(out, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n", r.ID, r.Status, r.Agent, r.Turns, r.Usage.Total(), r.Model, r.UpdatedAt.UTC().Format(time.RFC3339), usdNumber(cost))
		}
	}
	if tty {
		if err := tw.Flush(); err != nil {
			return err
		}
		if n := countStatus(runs, store.StatusInterrupted); n > 0 {
			fmt.Fprintf(out, "\n%d interrupted: continue one with lovia resume ID\n", n)
		}
	}
	return nil
}

// resolveRunID returns id if a run has it, else the one run whose id starts with it
// (ids are long; a unique prefix is enough). Unknown ids are returned as they are, for
// the caller's not-found error.
func resolveRunID(ctx context.Context, s *app.Store, id string) (string, error) {
	_, err := s.DB.Checkpoints().GetRun(ctx, id)
	if err == nil || errs.KindOf(err) != errs.KindNotFound || id == "" {
		return id, err
	}
	ids, err := s.DB.Checkpoints().RunIDsWithPrefix(ctx, id)
	if err != nil {
		return "", err
	}
	return pickPrefix("run", id, ids)
}

func pickPrefix(what, prefix string, ids []string) (string, error) {
	switch len(ids) {
	case 0:
		return prefix, nil
	case 1:
		return ids[0], nil
	}
	slices.Sort(ids)
	shown := ids
	if len(shown) > 5 {
		shown = append(shown[:5:5], "…")
	}
	return "", errs.Newf(errs.KindUsage, "type more of the id",
		"%s id %q is ambiguous: %d ids start with it (%s)", what, prefix, len(ids), strings.Join(shown, ", "))
}

func statusWord(s store.Status) string {
	if s == "" {
		return ""
	}
	return " " + string(s)
}

func countStatus(runs []sqlite.RunInfo, s store.Status) int {
	n := 0
	for _, r := range runs {
		if r.Status == s && r.ErrorKind != runtime.ErrorKindCarried {
			n++
		}
	}
	return n
}

// RunDetail is `lovia runs show --json`.
type RunDetail struct {
	sqlite.RunInfo
	Settings  json.RawMessage    `json:"settings,omitempty"`
	ErrorKind string             `json:"error_kind,omitempty"`
	Result    *store.RunRecord   `json:"result,omitempty"`
	Entries   []transcript.Entry `json:"entries"`

	// Children are the runs this one started (subagents, agents asked as tools).
	Children []sqlite.RunInfo `json:"children,omitempty"`
}

func runsShow(ctx context.Context, opts *RunsOptions) error {
	f := opts.F
	s, err := openStore(ctx, f)
	if err != nil {
		return err
	}
	defer s.Close()
	if opts.ID, err = resolveRunID(ctx, s, opts.ID); err != nil {
		return err
	}
	cp := s.DB.Checkpoints()
	info, err := cp.GetRun(ctx, opts.ID)
	if err != nil {
		return err
	}
	snap, err := cp.Load(ctx, opts.ID)
	if err != nil {
		return err
	}
	d := RunDetail{RunInfo: info, Settings: snap.Head.Settings, ErrorKind: snap.Head.ErrorKind, Result: snap.Head.Result, Entries: snap.Entries}
	if d.Entries == nil {
		d.Entries = []transcript.Entry{}
	}
	if d.Children, err = cp.ChildRuns(ctx, opts.ID); err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(f.IO.Out, d)
	}
	var st app.Settings
	_ = json.Unmarshal(snap.Head.Settings, &st) // a damaged settings object only blanks fields

	// Everything below quotes the run's text (model output, tool results, errors,
	// names from presets): it reaches the terminal sanitized.
	w := termtext.NewWriter(f.IO.Out)
	defer w.Flush()
	tw := newTable(w)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s\t%s\n", k, v)
		}
	}
	statusLine := string(info.Status)
	switch {
	case info.ErrorKind == runtime.ErrorKindCarried:
		// A later run of the session carried its work on; it is not resumed again.
		statusLine += " — " + info.Error
	case info.Status != info.StoredStatus:
		statusLine += fmt.Sprintf(" (recorded %s; its process is gone) — continue with: lovia resume %s", info.StoredStatus, info.ID)
	case info.Status == store.StatusInterrupted || info.Status == store.StatusFailed:
		statusLine += " — continue with: lovia resume " + info.ID
	case info.Holder != nil:
		statusLine += " (" + info.Holder.String() + ")"
	}
	row("run", info.ID)
	row("status", statusLine)
	row("session", info.SessionID)
	row("parent", info.ParentRunID)
	agent := info.Agent
	if info.EntryAgent != "" && info.EntryAgent != info.Agent {
		agent += " (started as " + info.EntryAgent + ")"
	}
	row("agent", agent)
	row("model", info.Model)
	row("preset", st.Preset)
	row("policy", st.Policy)
	row("cwd", st.Cwd)
	row("turns", fmt.Sprint(info.Turns))
	row("tokens", usageLine(info.Usage))
	row("cost", dollars(s.Config.Prices().Fill(info.Model, info.Usage).CostPtr(), "unknown (no price known for the model; see pricing: in docs/cost.md)"))
	row("started", info.StartedAt.Local().Format("2006-01-02 15:04:05"))
	row("updated", info.UpdatedAt.Local().Format("2006-01-02 15:04:05")+" ("+ago(opts.now(), info.UpdatedAt)+")")
	if info.Error != "" {
		e := info.Error
		if snap.Head.ErrorKind != "" {
			e += " [" + snap.Head.ErrorKind + "]"
		}
		row("error", e)
	}
	if r := snap.Head.Result; r != nil {
		row("finish", r.FinishReason)
		row("output", textutil.Clip(termtext.String(r.Output), 100))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nentries (%d):\n", len(snap.Entries))
	writeEntrySummary(w, snap.Entries)
	if len(d.Children) > 0 {
		fmt.Fprintf(w, "\nchildren (%d):\n", len(d.Children))
		ct := newTable(w)
		for _, c := range d.Children {
			fmt.Fprintf(ct, "  %s\t%s\t%s\t%s tokens\n", c.ID, c.Agent, c.Status, tokens(c.Usage))
		}
		if err := ct.Flush(); err != nil {
			return err
		}
		fmt.Fprintf(w, "  (lovia runs show CHILD_ID shows one)\n")
	}
	return nil
}

// writeEntrySummary prints one line per entry, results paired with calls by id.
func writeEntrySummary(w io.Writer, entries []transcript.Entry) {
	answered := map[string]bool{}
	for _, e := range entries {
		if e.Type == transcript.TypeToolResult {
			answered[e.CallID] = true
		}
	}
	tw := newTable(w)
	for i, e := range entries {
		var kind, text string
		switch e.Type {
		case transcript.TypeInput:
			kind, text = e.Role, textutil.Clip(termtext.String(e.Text), 80)
		case transcript.TypeAssistantText:
			kind, text = "assistant", textutil.Clip(termtext.String(e.Text), 80)
		case transcript.TypeReasoning:
			kind, text = "reasoning", textutil.Clip(termtext.String(e.Text), 80)
			if text == "" {
				text = "(opaque)"
			}
		case transcript.TypeToolCall:
			kind = "call"
			text = e.Name + " " + textutil.Clip(termtext.String(argsText(e.Args)), 60) + "  [" + e.CallID + "]"
			if !answered[e.CallID] {
				text += "  (no result yet: runs again on resume)"
			}
		case transcript.TypeToolResult:
			kind = "result"
			ok := "ok"
			if e.IsError {
				ok = "error"
			}
			text = fmt.Sprintf("%s %s [%s]: %s", e.Name, ok, e.CallID, textutil.Clip(termtext.String(e.Text), 60))
		default:
			kind, text = string(e.Type), textutil.Clip(termtext.String(e.Text), 80)
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\n", i+1, kind, text)
	}
	tw.Flush()
}

// argsText is a call's arguments as compact JSON without HTML escapes (">" not "\u003e").
func argsText(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return string(raw)
	}
	return strings.TrimRight(b.String(), "\n")
}

// writeJSON writes v indented; C1 and bidi characters are written as \u escapes
// (JSON leaves them raw, and a terminal may act on them).
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(termtext.NewJSONWriter(w))
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// tokens is a compact token count: 950, 12.3k, 4.1M.
func tokens(u usage.Usage) string {
	return compact(u.Total())
}

func compact(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1000), ".0") + "k"
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e6), ".0") + "M"
}

// dollars shows a cost as "$0.0123"; unknown when c is nil.
func dollars(c *float64, unknown string) string {
	if c == nil {
		return unknown
	}
	return "$" + usage.FormatUSD(*c)
}

// usdNumber is a cost for tab-separated output: the plain number, empty when unknown.
func usdNumber(c *float64) string {
	if c == nil {
		return ""
	}
	return strconv.FormatFloat(*c, 'f', -1, 64)
}

func usageLine(u usage.Usage) string {
	s := fmt.Sprintf("%d in", u.InputTokens)
	if u.CachedInputTokens > 0 {
		s += fmt.Sprintf(" (%d cached)", u.CachedInputTokens)
	}
	return s + fmt.Sprintf(", %d out", u.OutputTokens)
}

// ago is a short relative time: "just now", "5m ago", "3h ago", "2d ago", then a date.
func ago(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case t.IsZero():
		return ""
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	case d < 30*24*time.Hour:
		return fmt.Sprintf("%dd ago", int(d.Hours()/24))
	}
	return t.Local().Format("2006-01-02")
}

// completeFromStore completes a command's first argument from the database; list
// returns the candidates matching toComplete.
func completeFromStore(f *Factory, list func(ctx context.Context, s *app.Store, toComplete string) ([]cobra.Completion, error)) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx := c.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		s, err := openStore(ctx, f)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		defer s.Close()
		out, err := list(ctx, s, toComplete)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeRunIDs completes run ids (most recent first); resumable restricts them to
// runs that are not completed.
func completeRunIDs(f *Factory, resumable bool) cobra.CompletionFunc {
	return completeFromStore(f, func(ctx context.Context, s *app.Store, toComplete string) ([]cobra.Completion, error) {
		runs, err := s.DB.Checkpoints().ListRuns(ctx, sqlite.RunFilter{Limit: 200})
		if err != nil {
			return nil, err
		}
		var out []cobra.Completion
		for _, r := range runs {
			if resumable && r.Status == store.StatusCompleted {
				continue
			}
			if strings.HasPrefix(r.ID, toComplete) {
				out = append(out, cobra.CompletionWithDesc(r.ID, fmt.Sprintf("%s · %s · %s", r.Status, r.Model, ago(time.Now(), r.UpdatedAt))))
			}
		}
		return out, nil
	})
}
