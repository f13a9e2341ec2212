package cmd

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lovia-dev/lovia/internal/config"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/plugin/mcp"
)

// MCPLoginOptions are the inputs of `lovia mcp login|logout`.
type MCPLoginOptions struct {
	F         *Factory
	NoBrowser bool
	Timeout   time.Duration
}

// addMCPLoginCommands adds `lovia mcp login|logout` under mcp.
func addMCPLoginCommands(mcpCmd *cobra.Command, f *Factory) {
	opts := &MCPLoginOptions{F: f}
	login := &cobra.Command{
		Use:   "login NAME",
		Short: "Log in to a remote MCP server with OAuth (in the browser)",
		Long: `Log in to the url: server NAME with OAuth 2.1: lovia asks the server, finds its
authorization server, registers itself there unless client_id is configured,
and opens the authorization page in your browser (or prints the URL). The
browser comes back to a listener on 127.0.0.1; the tokens are stored in lovia's
data directory (mcp-auth/NAME.json, readable only by you) and renewed
automatically. A run never opens a browser: a server that needs a login fails
to start with an error naming this command.`,
		Example: `  lovia mcp login sentry
  lovia mcp login --no-browser sentry`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return mcpLogin(c.Context(), opts, args[0]) },
	}
	login.Flags().BoolVar(&opts.NoBrowser, "no-browser", false, "only print the URL to open")
	login.Flags().DurationVar(&opts.Timeout, "timeout", 5*time.Minute, "how long to wait for the browser")
	addTrustFlag(login.Flags(), f)
	logout := &cobra.Command{
		Use:   "logout NAME",
		Short: "Delete the stored OAuth login of an MCP server",
		Args:  cobra.ExactArgs(1),
		RunE:  func(c *cobra.Command, args []string) error { return mcpLogout(opts, args[0]) },
	}
	mcpCmd.AddCommand(login, logout)
}

func mcpServerConfig(f *Factory, name string) (*config.Config, mcp.ServerConfig, error) {
	cfg, err := loadMCPConfig(f)
	if err != nil {
		return nil, mcp.ServerConfig{}, err
	}
	sc, ok := cfg.MCP.Servers[name]
	if !ok {
		return nil, mcp.ServerConfig{}, errs.Newf(errs.KindNotFound, "lovia mcp list shows the configured servers", "no MCP server %q", name)
	}
	return cfg, sc, nil
}

func mcpLogin(ctx context.Context, opts *MCPLoginOptions, name string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	f := opts.F
	cfg, sc, err := mcpServerConfig(f, name)
	if err != nil {
		return err
	}
	if sc.URL == "" {
		return errs.Newf(errs.KindUsage, "only url: servers log in; give a stdio server its credentials with env:", "MCP server %q is a stdio server", name)
	}
	lo := mcp.LoginOptions{AuthDir: cfg.MCP.AuthDir, Out: f.IO.Out, Timeout: opts.Timeout}
	if !opts.NoBrowser {
		lo.Open = openBrowser
	}
	err = mcp.Login(ctx, name, sc, lo)
	if errors.Is(err, mcp.ErrNoLoginNeeded) {
		fmt.Fprintf(f.IO.Out, "MCP server %s does not ask for authorization; nothing to do.\n", name)
		return nil
	}
	return err
}

func mcpLogout(opts *MCPLoginOptions, name string) error {
	f := opts.F
	cfg, err := loadMCPConfig(f)
	if err != nil {
		return err
	}
	if strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		return errs.Newf(errs.KindUsage, "give the server's name as in mcp.servers", "invalid server name %q", name)
	}
	had, err := mcp.Logout(cfg.MCP.AuthDir, name)
	if err != nil {
		return err
	}
	if !had {
		fmt.Fprintf(f.IO.Out, "No stored login for MCP server %s.\n", name)
		return nil
	}
	fmt.Fprintf(f.IO.Out, "Logged out of MCP server %s (its stored tokens are deleted).\n", name)
	return nil
}

// openBrowser opens url with the platform's opener; the caller has printed it, so a
// missing opener only adds a hint.
func openBrowser(url string) error {
	var c *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		c = exec.Command("open", url)
	case "windows":
		c = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		c = exec.Command("xdg-open", url)
	}
	if err := c.Start(); err != nil {
		return err
	}
	go func() { _ = c.Wait() }()
	return nil
}
