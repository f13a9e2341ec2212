package tui

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/agent"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/mailbox"
	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/provider/script"
	"github.com/lovia-dev/lovia/internal/runtime"
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// runtimeBackend starts real runs of the run loop with a scripted model and a tool
// that asks for approval, so the TUI is tested against the real event stream.
type runtimeBackend struct {
	t      *testing.T
	prov   *script.Provider
	mem    *store.Memory
	agent  *agent.Agent
	handle *runtime.Handle
}

type deployArgs struct {
	Target string `json:"target" jsonschema:"description=where"`
}

func newRuntimeBackend(t *testing.T, yaml string) *runtimeBackend {
	s, err := script.Parse("chat.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	deploy := tool.New("deploy", "deploy the app", func(_ context.Context, _ *tool.RunContext, a deployArgs) (string, error) {
		return "deployed to " + a.Target, nil
	}, tool.ApprovalWhen(func(_ context.Context, _ *tool.RunContext, args json.RawMessage) (*event.Approval, error) {
		return &event.Approval{Kind: "tool", Summary: "deploy " + string(args)}, nil
	}))
	return &runtimeBackend{t: t, prov: script.New("chat.yaml", s), mem: store.NewMemory(),
		agent: &agent.Agent{Name: "coder", Model: "script:chat.yaml", Tools: []tool.Tool{deploy}}}
}

func (b *runtimeBackend) Start(ctx context.Context, req StartRequest) (Handle, error) {
	opts := runtime.Options{
		Resolve:      func(context.Context, string) (provider.Provider, error) { return b.prov, nil },
		Session:      b.mem.Sessions,
		SessionID:    req.SessionID,
		Checkpointer: b.mem.Checkpoints,
		Approvals:    runtime.ApprovalInteractive,
	}
	if req.ResumeRunID != "" {
		b.handle = runtime.Resume(ctx, b.agent, req.ResumeRunID, opts)
	} else {
		b.handle = runtime.Start(ctx, b.agent, runtime.Text(req.Prompt), opts)
	}
	return b.handle, nil
}
func (b *runtimeBackend) Sessions(context.Context) ([]SessionInfo, error) { return nil, nil }
func (b *runtimeBackend) History(ctx context.Context, id string) ([]transcript.Entry, error) {
	return b.mem.Sessions.Load(ctx, id)
}
func (b *runtimeBackend) Models() []string         { return nil }
func (b *runtimeBackend) ContextWindow(string) int { return 128000 }

// pumpUntil feeds the live run's events to the model until cond holds.
func pumpUntil(t *testing.T, h *harness, b *runtimeBackend, cond func() bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	ch := b.handle.Events()
	for !cond() {
		select {
		case e, ok := <-ch:
			if !ok {
				if !cond() {
					t.Fatalf("run ended before the condition held; view:\n%s\nscrollback:\n%s", h.view(), h.scrollback())
				}
				return
			}
			h.send(eventsMsg{run: h.m.run, evs: []event.Event{e}})
		case <-deadline:
			t.Fatalf("timed out; view:\n%s\nscrollback:\n%s", h.view(), h.scrollback())
		}
	}
}

func TestAgainstRunLoop(t *testing.T) {
	b := newRuntimeBackend(t, `turns:
  - text: "I will deploy now."
    tool_calls:
      - name: deploy
        args: {target: staging}
  - text: "Deployed, and noted: **tests first**."
`)
	h := newHarness(t, 100, 30)
	h.m.backend = b
	h.typeText("deploy it")
	h.enter()
	if h.m.run == nil {
		t.Fatal("run not started")
	}
	pumpUntil(t, h, b, func() bool { return len(h.m.approvals) > 0 })
	if v := h.view(); !strings.Contains(v, "Allow deploy?") || !strings.Contains(v, `deploy {"target":"staging"}`) {
		t.Fatalf("approval not shown:\n%s", v)
	}
	if !strings.Contains(h.scrollback(), "I will deploy now.") {
		t.Fatalf("text before the call not printed:\n%s", h.scrollback())
	}
	// Steering is accepted while the approval waits; it lands at the next turn.
	h.m.run.Mailbox().Push(mailboxMsg("run the tests first"))
	h.m.queued = append(h.m.queued, queuedMsg{id: "x", text: "run the tests first", pushed: true})
	h.choose(1)
	pumpUntil(t, h, b, func() bool { return h.m.run == nil })
	sb := h.scrollback()
	for _, want := range []string{"✓ deploy staging", "deployed to staging", "› run the tests first  (steering)", "Deployed, and noted: tests first."} {
		if !strings.Contains(sb, want) {
			t.Errorf("scrollback lacks %q:\n%s", want, sb)
		}
	}
	res, err := b.handle.Result()
	if err != nil || res.Status != store.StatusCompleted {
		t.Fatalf("result %+v, %v", res, err)
	}
	if h.m.SessionID() == "" || h.m.SessionID() != res.SessionID {
		t.Fatalf("session %q, run's %q", h.m.SessionID(), res.SessionID)
	}
}

func TestEscInterruptsRealRun(t *testing.T) {
	b := newRuntimeBackend(t, `turns:
  - text: "slow start"
    delay: 30s
  - text: "never"
`)
	h := newHarness(t, 100, 30)
	h.m.backend = b
	h.typeText("go slow")
	h.enter()
	pumpUntil(t, h, b, func() bool { return h.m.turn == 1 })
	h.esc()
	pumpUntil(t, h, b, func() bool { return h.m.run == nil })
	_, err := b.handle.Result()
	if errs.KindOf(err) != errs.KindCancelled {
		t.Fatalf("run error = %v, want cancelled", err)
	}
	if !strings.Contains(h.scrollback(), "interrupted · /resume continues run "+b.handle.RunID()) {
		t.Fatalf("interruption not reported:\n%s", h.scrollback())
	}
	snap, lerr := b.mem.Checkpoints.Load(context.Background(), b.handle.RunID())
	if lerr != nil || snap.Head.Status != store.StatusInterrupted {
		t.Fatalf("checkpoint not left resumable: %+v %v", snap, lerr)
	}
}

func mailboxMsg(text string) mailbox.Message {
	return mailbox.Message{ID: "x", Text: text, Source: "user"}
}
