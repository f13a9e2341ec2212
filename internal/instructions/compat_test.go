package instructions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClaudeRepo: a repository whose CLAUDE.md imports AGENTS.md, with a nested
// CLAUDE.md and a CLAUDE.local.md, loads each file once, in order, with the imports
// expanded and the refused ones noted.
func TestClaudeRepo(t *testing.T) {
	root, err := filepath.Abs("testdata/claude-repo")
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	write(t, filepath.Join(home, ".claude", "CLAUDE.md"), "Claude global: prefer small commits. @~/.claude/my-notes.md")
	write(t, filepath.Join(home, ".claude", "my-notes.md"), "personal note from home")
	write(t, filepath.Join(home, ".config", "lovia", "AGENTS.md"), "lovia global rule")
	cwd := filepath.Join(root, "pkg", "api")
	res, problems := Load(Options{UserDir: filepath.Join(home, ".config", "lovia"), ClaudeDir: filepath.Join(home, ".claude"), Home: home, Root: root, Cwd: cwd})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	var got []string
	for _, f := range res.Files {
		p := strings.TrimPrefix(strings.TrimPrefix(f.Path, root+"/"), home+"/")
		got = append(got, p+" <- "+f.Why)
	}
	want := []string{
		".config/lovia/AGENTS.md <- global (lovia)",
		".claude/CLAUDE.md <- global (Claude Code)",
		".claude/my-notes.md <- imported by " + filepath.Join(home, ".claude", "CLAUDE.md"),
		"AGENTS.md <- project root",
		"CLAUDE.md <- project root",
		"docs/style.md <- imported by " + filepath.Join(root, "CLAUDE.md"),
		"docs/deep1.md <- imported by " + filepath.Join(root, "docs/style.md"),
		"docs/deep2.md <- imported by " + filepath.Join(root, "docs/deep1.md"),
		"docs/deep3.md <- imported by " + filepath.Join(root, "docs/deep2.md"),
		"docs/deep4.md <- imported by " + filepath.Join(root, "docs/deep3.md"),
		"CLAUDE.local.md <- project root",
		"pkg/api/CLAUDE.md <- directory pkg/api",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("files:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := strings.Count(res.Text, "Build with `make build`"); n != 1 {
		t.Errorf("AGENTS.md appears %d times (want once although CLAUDE.md imports it)", n)
	}
	for _, s := range []string{"outside the repository", "level 6"} {
		if strings.Contains(res.Text, s) {
			t.Errorf("text has %q", s)
		}
	}
	notes := strings.Join(res.Notes, "\n")
	for _, s := range []string{
		"@~/.claude/my-notes.md not followed: ~ imports are read from your own files only",
		"@../outside.md not followed: it is outside " + root,
		"@deep5.md not followed: imports nest deeper than 5",
		"@../CLAUDE.md not followed: it imports itself (a cycle)",
	} {
		if !strings.Contains(notes, s) {
			t.Errorf("notes lack %q:\n%s", s, notes)
		}
	}
}

// TestImportLinkOutRefused: an import that is a link out of the repository is not
// read (the repository is untrusted).
func TestImportLinkOutRefused(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "id_rsa")
	write(t, secret, "CANARY-KEY")
	root := t.TempDir()
	write(t, filepath.Join(root, "CLAUDE.md"), "see @notes.md")
	if err := os.Symlink(secret, filepath.Join(root, "notes.md")); err != nil {
		t.Skip(err)
	}
	res, problems := Load(Options{Root: root, Cwd: root})
	if strings.Contains(res.Text, "CANARY") {
		t.Fatal("a link out of the repository was read")
	}
	if len(problems) != 1 || !strings.Contains(problems[0].Error(), "notes.md") {
		t.Fatalf("problems = %v", problems)
	}
}

func TestImportsSyntax(t *testing.T) {
	got := imports("@a.md first\nsee @docs/b.md, and (@c/d.md)\nmail me@x.com or ping @alice\n`@e.md` ```\n```\n@f.md\n```\n@g.md")
	want := "a.md docs/b.md c/d.md g.md"
	if strings.Join(got, " ") != want {
		t.Fatalf("imports = %v, want %s", got, want)
	}
}

// TestImportDeniedByPolicy: an import the workspace policy denies reading is not
// followed (a repository's CLAUDE.md cannot pull a denied .env into the prompt).
func TestImportDeniedByPolicy(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "CLAUDE.md"), "Config: @.env.local")
	write(t, filepath.Join(root, ".env.local"), "API_KEY=CANARY")
	denied := func(abs string) string {
		if strings.HasPrefix(filepath.Base(abs), ".env") {
			return "denied by the rule .env*"
		}
		return ""
	}
	res, _ := Load(Options{Root: root, Cwd: root, Denied: denied})
	if strings.Contains(res.Text, "CANARY") || !strings.Contains(strings.Join(res.Notes, "\n"), "policy denies reading it") {
		t.Fatalf("text %q notes %v", res.Text, res.Notes)
	}
}

// TestLinkedFileDeniedByPolicy: the repository's CLAUDE.md itself may be a link to
// a file the policy denies reading (CLAUDE.md -> .env); it is left out like such an
// import, while the user's global file is not judged by the repository's rules.
func TestLinkedFileDeniedByPolicy(t *testing.T) {
	base := t.TempDir()
	user, root := filepath.Join(base, "cfg"), filepath.Join(base, "repo")
	write(t, filepath.Join(user, "AGENTS.md"), "global rule")
	write(t, filepath.Join(root, ".env"), "API_KEY=CANARY")
	write(t, filepath.Join(root, "AGENTS.md"), "root rule")
	if err := os.Symlink(".env", filepath.Join(root, "CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	denied := func(abs string) string {
		if real, err := filepath.EvalSymlinks(abs); err == nil && strings.HasPrefix(filepath.Base(real), ".env") {
			return "denied by the rule .env*"
		}
		if strings.HasPrefix(abs, user) {
			return "outside the root" // readonly: must not hide the user's own file
		}
		return ""
	}
	res, problems := Load(Options{UserDir: user, Root: root, Cwd: root, Denied: denied})
	if strings.Contains(res.Text, "CANARY") || !strings.Contains(res.Text, "root rule") || !strings.Contains(res.Text, "global rule") {
		t.Fatalf("text %q", res.Text)
	}
	if len(problems) != 1 || !strings.Contains(problems[0].Error(), "policy denies reading it") {
		t.Fatalf("problems %v", problems)
	}
}
