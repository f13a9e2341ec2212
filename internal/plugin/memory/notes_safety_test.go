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
