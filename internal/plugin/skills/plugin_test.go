package skills

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/tool"
	bundled "github.com/lovia-dev/lovia/skills"
)

func writeSkill(t *testing.T, root, name, desc, body string) string {
	t.Helper()
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "SKILL.md")
	if err := os.WriteFile(p, []byte("---\nname: "+name+"\ndescription: "+desc+"\n---\n"+body), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestListPrecedenceAndProblems(t *testing.T) {
	user, project := t.TempDir(), t.TempDir()
	writeSkill(t, user, "git-commit", "my own commit style", "x")
	writeSkill(t, user, "deploy", "deploy the app", "steps")
	writeSkill(t, project, "deploy", "deploy this project", "project steps")
	bad := filepath.Join(project, "broken")
	os.MkdirAll(bad, 0o755)
	os.WriteFile(filepath.Join(bad, "SKILL.md"), []byte("---\nname: broken\ndescription: [oops\n---\n"), 0o644)
	os.MkdirAll(filepath.Join(project, "not-a-skill"), 0o755) // no SKILL.md: ignored

	list, problems := List(context.Background(), Config{Bundled: bundled.FS, Dirs: []string{user, filepath.Join(user, "missing"), project}})
	got := map[string]Skill{}
	for _, s := range list {
		got[s.Name] = s
	}
	for _, want := range []string{"git-commit", "code-review", "go-testing", "deploy"} {
		if _, ok := got[want]; !ok {
			t.Errorf("skill %s missing from %v", want, list)
		}
	}
	if got["git-commit"].Description != "my own commit style" || len(got["git-commit"].Shadows) != 1 || !strings.HasPrefix(got["git-commit"].Shadows[0], "bundled:") {
		t.Errorf("user skill should replace the bundled one: %+v", got["git-commit"])
	}
	if got["deploy"].Description != "deploy this project" {
		t.Errorf("project skill should replace the user one: %+v", got["deploy"])
	}
	if _, ok := got["broken"]; ok {
		t.Error("broken skill loaded")
	}
	if len(problems) != 1 || !strings.Contains(problems[0].Error(), filepath.Join(bad, "SKILL.md")+":3:") {
		t.Fatalf("problems = %v, want one naming broken/SKILL.md line 3", problems)
	}
}

func TestReadFileConfinement(t *testing.T) {
	root := t.TempDir()
	dir := writeSkill(t, root, "s", "d", "b")
	os.MkdirAll(filepath.Join(dir, "ref"), 0o755)
	os.WriteFile(filepath.Join(dir, "ref", "a.md"), []byte("inside"), 0o644)
	secret := filepath.Join(root, "secret.txt")
	os.WriteFile(secret, []byte("secret"), 0o644)
	os.Symlink(secret, filepath.Join(dir, "link.txt"))
	os.Symlink(filepath.Join(dir, "ref", "a.md"), filepath.Join(dir, "ok-link.md"))

	list, _ := List(context.Background(), Config{Dirs: []string{root}})
	if len(list) != 1 {
		t.Fatalf("list = %v", list)
	}
	s := list[0]
	tests := []struct {
		path    string
		want    string
		wantErr string
	}{
		{"ref/a.md", "inside", ""},
		{"./ref/../ref/a.md", "inside", ""},
		{"ok-link.md", "inside", ""},
		{"../secret.txt", "", "leaves the skill's folder"},
		{"ref/../../secret.txt", "", "leaves the skill's folder"},
		{secret, "", "leaves the skill's folder"},
		{"link.txt", "", "leaves the skill's folder"},
		{"ref", "", "directory"},
		{"nope.md", "", "no such file"},
	}
	for _, tc := range tests {
		data, err := s.ReadFile(tc.path)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ReadFile(%q) = %q, %v; want error %q", tc.path, data, err, tc.wantErr)
			}
			continue
		}
		if err != nil || string(data) != tc.want {
			t.Errorf("ReadFile(%q) = %q, %v; want %q", tc.path, data, err, tc.want)
		}
	}
	files, _ := s.Files(0)
	if strings.Join(files, ",") != "link.txt,ok-link.md,ref/a.md" {
		t.Errorf("files = %v", files)
	}
}

func invoke(t *testing.T, c *plugin.Contribution, name, args string) tool.Result {
	t.Helper()
	for _, tl := range c.Tools {
		if tl.Spec().Name == name {
			if err := tl.Spec().Validate(json.RawMessage(args)); err != nil {
				t.Fatalf("%s args rejected: %v", name, err)
			}
			res, err := tl.Invoke(context.Background(), &tool.RunContext{}, json.RawMessage(args))
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
	}
	t.Fatalf("no tool %s", name)
	return tool.Result{}
}

func TestBundledThroughTools(t *testing.T) {
	c, err := New(Config{Bundled: bundled.FS, NoWatch: true}, nil).Setup(context.Background(), &tool.RunContext{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.Instructions, "- git-commit: Write a clear") || strings.Contains(c.Instructions, "git status --short") {
		t.Fatalf("instructions must list names and descriptions only:\n%s", c.Instructions)
	}
	res := invoke(t, c, LoadToolName, `{"name":"go-testing"}`)
	if res.IsError || !strings.Contains(res.Text, "go test -race") || !strings.Contains(res.Text, "- table-test.md") {
		t.Fatalf("load_skill = %+v", res)
	}
	res = invoke(t, c, ReadToolName, `{"name":"go-testing","path":"table-test.md"}`)
	if res.IsError || !strings.Contains(res.Text, "func TestParseDuration") {
		t.Fatalf("read_skill_file = %+v", res)
	}
	res = invoke(t, c, ReadToolName, `{"name":"go-testing","path":"../git-commit/SKILL.md"}`)
	if !res.IsError {
		t.Fatalf("escaped the bundled folder: %+v", res)
	}
	res = invoke(t, c, LoadToolName, `{"name":"nope"}`)
	if !res.IsError || !strings.Contains(res.Text, "available: code-review, git-commit, go-testing") {
		t.Fatalf("unknown skill = %+v", res)
	}
}

// waitFor polls f until it returns true (the watcher delivers events asynchronously).
func waitFor(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestWatchAddEditDelete(t *testing.T) {
	root := t.TempDir()
	writeSkill(t, root, "alpha", "first skill", "alpha body v1")
	c, err := New(Config{Dirs: []string{root}}, nil).Setup(context.Background(), &tool.RunContext{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	inject := func() string {
		es, err := c.ViewInjectors[0](context.Background(), &tool.RunContext{})
		if err != nil {
			t.Fatal(err)
		}
		if len(es) == 0 {
			return ""
		}
		if !es[0].Synthetic || !es[0].IsUser() {
			t.Fatalf("injected entry = %+v", es[0])
		}
		return es[0].Text
	}
	if got := inject(); got != "" {
		t.Fatalf("no change yet, injected %q", got)
	}

	writeSkill(t, root, "beta", "second skill", "beta body")
	waitFor(t, "added skill", func() bool { return strings.Contains(inject(), "New skills:\n- beta: second skill") })
	if res := invoke(t, c, LoadToolName, `{"name":"beta"}`); res.IsError || !strings.Contains(res.Text, "beta body") {
		t.Fatalf("load new skill = %+v", res)
	}

	os.WriteFile(filepath.Join(root, "alpha", "SKILL.md"), []byte("---\nname: alpha\ndescription: first skill\n---\nalpha body v2"), 0o644)
	waitFor(t, "edited skill", func() bool {
		return strings.Contains(inject(), "Updated skills (load them again before relying on them):\n- alpha")
	})
	if res := invoke(t, c, LoadToolName, `{"name":"alpha"}`); !strings.Contains(res.Text, "alpha body v2") {
		t.Fatalf("load edited skill = %+v", res)
	}

	os.RemoveAll(filepath.Join(root, "alpha"))
	waitFor(t, "deleted skill", func() bool { return strings.Contains(inject(), "Removed skills (no longer available):\n- alpha") })
	if res := invoke(t, c, LoadToolName, `{"name":"alpha"}`); !res.IsError {
		t.Fatalf("deleted skill still loads: %+v", res)
	}

	// A broken edit is reported with file and line; the others stay.
	os.WriteFile(filepath.Join(root, "beta", "SKILL.md"), []byte("---\nname: beta\ndescription: [x\n---\n"), 0o644)
	waitFor(t, "broken skill", func() bool {
		return strings.Contains(inject(), filepath.Join(root, "beta", "SKILL.md")+":3: invalid YAML")
	})
}

func TestBundledFSOnly(t *testing.T) {
	fsys := fstest.MapFS{
		"a/SKILL.md":      {Data: []byte("---\nname: a\ndescription: d\n---\nbody")},
		"a/sub/x.txt":     {Data: []byte("x")},
		"a/.hidden":       {Data: []byte("h")},
		"b/SKILL.md":      {Data: []byte("no frontmatter")},
		"readme.md":       {Data: []byte("not a skill")},
		"c/notaskill.txt": {Data: []byte("")},
	}
	list, problems := List(context.Background(), Config{Bundled: fsys})
	if len(list) != 1 || list[0].Dir != "bundled:a" {
		t.Fatalf("list = %+v", list)
	}
	if len(problems) != 1 || !strings.HasPrefix(problems[0].Error(), "bundled:b/SKILL.md:1:") {
		t.Fatalf("problems = %v", problems)
	}
	files, _ := list[0].Files(0)
	if len(files) != 1 || files[0] != "sub/x.txt" {
		t.Fatalf("files = %v", files)
	}
}
