package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/lovia-dev/lovia/internal/textutil"
	"strconv"
	"strings"
	"sync"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/tool"
)

// ProjectScope names the repository's memory in a Write (archive entries are keyed
// "project:<root>").
const ProjectScope = "project"

// Write is one change the memory tools are about to make.
type Write struct {
	// Scope is ProjectScope or GlobalScope.
	Scope string
	// Path is the notes file that changes ("" when only the archive changes).
	Path string
	// What describes the change for a person ("remember (global): …").
	What string
}

// WriteGate decides a memory write like a tool's approval predicate: nil lets it run,
// an approval asks a person (nobody answering means denied), an error denies it. The
// application builds one per run from the run's workspace policy.
type WriteGate func(ctx context.Context, w Write) (*event.Approval, error)

// WithGate returns the plugin for one run whose memory writes (remember, forget and
// the MEMORY.md pins) pass gate: the gate is each tool's approval predicate, and it
// is asked again just before the write, so a denied write never happens. Reads
// (the notes in the prompt, search_memory) are not gated.
func (p *Plugin) WithGate(gate WriteGate) plugin.Plugin {
	g := &gated{p: p, gate: gate, asked: map[string][]string{}}
	return plugin.Func{ID: p.Name(), Fn: g.setup}
}

type gated struct {
	p    *Plugin
	gate WriteGate

	mu sync.Mutex
	// asked records, per call (run and arguments), the scopes its approval covered, so
	// a forget whose target moved between approval and execution cannot reach a
	// scope nobody approved.
	asked map[string][]string
}

func (g *gated) setup(ctx context.Context, rc *tool.RunContext) (*plugin.Contribution, error) {
	c, err := g.p.Setup(ctx, rc)
	if err != nil || c == nil {
		return c, err
	}
	cp := *c
	cp.Tools = make([]tool.Tool, len(c.Tools))
	for i, t := range c.Tools {
		switch t.Spec().Name {
		case "remember", "forget":
			cp.Tools[i] = g.wrap(t)
		default:
			cp.Tools[i] = t
		}
	}
	return &cp, nil
}

func callKey(rc *tool.RunContext, name string, args json.RawMessage) string {
	run := ""
	if rc != nil {
		run = rc.RunID
	}
	return run + "\x00" + name + "\x00" + string(args)
}

func (g *gated) wrap(t tool.Tool) tool.Tool {
	spec := t.Spec()
	name := spec.Name
	spec.Parallel = false // writes to the notes files are ordered
	spec.Approval = func(ctx context.Context, rc *tool.RunContext, args json.RawMessage) (*event.Approval, error) {
		writes, err := g.writes(ctx, name, args)
		if err != nil {
			return nil, err
		}
		var ask *event.Approval
		var scopes []string
		for _, w := range writes {
			a, err := g.gate(ctx, w)
			if err != nil {
				return nil, err
			}
			scopes = append(scopes, w.Scope)
			if a != nil {
				if ask == nil {
					ask = a
				} else {
					ask.Summary += "; " + a.Summary
				}
			}
		}
		g.mu.Lock()
		g.asked[callKey(rc, name, args)] = scopes
		g.mu.Unlock()
		return ask, nil
	}
	return &tool.FuncTool{S: spec, Fn: func(ctx context.Context, rc *tool.RunContext, args json.RawMessage) (tool.Result, error) {
		key := callKey(rc, name, args)
		g.mu.Lock()
		covered, recorded := g.asked[key]
		delete(g.asked, key)
		g.mu.Unlock()
		writes, err := g.writes(ctx, name, args)
		if err != nil {
			return tool.Result{Text: "denied: " + err.Error(), IsError: true}, nil
		}
		for _, w := range writes {
			a, err := g.gate(ctx, w)
			if err != nil {
				return tool.Result{Text: "denied: " + err.Error(), IsError: true}, nil
			}
			// A write that needs a person's approval runs only if this call's approval
			// covered its scope (without a record the person allowed the tool for the
			// session, so the predicate was skipped on purpose).
			if a != nil && recorded && !contains(covered, w.Scope) {
				return tool.Result{Text: fmt.Sprintf("denied: the %s notes changed since this call was approved; call %s again", w.Scope, name), IsError: true}, nil
			}
		}
		return t.Invoke(ctx, rc, args)
	}}
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// writes lists what a call of remember or forget would change.
func (g *gated) writes(ctx context.Context, name string, args json.RawMessage) ([]Write, error) {
	p := g.p
	switch name {
	case "remember":
		var a rememberArgs
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, nil // the tool reports bad arguments itself
		}
		scope := ProjectScope
		if a.Scope == GlobalScope {
			scope = GlobalScope
		}
		w := Write{Scope: scope, What: fmt.Sprintf("remember (%s memory): %s", scope, clip(textutil.OneLine(a.Content), 200))}
		if a.Pin {
			w.Path = p.notesPath(scope)
			w.What = fmt.Sprintf("remember and pin to %s: %s", w.Path, clip(textutil.OneLine(a.Content), 200))
		} else if p.cfg.Archive == nil {
			return nil, nil // nothing would be written
		}
		return []Write{w}, nil
	case "forget":
		var a forgetArgs
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, nil
		}
		var out []Write
		if id := strings.TrimSpace(a.ID); id != "" && p.cfg.Archive != nil {
			n, err := strconv.ParseInt(strings.TrimPrefix(strings.ToLower(id), "m"), 10, 64)
			if err == nil {
				it, ok, err := p.cfg.Archive.Get(ctx, n, p.scopes())
				if err != nil {
					return nil, fmt.Errorf("cannot tell which memory m%d is: %w", n, err)
				}
				if ok {
					scope := ProjectScope
					if it.Scope == GlobalScope {
						scope = GlobalScope
					}
					w := Write{Scope: scope, What: fmt.Sprintf("forget m%d (%s memory): %s", n, scope, clip(textutil.OneLine(it.Content), 200))}
					if it.Pinned {
						w.Path = p.notesPath(scope)
					}
					out = append(out, w)
				}
			}
		}
		if note := textutil.OneLine(strings.TrimPrefix(strings.TrimSpace(a.Note), "- ")); note != "" {
			for _, scope := range []string{ProjectScope, GlobalScope} {
				path := p.notesPath(scope)
				has, err := notesHave(path, note)
				if err != nil {
					return nil, err
				}
				if has {
					out = append(out, Write{Scope: scope, Path: path, What: fmt.Sprintf("forget the note %q in %s", clip(note, 200), path)})
				}
			}
		}
		return out, nil
	}
	return nil, errors.New("not a memory write")
}

// notesHave reports whether the notes file at path has the note line.
func notesHave(path, note string) (bool, error) {
	cur, err := readNotes(path)
	if err != nil || cur == "" {
		return false, err
	}
	for _, l := range strings.Split(cur, "\n") {
		if textutil.OneLine(strings.TrimPrefix(strings.TrimSpace(l), "- ")) == note {
			return true, nil
		}
	}
	return false, nil
}

// clip shortens s to n runes for an approval summary.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
