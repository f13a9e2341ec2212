// Package cmd is lovia's command line: thin cobra commands that parse flags into an
// options struct and call a run function (swappable in tests), in the style of the
// GitHub CLI.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lovia-dev/lovia/internal/app"
	"github.com/lovia-dev/lovia/internal/config"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/termtext"
	"github.com/lovia-dev/lovia/internal/workspace/sandbox"
)

// Factory carries what every command needs; tests build one with buffers.
type Factory struct {
	IO     *IOStreams
	Getenv func(string) string
	// Common holds the values of the common (persistent) flags after parsing.
	Common *CommonFlags
	// NewApp assembles the app (tests may wrap it).
	NewApp func(ctx context.Context, opts app.Options) (*app.App, error)
	// Exit ends the process at once (a second Ctrl-C); tests replace it.
	Exit func(code int)
}

// NewFactory returns the factory of the real process.
func NewFactory() *Factory {
	return &Factory{IO: System(), Getenv: os.Getenv, Common: &CommonFlags{}, NewApp: app.New, Exit: os.Exit}
}

// CommonFlags are the flags every command accepts (SPEC §1).
type CommonFlags struct {
	Model    string
	Preset   string
	Policy   string
	Session  string
	Continue bool
	MaxTurns int
	Cwd      string
	DB       string
	Verbose  bool
	Quiet    bool
	Sandbox  string
	// Trust applies the project's loosening settings for this invocation (--trust on
	// run, chat, resume and eval).
	Trust bool

	flags *pflag.FlagSet
}

func (c *CommonFlags) register(fs *pflag.FlagSet) {
	c.flags = fs
	fs.StringVarP(&c.Model, "model", "m", "", "model as `PROVIDER:MODEL` (openai:, openai-responses:, anthropic:, ollama:, script:PATH)")
	fs.StringVar(&c.Preset, "preset", "", "agent preset `NAME` (coder, reviewer, planner, or your own; see lovia presets)")
	fs.StringVar(&c.Policy, "policy", "", "workspace policy: readonly, coding or trusted")
	fs.StringVarP(&c.Session, "session", "s", "", "continue the session `ID`")
	fs.BoolVarP(&c.Continue, "continue", "c", false, "continue the latest session of this repository")
	fs.IntVar(&c.MaxTurns, "max-turns", 0, "stop after `N` model turns (default 50)")
	fs.StringVarP(&c.Cwd, "cwd", "C", "", "run in `DIR` instead of the current directory")
	fs.StringVar(&c.DB, "db", "", "SQLite database `PATH` (default $LOVIA_HOME/lovia.db)")
	fs.BoolVarP(&c.Verbose, "verbose", "v", false, "show more progress on stderr, log at debug level")
	fs.BoolVarP(&c.Quiet, "quiet", "q", false, "print only the answer (no progress)")
	fs.StringVar(&c.Sandbox, "sandbox", "", "OS sandbox for commands: off, auto (Landlock where the kernel has it) or required")
}

// Overrides returns the config overrides of the flags the user set.
func (c *CommonFlags) Overrides() []config.Override {
	var out []config.Override
	add := func(name, key, value string) {
		if c.flags != nil && c.flags.Changed(name) {
			out = append(out, config.Override{Key: key, Value: value, Flag: "--" + name})
		}
	}
	add("model", "model", c.Model)
	add("preset", "preset", c.Preset)
	add("policy", "policy", c.Policy)
	add("max-turns", "max_turns", fmt.Sprint(c.MaxTurns))
	add("db", "db", c.DB)
	add("sandbox", "sandbox", c.Sandbox)
	return out
}

// AppOptions are the app.Options the common flags describe.
func (f *Factory) AppOptions() app.Options {
	return app.Options{Cwd: f.Common.Cwd, Getenv: f.Getenv, Flags: f.Common.Overrides(), Verbose: f.Common.Verbose, Trust: f.Common.Trust,
		Warn: func(msg string) { fmt.Fprintf(f.IO.ErrOut, "lovia: warning: %s\n", msg) }}
}

// addTrustFlag registers --trust on a command that starts runs.
func addTrustFlag(fs *pflag.FlagSet, f *Factory) {
	fs.BoolVar(&f.Common.Trust, "trust", false, "trust this folder's project settings (.lovia/) for this invocation only (for CI; see lovia trust)")
}

// printTrustNotice writes the one notice that names the project settings ignored
// because the folder is not trusted (nothing when there are none).
func printTrustNotice(f *Factory, a *app.App) {
	if n := a.Config.Trust.Notice(); n != "" {
		fmt.Fprint(f.IO.ErrOut, n)
	}
}

// NewRootCmd builds the command tree. Each subcommand is registered by one line.
func NewRootCmd(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "lovia",
		Short: "A terminal coding agent",
		Long: `lovia is a coding agent for your terminal. It reads, edits and runs code in the
current repository under a permission policy, with any OpenAI-compatible or
Anthropic model, and keeps every run resumable.

  lovia                         start a conversation (same as lovia chat)
  lovia run "fix the tests"     one-shot run for scripts and CI
  lovia resume RUN_ID           continue an interrupted run`,
		Example: `  lovia run -m openai:gpt-4.1 "explain what main.go does"
  git diff | lovia run --preset reviewer "review this change"
  lovia run --output stream-json -m script:testdata/demo/script.yaml "fix the bug"`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			// `lovia` alone is `lovia chat` once the chat command is registered.
			if chat, _, err := c.Find([]string{"chat"}); err == nil && chat != c && chat.RunE != nil {
				// One bare word is far more often a mistyped command than a prompt.
				if len(args) == 1 && looksLikeCommand(args[0]) {
					hint := "run `lovia --help` for the commands; to chat with that word as the prompt: lovia chat " + args[0]
					if c.SuggestionsMinimumDistance <= 0 {
						c.SuggestionsMinimumDistance = 2
					}
					if sug := c.SuggestionsFor(args[0]); len(sug) > 0 {
						hint = "did you mean `lovia " + sug[0] + "`? To chat with that word as the prompt: lovia chat " + args[0]
					}
					return errs.Newf(errs.KindUsage, hint, "unknown command %q", args[0])
				}
				return chat.RunE(chat, args)
			}
			if len(args) > 0 {
				return errs.Newf(errs.KindUsage, "run `lovia --help` for the commands", "unknown command %q", args[0])
			}
			return c.Help()
		},
	}
	f.Common.register(root.PersistentFlags())
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return errs.Wrap(errs.KindUsage, err, "", "run `"+c.CommandPath()+" --help` for the flags")
	})
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)

	root.AddCommand(NewCmdChat(f, nil))
	root.AddCommand(NewCmdRun(f, nil))
	root.AddCommand(NewCmdConfig(f, nil))
	root.AddCommand(NewCmdPresets(f, nil))
	root.AddCommand(NewCmdVersion(f))
	root.AddCommand(NewCmdMan(f))
	root.AddCommand(NewCmdSandboxExec())
	root.AddCommand(NewCmdResume(f, nil))
	root.AddCommand(NewCmdRuns(f, nil))
	root.AddCommand(NewCmdSessions(f, nil))
	root.AddCommand(NewCmdEval(f, nil))
	root.AddCommand(NewCmdDoctor(f, nil))
	root.AddCommand(NewCmdSkills(f, nil))
	root.AddCommand(NewCmdMCP(f, nil))
	root.AddCommand(NewCmdTrust(f, nil))
	root.AddCommand(NewCmdServe(f, nil))
	root.AddCommand(NewCmdInstructions(f, nil))
	root.AddCommand(NewCmdACP(f, nil))
	root.AddCommand(NewCmdRewind(f, nil), NewCmdCheckpoints(f, nil))
	registerModelPresetCompletion(root, f)
	registerSessionFlagCompletion(root, f)
	return root
}

// exitError carries an exit code out of a command whose failure was already reported.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// Execute runs lovia with the process's arguments and returns the exit code.
func Execute() int {
	sandbox.SetDefaultGC()
	defer startProfiles()()
	return Run(context.Background(), NewFactory(), os.Args[1:])
}

// Run executes args against f and returns the exit code; errors are printed on
// f.IO.ErrOut with their hint.
func Run(ctx context.Context, f *Factory, args []string) int {
	root := NewRootCmd(f)
	root.SetArgs(args)
	c, err := root.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if errs.KindOf(err) == errs.KindInternal && isCobraUsage(err) {
		path := "lovia"
		if c != nil {
			path = c.CommandPath()
		}
		err = errs.Wrap(errs.KindUsage, err, "", "run `"+path+" --help` for usage")
	}
	PrintError(f.IO.ErrOut, err)
	return errs.ExitCode(err)
}

// isCobraUsage recognises cobra's own argument errors (unknown command, bad args).
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, s := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires ", "invalid argument", "flag needs"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// PrintError writes "lovia: MESSAGE" and the hint, sanitized: a message may quote
// model text, tool output, file names or an MCP server's error.
func PrintError(w interface{ Write([]byte) (int, error) }, err error) {
	fmt.Fprintf(w, "lovia: %s\n", termtext.String(err.Error()))
	if h := errs.HintOf(err); h != "" {
		fmt.Fprintf(w, "  hint: %s\n", termtext.String(h))
	}
}

// looksLikeCommand: a single lower-case word (letters, digits, '-'), as commands are.
func looksLikeCommand(s string) bool {
	if s == "" || len(s) > 40 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return s[0] != '-'
}
