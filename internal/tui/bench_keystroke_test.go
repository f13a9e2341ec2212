package tui

import (
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/lovia-dev/lovia/internal/provider/providertest"
	"github.com/lovia-dev/lovia/internal/usage"
)

// benchKeystroke measures keystroke-to-echo: one key press through Update and the
// frame that shows it, at the idle prompt of a session of n messages. Typing a
// character and erasing it alternate, so the prompt stays one line.
func benchKeystroke(b *testing.B, n int) {
	h := session(b, n)
	h.events(completed(usage.Usage{InputTokens: 5000, OutputTokens: 400}))
	h.typeText("fix the flaky test in ")
	keys := []tea.KeyPressMsg{{Code: 'x', Text: "x"}, {Code: tea.KeyBackspace}}
	b.ReportAllocs()
	b.ResetTimer()
	// CPU time per key too: on a shared machine wall time mostly measures the others.
	start := providertest.CPUTime()
	for i := 0; i < b.N; i++ {
		h.m.Update(keys[i%2])
		_ = h.m.View()
	}
	b.StopTimer()
	providertest.ReportCPU(b, start)
}

// Keystroke-to-echo stays flat with the session's length: the frame holds the live
// region only.
func BenchmarkKeystrokeEcho10(b *testing.B)   { benchKeystroke(b, 10) }
func BenchmarkKeystrokeEcho1000(b *testing.B) { benchKeystroke(b, 1000) }
