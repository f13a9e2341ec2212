package memory

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/tool"
)

func newTest(t *testing.T, mut func(*Config)) (*Plugin, Config) {
	t.Helper()
	dir := t.TempDir()
	a, err := OpenArchive(context.Background(), filepath.Join(dir, "db", "memory.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	cfg := DefaultConfig(filepath.Join(dir, "home"), filepath.Join(dir, "repo"))
	cfg.Archive = a
	if mut != nil {
		mut(&cfg)
	}
	return New(cfg, nil), cfg
}

func call(t *testing.T, c *plugin.Contribution, name, args string) tool.Result {
	t.Helper()
	for _, tl := range c.Tools {
		if tl.Spec().Name == name {
			if err := tl.Spec().Validate(json.RawMessage(args)); err != nil {
				t.Fatalf("%s %s: %v", name, args, err)
			}
			res, err := tl.Invoke(context.Background(), &tool.RunContext{RunID: "r1", SessionID: "s1"}, json.RawMessage(args))
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
	}
	t.Fatalf("no tool %s", name)
	return tool.Result{}
}

func TestRememberSearchForget(t *testing.T) {
	p, cfg := newTest(t, nil)
	c, err := p.Setup(context.Background(), &tool.RunContext{})
	if err != nil {
		t.Fatal(err)
	}
	res := call(t, c, "remember", `{"content":"The integration tests need Docker running","tags":"testing ci"}`)
	if res.IsError || !strings.Contains(res.Text, "saved as m1") {
		t.Fatalf("remember = %+v", res)
	}
	call(t, c, "remember", `{"content":"User prefers tabs over spaces","scope":"global","pin":true}`)
	call(t, c, "remember", `{"content":"Deploys go through make release"}`)

	res = call(t, c, "search_memory", `{"query":"docker tests?"}`)
	if res.IsError || !strings.HasPrefix(res.Text, "m1 (project, ") || strings.Contains(res.Text, "tabs") {
		t.Fatalf("search = %+v", res)
	}
	// Porter stemming and prefixes: "preferences" finds "prefers".
	if res := call(t, c, "search_memory", `{"query":"prefer"}`); !strings.Contains(res.Text, "m2 (global, pinned") {
		t.Fatalf("search prefer = %+v", res)
	}
	// FTS syntax in the query is inert.
	if res := call(t, c, "search_memory", `{"query":"\"NEAR( * OR"}`); res.IsError {
		t.Fatalf("query with FTS syntax failed: %+v", res)
	}
	if res := call(t, c, "search_memory", `{"query":"kubernetes"}`); res.IsError || !strings.Contains(res.Text, "No memories match") {
		t.Fatalf("no match = %+v", res)
	}

	// The pinned note is in the global MEMORY.md and in the next run's instructions.
	data, _ := os.ReadFile(cfg.GlobalNotes)
	if string(data) != "- User prefers tabs over spaces\n" {
		t.Fatalf("global MEMORY.md = %q", data)
	}
	c2, _ := p.Setup(context.Background(), &tool.RunContext{})
	if !strings.Contains(c2.Instructions, "### Global notes ("+cfg.GlobalNotes+")\n- User prefers tabs over spaces") {
		t.Fatalf("instructions:\n%s", c2.Instructions)
	}

	// Forgetting a pinned memory also unpins it.
	if res := call(t, c, "forget", `{"id":"m2"}`); res.IsError {
		t.Fatalf("forget = %+v", res)
	}
	data, _ = os.ReadFile(cfg.GlobalNotes)
	if len(data) != 0 {
		t.Fatalf("note not unpinned: %q", data)
	}
	if res := call(t, c, "search_memory", `{"query":"tabs"}`); !strings.Contains(res.Text, "No memories") {
		t.Fatalf("forgotten memory still found: %+v", res)
	}
	if res := call(t, c, "forget", `{"id":"m99"}`); !res.IsError {
		t.Fatalf("forget unknown = %+v", res)
	}
}

func TestProjectsAreSeparate(t *testing.T) {
	dir := t.TempDir()
	a, err := OpenArchive(context.Background(), filepath.Join(dir, "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	pa := New(Config{Archive: a, Project: "/repo/a"}, nil)
	pb := New(Config{Archive: a, Project: "/repo/b"}, nil)
	ca, _ := pa.Setup(context.Background(), &tool.RunContext{})
	cb, _ := pb.Setup(context.Background(), &tool.RunContext{})
	call(t, ca, "remember", `{"content":"alpha secret handshake"}`)
	call(t, ca, "remember", `{"content":"alpha global fact","scope":"global"}`)
	res := call(t, cb, "search_memory", `{"query":"alpha"}`)
	if strings.Contains(res.Text, "handshake") || !strings.Contains(res.Text, "global fact") {
		t.Fatalf("project b sees = %q", res.Text)
	}
	if res := call(t, cb, "forget", `{"id":"m1"}`); !res.IsError {
		t.Fatal("project b deleted project a's memory")
	}
}

func TestPinBudgetAndPolicy(t *testing.T) {
	denied := errors.New("outside the workspace")
	p, cfg := newTest(t, func(c *Config) {
		c.MaxNotesChars = 60
		c.CheckWrite = func(_ context.Context, _ *tool.RunContext, path string) error {
			if strings.Contains(path, "home") {
				return denied
			}
			return nil
		}
	})
	c, _ := p.Setup(context.Background(), &tool.RunContext{})
	if res := call(t, c, "remember", `{"content":"short note","pin":true}`); res.IsError {
		t.Fatalf("pin = %+v", res)
	}
	res := call(t, c, "remember", `{"content":"this note is far too long to fit in the tiny notes budget here","pin":true}`)
	if !res.IsError || !strings.Contains(res.Text, "over the 60 budget") {
		t.Fatalf("over budget = %+v", res)
	}
	res = call(t, c, "remember", `{"content":"x","scope":"global","pin":true}`)
	if !res.IsError || !strings.Contains(res.Text, "outside the workspace") {
		t.Fatalf("policy = %+v", res)
	}
	data, _ := os.ReadFile(cfg.ProjectNotes)
	if string(data) != "- short note\n" {
		t.Fatalf("project MEMORY.md = %q", data)
	}
	// Forget by note text (e.g. a line the user wrote by hand).
	os.WriteFile(cfg.ProjectNotes, []byte("# Notes\n- short note\n- hand written\n"), 0o644)
	if res := call(t, c, "forget", `{"note":"hand written"}`); res.IsError {
		t.Fatalf("forget note = %+v", res)
	}
	data, _ = os.ReadFile(cfg.ProjectNotes)
	if string(data) != "# Notes\n- short note\n" {
		t.Fatalf("after forget = %q", data)
	}
}

func TestNotesBudget(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{ProjectNotes: filepath.Join(dir, "p.md"), GlobalNotes: filepath.Join(dir, "g.md"), MaxNotesChars: 100}
	os.WriteFile(cfg.GlobalNotes, []byte(strings.Repeat("g", 500)), 0o644)
	os.WriteFile(cfg.ProjectNotes, []byte(strings.Repeat("p", 500)), 0o644)
	notes, err := New(cfg, nil).Notes()
	if err != nil {
		t.Fatal(err)
	}
	body := notes[strings.Index(notes, "### Global"):]
	if g, pp := strings.Count(body, "g"), strings.Count(body, "p"); g > 60 || pp > 60 || g == 0 || pp == 0 {
		t.Fatalf("budget not shared: %d g, %d p", g, pp)
	}
	if !strings.Contains(notes, "characters truncated") {
		t.Fatal("truncation not announced")
	}
}
