package tool

import (
	"context"

	"github.com/lovia-dev/lovia/internal/event"
)

type progressKey struct{}

// ProgressFunc receives a running call's progress reports.
type ProgressFunc func(event.Progress)

// WithProgress returns ctx carrying report, which receives the progress of the one
// tool call ctx is given to. The run loop sets it for every call; it is safe to call
// from any goroutine, also after the call ended (reports are then dropped).
func WithProgress(ctx context.Context, report ProgressFunc) context.Context {
	return context.WithValue(ctx, progressKey{}, report)
}

// ReportProgress tells the front ends how far the calling tool is. It is a no-op
// when nobody listens. The run loop rate-limits what reaches the event stream, so a
// tool may call it as often as it likes.
func ReportProgress(ctx context.Context, p event.Progress) {
	if f, ok := ctx.Value(progressKey{}).(ProgressFunc); ok && f != nil {
		f(p)
	}
}
