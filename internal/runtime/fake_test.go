package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/agent"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/mailbox"
	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

// reply is one canned model reply of the fake provider.
type reply struct {
	text      string
	reasoning string
	calls     []fcall
	usage     usage.Usage
	// err ends the stream with this error (after discardText, if any, was streamed).
	err   error
	panic string
	// discardText is streamed then discarded before the real reply (a retried stream).
	discardText string
	// block waits for ctx to end before replying (cancellation tests); blocked, when
	// set, is closed as it starts waiting.
	block   bool
	blocked chan struct{}
}

type fcall struct {
	id, name, args string
}

func mkcall(id, name, args string) fcall { return fcall{id, name, args} }

func say(text string) reply {
	return reply{text: text, usage: usage.Usage{InputTokens: 10, OutputTokens: 5}}
}

func calls(cs ...fcall) reply {
	return reply{calls: cs, usage: usage.Usage{InputTokens: 10, OutputTokens: 5}}
}

// fakeProvider replays canned replies in order and records every request it got: the
// "recorded view" tests assert on.
type fakeProvider struct {
	mu      sync.Mutex
	replies []reply
	reqs    []provider.Request
	info    provider.Info
	// next, when set, produces replies instead of the list (benchmarks).
	next func(n int, req provider.Request) reply
	// keepReqs false (benchmarks) records nothing.
	noRecord bool
	n        int
}

func newFake(replies ...reply) *fakeProvider {
	return &fakeProvider{replies: replies, info: provider.Info{Provider: "fake", Model: "m", ContextWindow: 100000}}
}

func (f *fakeProvider) Info() provider.Info { return f.info }

func (f *fakeProvider) requests() []provider.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

func (f *fakeProvider) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Delta, error] {
	f.mu.Lock()
	n := f.n
	f.n++
	if !f.noRecord {
		r := req
		r.Entries = make([]transcript.Entry, len(req.Entries))
		for i, e := range req.Entries {
			r.Entries[i] = e.Clone()
		}
		f.reqs = append(f.reqs, r)
	}
	var r reply
	switch {
	case f.next != nil:
		r = f.next(n, req)
	case n < len(f.replies):
		r = f.replies[n]
	default:
		r = reply{err: fmt.Errorf("fake provider: script exhausted after %d replies", len(f.replies))}
	}
	f.mu.Unlock()
	return func(yield func(provider.Delta, error) bool) {
		if r.panic != "" {
			panic(r.panic)
		}
		if r.block {
			// Text before the block streams first (a reply cut off mid-way).
			if r.text != "" && !yield(provider.Delta{Kind: provider.DeltaText, Text: r.text}, nil) {
				return
			}
			if r.blocked != nil {
				close(r.blocked)
			}
			<-ctx.Done()
			yield(provider.Delta{}, ctx.Err())
			return
		}
		if r.discardText != "" {
			if !yield(provider.Delta{Kind: provider.DeltaText, Text: r.discardText}, nil) {
				return
			}
			if !yield(provider.Delta{Kind: provider.DeltaDiscard, Text: "retrying after a dropped connection"}, nil) {
				return
			}
		}
		if r.err != nil {
			yield(provider.Delta{}, r.err)
			return
		}
		if r.reasoning != "" {
			if !yield(provider.Delta{Kind: provider.DeltaReasoning, Text: r.reasoning}, nil) {
				return
			}
		}
		// Stream the text in two pieces, like a real provider.
		if r.text != "" {
			h := len(r.text) / 2
			for _, p := range []string{r.text[:h], r.text[h:]} {
				if p != "" && !yield(provider.Delta{Kind: provider.DeltaText, Text: p}, nil) {
					return
				}
			}
		}
		if r.reasoning != "" {
			e := transcript.Reasoning(r.reasoning)
			if !yield(provider.Delta{Kind: provider.DeltaEntry, Entry: &e}, nil) {
				return
			}
		}
		if r.text != "" {
			e := transcript.AssistantText(r.text)
			if !yield(provider.Delta{Kind: provider.DeltaEntry, Entry: &e}, nil) {
				return
			}
		}
		for _, c := range r.calls {
			e := transcript.ToolCall(c.id, c.name, json.RawMessage(c.args))
			if !yield(provider.Delta{Kind: provider.DeltaEntry, Entry: &e}, nil) {
				return
			}
		}
		u := r.usage
		if !yield(provider.Delta{Kind: provider.DeltaUsage, Usage: &u}, nil) {
			return
		}
		yield(provider.Delta{Kind: provider.DeltaFinish, FinishReason: "stop"}, nil)
	}
}

// resolver maps model names to fakes.
func resolver(m map[string]*fakeProvider) func(context.Context, string) (provider.Provider, error) {
	return func(_ context.Context, model string) (provider.Provider, error) {
		p, ok := m[model]
		if !ok {
			return nil, errors.New("unknown model " + model)
		}
		return p, nil
	}
}

func opts1(p *fakeProvider) Options {
	return Options{Resolve: resolver(map[string]*fakeProvider{"fake:m": p}), Approvals: ApprovalDenyAll}
}

func newAgent(name string, tools ...tool.Tool) *agent.Agent {
	return &agent.Agent{Name: name, Instructions: "You are " + name + ".", Model: "fake:m", Tools: tools}
}

// collect runs to the end, returning every event in order.
func collect(t *testing.T, h *Handle) (*Result, error, []event.Event) {
	t.Helper()
	var evs []event.Event
	timeout := time.After(20 * time.Second)
	ch := h.Events()
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				res, err := h.Result()
				checkStream(t, evs)
				return res, err, evs
			}
			evs = append(evs, ev)
		case <-timeout:
			t.Fatalf("run did not end; events so far: %v", types(evs))
		}
	}
}

// checkStream asserts the stream contract: seq strictly increasing from 1, exactly one
// terminal event, and it is the last.
func checkStream(t *testing.T, evs []event.Event) {
	t.Helper()
	if len(evs) == 0 {
		t.Fatal("empty event stream")
	}
	terminals := 0
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d (%s) has seq %d", i, ev.Type, ev.Seq)
		}
		if ev.Type.Terminal() {
			terminals++
		}
	}
	if terminals != 1 || !evs[len(evs)-1].Type.Terminal() {
		t.Fatalf("want exactly one terminal event, last; got %v", types(evs))
	}
}

func types(evs []event.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = string(e.Type)
	}
	return out
}

func ofType(evs []event.Event, t event.Type) []event.Event {
	var out []event.Event
	for _, e := range evs {
		if e.Type == t {
			out = append(out, e)
		}
	}
	return out
}

// shape renders entries compactly: "user:hi call:c1:add result:c1:5".
func shape(es []transcript.Entry) string {
	var parts []string
	for _, e := range es {
		switch e.Type {
		case transcript.TypeInput:
			parts = append(parts, e.Role+":"+e.Text)
		case transcript.TypeAssistantText:
			parts = append(parts, "text:"+e.Text)
		case transcript.TypeReasoning:
			parts = append(parts, "reasoning:"+e.Text)
		case transcript.TypeToolCall:
			parts = append(parts, "call:"+e.CallID+":"+e.Name)
		case transcript.TypeToolResult:
			s := "result:" + e.CallID + ":" + e.Text
			if e.IsError {
				s = "error" + s
			}
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " ")
}

type addArgs struct {
	A int `json:"a" jsonschema:"description=first"`
	B int `json:"b" jsonschema:"description=second"`
}

func addTool() tool.Tool {
	return tool.New("add", "adds two integers", func(_ context.Context, _ *tool.RunContext, a addArgs) (string, error) {
		return fmt.Sprint(a.A + a.B), nil
	})
}

type noArgs struct{}

// fnTool builds a tool with no arguments from fn.
func fnTool(name string, fn func(ctx context.Context, rc *tool.RunContext) (string, error), opts ...tool.Option) tool.Tool {
	return tool.New(name, name, func(ctx context.Context, rc *tool.RunContext, _ noArgs) (string, error) {
		return fn(ctx, rc)
	}, opts...)
}

func memStore() *store.Memory { return store.NewMemory() }

func withStores(o Options, m *store.Memory) Options {
	o.Session, o.Checkpointer = m.Sessions, m.Checkpoints
	return o
}

func mailboxMsg(s string) mailbox.Message { return mailbox.Message{Text: s, Source: "user"} }
