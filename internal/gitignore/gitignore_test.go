package gitignore

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tree is a repository with tricky rules: negation, directory-only, anchored, "**",
// nested .gitignore files, escapes and trailing spaces.
var tree = map[string]string{
	".gitignore": strings.Join([]string{
		"# comment",
		"*.log",
		"!keep.log",
		"build/",
		"/root-only.txt",
		"docs/**/*.md",
		"!docs/**/README.md",
		"vendor/**",
		"!vendor/keep.go",
		"**/tmp",
		"a/**/z",
		`\#hash`,
		`\!bang`,
		"trailing.txt   ",
		`space\ `,
		"*.[oa]",
		"!lib.a",
		"mid/dle",
		"cache",
		"!cache/", // a directory named cache is re-included, a file is not
		"",
	}, "\n"),
	"sub/.gitignore":      "*.tmp\n!important.tmp\n/local.txt\nnested/\n",
	"sub/deep/.gitignore": "!*.log\n",
	".git/info/exclude":   "excluded.txt\n",
}

// files are the paths created (besides the rule files).
var files = []string{
	"app.log", "keep.log", "sub/keep.log", "sub/x.log", "sub/deep/y.log",
	"build/out.bin", "src/build/out.bin", "build.txt",
	"root-only.txt", "src/root-only.txt",
	"docs/a.md", "docs/x/b.md", "docs/x/README.md", "docs/a.txt",
	"vendor/a.go", "vendor/keep.go", "vendor/sub/b.go",
	"tmp/x", "src/tmp/y", "tmpfile",
	"a/z", "a/b/z", "a/b/c/z", "a/zz",
	"#hash", "!bang", "trailing.txt", "space ", "space",
	"x.o", "y.a", "lib.a", "z.c",
	"mid/dle", "src/mid/dle",
	"cache", "src/cache/c.txt",
	"sub/a.tmp", "sub/important.tmp", "sub/local.txt", "sub/inner/local.txt",
	"sub/nested/n.txt", "other/nested/n.txt",
	"excluded.txt", "src/excluded.txt",
	"plain.go", "src/plain.go",
}

// walk lists the files a tool walking root with Chain sees: ignored directories are
// skipped, nested .gitignore files apply below their directory.
func walk(t *testing.T, root string) []string {
	var out []string
	chains := map[string]Chain{}
	read := func(c Chain, abs, base string) Chain {
		data, err := os.ReadFile(abs)
		if err != nil {
			return c
		}
		return c.With(Parse(data, base))
	}
	chains[""] = read(read(nil, filepath.Join(root, ".git", "info", "exclude"), ""), filepath.Join(root, ".gitignore"), "")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		parent := filepath.ToSlash(filepath.Dir(rel))
		if parent == "." {
			parent = ""
		}
		c := chains[parent]
		if d.IsDir() {
			if d.Name() == ".git" || c.Ignored(rel, true) {
				return filepath.SkipDir
			}
			chains[rel] = read(c, filepath.Join(p, ".gitignore"), rel)
			return nil
		}
		if d.Name() != ".gitignore" && !c.Ignored(rel, false) {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestAgreesWithGit: the files a walk keeps are the untracked files git does not
// ignore (`git ls-files --others --exclude-standard`), on the tricky tree above.
func TestAgreesWithGit(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	root := t.TempDir()
	if out, err := exec.Command(git, "init", "-q", root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	for rel, body := range tree {
		write(t, root, rel, body)
	}
	for _, rel := range files {
		write(t, root, rel, "x\n")
	}
	cmd := exec.Command(git, "ls-files", "--others", "--exclude-standard", "-z")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	var want []string
	for _, f := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if f != "" && !strings.HasSuffix(f, ".gitignore") {
			want = append(want, f)
		}
	}
	slices.Sort(want)
	got := walk(t, root)
	if !slices.Equal(got, want) {
		t.Errorf("walk kept (-) / git kept (+):\n%s", diffLists(got, want))
	}
}

func write(t *testing.T, root, rel, body string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func diffLists(got, want []string) string {
	var b strings.Builder
	for _, g := range got {
		if !slices.Contains(want, g) {
			b.WriteString("- " + g + "\n")
		}
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			b.WriteString("+ " + w + "\n")
		}
	}
	return b.String()
}

// TestRules: single rules on their own, where git's answer is documented.
func TestRules(t *testing.T) {
	for _, c := range []struct {
		rules, path string
		dir, want   bool
	}{
		{"build/", "build", true, true},
		{"build/", "build", false, false},
		{"/a.txt", "a.txt", false, true},
		{"/a.txt", "sub/a.txt", false, false},
		{"a/**", "a", true, false},
		{"a/**", "a/b/c", false, true},
		{"**/foo", "x/y/foo", false, true},
		{"a/**/b", "a/b", false, true},
		{"a/**/b", "a/x/y/b", false, true},
		{"*.log\n!keep.log", "keep.log", false, false},
		{"x   ", "x", false, true},
		{`x\ `, "x ", false, true},
		{`\#x`, "#x", false, true},
	} {
		if got := (Chain{Parse([]byte(c.rules), "")}).Ignored(c.path, c.dir); got != c.want {
			t.Errorf("rules %q path %q dir %v: ignored %v, want %v", c.rules, c.path, c.dir, got, c.want)
		}
	}
	nested := Chain{Parse([]byte("*.tmp\n"), ""), Parse([]byte("!keep.tmp\n/only.txt\n"), "sub")}
	for p, want := range map[string]bool{"a.tmp": true, "sub/keep.tmp": false, "keep.tmp": true, "sub/only.txt": true, "only.txt": false, "sub/x/only.txt": false} {
		if got := nested.Ignored(p, false); got != want {
			t.Errorf("nested %q: %v, want %v", p, got, want)
		}
	}
}
