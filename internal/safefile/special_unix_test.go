//go:build unix

package safefile

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/lovia-dev/lovia/internal/errs"
)

func TestReadBeneathRefusesSpecialFiles(t *testing.T) {
	root := t.TempDir()
	fifo := filepath.Join(root, "AGENTS.md")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// No writer ever opens the FIFO: a blocking open would hang here.
	_, err := ReadBeneath(root, fifo, 1<<10)
	if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "FIFO") || errs.KindOf(err) != errs.KindConfig {
		t.Errorf("fifo: %v", err)
	}
	if _, err := ReadBeneath(root, root, 1<<10); !errors.Is(err, ErrNotRegular) {
		t.Errorf("directory: %v", err)
	}
}
