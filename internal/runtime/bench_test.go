package runtime

import (
	"context"
	"fmt"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/compaction"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/store/sqlite"
	"github.com/lovia-dev/lovia/internal/tool"
)

// benchRun runs one run of n turns (n-1 tool-using turns with a no-op tool, then a
// final answer) with in-memory checkpoints and session, an event reader, and returns
// the turn_started timestamps.
func benchRun(b *testing.B, n int) []time.Time { return benchRunWith(b, n, nil) }

func benchRunWith(b *testing.B, n int, withStore func(Options) Options) []time.Time {
	p := newFake()
	p.noRecord = true
	p.next = func(i int, _ provider.Request) reply {
		if i < n-1 {
			return calls(mkcall(fmt.Sprintf("c%d", i), "noop", `{}`))
		}
		return say("done")
	}
	noop := fnTool("noop", func(context.Context, *tool.RunContext) (string, error) { return "ok", nil })
	a := newAgent("bench", noop)
	stamps := make([]time.Time, 0, n)
	a.Hooks = []plugin.Hook{func(_ context.Context, ev event.Event, _ *tool.RunContext) error {
		if ev.Type == event.TurnStarted {
			stamps = append(stamps, time.Now())
		}
		return nil
	}}
	a.Limits.MaxTurns = n + 1
	o := withStores(opts1(p), memStore())
	if withStore != nil {
		o = withStore(opts1(p))
	}
	h := Start(context.Background(), a, Text("go"), o)
	for range h.Events() {
	}
	res, err := h.Result()
	if err != nil || res.Turns != n {
		b.Fatalf("%v turns=%d", err, res.Turns)
	}
	return stamps
}

// BenchmarkTurnOverhead reports the loop's own cost per tool-using turn (fake
// provider, no-op tool, in-memory checkpoint after the reply and the result, events
// read). ns/turn@10 and ns/turn@1000 are the median turn durations around turn 10 and
// turn 1,000 of a 1,000-turn run: O(n) overall means the second stays close to the
// first.
func BenchmarkTurnOverhead(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("turns=%d", n), func(b *testing.B) {
			var ms0, ms1 goruntime.MemStats
			goruntime.ReadMemStats(&ms0)
			var early, late []time.Duration
			for i := 0; i < b.N; i++ {
				st := benchRun(b, n)
				if n >= 1000 {
					for j := 5; j < 25; j++ {
						early = append(early, st[j+1].Sub(st[j]))
					}
					for j := n - 22; j < n-2; j++ {
						late = append(late, st[j+1].Sub(st[j]))
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/turn")
			b.ReportMetric(0, "ns/op")
			goruntime.ReadMemStats(&ms1)
			b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(b.N*n), "allocs/turn")
			b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/float64(b.N*n), "B/turn")
			if len(early) > 0 {
				b.ReportMetric(float64(median(early)), "ns/turn@10")
				b.ReportMetric(float64(median(late)), "ns/turn@1000")
			}
		})
	}
}

func median(d []time.Duration) time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2]
}

// BenchmarkTurnSQLite is the same loop with the real SQLite checkpoint and session
// stores (two checkpoint appends per tool-using turn).
func BenchmarkTurnSQLite(b *testing.B) {
	const n = 200
	db, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var early, late []time.Duration
	for i := 0; i < b.N; i++ {
		st := benchRunWith(b, n, func(o Options) Options {
			o.Session, o.Checkpointer, o.SessionID = db.Sessions(), db.Checkpoints(), fmt.Sprintf("s%d", i)
			return o
		})
		for j := 5; j < 25; j++ {
			early = append(early, st[j+1].Sub(st[j]))
		}
		for j := n - 22; j < n-2; j++ {
			late = append(late, st[j+1].Sub(st[j]))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/turn")
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(median(early)), "ns/turn@10")
	b.ReportMetric(float64(median(late)), "ns/turn@200")
}

// BenchmarkTurnDefaultPolicy is BenchmarkTurnOverhead with the default context policy
// rendering every view (small outputs, so nothing is compacted: the steady state).
func BenchmarkTurnDefaultPolicy(b *testing.B) {
	const n = 1000
	var early, late []time.Duration
	for i := 0; i < b.N; i++ {
		st := benchRunWith(b, n, func(o Options) Options {
			o = withStores(o, memStore())
			o.ContextPolicy = compaction.New(compaction.Config{})
			return o
		})
		for j := 5; j < 25; j++ {
			early = append(early, st[j+1].Sub(st[j]))
		}
		for j := n - 22; j < n-2; j++ {
			late = append(late, st[j+1].Sub(st[j]))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/turn")
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(median(early)), "ns/turn@10")
	b.ReportMetric(float64(median(late)), "ns/turn@1000")
}
