package app

import (
	"context"
	"net/http/httptrace"
	"path/filepath"
	"sync"

	"github.com/lovia-dev/lovia/internal/agent"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/plugin/mcp"
	"github.com/lovia-dev/lovia/internal/plugin/memory"
	"github.com/lovia-dev/lovia/internal/plugin/subagents"
	"github.com/lovia-dev/lovia/internal/runtime"
	"github.com/lovia-dev/lovia/internal/workspace"
)

// extras holds the process-wide parts that not every run uses: the workspaces (one
// per policy, so "allow for this session" grants live as long as the App) and the MCP
// server connections (started lazily by the plugin).
type extras struct {
	mcp    *mcp.Plugin
	memory *memory.Plugin

	mu         sync.Mutex
	workspaces map[string]*workspace.Workspace
	// mcpPolicies decide MCP calls per workspace policy; they hold the session's
	// "allow this tool for the session" grants, so they live as long as the App.
	mcpPolicies map[string]*workspace.MCPPolicy
	rewind      rewindState

	// requestSent is closed once a run of the App has written its first model
	// request (RunContext): the workspaces' sandbox helper starts then
	// (workspace.Config.SandboxStart), so its start-up (lovia's own, re-executed)
	// does not compete with that request for the CPU.
	requestSent chan struct{}
	requestOnce sync.Once
}

func (x *extras) init(_ context.Context, a *App) error {
	x.workspaces = map[string]*workspace.Workspace{}
	x.mcpPolicies = map[string]*workspace.MCPPolicy{}
	x.requestSent = make(chan struct{})
	a.closers = append(a.closers, x.closeWorkspaces)
	if len(a.Config.MCP.Servers) > 0 {
		cfg := a.Config.MCP
		// Tool lists are cached so a server starts only when one of its tools is called.
		cfg.CacheDir = filepath.Join(a.Config.Home, "mcp")
		cfg.AuthDir = mcp.AuthDir(a.Config.Home)
		cfg.Scrub = a.scrub.Scrub
		cfg.Resolve = a.Resolve // sampling requests: the run's model answers
		cfg.Root = a.Config.Cwd // offered to the servers as their root
		p, err := mcp.New(cfg, a.Log)
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
	cfg.SandboxStart = x.requestSent
	// lovia's own state as this run found it (a config's home:, --db): never written
	// by the agent's tools or commands.
	cfg.LoviaDirs = append(cfg.LoviaDirs[:len(cfg.LoviaDirs):len(cfg.LoviaDirs)], a.Config.Home, a.Config.UserDir)
	if a.Config.DB != "" {
		for _, sfx := range []string{"", "-wal", "-shm", "-journal"} {
			cfg.LoviaDirs = append(cfg.LoviaDirs, a.Config.DB+sfx)
		}
	}
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

// RunContext is ctx for a run's goroutine: through it the App learns when the
// first model request has been written (see extras.requestSent).
func (a *App) RunContext(ctx context.Context) context.Context {
	x := &a.extra
	if x.requestSent == nil {
		return ctx
	}
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) {
		x.requestOnce.Do(func() { close(x.requestSent) })
	}})
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
// model answers the MCP servers' sampling requests.
func (x *extras) agentPlugins(a *App, policy, model string) ([]plugin.Plugin, error) {
	w, err := a.Workspace(policy)
	if err != nil {
		return nil, err
	}
	out := []plugin.Plugin{a.withCheckpoints(w.Plugin())}
	if x.mcp != nil {
		pol, err := x.mcpPolicy(a, policy, w)
		if err != nil {
			return nil, err
		}
		out = append(out, x.mcp.ForModel(pol, model))
	}
	return out, nil
}

// mcpPolicy returns the MCP decision of policy (created on first use).
func (x *extras) mcpPolicy(a *App, policy string, w *workspace.Workspace) (*workspace.MCPPolicy, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if p, ok := x.mcpPolicies[policy]; ok {
		return p, nil
	}
	p, err := w.MCPPolicy(a.Config.MCPRules)
	if err != nil {
		return nil, err
	}
	x.mcpPolicies[policy] = p
	return p, nil
}

// named returns an optional plugin a preset enables by name, nil when it is not
// available (the error says why). policy is the run's workspace policy: children get
// no looser one.
func (x *extras) named(ctx context.Context, a *App, name, policy string) (plugin.Plugin, error) {
	switch name {
	case "memory":
		// Memory writes pass the run's workspace policy (project notes: a write inside
		// the root; global notes: ask; readonly: nothing). Taken before x.mu, which
		// Workspace locks too.
		w, err := a.Workspace(policy)
		if err != nil {
			return nil, err
		}
		x.mu.Lock()
		defer x.mu.Unlock()
		if x.memory == nil {
			cfg := memory.DefaultConfig(a.home(), a.repo())
			cfg.Warn = a.warn
			if !a.memoryEphemeral {
				// Opened when a memory tool first needs it, not before the first request.
				arch := memory.OpenLazy(filepath.Join(a.Config.Home, "memory.db"))
				a.closers = append(a.closers, arch.Close)
				arch.SetEmbedder(a.memoryEmbedder())
				cfg.Archive = arch
			}
			x.memory = memory.New(cfg, a.Log)
		}
		return x.memory.WithGate(memoryGate(w)), nil
	case "subagents":
		build := func(ctx context.Context, spec subagents.ChildSpec) (*agent.Agent, runtime.Options, error) {
			return a.buildChild(ctx, spec, policy)
		}
		return subagents.New(subagents.Config{Build: build, Presets: a.childPresets(), OnEvent: a.SubagentEvents}, a.Log)
	}
	return nil, nil
}

// memoryGate judges the memory tools' writes by w's policy.
func memoryGate(w *workspace.Workspace) memory.WriteGate {
	return func(_ context.Context, wr memory.Write) (*event.Approval, error) {
		scope := workspace.MemoryProject
		if wr.Scope == memory.GlobalScope {
			scope = workspace.MemoryGlobal
		}
		return w.MemoryApproval(scope, wr.Path, wr.What)
	}
}

// buildChild builds a subagent's agent and options: a run of its own (checkpointed,
// not appended to the parent's session) from a preset, with the parent's workspace
// policy as its ceiling: a child's preset may tighten it, never loosen it.
func (a *App) buildChild(ctx context.Context, spec subagents.ChildSpec, parentPolicy string) (*agent.Agent, runtime.Options, error) {
	pr, err := a.Prepare(ctx, RunOptions{Preset: spec.Preset, SessionID: "child_" + spec.ID, child: true, PolicyCeiling: parentPolicy})
	if err != nil {
		return nil, runtime.Options{}, err
	}
	ag := pr.Agent.Clone()
	if spec.Instructions != "" {
		ag.Instructions = spec.Instructions
	}
	if len(spec.Tools) > 0 {
		for i, pl := range ag.Plugins {
			ag.Plugins[i] = allowOnly(pl, spec.Tools)
		}
	}
	pr.Options.Session = nil
	pr.Options.Deps = spec.Deps
	return ag, pr.Options, nil
}

// childPresets lists the presets a subagent may be started from.
func (a *App) childPresets() map[string]string {
	out := map[string]string{}
	for _, p := range a.Presets.List() {
		out[p.Name] = p.Description
	}
	return out
}
