package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, p, body string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadAndExpand(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	write(t, filepath.Join(home, ".claude", "commands", "fix-issue.md"), "Fix issue #$1 with priority $2. Details: $ARGUMENTS")
	write(t, filepath.Join(home, ".codex", "prompts", "draftpr.md"), "---\ndescription: Draft a PR\n---\nDraft a PR for $1.")
	write(t, filepath.Join(root, ".claude", "commands", "review.md"), "---\ndescription: Review\nargument-hint: [area]\nmodel: claude-3-5-haiku-20241022\nallowed-tools: Bash(git diff:*), Read\n---\nReview $ARGUMENTS. Rules: @RULES.md")
	write(t, filepath.Join(root, ".claude", "commands", "frontend", "component.md"), "Make a component")
	write(t, filepath.Join(root, ".lovia", "commands", "review.md"), "---\ndescription: lovia review\n---\nLovia review of $ARGUMENTS")
	write(t, filepath.Join(root, "RULES.md"), "No panics.")
	list, problems := Load(Dirs(home, filepath.Join(home, ".config", "lovia"), root))
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	got := map[string]Command{}
	for _, c := range list {
		got[c.Name] = c
	}
	for _, n := range []string{"fix-issue", "prompts:draftpr", "review", "frontend:component"} {
		if _, ok := got[n]; !ok {
			t.Errorf("missing /%s in %v", n, list)
		}
	}
	if got["review"].Description != "lovia review" {
		t.Errorf(".lovia/commands should win over .claude/commands: %+v", got["review"])
	}
	out, _ := got["fix-issue"].Expand(`123 "high priority"`, root, nil)
	if out != `Fix issue #123 with priority high priority. Details: 123 "high priority"` {
		t.Errorf("fix-issue = %q", out)
	}
	c, err := Parse("r.md", "r", []byte("---\ndescription: Review\nmodel: claude-3-5-haiku-20241022\nallowed-tools: Bash(git diff:*), Read\n---\nReview $ARGUMENTS. Rules: @RULES.md"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != "claude-3-5-haiku-20241022" || strings.Join(c.AllowedTools, "|") != "Bash(git diff:*)|Read" {
		t.Errorf("front matter: %+v", c)
	}
	out, _ = c.Expand("the store", root, nil)
	if !strings.HasPrefix(out, "Review the store. Rules: @RULES.md") || !strings.Contains(out, "Contents of RULES.md:\n```\nNo panics.\n```") {
		t.Errorf("expanded:\n%s", out)
	}
	out, _ = got["frontend:component"].Expand("Button", root, nil)
	if out != "Make a component\n\nARGUMENTS: Button" {
		t.Errorf("no placeholder: %q", out)
	}
}

func TestIncludeLinkOutRefused(t *testing.T) {
	root := t.TempDir()
	secret := filepath.Join(t.TempDir(), "secret.txt")
	write(t, secret, "CANARY")
	if err := os.Symlink(secret, filepath.Join(root, "notes.md")); err != nil {
		t.Skip(err)
	}
	out, notes := Command{Body: "see @notes.md and @../x.md"}.Expand("", root, nil)
	if strings.Contains(out, "CANARY") || len(notes) == 0 {
		t.Fatalf("out=%q notes=%v", out, notes)
	}
}

func TestToolListAndSplit(t *testing.T) {
	for in, want := range map[string]string{
		"Read, Grep, Glob":                    "Read|Grep|Glob",
		"Read Grep":                           "Read|Grep",
		"Bash(git add:*), Bash(git status:*)": "Bash(git add:*)|Bash(git status:*)",
		"Bash(git add:*) Read":                "Bash(git add:*)|Read",
	} {
		if got := strings.Join(ToolList(in), "|"); got != want {
			t.Errorf("ToolList(%q) = %q, want %q", in, got, want)
		}
	}
	if n, a, ok := Split("/review  the store "); !ok || n != "review" || a != "the store" {
		t.Errorf("Split = %q %q %v", n, a, ok)
	}
	if _, _, ok := Split("/etc/hosts is wrong"); ok {
		t.Error("a path is not a command")
	}
}

func TestIncludeDeniedByPolicy(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, ".env"), "CANARY")
	out, notes := Command{Body: "deploy with @.env"}.Expand("", root, func(string) string { return "denied" })
	if strings.Contains(out, "CANARY") || len(notes) != 1 {
		t.Fatalf("out=%q notes=%v", out, notes)
	}
}
