package app

import (
	"context"
	"sync"

	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/plugin/mcp"
	"github.com/lovia-dev/lovia/internal/workspace"
)

// extras holds the process-wide parts that not every run uses: the workspaces (one
// per policy, so "allow for this session" grants live as long as the App) and the MCP
// server connections (started lazily by the plugin).
type extras struct {
	mcp *mcp.Plugin

	mu         sync.Mutex
	workspaces map[string]*workspace.Workspace
}

func (x *extras) init(_ context.Context, a *App) error {
	x.workspaces = map[string]*workspace.Workspace{}
	a.closers = append(a.closers, x.closeWorkspaces)
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

// Workspace returns the workspace of the working directory under policy (created on
// first use).
func (a *App) Workspace(policy string) (*workspace.Workspace, error) {
	x := &a.extra
	x.mu.Lock()
	defer x.mu.Unlock()
	if w, ok := x.workspaces[policy]; ok {
		return w, nil
	}
	cfg := a.Config.Workspace
	cfg.Root = a.Config.Cwd
	cfg.Policy = policy
	w, err := workspace.New(cfg)
	if err != nil {
		return nil, err
	}
	if note := w.SandboxNote(); note != "" {
		a.Log.Warn("workspace sandbox", "note", note)
	}
	x.workspaces[policy] = w
	return w, nil
}

func (x *extras) closeWorkspaces() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, w := range x.workspaces {
		w.Close()
	}
	return nil
}

// agentPlugins are added to every agent first: the workspace, then the configured MCP
// servers (configuring a server is the opt-in; a preset's tool allow-list still
// applies).
func (x *extras) agentPlugins(a *App, policy string) ([]plugin.Plugin, error) {
	w, err := a.Workspace(policy)
	if err != nil {
		return nil, err
	}
	out := []plugin.Plugin{w.Plugin()}
	if x.mcp != nil {
		out = append(out, x.mcp)
	}
	return out, nil
}

// named returns an optional plugin a preset enables by name (memory, subagents),
// nil when this build has none.
func (x *extras) named(name string) plugin.Plugin { return nil }
