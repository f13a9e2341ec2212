//go:build unix

package workspace

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in its own process group and makes cancellation kill the group
// (grandchildren included).
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

func killGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

func signaled(ee *exec.ExitError) (int, bool) {
	if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
		return int(st.Signal()), true
	}
	return 0, false
}
