package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/lovia-dev/lovia/internal/app"
	"github.com/lovia-dev/lovia/internal/runtime"
	"github.com/lovia-dev/lovia/internal/termtext"
	"github.com/lovia-dev/lovia/internal/tui"
)

// curateTimeout bounds the curation model's answer after a headless run.
const curateTimeout = 2 * time.Minute

// suggestCurated prints memory curation's proposals for a completed headless run on
// stderr. Headless keeps none: nobody is there to choose, and a model's suggestion
// must not become memory unread (in chat the user picks; see docs/memory.md).
func suggestCurated(f *Factory, a *app.App, res *runtime.Result) {
	ctx, cancel := context.WithTimeout(context.Background(), curateTimeout)
	defer cancel()
	facts, err := a.Curate(ctx, res)
	if err != nil {
		a.Log.Warn("memory curation failed", "err", err)
		if !f.Common.Quiet {
			fmt.Fprintf(f.IO.ErrOut, "lovia: memory curation failed: %v\n", err)
		}
		return
	}
	if len(facts) == 0 || f.Common.Quiet {
		return
	}
	fmt.Fprintln(f.IO.ErrOut, "lovia: memory curation suggests (not kept in a headless run; ask for them in chat to keep them):")
	for i, s := range facts {
		fmt.Fprintf(f.IO.ErrOut, "  (%d) %s\n", i+1, termtext.String(s))
	}
}

// Curate implements tui.Curator: the finished run's proposals.
func (b *chatBackend) Curate(ctx context.Context, h tui.Handle) ([]string, error) {
	rh, ok := h.(*runtime.Handle)
	if !ok {
		return nil, nil
	}
	res, err := rh.Result()
	if err != nil {
		return nil, nil // a run that did not complete proposes nothing
	}
	return b.app.Curate(ctx, res)
}

// KeepCurated implements tui.Curator: the accepted facts go through the memory write
// gate of the run's own policy.
func (b *chatBackend) KeepCurated(ctx context.Context, h tui.Handle, facts []string) (int, error) {
	b.mu.Lock()
	policy, ok := b.policies[h.RunID()]
	b.mu.Unlock()
	if !ok {
		return 0, fmt.Errorf("the run's policy is not known; nothing kept")
	}
	return b.app.KeepCurated(ctx, policy, facts, h.SessionID(), h.RunID())
}
