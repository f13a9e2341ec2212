package workspace

import (
	"math/rand"
	"strings"
	"testing"
)

func TestMyersReconstructs(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	alphabet := []string{"a\n", "b\n", "c\n", "d\n", "e"}
	gen := func() []string {
		n := rng.Intn(30)
		out := make([]string, n)
		for i := range out {
			out[i] = alphabet[rng.Intn(len(alphabet)-1)]
		}
		return out
	}
	for i := 0; i < 2000; i++ {
		a, b := gen(), gen()
		var ra, rb []string
		for _, op := range myers(a, b) {
			if op.kind != '+' {
				ra = append(ra, op.line)
			}
			if op.kind != '-' {
				rb = append(rb, op.line)
			}
		}
		if strings.Join(ra, "") != strings.Join(a, "") || strings.Join(rb, "") != strings.Join(b, "") {
			t.Fatalf("script does not rebuild:\na=%q\nb=%q", a, b)
		}
	}
}

func TestUnifiedDiff(t *testing.T) {
	old := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n"
	new := strings.Replace(strings.Replace(old, "2\n", "two\n", 1), "14\n", "", 1)
	want := "--- a/f\n+++ b/f\n@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n@@ -11,5 +11,4 @@\n 11\n 12\n 13\n-14\n 15\n"
	if got := UnifiedDiff("f", old, new); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if got := UnifiedDiff("f", "", "x\n"); got != "--- /dev/null\n+++ b/f\n@@ -0,0 +1,1 @@\n+x\n" {
		t.Fatalf("new file: %q", got)
	}
	if got := UnifiedDiff("f", "a", "b"); !strings.Contains(got, "-a\n\\ No newline at end of file\n+b\n") {
		t.Fatalf("no newline: %q", got)
	}
	if UnifiedDiff("f", "same", "same") != "" {
		t.Fatal("diff of equal texts")
	}
}

func FuzzGitignore(f *testing.F) {
	f.Add("build/\n*.log\n!keep.log\n/root.txt\ndocs/**/*.md\n", "docs/a/b.md")
	f.Fuzz(func(t *testing.T, rules, path string) {
		s := parseGitignore([]byte(rules), "")
		if s == nil {
			return
		}
		ignoreChain{s}.ignored(path, false)
		ignoreChain{s}.ignored(path, true)
	})
}

func TestGitignoreSemantics(t *testing.T) {
	c := ignoreChain{parseGitignore([]byte("build/\n*.log\n!keep.log\n/only-root.txt\ndocs/**/*.md\n"), ""), parseGitignore([]byte("*.tmp\n"), "sub")}
	cases := map[string]bool{
		"build": true, "x/build": true, "a.log": true, "x/keep.log": false, "only-root.txt": true,
		"x/only-root.txt": false, "docs/a/b.md": true, "docs/b.md": true, "sub/x.tmp": true, "x.tmp": false, "src/main.go": false,
	}
	for p, want := range cases {
		isDir := p == "build" || p == "x/build"
		if got := c.ignored(p, isDir); got != want {
			t.Errorf("%s: ignored=%v, want %v", p, got, want)
		}
	}
	if c.ignored("build", false) {
		t.Error("dir-only rule matched a file")
	}
}
