package app

import (
	"context"
	"strings"

	"github.com/lovia-dev/lovia/internal/plugin/memory"
	"github.com/lovia-dev/lovia/internal/runtime"
	"github.com/lovia-dev/lovia/internal/store"
)

// Curate asks memory.curate's model for facts worth remembering from res, a
// completed top-level run that used the memory plugin. It returns nil when curation
// is off or does not apply. The facts are suggestions: nothing is kept here (see
// KeepCurated).
func (a *App) Curate(ctx context.Context, res *runtime.Result) ([]string, error) {
	c := a.Config.Memory.Curate
	if !c.Enabled || res == nil || res.Status != store.StatusCompleted || res.Replayed {
		return nil, nil
	}
	a.extra.mu.Lock()
	used := a.extra.memory != nil
	a.extra.mu.Unlock()
	if !used {
		return nil, nil
	}
	model := c.Model
	if model == "" {
		model = a.Config.Model
	}
	prov, err := a.Resolve(ctx, model)
	if err != nil {
		return nil, err
	}
	_, name, _ := strings.Cut(model, ":")
	return memory.Propose(ctx, prov, name, res.Entries, a.scrub.Scrub)
}

// KeepCurated saves the facts a person accepted, through the memory write gate of
// the workspace policy. It returns how many were kept.
func (a *App) KeepCurated(ctx context.Context, policy string, facts []string, sessionID, runID string) (int, error) {
	w, err := a.Workspace(policy)
	if err != nil {
		return 0, err
	}
	a.extra.mu.Lock()
	m := a.extra.memory
	a.extra.mu.Unlock()
	if m == nil {
		return 0, nil
	}
	return m.Keep(ctx, facts, sessionID, runID, memoryGate(w))
}
