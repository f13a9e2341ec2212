package runtime

import (
	"context"
	"sync"
	"time"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/tool"
)

// progressInterval is the least time between two tool_call_progress events of one
// call: a chatty tool (an MCP server may send thousands of notifications) must not
// flood the event stream, the front ends or a serve client.
const progressInterval = 100 * time.Millisecond

// progressGate turns one call's progress reports into tool_call_progress events: the
// first at once, then at most one per progressInterval, carrying the latest report
// (the ones in between are coalesced). After stop nothing more is emitted, so no
// progress follows the call's completion event. Progress lives in events only; it
// is never part of the transcript.
type progressGate struct {
	mu      sync.Mutex
	last    time.Time
	pending *event.Progress
	timer   *time.Timer
	closed  bool
	emit    func(event.Progress)
}

func (l *loop) newProgressGate(ctx context.Context, c *call) *progressGate {
	turn, callID, name := l.turns, c.entry.CallID, c.entry.Name
	scrub := l.opts.Scrub
	ectx := context.WithoutCancel(ctx)
	return &progressGate{emit: func(p event.Progress) {
		if scrub != nil {
			p.Message = scrub(p.Message)
		}
		p = p.Clean() // again: scrubbing may lengthen the message
		l.emit(ectx, event.Event{Type: event.ToolCallProgress, Turn: turn, CallID: callID, Name: name, Progress: &p})
	}}
}

// report is the call's tool.ProgressFunc.
func (g *progressGate) report(p event.Progress) {
	p = p.Clean()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return
	}
	if g.timer == nil {
		since := time.Since(g.last)
		if since >= progressInterval {
			g.last = time.Now()
			g.emit(p)
			return
		}
		g.timer = time.AfterFunc(progressInterval-since, g.flush)
	}
	g.pending = &p
}

func (g *progressGate) flush() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.timer = nil
	if g.closed || g.pending == nil {
		return
	}
	g.last = time.Now()
	p := *g.pending
	g.pending = nil
	g.emit(p)
}

// stop ends the gate: a report still pending is dropped (the completion supersedes it).
func (g *progressGate) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	g.pending = nil
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
}

// withProgress gives ctx the gate's report function for the tool.
func (g *progressGate) withProgress(ctx context.Context) context.Context {
	return tool.WithProgress(ctx, g.report)
}
