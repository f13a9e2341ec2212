package e2e

// Streaming through the binary. The tests check that every output format carries the
// whole reply in one model request; the benchmarks report the figures (product
// targets: a 512 KiB streamed reply in at most 0.5 CPU-seconds, the first model
// request within 40 ms of exec, per tool-using turn at most half of Crush's CPU, peak
// RSS at most 45 MB over 100 turns). The child's CPU time comes from its rusage
// (ProcessState), so the fake server and the test, running in this process, are not
// counted.

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/provider/providertest"
)

const provBigReply = 512 << 10

// provReply is n bytes of prose.
func provReply(n int) string {
	const words = "the quick brown fox jumps over a lazy dog while streaming tokens arrive in small pieces "
	return strings.Repeat(words, n/len(words)+1)[:n]
}

// provSpeed is one measured run.
type provSpeed struct {
	cpu          time.Duration // the lovia process's user+system time
	sys          time.Duration // of which system time
	wall         time.Duration
	firstRequest time.Duration // exec to the server receiving the model request
}

// provMeasure runs lovia once in e against a Chat server streaming reply in 6-byte
// deltas.
func provMeasure(t testing.TB, e *env, reply, format string) provSpeed {
	return provMeasureKind(t, e, provKinds[0], reply, format)
}

// provMeasureKind is provMeasure against k's wire format.
func provMeasureKind(t testing.TB, e *env, k provKind, reply, format string) provSpeed {
	srv := k.serve(t, providertest.Turn{Text: reply, Chunk: 6})
	front := newTimedServer(t, srv.Config.Handler)
	pointAt(e, k.name, front.URL)
	p := provRun(e, 2*time.Minute, "run", "--model", k.name+":"+k.model, "--output", format, "say a lot")
	if p.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", p.code, p.stderr)
	}
	got := p.stdout
	switch format {
	case "stream-json":
		got = provStr(p.terminal(t, "run_completed")["final_output"])
	case "json":
		var out struct{ Output string }
		if err := json.Unmarshal([]byte(p.stdout), &out); err != nil {
			t.Fatalf("json output: %v", err)
		}
		got = out.Output
	}
	if strings.TrimSuffix(got, "\n") != reply {
		t.Fatalf("%s output: %d bytes, want the %d-byte reply", format, len(got), len(reply))
	}
	at := front.arrivals()
	if len(at) != 1 {
		t.Fatalf("%d model requests, want 1", len(at))
	}
	return provSpeed{cpu: p.cpu(), sys: p.state.SystemTime(), wall: time.Since(p.started), firstRequest: at[0].Sub(p.started)}
}

// TestStreamingWholeReply: a 512 KiB reply in 6-character deltas reaches the
// output whole, in each output format and through each wire format, from one model
// request (BenchmarkStreaming512KiB reports its cost).
func TestStreamingWholeReply(t *testing.T) {
	e := provEnv(t, providertest.NewOpenAIServer(t))
	for _, format := range []string{"text", "stream-json", "json"} {
		provMeasure(t, e, provReply(provBigReply), format)
	}
	for _, k := range provKinds[1:] {
		ke := provEnv(t, k.serve(t))
		provMeasureKind(t, ke, k, provReply(provBigReply), "text")
	}
}

// BenchmarkStreaming512KiB: CPU and wall time of the whole lovia process for a
// 512 KiB reply in 6-byte deltas, per output format (Chat Completions) and per
// wire format (text output); the home is warm (database created).
func BenchmarkStreaming512KiB(b *testing.B) {
	reply := provReply(provBigReply)
	for _, format := range []string{"text", "stream-json", "json"} {
		b.Run(format, func(b *testing.B) {
			e := provEnv(b, providertest.NewOpenAIServer(b))
			provMeasure(b, e, "ok", "text")
			var cpu, wall time.Duration
			for i := 0; i < b.N; i++ {
				m := provMeasure(b, e, reply, format)
				cpu, wall = cpu+m.cpu, wall+m.wall
			}
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "ms-cpu/op")
			b.ReportMetric(float64(wall.Milliseconds())/float64(b.N), "ms-wall/op")
		})
	}
	for _, k := range provKinds[1:] {
		b.Run(k.name, func(b *testing.B) {
			e := provEnv(b, k.serve(b))
			provMeasureKind(b, e, k, "ok", "text")
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				cpu += provMeasureKind(b, e, k, reply, "text").cpu
			}
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "ms-cpu/op")
		})
	}
}

// BenchmarkFirstRequest: exec to the fake server receiving the model request, with
// a warm home (product target: 40 ms). The metric is the median over b.N runs.
func BenchmarkFirstRequest(b *testing.B) {
	e := provEnv(b, providertest.NewOpenAIServer(b))
	cold := provMeasure(b, e, "ok", "text")
	var firsts []time.Duration
	for i := 0; i < b.N; i++ {
		firsts = append(firsts, provMeasure(b, e, "ok", "text").firstRequest)
	}
	slices.Sort(firsts)
	b.ReportMetric(float64(firsts[len(firsts)/2].Microseconds())/1e3, "ms-median")
	b.ReportMetric(float64(cold.firstRequest.Microseconds())/1e3, "ms-cold")
}
