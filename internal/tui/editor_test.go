package tui

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestEditorCommand(t *testing.T) {
	c := editorCommand("code --wait -n", "/tmp/p.md")
	if filepath.Base(c.Path) != "code" && c.Args[0] != "code" {
		t.Fatalf("path = %q", c.Path)
	}
	if !slices.Equal(c.Args, []string{"code", "--wait", "-n", "/tmp/p.md"}) {
		t.Fatalf("args = %q", c.Args)
	}
	t.Setenv("VISUAL", "")
	t.Setenv("EDITOR", "nano")
	if c := editorCommand("", "f"); !slices.Equal(c.Args, []string{"nano", "f"}) {
		t.Fatalf("$EDITOR not used: %q", c.Args)
	}
}

func TestEditorRoundTrip(t *testing.T) {
	path, err := createTemp("draft")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("edited\nprompt\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	msg := readBack(path, nil)().(editorMsg)
	if msg.err != nil || msg.text != "edited\nprompt\n" {
		t.Fatalf("read back %+v", msg)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("temp file left behind")
	}
	h := newHarness(t, 80, 24)
	h.send(msg)
	if h.m.input.Value() != "edited\nprompt" {
		t.Fatalf("prompt = %q", h.m.input.Value())
	}
}
