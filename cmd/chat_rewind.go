package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/lovia-dev/lovia/internal/app"
	"github.com/lovia-dev/lovia/internal/rewind"
	"github.com/lovia-dev/lovia/internal/tui"
)

// The chat backend keeps checkpoints: /undo and /rewind.
var _ tui.Rewinder = (*chatBackend)(nil)

// RewindPoints lists the session's runs, newest first: those in the conversation and
// interrupted ones that took file checkpoints.
func (b *chatBackend) RewindPoints(ctx context.Context, sessionID string) ([]tui.RewindPoint, error) {
	db := b.app.DB
	if db == nil {
		return nil, errors.New("no database")
	}
	segs, err := db.Sessions().SessionRuns(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	prompts, err := b.prompts(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	st, _ := b.app.Rewind()
	runs, _ := st.SessionRuns(sessionID)
	byRun := map[string]*rewind.Run{}
	for _, r := range runs {
		if !r.Rewound {
			byRun[r.RunID] = r
		}
	}
	var out []tui.RewindPoint
	seen := map[string]bool{}
	for _, s := range segs {
		p := tui.RewindPoint{RunID: s.RunID, Prompt: prompts[s.RunID], Time: s.CreatedAt}
		if r := byRun[s.RunID]; r != nil {
			p.Time = r.Start
			p.Files, _ = st.ChangedFiles(r, "")
		}
		seen[s.RunID] = true
		out = append(out, p)
	}
	for _, r := range runs {
		if seen[r.RunID] || r.Rewound {
			continue
		}
		files, _ := st.ChangedFiles(r, "")
		out = append(out, tui.RewindPoint{RunID: r.RunID, Prompt: r.Input, Time: r.Start, Files: files})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.After(out[j].Time) })
	return out, nil
}

// prompts maps the session's runs to their user message.
func (b *chatBackend) prompts(ctx context.Context, sessionID string) (map[string]string, error) {
	entries, err := b.app.DB.Sessions().Load(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, e := range entries {
		if e.IsUser() && e.RunID != "" {
			if _, ok := out[e.RunID]; !ok {
				out[e.RunID] = e.Text
			}
		}
	}
	return out, nil
}

// Rewind restores the files and/or cuts the conversation back to before req.RunID.
func (b *chatBackend) Rewind(ctx context.Context, req tui.RewindRequest) (tui.RewindResult, error) {
	var res tui.RewindResult
	prompts, err := b.prompts(ctx, req.SessionID)
	if err != nil {
		return res, err
	}
	res.Prompt = prompts[req.RunID]
	var parts []string
	if req.Files {
		st, rec := b.app.Rewind()
		plan, err := st.Plan(ctx, rec, req.RunID)
		switch {
		case errors.Is(err, os.ErrNotExist):
			parts = append(parts, "no file changes to undo")
		case err != nil:
			return res, err
		default:
			if res.Prompt == "" && len(plan.Runs) > 0 {
				res.Prompt = plan.Runs[0].Input
			}
			if len(plan.Conflicts) > 0 {
				return res, fmt.Errorf("changed outside lovia since that message: %s (lovia rewind %s --force restores them anyway)",
					strings.Join(plan.Conflicts, ", "), req.RunID)
			}
			a, err := st.Apply(ctx, plan, false)
			if err != nil {
				return res, err
			}
			s := fmt.Sprintf("files: %d restored, %d deleted", a.Restored, a.Deleted)
			if len(a.Skipped) > 0 {
				s += "; not restored: " + strings.Join(a.Skipped, "; ")
			}
			parts = append(parts, s)
		}
	}
	if req.Conversation {
		_, n, err := app.RewindConversation(ctx, b.app.DB, req.RunID)
		if err != nil {
			return res, err
		}
		parts = append(parts, fmt.Sprintf("conversation: %d message(s) dropped", n))
	}
	res.Summary = "rewound to before " + quoteShort(res.Prompt) + ": " + strings.Join(parts, "; ")
	return res, nil
}

func quoteShort(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 40 {
		s = string(r[:39]) + "…"
	}
	return "“" + s + "”"
}
