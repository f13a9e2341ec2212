package skills

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// TestSkillsFolderCreatedLater: a project whose .claude/skills does not exist at
// start sees the skills folder (and a skill in it) once it is made.
func TestSkillsFolderCreatedLater(t *testing.T) {
	repo := t.TempDir()
	root := filepath.Join(repo, ".claude", "skills")
	c, err := New(Config{Dirs: []string{root}}, nil).Setup(context.Background(), &tool.RunContext{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	writeSkill(t, root, "late", "made after the start", "late body")
	waitFor(t, "skill in a folder made after the start", func() bool {
		es, _ := c.ViewInjectors[0](context.Background(), &tool.RunContext{})
		return len(es) > 0 && strings.Contains(es[0].Text, "- late: made after the start")
	})
}

// TestAllowedToolsWhileActive: loading a skill with allowed-tools refuses other
// tools until a skill without them is loaded; disable-model-invocation hides a skill
// from the model.
func TestAllowedToolsWhileActive(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "review"), 0o755)
	os.WriteFile(filepath.Join(root, "review", "SKILL.md"), []byte("---\ndescription: review code\nallowed-tools: Read, Grep, Glob\n---\nreview"), 0o644)
	writeSkill(t, root, "free", "no bounds", "free body")
	os.MkdirAll(filepath.Join(root, "deploy"), 0o755)
	os.WriteFile(filepath.Join(root, "deploy", "SKILL.md"), []byte("---\nname: deploy\ndescription: deploy prod\ndisable-model-invocation: true\n---\nsteps"), 0o644)
	c, err := New(Config{Dirs: []string{root}, NoWatch: true}, nil).Setup(context.Background(), &tool.RunContext{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(c.Instructions, "deploy") || !strings.Contains(c.Instructions, "review: review code") {
		t.Errorf("instructions:\n%s", c.Instructions)
	}
	if res := invoke(t, c, LoadToolName, `{"name":"deploy"}`); !res.IsError {
		t.Errorf("the model loaded a user-only skill: %+v", res)
	}
	gate := func(name string) bool {
		v, err := c.ToolGates[0](context.Background(), nil, transcript.ToolCall("c", name, json.RawMessage(`{}`)))
		if err != nil {
			t.Fatal(err)
		}
		return v.Block
	}
	if gate("shell") {
		t.Fatal("blocked before any skill is active")
	}
	invoke(t, c, LoadToolName, `{"name":"review"}`)
	if !gate("shell") || !gate("write_file") || gate("read_file") || gate("grep_files") || gate("list_files") || gate(LoadToolName) {
		t.Fatal("review's allowed-tools (Read, Grep, Glob) not enforced")
	}
	invoke(t, c, LoadToolName, `{"name":"free"}`)
	if gate("shell") {
		t.Fatal("a skill without allowed-tools should lift the bound")
	}
}
