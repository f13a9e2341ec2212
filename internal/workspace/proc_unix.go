//go:build unix

package workspace

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in its own process group and makes cancellation kill the group
// (grandchildren included). The group is that of a new session: a group of lovia's
// session would keep lovia's controlling terminal, and a command could then read
// what the user types from /dev/tty, write escape sequences to it past lovia's
// sanitizing, or push input into it with TIOCSTI for the user's shell to run once
// lovia exits. (Setpgid would fail after setsid: a session leader leads its group.)
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
	cmd.SysProcAttr.Setpgid = false
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

func killGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

func signaled(ee *exec.ExitError) (int, bool) {
	if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
		return int(st.Signal()), true
	}
	return 0, false
}
