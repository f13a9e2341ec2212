package runtime

import (
	"go/build"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/lovia-dev/lovia"

// frontEnds are the packages that present a run to a user: the run loop must not
// know any of them (their wording, flags or screens).
var frontEnds = []string{"cmd", "completions", "internal/app", "internal/tui", "internal/headless", "internal/termtext", "internal/doctor", "internal/eval", "internal/web"}

// TestRuntimeHasNoFrontEndDeps: no package of internal/runtime imports a front end,
// directly or through another package of this module, on any release target (the
// same check as `go list -deps ./internal/runtime/...`).
func TestRuntimeHasNoFrontEndDeps(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	// Every package under internal/runtime (the loop may be split into several).
	var starts []string
	err = filepath.WalkDir(filepath.Join(root, "internal", "runtime"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if d.Name() == "testdata" {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, path)
		starts = append(starts, module+"/"+filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		ctxt := build.Default
		ctxt.GOOS = goos
		// via[p] is the package that first imported p: the chain to report.
		via := map[string]string{}
		queue := slices.Clone(starts)
		for _, s := range starts {
			via[s] = ""
		}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			rel := strings.TrimPrefix(strings.TrimPrefix(p, module), "/")
			for _, fe := range frontEnds {
				if rel == fe || strings.HasPrefix(rel, fe+"/") {
					chain := []string{p}
					for q := via[p]; q != ""; q = via[q] {
						chain = append(chain, q)
					}
					slices.Reverse(chain)
					t.Errorf("%s: internal/runtime depends on the front end %s: %s", goos, fe, strings.Join(chain, " -> "))
				}
			}
			pkg, err := ctxt.ImportDir(filepath.Join(root, filepath.FromSlash(rel)), 0)
			if err != nil {
				if _, ok := err.(*build.NoGoError); ok {
					continue
				}
				t.Fatalf("%s: %s: %v", goos, p, err)
			}
			for _, imp := range pkg.Imports {
				if imp != module && !strings.HasPrefix(imp, module+"/") {
					continue
				}
				if _, seen := via[imp]; !seen {
					via[imp] = p
					queue = append(queue, imp)
				}
			}
		}
		if len(via) < 5 {
			t.Fatalf("%s: only %d packages walked: the walk is broken", goos, len(via))
		}
	}
}
