package runtime

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/lovia-dev/lovia/internal/agent"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/provider/script"
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/store/sqlite"
	"github.com/lovia-dev/lovia/internal/tool"
)

type echoArgs struct {
	Text string `json:"text"`
}

// TestScriptAndSQLiteCrashResume runs the real scripted provider against the real
// SQLite stores: the run is interrupted inside its tool call, the database is closed
// (the process "dies"), and a fresh process resumes it to completion.
func TestScriptAndSQLiteCrashResume(t *testing.T) {
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "lovia.db")
	reg := provider.NewRegistry(provider.Env{Dir: "testdata"})
	script.Register(reg)

	var block atomic.Bool
	block.Store(true)
	var runs atomic.Int32
	blocked := make(chan struct{}, 1)
	echo := tool.New("echo", "echoes text", func(ctx context.Context, _ *tool.RunContext, a echoArgs) (string, error) {
		runs.Add(1)
		if block.Load() {
			blocked <- struct{}{}
			<-ctx.Done()
			return "", ctx.Err()
		}
		return a.Text, nil
	})
	a := &agent.Agent{Name: "echoer", Model: "script:echo.yaml", Tools: []tool.Tool{echo}}

	db, err := sqlite.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Resolve: reg.Resolve, Session: db.Sessions(), Checkpointer: db.Checkpoints(), SessionID: "s1", RunID: "run-1"}
	h := Start(ctx, a, Text("echo hello"), o)
	for ev := range h.Events() {
		if ev.Type == event.ToolCallStarted {
			go func() {
				<-blocked
				h.Cancel(nil)
			}()
		}
	}
	if _, err := h.Result(); errs.KindOf(err) != errs.KindCancelled {
		t.Fatalf("first run: %v", err)
	}
	_ = db.Close()

	db, err = sqlite.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	snap, err := db.Checkpoints().Load(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if snap.Head.Status != store.StatusInterrupted || len(snap.Entries) != 3 {
		t.Fatalf("after crash: %s %s", snap.Head.Status, shape(snap.Entries))
	}
	block.Store(false)
	reg2 := provider.NewRegistry(provider.Env{Dir: "testdata"})
	script.Register(reg2)
	res, err := Resume(ctx, a, "run-1", Options{Resolve: reg2.Resolve, Session: db.Sessions(), Checkpointer: db.Checkpoints()}).Result()
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "It said hello." || res.Turns != 2 || res.SessionID != "s1" || runs.Load() != 2 {
		t.Fatalf("resumed %+v (tool ran %d times)", res, runs.Load())
	}
	hist, err := db.Sessions().Load(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if got := shape(hist); got != "user:echo hello text:Let me echo that. call:call_1:echo result:call_1:hello text:It said hello." {
		t.Fatalf("session %s", got)
	}
	// Re-issuing the run id replays it.
	again, err := Start(ctx, a, Text("echo hello"), Options{Resolve: reg2.Resolve, Session: db.Sessions(), Checkpointer: db.Checkpoints(), RunID: "run-1"}).Result()
	if err != nil || !again.Replayed || again.Output != "It said hello." {
		t.Fatalf("replay %v %+v", err, again)
	}
	// Restart on SQLite starts over.
	ro := Options{Resolve: reg2.Resolve, Checkpointer: db.Checkpoints(), RunID: "run-1", IfRunExists: RestartRun}
	r3, err := Start(ctx, a, Text("echo hello"), ro).Result()
	if err != nil || r3.Replayed || r3.Turns != 2 {
		t.Fatalf("restart %v %+v", err, r3)
	}
}

// TestNewRunInterruptedInSetup: a new run (generated id, new session) interrupted
// while its plugins are set up stops as interrupted before it is recorded, though
// neither its checkpoint nor its session is read first.
func TestNewRunInterruptedInSetup(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "lovia.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	reg := provider.NewRegistry(provider.Env{Dir: "testdata"})
	script.Register(reg)
	started := make(chan struct{})
	slow := plugin.Func{ID: "slow", Fn: func(ctx context.Context, _ *tool.RunContext) (*plugin.Contribution, error) {
		close(started)
		<-ctx.Done()
		return &plugin.Contribution{}, nil // like a hook that ignores its failure
	}}
	a := &agent.Agent{Name: "a", Model: "script:echo.yaml", Plugins: []plugin.Plugin{slow}}
	h := Start(ctx, a, Text("hi"), Options{Resolve: reg.Resolve, Session: db.Sessions(), Checkpointer: db.Checkpoints(),
		SessionID: "ses_new", NewSession: true})
	<-started
	h.Cancel(errs.New(errs.KindCancelled, "interrupted", ""))
	if _, err := h.Result(); errs.KindOf(err) != errs.KindCancelled {
		t.Fatalf("err %v, want interrupted", err)
	}
	if _, err := db.Checkpoints().Load(ctx, h.RunID()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("run recorded: %v", err)
	}
}
