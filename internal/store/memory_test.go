package store

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/lovia-dev/lovia/internal/transcript"
)

func TestMemorySessionIdempotentAppend(t *testing.T) {
	ctx := context.Background()
	m := NewMemory().Sessions
	if es, err := m.Load(ctx, "s"); err != nil || es != nil {
		t.Fatalf("new session: %v %v", es, err)
	}
	must(t, m.Append(ctx, "s", "r1", []transcript.Entry{transcript.UserInput("a")}, nil))
	must(t, m.Append(ctx, "s", "r2", []transcript.Entry{transcript.UserInput("b")}, json.RawMessage(`{"x":1}`)))
	must(t, m.Append(ctx, "s", "r1", []transcript.Entry{transcript.UserInput("dup")}, nil))
	must(t, m.Append(ctx, "other", "r1", []transcript.Entry{transcript.UserInput("c")}, nil))
	es, err := m.Load(ctx, "s")
	must(t, err)
	if len(es) != 2 || es[0].Text != "a" || es[1].Text != "b" {
		t.Fatalf("load %+v", es)
	}
	if segs := m.Segments("s"); len(segs) != 2 || segs[1].RunID != "r2" || string(segs[1].Meta) != `{"x":1}` {
		t.Fatalf("segments %+v", segs)
	}
	if err := m.Append(ctx, "", "r", nil, nil); err == nil {
		t.Fatal("empty session id accepted")
	}
}

func TestMemoryDeepCopies(t *testing.T) {
	ctx := context.Background()
	mem := NewMemory()
	in := []transcript.Entry{transcript.ToolCall("c1", "t", json.RawMessage(`{"a":1}`))}
	must(t, mem.Sessions.Append(ctx, "s", "r", in, nil))
	head := Head{Status: StatusRunning, ContextState: json.RawMessage(`{"k":1}`)}
	must(t, mem.Checkpoints.Append(ctx, "r", in, head))
	in[0].Args[2] = 'X'
	head.ContextState[2] = 'X'

	es, _ := mem.Sessions.Load(ctx, "s")
	snap, err := mem.Checkpoints.Load(ctx, "r")
	must(t, err)
	if string(es[0].Args) != `{"a":1}` || string(snap.Entries[0].Args) != `{"a":1}` || string(snap.Head.ContextState) != `{"k":1}` {
		t.Fatalf("caller mutation leaked into the store: %s %s %s", es[0].Args, snap.Entries[0].Args, snap.Head.ContextState)
	}
	snap.Entries[0].Args[2] = 'Y'
	snap.Head.ContextState[2] = 'Y'
	again, _ := mem.Checkpoints.Load(ctx, "r")
	if string(again.Entries[0].Args) != `{"a":1}` || string(again.Head.ContextState) != `{"k":1}` {
		t.Fatal("mutating a loaded snapshot changed the store")
	}
}

func TestMemoryCheckpointAppendAndReset(t *testing.T) {
	ctx := context.Background()
	c := NewMemory().Checkpoints
	if _, err := c.Load(ctx, "r"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown run: %v", err)
	}
	must(t, c.Append(ctx, "r", []transcript.Entry{transcript.UserInput("a")}, Head{Status: StatusRunning, Turns: 0}))
	must(t, c.Append(ctx, "r", nil, Head{Status: StatusRunning, Turns: 1}))
	must(t, c.Append(ctx, "r", []transcript.Entry{transcript.AssistantText("b")}, Head{Status: StatusCompleted, Turns: 1,
		Result: &RunRecord{Output: "b"}}))
	snap, err := c.Load(ctx, "r")
	must(t, err)
	if len(snap.Entries) != 2 || snap.Head.Status != StatusCompleted || snap.Head.Result.Output != "b" || snap.Head.Turns != 1 {
		t.Fatalf("snapshot %+v", snap)
	}
	if c.Appends("r") != 3 {
		t.Fatalf("appends %d", c.Appends("r"))
	}
	must(t, c.Reset(ctx, "r"))
	if _, err := c.Load(ctx, "r"); !errors.Is(err, ErrNotFound) {
		t.Fatal("reset kept the run")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
