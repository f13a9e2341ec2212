package headless

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/event"
)

type lockedBuf struct {
	mu    sync.Mutex
	b     bytes.Buffer
	n     int           // writes
	wrote chan struct{} // signalled (without blocking) after each write
}

func newLockedBuf() *lockedBuf { return &lockedBuf{wrote: make(chan struct{}, 1)} }

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	n, err := l.b.Write(p)
	select {
	case l.wrote <- struct{}{}:
	default:
	}
	return n, err
}

func (l *lockedBuf) lines() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), "\n")
}

// Deltas are batched into few writes, yet none waits long, and every other event is
// on the wire when Event returns.
func TestStreamWriterFlushing(t *testing.T) {
	out := newLockedBuf()
	w := New(StreamJSON, out, nil, Options{})
	if err := w.Event(event.Event{Type: event.TurnStarted, Turn: 1}); err != nil {
		t.Fatal(err)
	}
	if out.lines() != 1 {
		t.Fatal("turn_started not flushed at once")
	}
	for i := 0; i < 1000; i++ {
		if err := w.Event(event.Event{Type: event.TextDelta, Text: "abcdef"}); err != nil {
			t.Fatal(err)
		}
	}
	// The pending deltas go out on the writer's own timer: wait for the writes
	// (the deadline only stops a test that would otherwise hang).
	giveUp := time.After(30 * time.Second)
	for out.lines() < 1001 {
		select {
		case <-out.wrote:
		case <-giveUp:
			t.Fatalf("a pending delta was never flushed: %d lines", out.lines())
		}
	}
	if got := out.lines(); got != 1001 {
		t.Fatalf("%d lines, want 1001", got)
	}
	if out.n > 50 {
		t.Fatalf("%d writes for 1001 lines: deltas are not batched", out.n)
	}
	if err := w.Event(event.Event{Type: event.TextDelta, Text: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Event(event.Event{Type: event.RunCompleted, Status: "completed"}); err != nil {
		t.Fatal(err)
	}
	if out.lines() != 1003 {
		t.Fatalf("terminal event not flushed with the delta before it: %d lines", out.lines())
	}
}
