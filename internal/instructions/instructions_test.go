package instructions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestOrder(t *testing.T) {
	base := t.TempDir()
	user, root := filepath.Join(base, "cfg"), filepath.Join(base, "repo")
	cwd := filepath.Join(root, "a", "b")
	write(t, filepath.Join(user, "AGENTS.md"), "global rule")
	write(t, filepath.Join(root, "AGENTS.md"), "root rule")
	write(t, filepath.Join(root, "CLAUDE.md"), "claude rule beside AGENTS.md")
	write(t, filepath.Join(root, "a", "CLAUDE.md"), "a rule from CLAUDE.md")
	write(t, filepath.Join(cwd, "AGENTS.md"), "b rule")
	write(t, filepath.Join(base, "AGENTS.md"), "outside the repo: ignored")
	res, problems := Load(Options{UserDir: user, Root: root, Cwd: cwd})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	var order []string
	for _, f := range res.Files {
		order = append(order, strings.TrimPrefix(f.Path, base))
	}
	want := []string{"/cfg/AGENTS.md", "/repo/AGENTS.md", "/repo/CLAUDE.md", "/repo/a/CLAUDE.md", "/repo/a/b/AGENTS.md"}
	if strings.Join(order, ",") != strings.Join(want, ",") {
		t.Fatalf("files %v, want %v", order, want)
	}
	for _, s := range []string{"global rule", "root rule", "claude rule beside AGENTS.md", "a rule from CLAUDE.md", "b rule"} {
		if !strings.Contains(res.Text, s) {
			t.Errorf("text lacks %q", s)
		}
	}
	if strings.Contains(res.Text, "ignored") || strings.Index(res.Text, "root rule") > strings.Index(res.Text, "b rule") {
		t.Errorf("text:\n%s", res.Text)
	}
}

func TestCap(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "AGENTS.md"), strings.Repeat("é", 40<<10))
	res, _ := Load(Options{Root: root, Cwd: root})
	if !res.Truncated || len(res.Text) > DefaultMaxBytes+1024 {
		t.Fatalf("truncated %v, %d bytes", res.Truncated, len(res.Text))
	}
	if !strings.Contains(res.Text, "Instructions truncated at 32 KiB") || !strings.Contains(res.Text, "bytes omitted") {
		t.Errorf("no notice: %s", res.Text[len(res.Text)-200:])
	}
	if !strings.HasSuffix(strings.Split(res.Text, "\n\n[Instructions")[0], "é") {
		t.Error("cut inside a rune")
	}
}

func TestNothing(t *testing.T) {
	res, problems := Load(Options{Root: t.TempDir()})
	if res.Text != "" || len(problems) != 0 {
		t.Errorf("%+v %v", res, problems)
	}
}
