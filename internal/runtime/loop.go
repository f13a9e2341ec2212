package runtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"github.com/lovia-dev/lovia/internal/agent"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// loop is a placeholder while the full loop lands; it fails every run clearly.
type loop struct {
	h         *Handle
	sessionID string
}

func newLoop(h *Handle, a *agent.Agent, input []transcript.Entry, opts Options) *loop {
	sid := opts.SessionID
	if sid == "" {
		sid = newID("ses_")
	}
	return &loop{h: h, sessionID: sid}
}

func (l *loop) run(ctx context.Context) {
	err := errs.New(errs.KindInternal, "run loop not implemented yet", "")
	l.h.events.push(event.Event{Type: event.RunFailed, Seq: 1, RunID: l.h.runID, Status: string(store.StatusFailed), Error: errorEvent(err)})
	l.h.events.close()
	l.h.result, l.h.err = &Result{RunID: l.h.runID, SessionID: l.sessionID, Status: store.StatusFailed}, err
	close(l.h.done)
}

// AgentTool exposes agent a as the tool "ask_<name>".
func AgentTool(a *agent.Agent, description string, opts Options) tool.Tool {
	return &tool.FuncTool{S: tool.Spec{Name: "ask_" + a.Name, Description: description}}
}

func newID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
