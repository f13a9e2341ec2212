//go:build unix

package instructions

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// AGENTS.md / CLAUDE.md that link out of the repository, are FIFOs or devices are
// refused with a problem naming the file; the other files still load.
func TestRefusesUnsafeFiles(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "id_rsa")
	os.WriteFile(secret, []byte("CANARY-KEY"), 0o600)
	root := t.TempDir()
	sub := filepath.Join(root, "a")
	deeper := filepath.Join(sub, "b")
	os.MkdirAll(deeper, 0o755)
	os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte("root rules"), 0o644)
	if err := os.Symlink(secret, filepath.Join(sub, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(deeper, "CLAUDE.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, problems := Load(Options{Root: root, Cwd: deeper})
	if !strings.Contains(res.Text, "root rules") || strings.Contains(res.Text, "CANARY") {
		t.Errorf("text = %q", res.Text)
	}
	if len(problems) != 2 {
		t.Fatalf("problems = %v", problems)
	}
	if msg := problems[0].Error(); !strings.Contains(msg, filepath.Join(sub, "AGENTS.md")+" links outside") || !strings.Contains(msg, "replace the link") {
		t.Errorf("link problem = %q", msg)
	}
	if msg := problems[1].Error(); !strings.Contains(msg, "CLAUDE.md is a FIFO") {
		t.Errorf("fifo problem = %q", msg)
	}
}
