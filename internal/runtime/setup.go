package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/lovia-dev/lovia/internal/agent"
	"github.com/lovia-dev/lovia/internal/compaction"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/tool"
)

// active is the derived per-agent state of a run: provider, merged tools, system
// prompt and plugin contributions. It is built once per agent the run activates.
type active struct {
	agent *agent.Agent
	prov  provider.Provider
	info  provider.Info

	tools       map[string]*toolEntry
	toolDefs    []provider.ToolDef
	toolSchemas []json.RawMessage
	toolNames   []string

	system    string
	injectors []plugin.ViewInjector
	hooks     []plugin.Hook
	inGuards  []plugin.Guardrail
	outGuards []plugin.Guardrail
	gates     []plugin.ToolGate
	stopGates []plugin.StopGate

	// outputValidate is set when the agent has an OutputSchema.
	outputValidate func(json.RawMessage) error
	nativeSchema   bool
}

type toolEntry struct {
	tool     tool.Tool
	spec     tool.Spec
	validate func(json.RawMessage) error
	source   string
	// handoff tools always run as barriers.
	handoff bool
}

// barrier reports whether the call must run alone.
func (t *toolEntry) barrier() bool { return t.handoff || !t.spec.Parallel }

var invalidToolChars = regexp.MustCompile(`[^a-zA-Z0-9_-]+`)

// toolName makes a provider-safe tool name (^[a-zA-Z0-9_-]{1,64}$) from prefix+name.
func toolName(prefix, name string) string {
	n := prefix + strings.ToLower(invalidToolChars.ReplaceAllString(name, "_"))
	if len(n) > 64 {
		n = n[:64]
	}
	return n
}

// HandoffToolName is the name of the tool that transfers to agent name.
func HandoffToolName(name string) string { return toolName("transfer_to_", name) }

// activate builds (or returns the cached) active state for a.
func (l *loop) activate(ctx context.Context, a *agent.Agent) (*active, error) {
	if ac := l.actives[a]; ac != nil {
		return ac, nil
	}
	if a == nil {
		return nil, errs.New(errs.KindConfig, "no agent to run", "")
	}
	if a.Name == "" {
		return nil, errs.New(errs.KindConfig, "agent has no name", "give every agent a Name (it keys handoffs and resume)")
	}
	if a.Model == "" {
		return nil, errs.Newf(errs.KindConfig, "set a model (PROVIDER:MODEL) for the agent", "agent %q has no model", a.Name)
	}
	if l.opts.Resolve == nil {
		return nil, errs.New(errs.KindConfig, "runtime options have no model resolver", "set runtime.Options.Resolve (e.g. a provider.Registry's Resolve)")
	}
	prov, err := l.opts.Resolve(ctx, a.Model)
	if err != nil {
		if _, ok := errAsKind(err); ok {
			return nil, err
		}
		return nil, errs.Wrap(errs.KindConfig, err, fmt.Sprintf("model %q of agent %q", a.Model, a.Name), "check the model name (PROVIDER:MODEL)")
	}
	ac := &active{agent: a, prov: prov, info: prov.Info(), tools: map[string]*toolEntry{}}
	if l.opts.MaxBudgetUSD > 0 {
		if _, ok := l.opts.Prices.Lookup(ac.info.Provider, ac.info.Model); !ok {
			return nil, errs.Newf(errs.KindConfig,
				fmt.Sprintf("add its prices under pricing: in lovia's config, e.g. pricing: {%q: {input: 1.25, cached_input: 0.125, output: 10}} (USD per million tokens; docs/cost.md)", ac.info.Provider+":"+ac.info.Model),
				"--max-budget-usd needs the price of %s:%s, which lovia does not know", ac.info.Provider, ac.info.Model)
		}
	}
	rc := l.newRC(a.Name, l.turns)

	add := func(t tool.Tool, source string, handoff bool) error {
		s := t.Spec()
		if s.Name == "" {
			return errs.Newf(errs.KindConfig, "give the tool a name", "a tool from %s has no name", source)
		}
		if prev := ac.tools[s.Name]; prev != nil {
			return errs.Newf(errs.KindConfig, "rename one of them or drop one source",
				"tool name %q is declared twice: by %s and by %s", s.Name, prev.source, source)
		}
		te := &toolEntry{tool: t, spec: s, validate: s.Validate, source: source, handoff: handoff}
		if te.validate == nil && len(bytes.TrimSpace(s.Schema)) > 0 {
			v, err := tool.CompileSchema(s.Schema)
			if err != nil {
				return errs.Wrap(errs.KindConfig, err, fmt.Sprintf("tool %q (%s) has an invalid JSON Schema", s.Name, source), "fix the tool's schema")
			}
			te.validate = v
		}
		ac.tools[s.Name] = te
		ac.toolNames = append(ac.toolNames, s.Name)
		return nil
	}

	for _, t := range a.Tools {
		if err := add(t, fmt.Sprintf("agent %q", a.Name), false); err != nil {
			return nil, err
		}
	}

	var instructions []string
	plugins := append(append([]plugin.Plugin(nil), l.opts.Plugins...), a.Plugins...)
	for _, p := range plugins {
		c, err := p.Setup(ctx, rc)
		if err != nil {
			if _, ok := errAsKind(err); ok {
				return nil, err
			}
			return nil, errs.Wrap(errs.KindConfig, err, fmt.Sprintf("plugin %q failed to set up", p.Name()), "check the plugin's configuration")
		}
		if c == nil {
			continue
		}
		if c.Close != nil {
			l.closers = append(l.closers, namedCloser{name: p.Name(), close: c.Close})
		}
		for _, t := range c.Tools {
			if err := add(t, fmt.Sprintf("plugin %q", p.Name()), false); err != nil {
				return nil, err
			}
		}
		if s := strings.TrimSpace(c.Instructions); s != "" {
			instructions = append(instructions, s)
		}
		ac.injectors = append(ac.injectors, c.ViewInjectors...)
		ac.hooks = append(ac.hooks, c.Hooks...)
		ac.inGuards = append(ac.inGuards, c.InputGuardrails...)
		ac.outGuards = append(ac.outGuards, c.OutputGuardrails...)
		ac.gates = append(ac.gates, c.ToolGates...)
		ac.stopGates = append(ac.stopGates, c.StopGates...)
	}
	for _, h := range a.Handoffs {
		if h == nil {
			continue
		}
		if err := add(handoffTool(h), "handoff", true); err != nil {
			return nil, err
		}
	}
	if src, ok := l.policy.(compaction.ToolSource); ok {
		for _, t := range src.Tools() {
			if ac.tools[t.Spec().Name] != nil {
				continue // an explicit tool of the same name wins silently
			}
			if err := add(t, "context policy", false); err != nil {
				return nil, err
			}
		}
	}
	// Hooks and guardrails of the agent itself come first.
	ac.hooks = append(append([]plugin.Hook(nil), a.Hooks...), ac.hooks...)
	ac.inGuards = append(append([]plugin.Guardrail(nil), a.InputGuardrails...), ac.inGuards...)
	ac.outGuards = append(append([]plugin.Guardrail(nil), a.OutputGuardrails...), ac.outGuards...)

	ac.toolDefs = make([]provider.ToolDef, 0, len(ac.toolNames))
	ac.toolSchemas = make([]json.RawMessage, 0, len(ac.toolNames))
	for _, n := range ac.toolNames {
		s := ac.tools[n].spec
		schema := s.Schema
		if len(bytes.TrimSpace(schema)) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		d := provider.ToolDef{Name: s.Name, Description: s.Description, Schema: schema}
		ac.toolDefs = append(ac.toolDefs, d)
		b, _ := json.Marshal(d)
		ac.toolSchemas = append(ac.toolSchemas, b)
	}

	if len(a.OutputSchema) > 0 {
		v, err := tool.CompileSchema(a.OutputSchema)
		if err != nil {
			return nil, errs.Wrap(errs.KindConfig, err, fmt.Sprintf("agent %q has an invalid output schema", a.Name), "fix the output JSON Schema")
		}
		ac.outputValidate = v
		ac.nativeSchema = ac.info.NativeSchema
	}

	// System prompt: instructions + fragments + plugin instructions + run extras +
	// (without native schema support) the structured-output contract.
	var parts []string
	if s := strings.TrimSpace(a.Instructions); s != "" {
		parts = append(parts, s)
	}
	for i, f := range a.Fragments {
		s, err := f(ctx, rc)
		if err != nil {
			return nil, errs.Wrap(errs.KindConfig, err, fmt.Sprintf("instruction fragment %d of agent %q failed", i+1, a.Name), "")
		}
		if s = strings.TrimSpace(s); s != "" {
			parts = append(parts, s)
		}
	}
	parts = append(parts, instructions...)
	if s := strings.TrimSpace(l.opts.ExtraInstructions); s != "" {
		parts = append(parts, s)
	}
	if ac.outputValidate != nil && !ac.nativeSchema {
		parts = append(parts, outputContract(a.OutputSchema))
	}
	ac.system = strings.Join(parts, "\n\n")

	if l.actives == nil {
		l.actives = map[*agent.Agent]*active{}
	}
	l.actives[a] = ac
	return ac, nil
}

func outputContract(schema json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, schema, "", "  "); err != nil {
		buf.Reset()
		buf.Write(schema)
	}
	return "Your final answer (the reply in which you call no tools) must be a single JSON value that matches this JSON Schema, with no prose and no code fences around it:\n" + buf.String()
}

// sortedToolNames lists tool names for error messages.
func (ac *active) sortedToolNames() string {
	n := append([]string(nil), ac.toolNames...)
	sort.Strings(n)
	return strings.Join(n, ", ")
}

type namedCloser struct {
	name  string
	close func(ctx context.Context) error
}

func errAsKind(err error) (errs.Kind, bool) {
	var e *errs.Error
	if errors.As(err, &e) {
		return e.Kind, true
	}
	return "", false
}
