//go:build unix

package memory

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A MEMORY.md that links out of its directory, is a FIFO or links to /dev/zero is
// left out with a warning; the other notes file still loads.
func TestNotesRefuseUnsafeFiles(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "id_rsa")
	if err := os.WriteFile(secret, []byte("CANARY-KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]func(p string) error{
		"link to a secret":  func(p string) error { return os.Symlink(secret, p) },
		"link to /dev/zero": func(p string) error { return os.Symlink("/dev/zero", p) },
		"fifo":              func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"too large": func(p string) error {
			return os.WriteFile(p, []byte(strings.Repeat("x", 1<<20+1)), 0o644)
		},
	}
	for name, make := range cases {
		root := t.TempDir()
		home := t.TempDir()
		cfg := DefaultConfig(home, root)
		os.MkdirAll(filepath.Dir(cfg.ProjectNotes), 0o755)
		os.MkdirAll(filepath.Dir(cfg.GlobalNotes), 0o755)
		if err := make(cfg.ProjectNotes); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(cfg.GlobalNotes, []byte("- global fact"), 0o644)
		var warnings []string
		cfg.Warn = func(m string) { warnings = append(warnings, m) }
		notes, err := New(cfg, nil).Notes()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if strings.Contains(notes, "CANARY") || strings.Contains(notes, "xxxx") || !strings.Contains(notes, "global fact") {
			t.Errorf("%s: notes = %.200q", name, notes)
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0], cfg.ProjectNotes) {
			t.Errorf("%s: warnings = %q", name, warnings)
		}
	}
}

// A project's .lovia that is a link out of the project (a command may swap one in
// after the write was judged) carries neither the notes' read nor their write out of
// it; a link inside the project is followed; the user's own notes directory may be
// a link of the user's.
func TestNotesStayInTheProject(t *testing.T) {
	root, elsewhere := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(elsewhere, "MEMORY.md"), []byte("- CANARY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(root, ".lovia")); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, ".lovia", "MEMORY.md")
	if got, err := readNotes(p); err == nil || strings.Contains(got, "CANARY") {
		t.Fatalf("read through the link: %q, %v", got, err)
	}
	if err := writeAtomic(p, "- x\n"); err == nil {
		t.Fatal("wrote through a .lovia that links out of the project")
	}
	if data, _ := os.ReadFile(filepath.Join(elsewhere, "MEMORY.md")); string(data) != "- CANARY\n" {
		t.Fatalf("the notes elsewhere changed: %q", data)
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 1 {
		t.Fatalf("files left elsewhere: %v", ents)
	}

	os.Remove(filepath.Join(root, ".lovia"))
	os.Mkdir(filepath.Join(root, "inside"), 0o755)
	if err := os.Symlink("inside", filepath.Join(root, ".lovia")); err != nil {
		t.Fatal(err)
	}
	if err := writeAtomic(p, "- y\n"); err != nil {
		t.Fatal(err)
	}
	if got, err := readNotes(p); err != nil || got != "- y" {
		t.Fatalf("notes through an inside link: %q, %v", got, err)
	}

	// The user's notes: ~/.config/lovia linked to a dotfiles checkout.
	home, dotfiles := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(home, ".config"), 0o755)
	if err := os.Symlink(dotfiles, filepath.Join(home, ".config", "lovia")); err != nil {
		t.Fatal(err)
	}
	g := filepath.Join(home, ".config", "lovia", "MEMORY.md")
	if err := writeAtomic(g, "- z\n"); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(dotfiles, "MEMORY.md")); string(data) != "- z\n" {
		t.Fatalf("global notes: %q", data)
	}
}
