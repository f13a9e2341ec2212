//go:build unix

package workspace

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A .gitignore that is a FIFO or a link to /dev/zero is not applied; building the
// chain neither hangs nor reads without end.
func TestIgnoreFileSpecial(t *testing.T) {
	root := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(root, ".gitignore"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "sub")
	os.MkdirAll(sub, 0o755)
	if err := os.Symlink("/dev/zero", filepath.Join(sub, ".gitignore")); err != nil {
		t.Fatal(err)
	}
	c := rootIgnores(root).with(sub, "sub")
	if len(c) != 0 {
		t.Errorf("chain = %v", c)
	}
}
