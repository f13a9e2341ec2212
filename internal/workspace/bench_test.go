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
// (product target: under 50 µs per command).
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

// grepQueries are the searches compared with rg: a literal and a regular expression.
var grepQueries = []struct {
	name, pattern string
	literal       bool
}{{"literal", "NeedleFunc", true}, {"regexp", `Needle\w+\(ctx\)`, false}}

// rgArgs is rg's command line for the same search as grep_files.
func rgArgs(pattern string, literal bool) []string {
	args := []string{"-n", "--no-heading", pattern, "tree"}
	if literal {
		args = append([]string{"-F"}, args...)
	}
	return args
}

// TestGrepAgreesWithRipgrep: grep_files finds the same lines as rg over a generated
// tree (the speed comparison is BenchmarkGrepVsRipgrep).
func TestGrepAgreesWithRipgrep(t *testing.T) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("rg not installed")
	}
	e := newTestEnv(t)
	makeTree(t, filepath.Join(e.root, "tree"), 5_000)
	w := newWS(t, e, PresetCoding, SandboxOff)
	for _, q := range grepQueries {
		out, err := w.GrepFiles(context.Background(), GrepOptions{Pattern: q.pattern, Literal: q.literal, Path: "tree", MaxResults: 2000}, false)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(rg, rgArgs(q.pattern, q.literal)...)
		cmd.Dir = e.root
		rgOut, _ := cmd.Output()
		got, want := sortedLines(out), sortedLines(string(rgOut))
		if len(want) == 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%s: grep_files found\n%s\nrg found\n%s", q.name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// sortedLines is out's non-empty lines "path:line:text", sorted (rg's order is not
// deterministic across threads).
func sortedLines(out string) []string {
	var ls []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Count(l, ":") >= 2 {
			ls = append(ls, l)
		}
	}
	sort.Strings(ls)
	return ls
}

// BenchmarkGrepVsRipgrep: grep_files and rg over a 50,000-file tree; the x-rg metric
// is grep_files' time over rg's (product target: within 3x).
func BenchmarkGrepVsRipgrep(b *testing.B) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		b.Skip("rg not installed")
	}
	e := newTestEnv(b)
	makeTree(b, filepath.Join(e.root, "tree"), 50_000)
	w, err := New(Config{Root: e.root, Sandbox: SandboxOff})
	if err != nil {
		b.Fatal(err)
	}
	for _, q := range grepQueries {
		b.Run(q.name, func(b *testing.B) {
			var ours, theirs time.Duration
			for i := 0; i < b.N; i++ {
				start := time.Now()
				if _, err := w.GrepFiles(context.Background(), GrepOptions{Pattern: q.pattern, Literal: q.literal, Path: "tree", MaxResults: 2000}, false); err != nil {
					b.Fatal(err)
				}
				ours += time.Since(start)
				cmd := exec.Command(rg, rgArgs(q.pattern, q.literal)...)
				cmd.Dir = e.root
				start = time.Now()
				if _, err := cmd.Output(); err != nil {
					b.Fatal(err)
				}
				theirs += time.Since(start)
			}
			b.ReportMetric(float64(ours.Milliseconds())/float64(b.N), "ms-ours/op")
			b.ReportMetric(float64(theirs.Milliseconds())/float64(b.N), "ms-rg/op")
			b.ReportMetric(float64(ours)/float64(theirs), "x-rg")
		})
	}
}

// BenchmarkGrepFiles: one literal search over a 5,000-file tree (the 50,000-file
// comparison with rg is BenchmarkGrepVsRipgrep).
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
