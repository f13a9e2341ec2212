package tui

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/usage"
)

// session builds a model that has gone through n transcript messages (user prompts,
// markdown replies with code, tool calls with output) and is now streaming a reply.
func session(tb testing.TB, n int) *harness {
	h := newHarness(tb, 100, 30)
	h.m.print = func(string) tea.Cmd { return nil } // the terminal keeps scrollback, not us
	reply := "Here is the change:\n\n```go\nfunc add(a, b int) int {\n\treturn a + b\n}\n```\n\nIt keeps the **API** stable and adds a `test`.\n"
	count := 0
	for count < n {
		h.typeText(fmt.Sprintf("request %d", count))
		h.enter()
		count++
		for i := 0; i < 8 && count < n; i++ {
			h.events(textDelta(reply[:40]), textDelta(reply[40:]))
			mc := ev(event.MessageCompleted)
			mc.Text = reply
			mc.Usage = &usage.Usage{InputTokens: 1000 + count, OutputTokens: 50}
			id := fmt.Sprintf("c%d", count)
			h.events(mc, toolStarted(id, "shell", `{"command":"go test ./..."}`),
				toolDone(id, "shell", "ok  pkg/a 0.1s\nok  pkg/b 0.2s", 120, false))
			count += 3 // reply, tool call, tool result
		}
		h.events(completed(usage.Usage{InputTokens: 5000, OutputTokens: 400}))
	}
	h.typeText("and now?")
	h.enter()
	h.events(textDelta("Streaming a paragraph that is still being written, with some **bold** "))
	return h
}

func benchDelta(b *testing.B, n int) {
	h := session(b, n)
	// Paragraphs of ~60 words: the tail stays the size of a real unsettled paragraph.
	d := eventsMsg{run: h.m.run, evs: []event.Event{textDelta("word ")}}
	brk := eventsMsg{run: h.m.run, evs: []event.Event{textDelta("end.\n\nNext ")}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%60 == 59 {
			h.m.Update(brk)
		} else {
			h.m.Update(d)
		}
		_ = h.m.View()
	}
}

// One text delta plus a redraw costs the same at 10 and at 5,000 messages: finished
// blocks live in the terminal's scrollback, not in the frame.
func BenchmarkDeltaAndView10(b *testing.B)   { benchDelta(b, 10) }
func BenchmarkDeltaAndView5000(b *testing.B) { benchDelta(b, 5000) }

// TestLongSessionKeepsNoFinishedBlocks: after a 5,000-message session the model
// holds no finished blocks (they live in the terminal's scrollback); the memory
// figure is BenchmarkMemoryAfterLongSession.
func TestLongSessionKeepsNoFinishedBlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	h := session(t, 5000)
	if len(h.m.outbox) != 0 || len(h.m.tools) != 0 {
		t.Fatalf("model retains finished blocks: outbox %d tools %d", len(h.m.outbox), len(h.m.tools))
	}
}

// BenchmarkMemoryAfterLongSession reports the heap in use and the process RSS after
// a 5,000-message session (README's memory figure).
func BenchmarkMemoryAfterLongSession(b *testing.B) {
	for i := 0; i < b.N; i++ {
		h := session(b, 5000)
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapInuse)/1e6, "MB-heap")
		if kb := vmRSSKiB(); kb > 0 {
			b.ReportMetric(float64(kb)/1e3, "MB-rss")
		}
		runtime.KeepAlive(h)
	}
}

// vmRSSKiB is this process's resident set in KiB (0 where /proc is missing).
func vmRSSKiB() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}
