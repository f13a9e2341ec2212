//go:build !unix

package workspace

import (
	"os"
	"os/exec"
)

// Without process groups, cancellation kills the direct child only.
func ownGroup(cmd *exec.Cmd) {}

func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

func signaled(*exec.ExitError) (int, bool) { return 0, false }
