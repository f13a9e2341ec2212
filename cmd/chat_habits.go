package cmd

import (
	"context"

	"github.com/lovia-dev/lovia/internal/compaction"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/tui"
)

var (
	_ tui.ModelChecker     = (*chatBackend)(nil)
	_ tui.SessionCompacter = (*chatBackend)(nil)
)

// CheckModel resolves model as a run would (provider known, its settings and key
// present), so /model fails now instead of at the next message. No request is sent.
func (b *chatBackend) CheckModel(ctx context.Context, model string) error {
	prov, err := b.app.Resolve(ctx, model)
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.windows[model] = prov.Info().ContextWindow
	b.mu.Unlock()
	return nil
}

// CompactSession runs a forced pass of the context policy over the session's
// conversation now (/compact between runs). The decisions are kept by the policy for
// the session, so the next run starts from the compacted view.
func (b *chatBackend) CompactSession(ctx context.Context, sessionID, model string) (*event.Compaction, error) {
	if b.app.Compaction == nil {
		return nil, nil
	}
	hist, err := b.app.Session.Load(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	// The body a run would send: the history without its system head.
	body := make([]transcript.Entry, 0, len(hist))
	for _, e := range hist {
		if !e.IsSystem() {
			body = append(body, e)
		}
	}
	window := 0
	if prov, err := b.app.Resolve(ctx, model); err == nil {
		window = prov.Info().ContextWindow
	}
	res, err := b.app.Compaction.Compact(ctx, compaction.Request{SessionID: sessionID, Body: body, ContextWindow: window, Force: true})
	if err != nil {
		return nil, err
	}
	return res.Info, nil
}

var _ tui.Attacher = (*chatBackend)(nil)

// AttachFile reads a file the user mentioned with @path, through the workspace of
// the runs' policy: judged and opened as read_file would, never a plain os.ReadFile
// (the repository's symlinks are not trusted).
func (b *chatBackend) AttachFile(_ context.Context, path string, limit int) (string, bool, error) {
	w, err := b.app.Workspace(b.app.CeilingPolicy())
	if err != nil {
		return "", false, err
	}
	return w.AttachFile(path, limit)
}
