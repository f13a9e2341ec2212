package cmd

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/lovia-dev/lovia/internal/acp"
	"github.com/lovia-dev/lovia/internal/errs"
)

// ACPOptions are the inputs of `lovia acp`.
type ACPOptions struct {
	F *Factory
}

// NewCmdACP builds `lovia acp`. runF replaces the behaviour in flag tests.
func NewCmdACP(f *Factory, runF func(*ACPOptions) error) *cobra.Command {
	opts := &ACPOptions{F: f}
	c := &cobra.Command{
		Use:   "acp",
		Short: "Serve editors over the Agent Client Protocol (stdio)",
		Long: `Speak the Agent Client Protocol (ACP, protocol version 1) on standard input and
output, so editors such as Zed, JetBrains IDEs and Neovim (CodeCompanion, avante)
drive lovia. The editor starts this command; nothing else is written to stdout
(logs go to lovia's log file).

Each editor session is a lovia session in the editor's project directory; each
prompt is an ordinary lovia run (checkpointed, listed by lovia runs, resumable).
Actions that need approval are put to the editor's user. The session modes are
lovia's policies: readonly, coding and trusted. Provider keys come from the
environment, as for lovia run. See docs/editors.md.`,
		Example: `  lovia acp
  lovia acp -m anthropic:claude-sonnet-4-5 --preset coder`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return errs.New(errs.KindUsage, "lovia acp takes no arguments",
					"an editor starts `lovia acp` and talks to it on stdin/stdout; see docs/editors.md")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runACP(c.Context(), opts)
		},
	}
	addTrustFlag(c.Flags(), f)
	return c
}

func runACP(ctx context.Context, opts *ACPOptions) error {
	f := opts.F
	base := f.AppOptions()
	// The process's App checks the configuration before the editor connects and
	// carries the log; each session builds its own App for its directory.
	a, err := f.NewApp(ctx, base)
	if err != nil {
		return err
	}
	defer a.Close()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	a.Log.Info("acp serving", "version", acp.ProtocolVersion)
	err = acp.Serve(ctx, f.IO.In, f.IO.Out, acp.Options{Base: base, NewApp: f.NewApp, Log: a.Log})
	a.Log.Info("acp stopped", "err", err)
	return err
}
