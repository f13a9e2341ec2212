//go:build unix

package hooks

import (
	"os/exec"
	"syscall"
)

// setProcessGroup runs the hook in its own process group and makes cancellation kill
// the whole group, so `sh -c "sleep 100 | cat"` cannot outlive its timeout.
// It keeps what the command was built with: a sandboxed hook's helper is started in
// new namespaces through SysProcAttr, which must not be replaced. The group is that
// of a new session, without lovia's controlling terminal (a hook handed the model's
// input must not reach the user's terminal through /dev/tty); Setpgid would fail
// after setsid, a session leader leading its group already.
func setProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
	cmd.SysProcAttr.Setpgid = false
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
