package cmd

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lovia-dev/lovia/internal/config"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/plugin/mcp"
	"github.com/lovia-dev/lovia/internal/termtext"
)

// MCPEditOptions are the inputs of `lovia mcp add|remove|get`.
type MCPEditOptions struct {
	F         *Factory
	Scope     string
	Transport string
	Env       []string
	Headers   []string
	JSON      bool
}

// addMCPEditCommands adds `lovia mcp add|remove|get` under mcp.
func addMCPEditCommands(mcpCmd *cobra.Command, f *Factory) {
	opts := &MCPEditOptions{F: f}
	add := &cobra.Command{
		Use:   "add NAME COMMAND [ARGS...] | add --transport http NAME URL",
		Short: "Add an MCP server to lovia's config (as claude mcp add does)",
		Long: `Add an MCP server under mcp.servers of lovia's user config
(~/.config/lovia/config.yaml), or of the project's .lovia/config.yaml with
--scope project (which needs folder trust to run). The file's comments and other
settings are kept. Put -- before a command whose arguments start with a dash.`,
		Example: `  lovia mcp add github -e GITHUB_TOKEN='${GITHUB_TOKEN}' -- npx -y @modelcontextprotocol/server-github
  lovia mcp add --transport http sentry https://mcp.sentry.dev/mcp
  lovia mcp add --scope project fs -- npx -y @modelcontextprotocol/server-filesystem .`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(c *cobra.Command, args []string) error { return mcpAdd(opts, args) },
	}
	add.Flags().StringVarP(&opts.Transport, "transport", "t", "stdio", "stdio, http or sse")
	add.Flags().StringArrayVarP(&opts.Env, "env", "e", nil, "environment `KEY=VALUE` for a stdio server (${VAR} expands at start)")
	add.Flags().StringArrayVarP(&opts.Headers, "header", "H", nil, "HTTP header `'Name: value'` for an http server")
	add.Flags().StringVar(&opts.Scope, "scope", "user", "user (lovia's user config) or project (.lovia/config.yaml)")
	remove := &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove an MCP server from lovia's config",
		Args:  cobra.ExactArgs(1),
		RunE:  func(c *cobra.Command, args []string) error { return mcpRemove(opts, args[0]) },
	}
	remove.Flags().StringVar(&opts.Scope, "scope", "user", "user or project")
	get := &cobra.Command{
		Use:   "get NAME",
		Short: "Show one MCP server as lovia will start it, and where it is configured",
		Long: `Show one MCP server: from lovia's config, the project's .mcp.json or
~/.claude.json (Claude Code's files). Values of env and headers are hidden.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return mcpGet(opts, args[0]) },
	}
	get.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	mcpCmd.AddCommand(add, remove, get)
}

func mcpConfigPath(opts *MCPEditOptions) (string, *config.Config, error) {
	f := opts.F
	cfg, err := config.Load(config.Options{Cwd: f.Common.Cwd, Getenv: f.Getenv, Flags: f.Common.Overrides()})
	if err != nil {
		return "", nil, err
	}
	switch opts.Scope {
	case "user", "":
		return filepath.Join(cfg.UserDir, "config.yaml"), cfg, nil
	case "project", "local":
		return filepath.Join(cfg.ProjectDir(), "config.yaml"), cfg, nil
	}
	return "", nil, errs.Newf(errs.KindUsage, "use --scope user or --scope project", "unknown scope %q", opts.Scope)
}

func mcpAdd(opts *MCPEditOptions, args []string) error {
	name := args[0]
	sc := mcp.ServerConfig{}
	switch opts.Transport {
	case "stdio", "":
		sc.Command, sc.Args = args[1], args[2:]
		if len(opts.Headers) > 0 {
			return errs.New(errs.KindUsage, "--header applies to http servers", "pass settings to a stdio server with --env")
		}
	case "http", "sse":
		if len(args) != 2 {
			return errs.New(errs.KindUsage, "an http server takes NAME URL", "lovia mcp add --transport http NAME URL")
		}
		sc.URL = args[1]
		if opts.Transport == "sse" {
			sc.Transport = "sse"
		}
	default:
		return errs.Newf(errs.KindUsage, "use --transport stdio, http or sse", "unknown transport %q", opts.Transport)
	}
	for _, kv := range opts.Env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return errs.Newf(errs.KindUsage, "write --env KEY=VALUE", "bad --env %q", kv)
		}
		if sc.Env == nil {
			sc.Env = map[string]string{}
		}
		sc.Env[k] = v
	}
	for _, h := range opts.Headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return errs.Newf(errs.KindUsage, "write --header 'Name: value'", "bad --header %q", h)
		}
		if sc.Headers == nil {
			sc.Headers = map[string]string{}
		}
		sc.Headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	path, _, err := mcpConfigPath(opts)
	if err != nil {
		return err
	}
	if err := config.AddMCPServer(path, name, sc); err != nil {
		return err
	}
	fmt.Fprintf(opts.F.IO.Out, "Added MCP server %s to %s\n", name, path)
	if opts.Scope == "project" || opts.Scope == "local" {
		fmt.Fprintln(opts.F.IO.Out, "A project's servers start only in a trusted folder: run `lovia trust` once you have reviewed the file.")
	}
	return nil
}

func mcpRemove(opts *MCPEditOptions, name string) error {
	path, _, err := mcpConfigPath(opts)
	if err != nil {
		return err
	}
	if err := config.RemoveMCPServer(path, name); err != nil {
		return err
	}
	fmt.Fprintf(opts.F.IO.Out, "Removed MCP server %s from %s\n", name, path)
	return nil
}

func mcpGet(opts *MCPEditOptions, name string) error {
	f := opts.F
	cfg, err := loadMCPConfig(f)
	if err != nil {
		return err
	}
	sc, ok := cfg.MCP.Servers[name]
	if !ok {
		hint := "lovia mcp list shows the configured servers"
		for _, e := range cfg.Trust.Ignored() {
			if strings.HasSuffix(e.Key, "."+name) {
				hint = "it is configured in " + e.File + ", which needs folder trust: review it, then run `lovia trust`"
			}
		}
		return errs.Newf(errs.KindNotFound, hint, "no MCP server %q", name)
	}
	hide := func(m map[string]string) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	row := struct {
		Name      string   `json:"name"`
		Transport string   `json:"transport"`
		Command   string   `json:"command,omitempty"`
		Args      []string `json:"args,omitempty"`
		URL       string   `json:"url,omitempty"`
		Env       []string `json:"env,omitempty"`
		Headers   []string `json:"headers,omitempty"`
		Disabled  bool     `json:"disabled,omitempty"`
		Auth      string   `json:"auth,omitempty"`
	}{Name: name, Transport: mcp.TransportOf(sc), Command: sc.Command, Args: sc.Args, URL: sc.URL, Env: hide(sc.Env), Headers: hide(sc.Headers), Disabled: sc.Disabled,
		Auth: mcp.AuthStatus(name, sc, cfg.MCP.AuthDir)}
	if opts.JSON {
		enc := json.NewEncoder(f.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(row)
	}
	w := f.IO.Out
	fmt.Fprintf(w, "%s (%s)\n", termtext.String(name), row.Transport)
	if row.Command != "" {
		fmt.Fprintf(w, "  command: %s %s\n", termtext.String(row.Command), termtext.String(strings.Join(row.Args, " ")))
	}
	if row.URL != "" {
		fmt.Fprintf(w, "  url: %s\n", termtext.String(row.URL))
	}
	if len(row.Env) > 0 {
		fmt.Fprintf(w, "  env: %s (values hidden)\n", termtext.String(strings.Join(row.Env, ", ")))
	}
	if len(row.Headers) > 0 {
		fmt.Fprintf(w, "  headers: %s (values hidden)\n", termtext.String(strings.Join(row.Headers, ", ")))
	}
	if row.Auth != "" {
		fmt.Fprintf(w, "  auth: %s\n", row.Auth)
	}
	return nil
}
