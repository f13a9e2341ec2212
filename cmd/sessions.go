package cmd

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"github.com/lovia-dev/lovia/internal/textutil"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lovia-dev/lovia/internal/app"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/store/sqlite"
	"github.com/lovia-dev/lovia/internal/termtext"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// SessionsOptions are the inputs of `lovia sessions` and its subcommands.
type SessionsOptions struct {
	F     *Factory
	JSON  bool
	All   bool
	Limit int
	// ID is the session of show, rm and export.
	ID string
	// Yes skips rm's confirmation.
	Yes bool
	// Format (jsonl or md) and Output file of export ("" or "-": stdout).
	Format string
	Output string
	Now    func() time.Time
}

// NewCmdSessions builds `lovia sessions [list | show ID | rm ID | export ID]`. runF
// replaces the behaviour in flag tests (the subcommand is c.Name()).
func NewCmdSessions(f *Factory, runF func(name string, o *SessionsOptions) error) *cobra.Command {
	opts := &SessionsOptions{F: f}
	do := func(name string, fn func(context.Context, *SessionsOptions) error) func(*cobra.Command, []string) error {
		return func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.ID = args[0]
			}
			if runF != nil {
				return runF(name, opts)
			}
			return fn(c.Context(), opts)
		}
	}
	c := &cobra.Command{
		Use:   "sessions",
		Short: "List, show, delete and export conversations",
		Long: `A session is a conversation: the runs that continued each other (lovia chat, or
lovia run -c / -s ID). Without a subcommand, lists the sessions of this repository,
most recent first.`,
		Example: `  lovia sessions
  lovia sessions show ses_1a2b3c4d5e6f7a8b
  lovia sessions export ses_1a2b3c4d5e6f7a8b --format md -o conversation.md
  lovia run -s ses_1a2b3c4d5e6f7a8b "and now the docs"`,
		Args: noArgs,
		RunE: do("list", sessionsList),
	}
	addListFlags := func(c *cobra.Command) {
		c.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
		c.Flags().BoolVarP(&opts.All, "all", "a", false, "sessions of every repository, not just this one")
		c.Flags().IntVarP(&opts.Limit, "limit", "L", 20, "show at most `N` sessions (0: all)")
	}
	addListFlags(c)
	list := &cobra.Command{Use: "list", Aliases: []string{"ls"}, Short: "List sessions (the default)", Args: noArgs, RunE: do("list", sessionsList)}
	addListFlags(list)

	idArgs := oneID("session", "`lovia sessions` lists the sessions")
	show := &cobra.Command{
		Use: "show SESSION_ID", Short: "Show a conversation", Args: idArgs,
		ValidArgsFunction: completeSessionIDs(f), RunE: do("show", sessionsShow),
	}
	show.Flags().BoolVar(&opts.JSON, "json", false, "print JSON (the session, its runs and entries)")
	rm := &cobra.Command{
		Use: "rm SESSION_ID", Aliases: []string{"delete"}, Short: "Delete a session, its runs and their checkpoints",
		Long: `Delete a session with its runs and their checkpoints. It asks for confirmation in
a terminal; without one (scripts), pass --yes.`,
		Args: idArgs, ValidArgsFunction: completeSessionIDs(f), RunE: do("rm", sessionsRm),
	}
	rm.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation")
	export := &cobra.Command{
		Use: "export SESSION_ID", Short: "Export a conversation as JSONL or Markdown",
		Long: `Export a session's transcript. jsonl (the default) writes one transcript entry per
line, exactly as stored (input, assistant_text, reasoning, tool_call, tool_result);
md writes a readable Markdown document.`,
		Args: idArgs, ValidArgsFunction: completeSessionIDs(f), RunE: do("export", sessionsExport),
	}
	export.Flags().StringVar(&opts.Format, "format", "jsonl", "jsonl or md")
	export.Flags().StringVarP(&opts.Output, "output", "o", "", "write to `FILE` instead of stdout")
	_ = export.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"jsonl", "md"}, cobra.ShellCompDirectiveNoFileComp))
	c.AddCommand(list, show, rm, export)
	addSessionUpkeep(c, f)
	return c
}

// registerSessionFlagCompletion completes the common --session flag with session ids.
func registerSessionFlagCompletion(root *cobra.Command, f *Factory) {
	_ = root.RegisterFlagCompletionFunc("session", completeSessionIDs(f))
}

func (o *SessionsOptions) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func sessionsList(ctx context.Context, opts *SessionsOptions) error {
	f := opts.F
	if opts.Limit < 0 {
		return errs.New(errs.KindUsage, "--limit must not be negative", "use --limit 0 for all sessions")
	}
	s, err := openStore(ctx, f)
	if err != nil {
		return err
	}
	defer s.Close()
	filter := sqlite.SessionFilter{Limit: opts.Limit}
	repo := app.Repo(s.Config)
	if !opts.All {
		filter.Repo = repo
	}
	list, err := s.DB.Sessions().ListSessions(ctx, filter)
	if err != nil {
		return err
	}
	if list == nil {
		list = []sqlite.SessionInfo{}
	}
	if opts.JSON {
		return writeJSON(f.IO.Out, list)
	}
	if len(list) == 0 {
		if opts.All {
			fmt.Fprintln(f.IO.ErrOut, "no sessions yet")
		} else {
			fmt.Fprintf(f.IO.ErrOut, "no sessions in %s\n  hint: lovia sessions --all lists the sessions of every repository\n", repo)
		}
		return nil
	}
	tty := f.IO.StdoutTTY
	// Titles are model or user text: shown sanitized.
	out := termtext.NewWriter(f.IO.Out)
	defer out.Flush()
	tw := newTable(out)
	if tty {
		fmt.Fprintln(tw, "ID\tTITLE\tRUNS\tTOKENS\tUPDATED")
	}
	for _, si := range list {
		title := si.Title
		if title == "" {
			title = "(untitled)"
		}
		if tty {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", si.ID, textutil.Clip(termtext.String(title), 50), si.Runs, tokens(si.Usage), ago(opts.now(), si.UpdatedAt))
		} else {
			fmt.Fprintf(out, "%s\t%s\t%d\t%d\t%s\n", si.ID, textutil.Clip(termtext.String(title), 200), si.Runs, si.Usage.Total(), si.UpdatedAt.UTC().Format(time.RFC3339))
		}
	}
	if tty {
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(f.IO.Out, "\ncontinue one with: lovia run -s ID \"...\"  (or lovia run -c for the latest)")
	}
	return nil
}

// sessionData is one session as show and export read it.
type sessionData struct {
	Session sqlite.SessionInfo  `json:"session"`
	Runs    []sqlite.SessionRun `json:"runs"`
	Entries []transcript.Entry  `json:"entries"`
}

// resolveSessionID is resolveRunID for sessions.
func resolveSessionID(ctx context.Context, s *app.Store, id string) (string, error) {
	_, err := s.DB.Sessions().GetSession(ctx, id)
	if err == nil || errs.KindOf(err) != errs.KindNotFound || id == "" {
		return id, err
	}
	ids, err := s.DB.Sessions().SessionIDsWithPrefix(ctx, id)
	if err != nil {
		return "", err
	}
	return pickPrefix("session", id, ids)
}

func loadSession(ctx context.Context, s *app.Store, id string) (*sessionData, error) {
	id, err := resolveSessionID(ctx, s, id)
	if err != nil {
		return nil, err
	}
	ss := s.DB.Sessions()
	info, err := ss.GetSession(ctx, id)
	if err != nil {
		return nil, err
	}
	runs, err := ss.SessionRuns(ctx, id)
	if err != nil {
		return nil, err
	}
	entries, err := ss.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	if runs == nil {
		runs = []sqlite.SessionRun{}
	}
	if entries == nil {
		entries = []transcript.Entry{}
	}
	return &sessionData{Session: info, Runs: runs, Entries: entries}, nil
}

func sessionsShow(ctx context.Context, opts *SessionsOptions) error {
	f := opts.F
	s, err := openStore(ctx, f)
	if err != nil {
		return err
	}
	defer s.Close()
	d, err := loadSession(ctx, s, opts.ID)
	if err != nil {
		return err
	}
	if opts.JSON {
		d.Entries = placeholderEntries(d.Entries) // sessions_images.go
		return writeJSON(f.IO.Out, d)
	}
	// The conversation is model, user and tool text: it reaches the terminal sanitized.
	w := termtext.NewWriter(f.IO.Out)
	defer w.Flush()
	si := d.Session
	title := si.Title
	if title == "" {
		title = "(untitled)"
	}
	fmt.Fprintf(w, "%s — %s\n", si.ID, title)
	fmt.Fprintf(w, "%s · %s tokens · %s · %s · updated %s\n", plural(si.Runs, "run"), tokens(si.Usage),
		dollars(si.Usage.CostPtr(), "cost unknown"), si.Repo, ago(opts.now(), si.UpdatedAt))
	if len(d.Entries) == 0 {
		fmt.Fprintln(w, "\n(no completed runs yet)")
	}
	runCost := map[string]string{}
	for _, r := range d.Runs {
		runCost[r.RunID] = tokens(r.Usage) + " tokens · " + dollars(r.Usage.CostPtr(), "cost unknown")
	}
	writeConversation(w, d.Entries, runCost)
	return nil
}

// writeConversation prints a transcript for reading in a terminal: user and assistant
// text in full, reasoning and tool traffic on one line each.
// runInfo, when it has a run, is shown after that run's heading (tokens and cost).
func writeConversation(w io.Writer, entries []transcript.Entry, runInfo map[string]string) {
	results := map[string]transcript.Entry{}
	for _, e := range entries {
		if e.Type == transcript.TypeToolResult {
			results[e.CallID] = e
		}
	}
	lastRun := ""
	for _, e := range entries {
		if e.RunID != "" && e.RunID != lastRun && e.IsUser() {
			if info := runInfo[e.RunID]; info != "" {
				fmt.Fprintf(w, "\n── run %s · %s\n", e.RunID, info)
			} else {
				fmt.Fprintf(w, "\n── run %s\n", e.RunID)
			}
			lastRun = e.RunID
		}
		switch e.Type {
		case transcript.TypeInput:
			if e.IsSystem() {
				continue
			}
			fmt.Fprintf(w, "\n> %s\n", strings.ReplaceAll(strings.TrimRight(e.Text, "\n"), "\n", "\n> "))
			writeAttachments(w, e) // sessions_images.go
		case transcript.TypeAssistantText:
			fmt.Fprintf(w, "\n%s\n", strings.TrimRight(e.Text, "\n"))
		case transcript.TypeReasoning:
			if e.Text != "" {
				fmt.Fprintf(w, "  (thinking) %s\n", textutil.Clip(termtext.String(e.Text), 100))
			}
		case transcript.TypeToolCall:
			line := "  • " + e.Name + " " + textutil.Clip(termtext.String(argsText(e.Args)), 80)
			if r, ok := results[e.CallID]; ok {
				mark := "✓"
				if r.IsError {
					mark = "✗"
				}
				line += "\n    " + mark + " " + textutil.Clip(termtext.String(r.Text), 90)
			} else {
				line += "\n    (no result)"
			}
			fmt.Fprintln(w, line)
		}
	}
}

func sessionsRm(ctx context.Context, opts *SessionsOptions) error {
	f := opts.F
	s, id, err := openSessionRW(ctx, f, opts.ID)
	if err != nil {
		return err
	}
	defer s.Close()
	opts.ID = id
	info, err := s.DB.Sessions().GetSession(ctx, opts.ID)
	if err != nil {
		return err
	}
	if !opts.Yes {
		if !f.IO.StdinTTY {
			return errs.Newf(errs.KindUsage, "pass --yes to delete without confirmation",
				"not deleting session %s without confirmation (standard input is not a terminal)", opts.ID)
		}
		fmt.Fprintf(f.IO.ErrOut, "Delete session %s (%q, %s) and its checkpoints? [y/N] ", info.ID, textutil.Clip(termtext.String(info.Title), 50), plural(info.Runs, "run"))
		line, _ := bufio.NewReader(f.IO.In).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(f.IO.ErrOut, "not deleted")
			return &exitError{1}
		}
	}
	if err := s.DB.Sessions().DeleteSession(ctx, opts.ID); err != nil {
		return err
	}
	removeCheckpoints(s, opts.ID)
	fmt.Fprintf(f.IO.ErrOut, "deleted session %s (%s)\n", info.ID, plural(info.Runs, "run"))
	return nil
}

func sessionsExport(ctx context.Context, opts *SessionsOptions) (err error) {
	f := opts.F
	var write func(io.Writer, *sessionData) error
	switch opts.Format {
	case "jsonl", "":
		write = exportJSONL
	case "md", "markdown":
		write = exportMarkdown
	default:
		return errs.Newf(errs.KindUsage, "use --format jsonl or --format md", "unknown export format %q", opts.Format)
	}
	s, err := openStore(ctx, f)
	if err != nil {
		return err
	}
	defer s.Close()
	d, err := loadSession(ctx, s, opts.ID)
	if err != nil {
		return err
	}
	if opts.Output == "" || opts.Output == "-" {
		return write(f.IO.Out, d)
	}
	// Write next to the target and rename, so a failed export never leaves half a file.
	tmp, err := os.CreateTemp(filepath.Dir(opts.Output), ".lovia-export-*")
	if err != nil {
		return errs.Wrap(errs.KindUsage, err, "cannot write "+opts.Output, "check the directory exists and is writable")
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriter(tmp)
	if err = write(bw, d); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return errs.Wrap(errs.KindUsage, err, "writing "+opts.Output, "")
	}
	if err = tmp.Close(); err != nil {
		return errs.Wrap(errs.KindUsage, err, "writing "+opts.Output, "")
	}
	if err = os.Rename(tmp.Name(), opts.Output); err != nil {
		return errs.Wrap(errs.KindUsage, err, "cannot write "+opts.Output, "")
	}
	fmt.Fprintf(f.IO.ErrOut, "exported session %s (%d entries) to %s\n", d.Session.ID, len(d.Entries), opts.Output)
	return nil
}

func exportJSONL(w io.Writer, d *sessionData) error {
	enc := json.NewEncoder(termtext.NewJSONWriter(w)) // C1 and bidi as \u escapes
	for _, e := range d.Entries {
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	return nil
}

func exportMarkdown(w io.Writer, d *sessionData) error {
	bw := &errWriter{w: w}
	si := d.Session
	title := si.Title
	if title == "" {
		title = si.ID
	}
	bw.printf("# %s\n\n", title)
	bw.printf("- session: `%s`\n", si.ID)
	if si.Repo != "" {
		bw.printf("- repository: `%s`\n", si.Repo)
	}
	bw.printf("- runs: %d, tokens: %d in / %d out\n", si.Runs, si.Usage.InputTokens, si.Usage.OutputTokens)
	bw.printf("- created %s, updated %s\n", si.CreatedAt.UTC().Format(time.RFC3339), si.UpdatedAt.UTC().Format(time.RFC3339))
	for _, e := range d.Entries {
		switch e.Type {
		case transcript.TypeInput:
			if e.IsSystem() {
				continue
			}
			bw.printf("\n## User\n\n%s\n", strings.TrimRight(e.Text, "\n"))
		case transcript.TypeAssistantText:
			who := "Assistant"
			if e.Agent != "" {
				who += " (" + e.Agent + ")"
			}
			bw.printf("\n## %s\n\n%s\n", who, strings.TrimRight(e.Text, "\n"))
		case transcript.TypeReasoning:
			if e.Text != "" {
				bw.printf("\n<details><summary>Reasoning</summary>\n\n%s\n\n</details>\n", strings.TrimRight(e.Text, "\n"))
			}
		case transcript.TypeToolCall:
			args := string(e.Args)
			var v any
			if json.Unmarshal(e.Args, &v) == nil {
				var b strings.Builder
				enc := json.NewEncoder(&b)
				enc.SetEscapeHTML(false)
				enc.SetIndent("", "  ")
				if enc.Encode(v) == nil {
					args = b.String()
				}
			}
			bw.printf("\n**Tool call** `%s` (`%s`)\n\n%s", e.Name, e.CallID, fenced("json", args))
		case transcript.TypeToolResult:
			label := "Result"
			if e.IsError {
				label = "Error"
			}
			bw.printf("\n**%s** of `%s` (`%s`)\n\n%s", label, e.Name, e.CallID, fenced("", e.Text))
		}
	}
	return bw.err
}

// fenced wraps s in a code fence longer than any backtick run inside it.
func fenced(lang, s string) string {
	fence := "```"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence + lang + "\n" + strings.TrimRight(s, "\n") + "\n" + fence + "\n"
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

type errWriter struct {
	w   io.Writer
	err error
}

// printf writes sanitized text: the Markdown export is read in terminals (cat, less
// -R) and quotes model and tool text, so it carries no control sequences. (The JSONL
// export keeps the original text; JSON escapes controls.)
func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = io.WriteString(e.w, termtext.String(fmt.Sprintf(format, args...)))
	}
}

// completeSessionIDs completes session ids of every repository, most recent first,
// with their titles.
func completeSessionIDs(f *Factory) cobra.CompletionFunc {
	return completeFromStore(f, func(ctx context.Context, s *app.Store, toComplete string) ([]cobra.Completion, error) {
		list, err := s.DB.Sessions().ListSessions(ctx, sqlite.SessionFilter{Limit: 200})
		if err != nil {
			return nil, err
		}
		var out []cobra.Completion
		for _, si := range list {
			if strings.HasPrefix(si.ID, toComplete) {
				out = append(out, cobra.CompletionWithDesc(si.ID, textutil.Clip(termtext.String(si.Title), 60)))
			}
		}
		return out, nil
	})
}
