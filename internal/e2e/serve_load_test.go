package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestServeLoad: 20 concurrent runs stream to 50 SSE clients (2–3 per run); every
// client receives every event of its run exactly once, in order. It reports the
// delivery rate, the event latency (event time to receipt) and the server's peak
// RSS; no figure is asserted (the machine is shared).
func TestServeLoad(t *testing.T) {
	const runs, clients = 20, 50
	e := serveEnv(t)
	long := strings.Repeat("lorem ipsum dolor sit amet, ", 300) // ~8 KB: ~530 deltas a turn
	e.write("load.yaml", fmt.Sprintf(`turns:
  - delay: 200ms
    text: %q
    tool_calls:
      - name: read_file
        args: {path: load.yaml}
  - text: %q
    tool_calls:
      - name: read_file
        args: {path: load.yaml}
  - text: %q
`, long, long, long))
	sp := startServe(t, e, "-m", "script:load.yaml")

	began := time.Now()
	ids := make([]string, runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var st started
			sp.must(http.StatusCreated, "POST", "/api/runs", map[string]any{"prompt": fmt.Sprintf("load %d", i)}, &st)
			ids[i] = st.RunID
		}()
	}
	wg.Wait()

	type got struct {
		run  string
		seqs []int
		lat  []time.Duration
		last string
		err  error
	}
	results := make([]got, clients)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := &results[c]
			g.run = ids[c%runs]
			req, _ := http.NewRequest("GET", sp.base+"/api/runs/"+g.run+"/events", nil)
			req.Header.Set("Authorization", "Bearer "+sp.token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				g.err = err
				return
			}
			defer resp.Body.Close()
			conn := &sseConn{t: t, resp: resp, rd: bufio.NewReaderSize(resp.Body, 64<<10)}
			for {
				ev, err := conn.next()
				if err == io.EOF {
					return
				}
				if err != nil {
					g.err = err
					return
				}
				now := time.Now()
				if ts, err := time.Parse(time.RFC3339Nano, provStr(ev.ev["time"])); err == nil {
					g.lat = append(g.lat, now.Sub(ts))
				}
				g.seqs = append(g.seqs, ev.seq())
				g.last = ev.typ()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(began)

	totals := map[string]int{}
	for _, id := range ids {
		var info struct {
			Status string `json:"status"`
			Events int    `json:"events"`
		}
		sp.must(200, "GET", "/api/runs/"+id, nil, &info)
		if info.Status != "completed" {
			t.Errorf("run %s: %s", id, info.Status)
		}
		totals[id] = info.Events
	}
	var lats []time.Duration
	delivered := 0
	for c, g := range results {
		if g.err != nil {
			t.Fatalf("client %d: %v", c, g.err)
		}
		if g.last != "run_completed" || len(g.seqs) != totals[g.run] {
			t.Fatalf("client %d of %s: %d events ending in %s, the run has %d", c, g.run, len(g.seqs), g.last, totals[g.run])
		}
		for i, s := range g.seqs {
			if s != i+1 {
				t.Fatalf("client %d: event %d has seq %d (lost, repeated or out of order)", c, i, s)
			}
		}
		delivered += len(g.seqs)
		lats = append(lats, g.lat...)
	}
	slices.Sort(lats)
	pct := func(p float64) time.Duration { return lats[min(len(lats)-1, int(float64(len(lats))*p))] }
	produced := 0
	for _, n := range totals {
		produced += n
	}
	rss := "?"
	if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", sp.cmd.Process.Pid)); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "VmHWM:") || strings.HasPrefix(line, "VmRSS:") {
				rss += " " + strings.Join(strings.Fields(line), " ")
			}
		}
	}
	cpu := ""
	if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", sp.cmd.Process.Pid)); err == nil {
		// utime and stime are fields 14 and 15 (after the parenthesised name), in ticks.
		if f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:])); len(f) > 13 {
			var ut, st int
			fmt.Sscan(f[11], &ut)
			fmt.Sscan(f[12], &st)
			cpu = fmt.Sprintf(", CPU %.2fs", float64(ut+st)/100)
		}
	}
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		cpu += ", load average " + strings.Fields(string(data))[0]
	}
	report := fmt.Sprintf("lovia serve load: %d runs, %d SSE clients, %d events produced, %d delivered in %v: %.0f events/s delivered; latency p50 %v p99 %v max %v; server%s%s",
		runs, clients, produced, delivered, elapsed.Round(time.Millisecond), float64(delivered)/elapsed.Seconds(),
		pct(0.50).Round(time.Microsecond), pct(0.99).Round(time.Microsecond), lats[len(lats)-1].Round(time.Microsecond), strings.TrimPrefix(rss, "?"), cpu)
	t.Log(report)
	if out := os.Getenv("SERVE_LOAD_REPORT"); out != "" {
		_ = os.WriteFile(out, []byte(report+"\n"), 0o644)
	}
	sp.stop(syscall.SIGTERM)
}
