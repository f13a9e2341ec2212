package providertest

import (
	"testing"
	"time"
)

// CPUTime is the process's user+system CPU time so far (0 where unsupported).
// Benchmarks on a shared machine report CPU time per operation, which
// wall-clock ns/op cannot show.
func CPUTime() time.Duration { return cpuTime() }

// ReportCPU adds a "cpu-ms/op" metric to b: CPU time used since start divided by
// b.N. Call it after the timed loop.
func ReportCPU(b *testing.B, start time.Duration) {
	if b.N > 0 {
		b.ReportMetric(float64(CPUTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	}
}
