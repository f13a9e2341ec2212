package e2e

import (
	"bufio"
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLinkerKeepsDeadCodeElimination: nothing lovia links may call reflect's
// Method or MethodByName with a name known only at run time (text/template's Execute
// does). One such call makes the Go linker keep every exported method of every type
// that can reach an interface: the executable grew from 55 MB to 93 MB, and a run's
// peak RSS by 15 MB, the last time it happened (glamour, see internal/termmd). The
// failure names the chain of calls from main to the culprit.
func TestLinkerKeepsDeadCodeElimination(t *testing.T) {
	var stderr bytes.Buffer
	build := exec.Command("go", "build", "-ldflags=-dumpdep", "-o", filepath.Join(t.TempDir(), "lovia"), ".")
	build.Dir = repoRoot
	build.Stderr = &stderr
	if err := build.Run(); err != nil {
		t.Fatalf("go build -ldflags=-dumpdep: %v\n%s", err, provTail(stderr.String(), 2000))
	}
	// Each line is "from -> to", in the order the linker marked symbols reachable,
	// so the first edge into a symbol names the symbol that made it reachable.
	parent := map[string]string{}
	var culprit string
	edges := 0
	sc := bufio.NewScanner(&stderr)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		from, to, ok := strings.Cut(sc.Text(), " -> ")
		if !ok {
			continue
		}
		edges++
		if culprit == "" && strings.HasSuffix(from, " <ReflectMethod>") {
			culprit = strings.TrimSuffix(from, " <ReflectMethod>")
		}
		from, to = depName(from), depName(to)
		if _, seen := parent[to]; !seen && to != from {
			parent[to] = from
		}
	}
	if edges < 1000 {
		t.Fatalf("the linker printed %d dependency edges; -dumpdep no longer works as this test expects:\n%s", edges, provTail(stderr.String(), 2000))
	}
	if culprit == "" {
		return
	}
	chain := []string{culprit}
	for s, n := culprit, 0; n < 200; n++ {
		p, ok := parent[s]
		if !ok {
			break
		}
		chain, s = append(chain, p), p
	}
	t.Fatalf("%s calls reflect's Method or MethodByName with a run-time name, which turns off the linker's dead-code elimination of methods; reached through:\n  %s",
		culprit, strings.Join(chain, "\n  "))
}

// depName is a -dumpdep symbol without its attribute marks.
func depName(s string) string {
	s = strings.TrimSpace(s)
	for _, mark := range []string{" <ReflectMethod>", " <UsedInIface>"} {
		s = strings.TrimSuffix(s, mark)
	}
	return s
}
