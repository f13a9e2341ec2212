package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// A documentation shell block runs in this test when the line before its opening fence
// is the marker (see docs/README.md, "Runnable examples"):
//
//	<!-- test -->
//	```sh
//	lovia version
//	```
const docsMarker = "<!-- test -->"

// runsTestSuite finds a block that runs `go test` as a command (not a mention of it
// in a config rule or a message).
var runsTestSuite = regexp.MustCompile(`(?m)(^|&&|\|\||;|\$\()\s*go test\b`)

// docBlock is one runnable fenced block.
type docBlock struct {
	file string
	line int // of the opening fence
	code string
}

// docBlocks returns the runnable blocks of a markdown file, and an error for a marker
// that is not followed by a shell fence (a typo would otherwise skip a block silently).
func docBlocks(path string) ([]docBlock, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []docBlock
	sc := bufio.NewScanner(bytes.NewReader(data))
	n, marked, markLine := 0, false, 0
	var cur *docBlock
	other := "" // the fence of an unmarked block being skipped (markers inside are examples)
	for sc.Scan() {
		n++
		line := sc.Text()
		trim := strings.TrimSpace(line)
		switch {
		case other != "":
			if trim == other {
				other = ""
			}
		case cur != nil:
			if trim == "```" {
				out = append(out, *cur)
				cur = nil
				continue
			}
			cur.code += line + "\n"
		case trim == docsMarker:
			marked, markLine = true, n
		case marked && trim == "":
		case !marked && strings.HasPrefix(trim, "```"):
			other = trim[:len(trim)-len(strings.TrimLeft(trim, "`"))]
		case marked:
			lang := strings.TrimPrefix(trim, "```")
			if lang == trim || (lang != "sh" && lang != "bash" && lang != "shell") {
				return nil, fmt.Errorf("%s:%d: %s must be followed by a ```sh, ```bash or ```shell block", path, markLine, docsMarker)
			}
			cur, marked = &docBlock{file: path, line: n}, false
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: unclosed code block", path, cur.line)
	}
	return out, sc.Err()
}

// docFiles are README.md and docs/*.md.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join(repoRoot, "README.md")}, files...)
}

func TestDocsFirstCommandRunnable(t *testing.T) {
	readme := filepath.Join(repoRoot, "README.md")
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := docBlocks(readme)
	if err != nil {
		t.Fatal(err)
	}
	// The first shell block of the README is the "run it" command: it must be tested.
	i := strings.Index(string(data), "```sh\n")
	if i < 0 {
		t.Fatal("README.md has no ```sh block")
	}
	first := strings.Count(string(data[:i]), "\n") + 1
	if len(blocks) == 0 || blocks[0].line != first {
		t.Fatalf("README.md's first shell block (line %d) is not marked %s", first, docsMarker)
	}
	for _, f := range docFiles(t) {
		bs, err := docBlocks(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bs {
			// The test suite runs this test: a block running it would recurse.
			if runsTestSuite.MatchString(b.code) {
				t.Errorf("%s:%d: a runnable block runs the test suite", b.file, b.line)
			}
		}
	}
}

// TestDocsCommands runs every runnable block, in file order, with the built binary on
// PATH as lovia, in a copy of the repository with a private home, no API keys and
// every provider pointed at a closed port (only script: models can answer).
func TestDocsCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every documented command")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found")
	}
	goEnv := map[string]string{}
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err == nil {
		vals := strings.Split(strings.TrimSpace(string(out)), "\n")
		for i, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
			if i < len(vals) {
				goEnv[k] = vals[i]
			}
		}
	}
	binDir := filepath.Dir(bin)
	total := 0
	for _, file := range docFiles(t) {
		blocks, err := docBlocks(file)
		if err != nil {
			t.Fatal(err)
		}
		if len(blocks) == 0 {
			continue
		}
		rel, _ := filepath.Rel(repoRoot, file)
		t.Run(rel, func(t *testing.T) {
			base := t.TempDir()
			work, home := filepath.Join(base, "repo"), filepath.Join(base, "home")
			copyRepo(t, work)
			if err := os.MkdirAll(home, 0o755); err != nil {
				t.Fatal(err)
			}
			env := []string{
				"PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH"),
				"HOME=" + home,
				"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
				"LOVIA_HOME=" + filepath.Join(home, ".local", "share", "lovia"),
				"TMPDIR=" + base,
				"TERM=dumb",
				"LANG=C.UTF-8",
				// No network: every provider points at a port nobody listens on.
				"OPENAI_BASE_URL=http://127.0.0.1:9/v1",
				"ANTHROPIC_BASE_URL=http://127.0.0.1:9",
				"OLLAMA_HOST=127.0.0.1:9",
				"GOPROXY=off",
				"GOTOOLCHAIN=local",
				"GOFLAGS=",
			}
			for k, v := range goEnv {
				env = append(env, k+"="+v)
			}
			for _, b := range blocks {
				total++
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
				cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", b.code)
				cmd.Dir, cmd.Env = work, env
				var outb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &outb, &outb
				cmd.Stdin = nil
				err := cmd.Run()
				cancel()
				if err != nil {
					t.Errorf("%s:%d: %v\n--- block ---\n%s--- output ---\n%s", rel, b.line, err, b.code, docsTail(outb.String(), 4000))
				}
			}
		})
	}
	t.Logf("%d runnable blocks", total)
}

// copyRepo copies the repository's tracked and unignored files (the working tree's
// contents; every file outside a git checkout) to dst, so blocks may write files without touching the checkout.
func copyRepo(t *testing.T, dst string) {
	t.Helper()
	var files []string
	if out, err := exec.Command("git", "-C", repoRoot, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output(); err == nil {
		files = strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	} else {
		// Not a git checkout (a source archive): take every file but VCS metadata.
		err := filepath.WalkDir(repoRoot, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == ".git" || d.Name() == ".jj") {
				return filepath.SkipDir
			}
			if !d.IsDir() {
				rel, _ := filepath.Rel(repoRoot, p)
				files = append(files, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, rel := range files {
		if rel == "" {
			continue
		}
		src := filepath.Join(repoRoot, rel)
		st, err := os.Lstat(src)
		if err != nil || !st.Mode().IsRegular() {
			continue // deleted in the working tree, or a symlink
		}
		if strings.HasSuffix(rel, ".test") && st.Mode()&0o111 != 0 {
			continue // a stray test binary
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, st.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

func docsTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

func TestDocBlocksParse(t *testing.T) {
	tests := []struct {
		name    string
		md      string
		want    []string // block code
		wantErr string
	}{
		{"marked", "text\n<!-- test -->\n```sh\necho a\necho b\n```\n", []string{"echo a\necho b\n"}, ""},
		{"blank line between", "<!-- test -->\n\n```bash\necho a\n```\n", []string{"echo a\n"}, ""},
		{"unmarked", "```sh\necho a\n```\n", nil, ""},
		{"marker inside an example fence", "````markdown\n<!-- test -->\n```sh\necho a\n```\n````\n", nil, ""},
		{"marker before yaml", "<!-- test -->\n```yaml\na: 1\n```\n", nil, "must be followed by"},
		{"marker before prose", "<!-- test -->\nsome text\n", nil, "must be followed by"},
		{"unclosed", "<!-- test -->\n```sh\necho a\n", nil, "unclosed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "x.md")
			if err := os.WriteFile(p, []byte(tt.md), 0o644); err != nil {
				t.Fatal(err)
			}
			bs, err := docBlocks(p)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, b := range bs {
				got = append(got, b.code)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Fatalf("blocks %q, want %q", got, tt.want)
			}
		})
	}
}

// TestVersionFromReleaseLdflags builds lovia the way .goreleaser.yaml does (the same
// -X flags, read from that file) and checks that lovia version shows them.
func TestVersionFromReleaseLdflags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds lovia")
	}
	cfg, err := os.ReadFile(filepath.Join(repoRoot, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]string{"{{.Version}}": "1.2.3", "{{.ShortCommit}}": "abc1234", "{{.Date}}": "2026-01-02T03:04:05Z"}
	var flags []string
	for _, line := range strings.Split(string(cfg), "\n") {
		l := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "- "))
		if !strings.HasPrefix(l, "-X ") {
			continue
		}
		for k, v := range values {
			l = strings.ReplaceAll(l, k, v)
		}
		flags = append(flags, l)
	}
	if len(flags) != 3 {
		t.Fatalf(".goreleaser.yaml has %d -X ldflags, want 3 (version, commit, date): %q", len(flags), flags)
	}
	out := filepath.Join(t.TempDir(), "lovia")
	build := exec.Command("go", "build", "-ldflags", strings.Join(flags, " "), "-o", out, ".")
	build.Dir = repoRoot
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	got, err := exec.Command(out, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "lovia 1.2.3 (commit abc1234, built 2026-01-02T03:04:05Z)"; !strings.HasPrefix(string(got), want) {
		t.Fatalf("lovia version = %q, want prefix %q", got, want)
	}
}

func FuzzDocBlocks(f *testing.F) {
	f.Add("<!-- test -->\n```sh\necho a\n```\n")
	f.Add("````md\n<!-- test -->\n```sh\nx\n```\n````\n<!-- test -->\n\n```bash\ny\n```")
	f.Add("<!-- test -->\n```yaml\n")
	f.Fuzz(func(t *testing.T, md string) {
		p := filepath.Join(t.TempDir(), "f.md")
		if err := os.WriteFile(p, []byte(md), 0o644); err != nil {
			t.Fatal(err)
		}
		bs, err := docBlocks(p)
		if err != nil {
			return
		}
		lines := strings.Count(md, "\n") + 1
		for _, b := range bs {
			if b.line < 2 || b.line > lines {
				t.Fatalf("block at line %d of a %d-line file", b.line, lines)
			}
			// The scanner drops a \r before each \n.
			if !strings.Contains(strings.ReplaceAll(md, "\r\n", "\n"), b.code) {
				t.Fatalf("block code %q is not in the file", b.code)
			}
		}
	})
}

func TestRunsTestSuite(t *testing.T) {
	for code, want := range map[string]bool{
		"go vet ./... && go test -race ./...\n":                            true,
		"go test ./...\n":                                                  true,
		"  go test -run X ./cmd\n":                                         true,
		"{prefix: go test, decision: allow}\n":                             false,
		`grep '"summary": "run the tests: go test ./..."' out.json` + "\n": false,
	} {
		if got := runsTestSuite.MatchString(code); got != want {
			t.Errorf("runsTestSuite(%q) = %v, want %v", code, got, want)
		}
	}
}
