package workspace

import (
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The differential test of the resolver: over a random tree of directories, files
// and symlinks (relative, absolute, dangling, loops, ".."-laden, pointing in and
// out of the root), the path resolvePath returns must be the file the kernel opens
// for the same path, and when the kernel cannot open a path the resolver must not
// claim it names an existing file. A create through the path lands where the
// resolver said, and openResolved reaches the same file as the kernel.

var fuzzNames = []string{"a", "b", "c", "d", "e"}

// randomTree builds base/root and base/out from seed and returns root.
func randomTree(t testing.TB, base string, seed int64) string {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	root, out := base+"/root", base+"/out"
	dirs := []string{root, out}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 30; i++ {
		dir := dirs[rng.Intn(len(dirs))]
		p := dir + "/" + fuzzNames[rng.Intn(len(fuzzNames))]
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		switch k := rng.Intn(10); {
		case k < 3:
			if os.Mkdir(p, 0o755) == nil {
				dirs = append(dirs, p)
			}
		case k < 5:
			os.WriteFile(p, []byte(p), 0o644)
		default:
			os.Symlink(randomPath(rng, root, base, 4), p)
		}
	}
	return root
}

// randomPath is 1..n components from the names, "..", ".", "nope" and "", maybe
// after an absolute prefix (the root, base, or "/").
func randomPath(rng *rand.Rand, root, base string, n int) string {
	var parts []string
	for i := rng.Intn(n) + 1; i > 0; i-- {
		switch k := rng.Intn(12); {
		case k < 6:
			parts = append(parts, fuzzNames[rng.Intn(len(fuzzNames))])
		case k < 8:
			parts = append(parts, "..")
		case k < 9:
			parts = append(parts, ".")
		case k < 10:
			parts = append(parts, "nope")
		case k < 11:
			parts = append(parts, "out")
		default:
			parts = append(parts, "")
		}
	}
	p := strings.Join(parts, "/")
	switch rng.Intn(6) {
	case 0:
		p = root + "/" + p
	case 1:
		p = base + "/" + p
	}
	return p
}

// checkAgainstKernel compares resolvePath with the kernel for path (relative to
// root, or absolute).
func checkAgainstKernel(t testing.TB, root, path string) {
	t.Helper()
	full := path
	if !filepath.IsAbs(full) {
		full = root + "/" + path
	}
	abs, rerr := resolvePath(full, root)
	var li os.FileInfo
	if rerr == nil {
		if abs != filepath.Clean(abs) || !filepath.IsAbs(abs) {
			t.Fatalf("%s: resolved to an unclean path %q", path, abs)
		}
		li, _ = os.Lstat(abs)
		if li != nil && li.Mode()&os.ModeSymlink != 0 {
			t.Fatalf("%s: resolved to a symlink %q", path, abs)
		}
	}
	f, kerr := os.Open(full)
	if kerr == nil {
		ki, err := f.Stat()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if rerr != nil {
			t.Fatalf("%s: the kernel opens it but the resolver says %v", path, rerr)
		}
		if li == nil || !os.SameFile(ki, li) {
			t.Fatalf("%s: the kernel opens another file than %q", path, abs)
		}
		// The opener reaches the same file.
		g, err := openResolved(nil, "", abs, os.O_RDONLY, 0)
		if err != nil {
			t.Fatalf("%s: openResolved(%q): %v", path, abs, err)
		}
		gi, _ := g.Stat()
		g.Close()
		if !os.SameFile(ki, gi) {
			t.Fatalf("%s: openResolved(%q) opened another file", path, abs)
		}
		return
	}
	if rerr == nil && li != nil {
		t.Fatalf("%s: the kernel fails (%v) but the resolver says it is %q, an existing %s", path, kerr, abs, li.Mode().Type())
	}
	if rerr != nil || li != nil {
		return
	}
	// The resolver says "missing": a create through the path must land on abs.
	if pi, err := os.Stat(filepath.Dir(abs)); err != nil || !pi.IsDir() {
		return
	}
	c, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if !errors.Is(err, os.ErrExist) {
			return // the kernel refuses to create: nothing is written anywhere
		}
		// O_EXCL on a dangling link fails; O_CREAT alone follows it.
		c, err = os.OpenFile(full, os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			return
		}
	}
	ci, _ := c.Stat()
	c.Close()
	ni, err := os.Lstat(abs)
	if err != nil || !os.SameFile(ci, ni) {
		t.Fatalf("%s: a create landed elsewhere than %q", path, abs)
	}
	os.Remove(abs)
}

func TestResolverMatchesKernel(t *testing.T) {
	seeds, paths := 30, 300
	if testing.Short() {
		seeds, paths = 8, 150
	}
	for seed := int64(1); seed <= int64(seeds); seed++ {
		base, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		root := randomTree(t, base, seed)
		rng := rand.New(rand.NewSource(seed * 7919))
		for i := 0; i < paths; i++ {
			checkAgainstKernel(t, root, randomPath(rng, root, base, 6))
		}
	}
}

// FuzzResolver: go test -fuzz=FuzzResolver ./internal/workspace. The input picks
// the tree (seed) and the path (a component per byte).
func FuzzResolver(f *testing.F) {
	for _, s := range []struct {
		seed int64
		path string
	}{{1, "a/../b"}, {2, "nope/../a"}, {3, "a/b/../../c"}, {4, "out/a/.."}, {5, "a//./b/"}, {6, "a/a/a/a/a"}} {
		f.Add(s.seed, []byte(s.path))
	}
	f.Fuzz(func(t *testing.T, seed int64, raw []byte) {
		if len(raw) > 64 {
			return
		}
		base, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		root := randomTree(t, base, seed)
		// Bytes map onto components so the fuzzer explores structure, not spelling.
		comps := append(append([]string{}, fuzzNames...), "..", ".", "nope", "out", "", root, base)
		var parts []string
		for _, b := range raw {
			parts = append(parts, comps[int(b)%len(comps)])
		}
		p := strings.Join(parts, "/")
		if p == "" {
			p = "."
		}
		checkAgainstKernel(t, root, p)
	})
}
