package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/lovia-dev/lovia/internal/textutil"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/lovia-dev/lovia/internal/config"
	"github.com/lovia-dev/lovia/internal/plugin/mcp"
	"github.com/lovia-dev/lovia/internal/termtext"
	"github.com/lovia-dev/lovia/internal/workspace"
)

// MCPOptions are the inputs of `lovia mcp list`.
type MCPOptions struct {
	F     *Factory
	JSON  bool
	Tools bool
}

// NewCmdMCP builds `lovia mcp` (alone: `lovia mcp list`).
func NewCmdMCP(f *Factory, runF func(*MCPOptions) error) *cobra.Command {
	opts := &MCPOptions{F: f}
	run := func(c *cobra.Command, _ []string) error {
		if runF != nil {
			return runF(opts)
		}
		return mcpList(c.Context(), opts)
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "Start each configured MCP server, list its status and tools",
		Long: `Start every server of mcp.servers in the config (each within its startup
timeout), list its tools as the model sees them (<server>__<tool>) and stop it
again. A server that fails to start is shown with the reason; the command still
lists the others and exits 1. Each tool shows what a call gets under the
configured policy and mcp_rules (allow, ask or deny). The tool lists are remembered (in the data
directory), so a run starts a server only when the model calls one of its tools.`,
		Example: `  lovia mcp list
  lovia mcp list --json`,
		Args: cobra.NoArgs,
		RunE: run,
	}
	c := &cobra.Command{
		Use:   "mcp",
		Short: "Inspect the configured MCP servers",
		Long: `Inspect the Model Context Protocol servers configured under mcp.servers
(command/args/env for stdio servers, url/headers for streamable HTTP or legacy
SSE; lovia mcp login NAME for a server that requires OAuth).
Without a subcommand, lovia mcp is lovia mcp list.`,
		Args: cobra.NoArgs,
		RunE: run,
	}
	for _, cc := range []*cobra.Command{c, list} {
		cc.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
		cc.Flags().BoolVar(&opts.Tools, "tools", true, "list each server's tools")
		addTrustFlag(cc.Flags(), f)
	}
	c.AddCommand(list)
	addMCPEditCommands(c, f)
	addMCPLoginCommands(c, f)
	addMCPResourceCommands(c, f) // mcp_resources.go
	return c
}

// loadMCPConfig loads the configuration with the MCP servers set up as runs set
// them up (internal/app): the tool cache, the OAuth logins and the workspace root.
func loadMCPConfig(f *Factory) (*config.Config, error) {
	cfg, err := config.Load(config.Options{Cwd: f.Common.Cwd, Getenv: f.Getenv, Flags: f.Common.Overrides(), Trust: f.Common.Trust})
	if err != nil {
		return nil, err
	}
	cfg.MCP.CacheDir = filepath.Join(cfg.Home, "mcp")
	cfg.MCP.AuthDir = mcp.AuthDir(cfg.Home)
	cfg.MCP.Root = cfg.Cwd // a server's tools may depend on the roots capability
	return cfg, nil
}

// mcpPolicy decides MCP calls under the configured policy, as `lovia mcp` shows
// them (the preset's own policy is not looked up: --policy or policy: decides here,
// else coding).
func mcpPolicy(cfg *config.Config) (*workspace.MCPPolicy, error) {
	policy := cfg.Policy
	if policy == "" {
		policy = config.DefaultPolicy
	}
	return workspace.NewMCPPolicy(policy, cfg.MCPRules)
}

func mcpList(ctx context.Context, opts *MCPOptions) error {
	f := opts.F
	if ctx == nil {
		ctx = context.Background()
	}
	cfg, err := loadMCPConfig(f)
	if err != nil {
		return err
	}
	// An untrusted project's servers are not started (the notice names them).
	if n := cfg.Trust.Notice(); n != "" {
		fmt.Fprint(f.IO.ErrOut, n)
	}
	list := []mcp.ServerStatus{}
	if len(cfg.MCP.Servers) > 0 {
		// Listing is the user's explicit request to start the servers; the tool lists
		// it records (loadMCPConfig's CacheDir) let later runs start a server only when
		// one of its tools is called.
		l, err := mcp.ListServers(ctx, cfg.MCP, slog.New(slog.DiscardHandler))
		if err != nil {
			return err
		}
		list = l
		pol, err := mcpPolicy(cfg)
		if err != nil {
			return err
		}
		for i, s := range list {
			for j, t := range s.Tools {
				d, _ := pol.Decide(s.Name, t.Original, t.Name)
				list[i].Tools[j].Decision = d.String()
			}
		}
	}
	failed := false
	for _, s := range list {
		failed = failed || s.Status == "failed"
	}
	if opts.JSON {
		enc := json.NewEncoder(f.IO.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(list); err != nil {
			return err
		}
	} else if err := writeMCPTable(f.IO.Out, list, opts.Tools); err != nil {
		return err
	}
	if failed {
		return &exitError{1}
	}
	return nil
}

func writeMCPTable(w io.Writer, list []mcp.ServerStatus, tools bool) error {
	// Tool names, descriptions and error lines come from the servers: untrusted text,
	// shown sanitized.
	sw := termtext.NewWriter(w)
	defer sw.Flush()
	w = sw
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "no MCP servers configured (add them under mcp.servers in ~/.config/lovia/config.yaml or .lovia/config.yaml)")
		return err
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "SERVER\tSTATUS\tTOOLS\tAUTH\tTARGET")
	for _, s := range list {
		status := s.Status
		if s.Error != "" {
			status += ": " + textutil.OneLine(s.Error)
		}
		auth := s.Auth
		if auth == "" {
			auth = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", s.Name, status, len(s.Tools), auth, s.Target)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if !tools {
		return nil
	}
	for _, s := range list {
		if len(s.Tools) == 0 && len(s.Skipped) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", s.Name)
		tw := newTable(w)
		for _, t := range s.Tools {
			if t.Decision != "" {
				fmt.Fprintf(tw, "  %s\t%s\t%s\n", t.Name, t.Decision, firstLine(t.Description))
			} else {
				fmt.Fprintf(tw, "  %s\t%s\n", t.Name, firstLine(t.Description))
			}
		}
		for _, t := range s.Skipped {
			fmt.Fprintf(tw, "  %s\tnot offered\t%s\n", t.Name, t.Reason)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

func firstLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}
