package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/lovia-dev/lovia/internal/errs"

	"github.com/spf13/cobra"

	"github.com/lovia-dev/lovia/internal/plugin/mcp"
	"github.com/lovia-dev/lovia/internal/termtext"
)

// MCPOffersOptions are the inputs of `lovia mcp resources|prompts`.
type MCPOffersOptions struct {
	F    *Factory
	JSON bool
	// Prompts lists prompts instead of resources.
	Prompts bool
	Servers []string
}

// addMCPResourceCommands adds `lovia mcp resources` and `lovia mcp prompts` under mcp.
func addMCPResourceCommands(mcpCmd *cobra.Command, f *Factory) {
	for _, prompts := range []bool{false, true} {
		opts := &MCPOffersOptions{F: f, Prompts: prompts}
		c := &cobra.Command{
			Use:   "resources [SERVER...]",
			Short: "Start MCP servers and list their resources and resource templates",
			Long: `Start the named MCP servers (all configured ones without a name), list their
resources and resource templates, and stop them again. Mention a resource in a
prompt as @SERVER:URI (fill a template's {placeholders}); the model reads them
with mcp_read_resource. "read:" shows what the policy and mcp_rules decide for
reading the server's resources (the rule target is SERVER__:resources).`,
			Example: `  lovia mcp resources
  lovia mcp resources everything --json
  lovia run "summarize @everything:demo://resource/static/document/architecture.md"`,
		}
		if prompts {
			c.Use = "prompts [SERVER...]"
			c.Short = "Start MCP servers and list their prompts (slash commands /SERVER:PROMPT)"
			c.Long = `Start the named MCP servers (all configured ones without a name), list their
prompts with their arguments, and stop them again. Run a prompt as the slash
command /SERVER:PROMPT ARGS, in chat or with lovia run: NAME=VALUE sets an
argument, other words fill the arguments in order (quotes group words).
"get:" shows what the policy and mcp_rules decide (the rule target is
SERVER__:prompts).`
			c.Example = `  lovia mcp prompts
  lovia run "/everything:args-prompt city=Paris state=TX"`
		}
		c.RunE = func(c *cobra.Command, args []string) error {
			opts.Servers = args
			return mcpOffers(c.Context(), opts)
		}
		c.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
		addTrustFlag(c.Flags(), f)
		mcpCmd.AddCommand(c)
	}
}

func mcpOffers(ctx context.Context, opts *MCPOffersOptions) error {
	f := opts.F
	if ctx == nil {
		ctx = context.Background()
	}
	cfg, err := loadMCPConfig(f)
	if err != nil {
		return err
	}
	if n := cfg.Trust.Notice(); n != "" {
		fmt.Fprint(f.IO.ErrOut, n)
	}
	list := []mcp.ServerOffers{}
	if len(cfg.MCP.Servers) > 0 {
		list, err = mcp.ListOffers(ctx, cfg.MCP, slog.New(slog.DiscardHandler), opts.Servers)
		if err != nil {
			return err
		}
	} else if len(opts.Servers) > 0 {
		return errs.Newf(errs.KindNotFound, "add one with lovia mcp add NAME -- COMMAND", "no MCP server %q: none is configured", opts.Servers[0])
	}
	if opts.JSON {
		enc := json.NewEncoder(f.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	pol, err := mcpPolicy(cfg)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		fmt.Fprintln(f.IO.Out, "no MCP servers configured (add them with lovia mcp add)")
		return nil
	}
	failed := false
	w := f.IO.Out
	for _, s := range list {
		kind, verb := mcp.ResourcesTool, "read"
		if opts.Prompts {
			kind, verb = mcp.PromptsTool, "get"
		}
		d, _ := pol.Decide(s.Name, "", mcp.PseudoName(s.Name, kind))
		fmt.Fprintf(w, "%s (%s: %s)\n", s.Name, verb, d)
		// Names, URIs and descriptions come from the servers: untrusted, sanitized.
		switch {
		case s.Status == "failed":
			failed = true
			fmt.Fprintf(w, "  failed: %s\n", termtext.String(s.Error))
		case opts.Prompts && !s.HasPrompts:
			fmt.Fprintln(w, "  no prompts")
		case opts.Prompts:
			for _, p := range s.Prompts {
				pc := mcp.PromptCommand{Server: s.Name, Prompt: p}
				line := "/" + pc.Name()
				if h := pc.ArgsHint(); h != "" {
					line += " " + h
				}
				if d := pc.Description(); d != "" {
					line += "  — " + d
				}
				fmt.Fprintln(w, "  "+termtext.String(line))
			}
		default:
			body := mcp.FormatResources(s.Name, s.Lists)
			_, body, _ = strings.Cut(body, "\n") // the heading is printed above
			for _, l := range strings.Split(strings.TrimRight(body, "\n"), "\n") {
				fmt.Fprintln(w, "  "+termtext.String(l))
			}
		}
	}
	if failed {
		return &exitError{1}
	}
	return nil
}
