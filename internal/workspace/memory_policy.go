package workspace

import (
	"fmt"

	"github.com/lovia-dev/lovia/internal/event"
)

// MemoryScope is what a write of lovia's memory tools (remember, forget, pinned notes)
// changes.
type MemoryScope int

const (
	// MemoryProject: this repository's notes (<root>/.lovia/MEMORY.md) and its archive
	// entries; only sessions in this repository read them.
	MemoryProject MemoryScope = iota
	// MemoryGlobal: the user's global notes and archive entries, read by every later
	// session of every repository.
	MemoryGlobal
)

func (s MemoryScope) String() string {
	if s == MemoryGlobal {
		return "global"
	}
	return "project"
}

// DecideMemoryWrite judges a write of the memory tools. path is the notes file the
// write changes ("" when only lovia's archive changes).
//
// Memory is lovia's own mechanism, so it is decided here rather than by DecidePath
// (which may keep the agent's file tools away from .lovia/ altogether): the memory
// tools can only append or remove note lines, never rewrite configuration.
//   - readonly: nothing is written, in any scope.
//   - project notes: a write inside the root, allowed where the preset allows writing
//     inside the root; a notes file that resolves outside the root (a symlinked
//     .lovia/) is judged as the write outside the root it is; denied_paths apply.
//   - global notes: always ask (at least), because they reach every repository's
//     later sessions — so runs nobody can approve (--approve none, lovia eval) cannot
//     write them; denied_paths apply.
func (p *Policy) DecideMemoryWrite(scope MemoryScope, path string) (Decision, string) {
	if p.name == PresetReadonly || p.preset.WriteInside == Deny {
		return Deny, fmt.Sprintf("the %s policy changes no memory", p.name)
	}
	abs := ""
	if path != "" {
		abs = p.Resolve(path, "")
		for _, d := range p.denied {
			if d.match(abs, p.root) {
				return Deny, fmt.Sprintf("%s matches denied_paths %q", abs, d.raw)
			}
		}
	}
	if scope == MemoryGlobal {
		return Ask, "global memory is read by every later session of every repository"
	}
	if abs != "" && !p.Inside(abs) {
		d, why := p.DecidePath(abs, OpWrite)
		return most(d, Ask), "the project notes resolve outside the workspace: " + why
	}
	return p.preset.WriteInside, fmt.Sprintf("project memory %s under the %s policy", p.preset.WriteInside.phrase(), p.name)
}

// MemoryApproval is the approval predicate of one memory write: nil when it may run,
// an approval when a person must decide, an error when it is denied. what describes
// the write for the person ("remember (global): …").
func (w *Workspace) MemoryApproval(scope MemoryScope, path, what string) (*event.Approval, error) {
	d, why := w.policy.DecideMemoryWrite(scope, path)
	switch d {
	case Deny:
		hint := ""
		if w.policy.name == PresetReadonly {
			hint = " The readonly policy allows no changes; the user can switch with --policy coding."
		}
		return nil, fmt.Errorf("%s memory write: %s.%s", scope, why, hint)
	case Ask:
		a := &event.Approval{Kind: "tool", Summary: fmt.Sprintf("%s (%s)", what, why)}
		if path != "" {
			a.Kind, a.Path = "path", w.policy.Resolve(path, "")
		}
		return a, nil
	}
	return nil, nil
}
