package workspace

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// BenchmarkGuardTypical measures one static decision for a typical agent command
// (target: under 50 µs).
func BenchmarkGuardTypical(b *testing.B) {
	e := newTestEnv(b)
	p := e.policy(b, PresetCoding)
	cmds := []string{
		"go test ./internal/... 2>&1 | tail -20",
		"git diff --stat && git status --short",
		"cd src && grep -rn 'func main' . | head",
		"npm run build > build.log 2>&1 || cat build.log",
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a := p.AnalyzeCommand(cmds[i%len(cmds)], "")
		if !a.Parsed {
			b.Fatal("not parsed")
		}
	}
}

func TestGuardUnder50us(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("timing test")
	}
	// Best of three: the machine is shared, and the figure is about the code.
	per := time.Hour
	for i := 0; i < 3; i++ {
		r := testing.Benchmark(BenchmarkGuardTypical)
		per = min(per, time.Duration(r.NsPerOp()))
	}
	t.Logf("guard decision: %v per command", per)
	if per > 50*time.Microsecond {
		t.Errorf("guard takes %v per typical command, want < 50µs", per)
	}
}

// makeTree generates n files (Go-like sources, some with the needle) in nested dirs.
func makeTree(t testing.TB, root string, n int) {
	rng := rand.New(rand.NewSource(1))
	words := []string{"func", "return", "package", "import", "var", "type", "struct", "interface", "error", "nil", "context", "string", "int", "map", "for", "range"}
	var sb strings.Builder
	for i := 0; i < n; i++ {
		dir := filepath.Join(root, fmt.Sprintf("d%02d/e%02d", i%50, (i/50)%20))
		if i%1000 == 0 || i < 1000 {
			os.MkdirAll(dir, 0o755)
		}
		sb.Reset()
		lines := 20 + rng.Intn(60)
		for l := 0; l < lines; l++ {
			for k := 0; k < 8; k++ {
				sb.WriteString(words[rng.Intn(len(words))])
				sb.WriteByte(' ')
			}
			if rng.Intn(20000) == 0 {
				sb.WriteString("NeedleFunc(ctx)")
			}
			sb.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d.go", i)), []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func median(ds []time.Duration) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}

// TestGrepSpeedVsRipgrep: grep_files over a 50,000-file tree within 3x of rg.
func TestGrepSpeedVsRipgrep(t *testing.T) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("rg not installed")
	}
	if testing.Short() || raceEnabled {
		t.Skip("speed test")
	}
	e := newTestEnv(t)
	tree := filepath.Join(e.root, "tree")
	makeTree(t, tree, 50_000)
	w := newWS(t, e, PresetCoding, SandboxOff)
	queries := []struct {
		pattern string
		literal bool
	}{{"NeedleFunc", true}, {`Needle\w+\(ctx\)`, false}}
	for _, q := range queries {
		var ours, theirs []time.Duration
		var ourOut string
		for i := 0; i < 5; i++ {
			start := time.Now()
			out, err := w.GrepFiles(context.Background(), GrepOptions{Pattern: q.pattern, Literal: q.literal, Path: "tree", MaxResults: 2000}, false)
			ours = append(ours, time.Since(start))
			if err != nil {
				t.Fatal(err)
			}
			ourOut = out
			args := []string{"-n", "--no-heading", q.pattern, "tree"}
			if q.literal {
				args = append([]string{"-F"}, args...)
			}
			cmd := exec.Command(rg, args...)
			cmd.Dir = e.root
			start = time.Now()
			rgOut, _ := cmd.Output()
			theirs = append(theirs, time.Since(start))
			if i == 0 {
				if got, want := strings.Count(ourOut, "\n"), strings.Count(string(rgOut), "\n"); got != want || got == 0 {
					t.Fatalf("%s: %d matching lines, rg found %d", q.pattern, got, want)
				}
			}
		}
		o, r := median(ours), median(theirs)
		ratio := float64(o) / float64(r)
		t.Logf("%s: grep_files %v, rg %v, ratio %.2f", q.pattern, o, r, ratio)
		if ratio > 3 {
			t.Errorf("%s: grep_files %v is %.1fx rg's %v (want within 3x)", q.pattern, o, ratio, r)
		}
	}
}

// BenchmarkGrepFiles: one literal search over a 5,000-file tree (the 50,000-file
// comparison with rg is TestGrepSpeedVsRipgrep).
func BenchmarkGrepFiles(b *testing.B) {
	e := newTestEnv(b)
	makeTree(b, filepath.Join(e.root, "tree"), 5_000)
	w, err := New(Config{Root: e.root, Sandbox: SandboxOff})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := w.GrepFiles(context.Background(), GrepOptions{Pattern: `Needle\w+`, Path: "tree"}, false); err != nil {
			b.Fatal(err)
		}
	}
}
