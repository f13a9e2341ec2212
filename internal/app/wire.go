package app

import (
	"context"

	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/plugin/mcp"
	"github.com/lovia-dev/lovia/internal/preset"
)

// extras holds the process-wide parts that not every run uses: MCP server
// connections (started lazily by the plugin) and the workspace.
type extras struct {
	mcp *mcp.Plugin
}

func (x *extras) init(_ context.Context, a *App) error {
	if len(a.Config.MCP.Servers) > 0 {
		p, err := mcp.New(a.Config.MCP, a.Log)
		if err != nil {
			return err
		}
		x.mcp = p
		a.closers = append(a.closers, p.Close)
	}
	return nil
}

// agentPlugins are added to every agent first: the workspace, then the configured MCP
// servers (configuring a server is the opt-in; a preset's tool allow-list still
// applies).
func (x *extras) agentPlugins(a *App, p *preset.Preset) []plugin.Plugin {
	var out []plugin.Plugin
	if x.mcp != nil {
		out = append(out, x.mcp)
	}
	return out
}

// named returns an optional plugin a preset enables by name (memory, subagents),
// nil when this build has none.
func (x *extras) named(name string) plugin.Plugin { return nil }
