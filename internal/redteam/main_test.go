//go:build linux

package redteam

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// bin is the lovia binary under test: built once by TestMain (REDTEAM_BIN reuses a
// binary built elsewhere, e.g. from a merge of several branches).
var bin string

func TestMain(m *testing.M) {
	if p := os.Getenv("REDTEAM_BIN"); p != "" {
		bin = p
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "lovia-redteam-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	root, _ := filepath.Abs("../..")
	bin = filepath.Join(dir, "lovia")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = root
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building lovia:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
