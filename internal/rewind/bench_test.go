package rewind

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// makeRepo writes n files of about 1 KiB in n/100 directories, dated an hour ago.
func makeRepo(tb testing.TB, root string, n int) {
	tb.Helper()
	old := time.Now().Add(-time.Hour)
	body := make([]byte, 1024)
	for i := range body {
		body[i] = byte('a' + i%26)
	}
	for i := 0; i < n; i++ {
		p := filepath.Join(root, fmt.Sprintf("pkg%03d", i/100), fmt.Sprintf("file%05d.go", i))
		if i%100 == 0 {
			os.MkdirAll(filepath.Dir(p), 0o755)
		}
		copy(body, fmt.Sprintf("// %d\n", i))
		if err := os.WriteFile(p, body, 0o644); err != nil {
			tb.Fatal(err)
		}
		os.Chtimes(p, old, old)
	}
}

func dirSize(root string) int64 {
	var n int64
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// BenchmarkCheckpoint10kFiles is the cost of one checkpoint (before a mutating call)
// in a 10,000-file repository where one file changed since the last one.
func BenchmarkCheckpoint10kFiles(b *testing.B) {
	ctx := context.Background()
	base := b.TempDir()
	root := filepath.Join(base, "repo")
	makeRepo(b, root, 10_000)
	s := Open(filepath.Join(base, "data"))
	rec := s.NewRecorder(root, nil, Limits{}, nil)
	if err := rec.Checkpoint(ctx, rc("warm"), "shell", ""); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0, n := cpuTime(), 0
	for i := 0; b.Loop(); i++ {
		os.WriteFile(filepath.Join(root, "pkg001", "file00100.go"), fmt.Appendf(nil, "edit %d\n", i), 0o644)
		if err := rec.Checkpoint(ctx, rc("r"), "shell", ""); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(n), "cpu-ms/op")
}

// BenchmarkWalkBaseline10kFiles is the floor a checkpoint is measured against: listing
// every directory and lstat-ing every file of the same repository, nothing else.
func BenchmarkWalkBaseline10kFiles(b *testing.B) {
	root := filepath.Join(b.TempDir(), "repo")
	makeRepo(b, root, 10_000)
	cpu0, n := cpuTime(), 0
	for b.Loop() {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				d.Info()
			}
			return nil
		})
		n++
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(n), "cpu-ms/op")
}

// BenchmarkFirstCheckpoint10kFiles is the first checkpoint of a process with no
// stat cache on disk: every file is read and stored once.
func BenchmarkFirstCheckpoint10kFiles(b *testing.B) {
	ctx := context.Background()
	base := b.TempDir()
	root := filepath.Join(base, "repo")
	makeRepo(b, root, 10_000)
	for i := 0; b.Loop(); i++ {
		s := Open(filepath.Join(base, fmt.Sprintf("data%d", i)))
		rec := s.NewRecorder(root, nil, Limits{}, nil)
		if err := rec.Checkpoint(ctx, rc("r"), "shell", ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGrowthPer100Edits reports how much the store grows over 100 edits of one
// 4 KiB file in a 10,000-file repository, each checkpointed (KiB/100edits), and the
// time of one such checkpoint (ms/checkpoint).
func BenchmarkGrowthPer100Edits(b *testing.B) {
	ctx := context.Background()
	base := b.TempDir()
	root := filepath.Join(base, "repo")
	makeRepo(b, root, 10_000)
	body := make([]byte, 4096)
	for i := range body {
		body[i] = byte('a' + (i*7)%26)
	}
	target := filepath.Join(root, "pkg042", "file04242.go")
	for n := 0; b.Loop(); n++ {
		data := filepath.Join(base, fmt.Sprintf("data%d", n))
		s := Open(data)
		rec := s.NewRecorder(root, nil, Limits{}, nil)
		if err := rec.Checkpoint(ctx, rc("r0"), "shell", ""); err != nil {
			b.Fatal(err)
		}
		initial := dirSize(data)
		start := time.Now()
		for i := 0; i < 100; i++ {
			copy(body, fmt.Sprintf("edit %03d %03d\n", n, i))
			os.WriteFile(target, body, 0o644)
			if err := rec.Checkpoint(ctx, rc("r1"), "edit_file", "x"); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(time.Since(start).Milliseconds())/100, "ms/checkpoint")
		b.ReportMetric(float64(dirSize(data)-initial)/1024, "KiB/100edits")
	}
}

// BenchmarkCheckpointTurns mirrors the checkpoints of BenchmarkHundredTurns (the
// e2e run): a tree of 20 small files in five directories, and per op one
// write_file of a new small file in out/ (out/ keeps the last 20), checkpointed
// before it, and one shell call that changes nothing, checkpointed before it. The
// first op starts on an empty store, as the e2e run does. The file writes are not
// timed: ns/op, allocs/op and cpu-us/checkpoint are the two checkpoints'.
func BenchmarkCheckpointTurns(b *testing.B) {
	ctx := context.Background()
	base := b.TempDir()
	root := filepath.Join(base, "repo")
	for i := range 20 {
		p := filepath.Join(root, fmt.Sprintf("pkg%d", i%5), fmt.Sprintf("file%d.go", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, fmt.Appendf(nil, "package pkg%d\n\n// F%d does one thing.\nfunc F%d() int { return %d }\n", i%5, i, i, i), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	s := Open(filepath.Join(base, "data"))
	rec := s.NewRecorder(root, nil, Limits{}, nil)
	r := rc("r")
	b.ReportAllocs()
	var cpu time.Duration
	n := 0
	for i := 0; b.Loop(); i++ {
		cpu0 := cpuTime()
		if err := rec.Checkpoint(ctx, r, "shell", "echo step"); err != nil {
			b.Fatal(err)
		}
		if err := rec.Checkpoint(ctx, r, "write_file", "out"); err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime() - cpu0
		n += 2
		b.StopTimer()
		os.MkdirAll(filepath.Join(root, "out"), 0o755)
		p := filepath.Join(root, "out", fmt.Sprintf("n%d.txt", i))
		os.WriteFile(p, fmt.Appendf(nil, "note %d\n", i), 0o644)
		// Turns take milliseconds, not microseconds: by the next checkpoint but one
		// the file is no longer within the racy window, and is not read again.
		old := time.Now().Add(-time.Second)
		os.Chtimes(p, old, old)
		os.Remove(filepath.Join(root, "out", fmt.Sprintf("n%d.txt", i-20)))
		b.StartTimer()
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(n), "cpu-us/checkpoint")
}
