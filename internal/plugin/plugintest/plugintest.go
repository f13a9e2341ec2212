// Package plugintest runs plugins end to end through the real run loop with the
// scripted provider, for the built-in plugins' tests.
package plugintest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/agent"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/provider/script"
	"github.com/lovia-dev/lovia/internal/runtime"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// Call returns a scripted tool call.
func Call(name string, args map[string]any) script.Call {
	return script.Call{Name: name, Args: args}
}

// Calls returns a scripted reply made of tool calls.
func Calls(cs ...script.Call) script.Turn { return script.Turn{ToolCalls: cs} }

// Say returns a scripted text reply.
func Say(text string) script.Turn { return script.Turn{Text: text} }

// Run is a finished scripted run.
type Run struct {
	Result   *runtime.Result
	Err      error
	Events   []event.Event
	Provider *script.Provider
}

// Options adjust a scripted run.
type Options struct {
	// Agent tweaks the agent before the run (tools, hooks...).
	Agent func(a *agent.Agent)
	// Runtime tweaks the run options.
	Runtime func(o *runtime.Options)
	// OnEvent sees each event as it streams (e.g. to answer approvals); h is the run.
	OnEvent func(h *runtime.Handle, ev event.Event)
	// Timeout bounds the run (default 60s).
	Timeout time.Duration
}

// Agent returns an agent using the script provider with the given plugins.
func Agent(plugins ...plugin.Plugin) *agent.Agent {
	return &agent.Agent{Name: "tester", Instructions: "You are a test agent.", Model: "script:test", Plugins: plugins}
}

// Resolver returns a Resolve func that always yields p.
func Resolver(p provider.Provider) func(context.Context, string) (provider.Provider, error) {
	return func(context.Context, string) (provider.Provider, error) { return p, nil }
}

// Start runs input through an agent with plugins against the scripted turns and waits
// for the end.
func Start(t testing.TB, input string, turns []script.Turn, o Options, plugins ...plugin.Plugin) *Run {
	t.Helper()
	p := script.New("test", &script.Script{Turns: turns})
	a := Agent(plugins...)
	if o.Agent != nil {
		o.Agent(a)
	}
	opts := runtime.Options{Resolve: Resolver(p), Approvals: runtime.ApprovalDenyAll}
	if o.Runtime != nil {
		o.Runtime(&opts)
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	h := runtime.Start(ctx, a, runtime.Text(input), opts)
	r := &Run{Provider: p}
	for ev := range h.Events() {
		r.Events = append(r.Events, ev)
		if o.OnEvent != nil {
			o.OnEvent(h, ev)
		}
	}
	r.Result, r.Err = h.Result()
	return r
}

// ToolResult returns the n-th (0-based) tool_result entry of the run for tool name.
func (r *Run) ToolResult(t testing.TB, name string, n int) transcript.Entry {
	t.Helper()
	i := 0
	if r.Result != nil {
		for _, e := range r.Result.Entries {
			if e.Type == transcript.TypeToolResult && e.Name == name {
				if i == n {
					return e
				}
				i++
			}
		}
	}
	t.Fatalf("no tool result #%d for %s (err %v); entries: %s", n, name, r.Err, r.Dump())
	return transcript.Entry{}
}

// Dump renders the run's entries one per line, for failure messages.
func (r *Run) Dump() string {
	var b strings.Builder
	if r.Result == nil {
		return "(no result)"
	}
	for _, e := range r.Result.Entries {
		b.WriteString("\n  " + string(e.Type) + " " + e.Name + " " + e.Role + ": " + e.Text + string(e.Args))
	}
	return b.String()
}

// Request returns the n-th model request (0-based).
func (r *Run) Request(t testing.TB, n int) provider.Request {
	t.Helper()
	reqs := r.Provider.Requests()
	if n >= len(reqs) {
		t.Fatalf("only %d model requests, want #%d", len(reqs), n)
	}
	return reqs[n]
}

// HasTool reports whether the request offered the tool.
func HasTool(req provider.Request, name string) bool {
	for _, td := range req.Tools {
		if td.Name == name {
			return true
		}
	}
	return false
}
