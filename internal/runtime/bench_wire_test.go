package runtime

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/compaction"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/provider/builtin"
	pt "github.com/lovia-dev/lovia/internal/provider/providertest"
	"github.com/lovia-dev/lovia/internal/store/sqlite"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/usage"
)

// wireServer is a fake model server in kind's wire format that answers every
// request but the last (n) with one tool call and the last with a short answer. It
// reads and drops request bodies: the server's own cost stays flat, so a growing
// per-turn cost is the client's.
func wireServer(b *testing.B, kind string, n int) *httptest.Server {
	var count atomic.Int64
	buf := make([]byte, 4<<20) // one request at a time: big reads, few syscalls
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for {
			if _, err := r.Body.Read(buf); err != nil {
				break
			}
		}
		i := int(count.Add(1))
		turn := pt.Turn{Text: "done", Usage: usage.Usage{InputTokens: 10, OutputTokens: 5}, Chunk: 64}
		if i < n {
			turn = pt.Turn{Calls: []pt.Call{{ID: fmt.Sprintf("call_%d", i), Name: "noop", Args: `{}`}},
				Usage: usage.Usage{InputTokens: 10, OutputTokens: 5}, Chunk: 64}
		}
		var body []byte
		switch kind {
		case pt.KindResponses:
			body = pt.ResponsesStream(turn, i)
		case pt.KindAnthropic:
			body = pt.AnthropicStream(turn, i)
		default:
			body = pt.OpenAIStream(turn, i)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(body)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// benchWireRun runs one n-turn tool-using run through the real adapter for spec
// against a wireServer, with the default context policy (a big window: nothing is
// compacted) and the stores set by stores; it returns the turn_started timestamps.
func benchWireRun(b *testing.B, spec, kind string, n int, stores func(Options) Options) []time.Time {
	srv := wireServer(b, kind, n)
	vars := map[string]string{"OPENAI_BASE_URL": srv.URL + "/v1", "OPENAI_API_KEY": pt.APIKey,
		"ANTHROPIC_BASE_URL": srv.URL, "ANTHROPIC_API_KEY": pt.APIKey}
	reg := provider.NewRegistry(provider.Env{Getenv: func(k string) string { return vars[k] }, HTTPClient: srv.Client(),
		ContextWindows: map[string]int{spec: 1 << 20}})
	builtin.Register(reg)
	noop := fnTool("noop", func(context.Context, *tool.RunContext) (string, error) { return "ok", nil })
	a := newAgent("bench", noop)
	a.Model = spec
	stamps := make([]time.Time, 0, n)
	a.Hooks = []plugin.Hook{func(_ context.Context, ev event.Event, _ *tool.RunContext) error {
		if ev.Type == event.TurnStarted {
			stamps = append(stamps, time.Now())
		}
		return nil
	}}
	a.Limits.MaxTurns = n + 1
	o := stores(Options{Resolve: reg.Resolve, Approvals: ApprovalDenyAll})
	o.ContextPolicy = compaction.New(compaction.Config{})
	h := Start(context.Background(), a, Text("go"), o)
	for range h.Events() {
	}
	res, err := h.Result()
	if err != nil || res.Turns != n {
		b.Fatalf("%v turns=%d", err, res.Turns)
	}
	return stamps
}

// BenchmarkLongRunWire: a 1,000-turn tool-using run through each real adapter
// against a local fake server, with in-memory stores ("memory": the loop and the
// adapter alone) or the SQLite stores a real run checkpoints to ("sqlite").
// ms/turn@10-100 and ms/turn@900-1000 are the mean turn durations over those
// turn ranges; a flat run keeps the second close to the first (issue 15: within
// 1.5x). What still grows is sending the history itself (about 170 bytes a turn
// here), which no cache can avoid.
func BenchmarkLongRunWire(b *testing.B) {
	const n = 1000
	for _, k := range []struct{ spec, kind string }{
		{"openai:gpt-4.1", pt.KindOpenAI},
		{"openai-responses:o4-mini", pt.KindResponses},
		{"anthropic:claude-sonnet-4-5", pt.KindAnthropic},
	} {
		for _, st := range []string{"memory", "sqlite"} {
			b.Run(k.kind+"/"+st, func(b *testing.B) {
				var early, late time.Duration
				for i := 0; i < b.N; i++ {
					stores := func(o Options) Options { return withStores(o, memStore()) }
					if st == "sqlite" {
						db, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
						if err != nil {
							b.Fatal(err)
						}
						defer db.Close()
						stores = func(o Options) Options {
							o.Session, o.Checkpointer, o.SessionID = db.Sessions(), db.Checkpoints(), "s"
							return o
						}
					}
					ts := benchWireRun(b, k.spec, k.kind, n, stores)
					early += ts[100].Sub(ts[10])
					late += ts[n-1].Sub(ts[900])
				}
				e := float64(early.Microseconds()) / 1000 / float64(b.N*90)
				l := float64(late.Microseconds()) / 1000 / float64(b.N*(n-1-900))
				b.ReportMetric(0, "ns/op")
				b.ReportMetric(e, "ms/turn@10-100")
				b.ReportMetric(l, "ms/turn@900-1000")
				b.ReportMetric(l/e, "late/early")
			})
		}
	}
}
