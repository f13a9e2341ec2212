//go:build linux

package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lovia-dev/lovia/internal/provider/providertest"
)

// dropPageCache asks the kernel to drop the clean cached pages of path (those not
// mapped by a running process).
func dropPageCache(tb testing.TB, path string) {
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		tb.Fatal(err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		tb.Fatal(err)
	}
}

// hundredTurns is a 100-turn tool-using session against a fake Chat Completions
// server: each turn streams a short text and one tool call (reads, searches,
// listings, a shell command, a new file), then the model answers.
func hundredTurns(e *env) []providertest.Turn {
	for i := range 20 {
		e.write(fmt.Sprintf("pkg%d/file%d.go", i%5, i), fmt.Sprintf("package pkg%d\n\n// F%d does one thing.\nfunc F%d() int { return %d }\n", i%5, i, i, i))
	}
	// The first turn answers the warm-up run.
	turns := []providertest.Turn{{Text: "ok"}}
	for i := range 100 {
		var c providertest.Call
		switch i % 5 {
		case 0:
			c = providertest.Call{Name: "read_file", Args: fmt.Sprintf(`{"path":"pkg%d/file%d.go"}`, i%20%5, i%20)}
		case 1:
			c = providertest.Call{Name: "grep_files", Args: `{"pattern":"func F\\d+"}`}
		case 2:
			c = providertest.Call{Name: "list_files", Args: `{"path":"."}`}
		case 3:
			c = providertest.Call{Name: "shell", Args: `{"command":"echo step"}`}
		case 4:
			c = providertest.Call{Name: "write_file", Args: fmt.Sprintf(`{"path":"out/n%d.txt","content":"note %d\n"}`, i, i)}
		}
		c.ID = fmt.Sprintf("call_%d", i)
		turns = append(turns, providertest.Turn{Text: fmt.Sprintf("Step %d: looking at the code.", i), Calls: []providertest.Call{c}})
	}
	return append(turns, providertest.Turn{Text: "All done."})
}

// BenchmarkHundredTurns: the whole lovia process over a 100-turn tool-using run
// (warm home): CPU per turn, peak RSS and wall time. Product targets: at most half
// of Crush's CPU per turn on the same run (Crush: 0.41 CPU-s for the whole process),
// peak RSS at most 45 MB.
func BenchmarkHundredTurns(b *testing.B) {
	var cpu, wall time.Duration
	var rss int64
	for i := 0; i < b.N; i++ {
		e := newEnv(b)
		srv := providertest.NewOpenAIServer(b, hundredTurns(e)...)
		e.vars = append(e.vars, "HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9", "NO_PROXY=127.0.0.1,localhost")
		for k, v := range srv.EnvVars() {
			e.vars = append(e.vars, k+"="+v)
		}
		// The binary as installed: read from disk, not left in the page cache by the
		// linker in large folios that would count whole in the RSS (docs/performance.md).
		dropPageCache(b, bin)
		// Warm the home (database created, migrations run) with a one-turn run.
		if w := provRun(e, time.Minute, "run", "--model", provKinds[0].name+":"+provKinds[0].model, "--output", "text", "hello"); w.code != 0 {
			b.Fatalf("warm-up: exit %d\n%s", w.code, w.stderr)
		}
		// LOVIA_CPUPROFILE / LOVIA_MEMPROFILE in the benchmark's environment profile
		// the measured run (not the warm-up).
		for _, k := range []string{"LOVIA_CPUPROFILE", "LOVIA_MEMPROFILE"} {
			if v := os.Getenv(k); v != "" {
				e.vars = append(e.vars, k+"="+v)
			}
		}
		p := provRun(e, 5*time.Minute, "run", "--approve", "all", "--max-turns", "200", "--model", provKinds[0].name+":"+provKinds[0].model, "--output", "text", "work through the steps")
		if p.code != 0 || !strings.Contains(p.stdout, "All done.") {
			b.Fatalf("exit %d\nstdout: %s\nstderr: %s", p.code, provTail(p.stdout, 2000), provTail(p.stderr, 2000))
		}
		cpu += p.cpu()
		wall += time.Since(p.started)
		rss = max(rss, maxRSS(p))
	}
	b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N*100), "ms-cpu/turn")
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "ms-cpu/run")
	b.ReportMetric(float64(wall.Milliseconds())/float64(b.N), "ms-wall/run")
	b.ReportMetric(float64(rss)/1e6, "MB-peak-rss")
}
