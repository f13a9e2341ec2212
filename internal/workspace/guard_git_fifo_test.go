//go:build unix

package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A FIFO where the guard reads git's files (a .git file, a repository's config)
// is a risk to ask about, never a read that waits for a writer (which hung lovia,
// SIGTERM included). A hang here fails the test by its timeout.
func TestGitConfigRiskFIFO(t *testing.T) {
	dotGit := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dotGit, ".git"), 0o644); err != nil {
		t.Fatal(err)
	}
	if risk, _ := gitConfigRisk(dotGit); !strings.Contains(risk, ".git file cannot be read") {
		t.Errorf("a FIFO .git: risk %q", risk)
	}

	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(repo, ".git", "config"), 0o644); err != nil {
		t.Fatal(err)
	}
	if risk, _ := gitConfigRisk(repo); !strings.Contains(risk, "not a regular file") {
		t.Errorf("a FIFO .git/config: risk %q", risk)
	}
}
