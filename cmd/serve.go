package cmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/server"
)

// ServeOptions are the inputs of `lovia serve`.
type ServeOptions struct {
	F               *Factory
	Listen          string
	ApprovalTimeout time.Duration
}

// NewCmdServe builds `lovia serve`. runF replaces the behaviour in flag tests.
func NewCmdServe(f *Factory, runF func(*ServeOptions) error) *cobra.Command {
	opts := &ServeOptions{F: f}
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve the HTTP/SSE API and the browser chat UI",
		Long: `Serve lovia over HTTP: a JSON API with Server-Sent Events carrying the same events
as --output stream-json, and a chat page for the browser. Runs belong to the
server: closing the tab stops nothing; approvals wait for an answer (denied after
--approval-timeout). SIGTERM or Ctrl-C interrupts the live runs, which stay
resumable (lovia runs lists them; so does the page after a restart).

Every request needs the access token printed at start (and written to
$LOVIA_HOME/serve.json, mode 0600). The server listens on loopback by default;
anything else exposes your repository and commands to the network. See docs/serve.md.`,
		Example: `  lovia serve
  lovia serve --listen 127.0.0.1:9000 -C ~/src/project
  curl -H "Authorization: Bearer $(jq -r .token ~/.local/share/lovia/serve.json)" http://127.0.0.1:7878/api/runs`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runServe(c.Context(), opts)
		},
	}
	fl := c.Flags()
	addTrustFlag(fl, f)
	fl.StringVar(&opts.Listen, "listen", "127.0.0.1:7878", "`ADDR`ESS to listen on (host:port; port 0 picks a free one)")
	fl.DurationVar(&opts.ApprovalTimeout, "approval-timeout", 10*time.Minute, "deny an approval nobody answered within `DURATION`")
	return c
}

func runServe(ctx context.Context, opts *ServeOptions) error {
	f := opts.F
	if opts.ApprovalTimeout <= 0 {
		return errs.New(errs.KindUsage, "--approval-timeout must be positive", "use a duration such as 10m or 30s")
	}
	a, err := f.NewApp(ctx, f.AppOptions())
	if err != nil {
		return err
	}
	defer a.Close()
	printTrustNotice(f, a)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := server.New(ctx, a, server.Options{Listen: opts.Listen, ApprovalTimeout: opts.ApprovalTimeout})
	if oe := (*net.OpError)(nil); errors.As(err, &oe) {
		return errs.Wrap(errs.KindUsage, err, "", "give --listen HOST:PORT free on this machine, e.g. 127.0.0.1:7878 (port 0 picks a free one)")
	} else if err != nil {
		return err
	}
	if !server.Loopback(srv.Addr()) {
		fmt.Fprintf(f.IO.ErrOut, "lovia: WARNING: listening on %s, not on loopback: anyone who can reach this address and\n"+
			"lovia: learns the token can read this repository and run commands in it. Traffic is not\n"+
			"lovia: encrypted (plain HTTP). Prefer --listen 127.0.0.1:PORT and an SSH tunnel.\n", srv.Addr())
	}
	path, err := srv.WriteInfo(a.Config.Home)
	if err != nil {
		return fmt.Errorf("write serve.json: %w", err)
	}
	defer server.RemoveInfo(a.Config.Home)
	fmt.Fprintf(f.IO.ErrOut, "lovia serve: %s in %s\nlovia serve: open %s\nlovia serve: token and URL in %s\n", srv.Addr(), a.Config.Cwd, srv.URL(), path)
	err = srv.Serve(ctx)
	fmt.Fprintln(f.IO.ErrOut, "lovia serve: stopped; interrupted runs are resumable (lovia runs)")
	return err
}
