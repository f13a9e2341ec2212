//go:build unix

package hooks

import (
	"os/exec"
	"syscall"
)

// setProcessGroup runs the hook in its own process group and makes cancellation kill
// the whole group, so `sh -c "sleep 100 | cat"` cannot outlive its timeout.
// It keeps what the command was built with: a sandboxed hook's helper is started in
// new namespaces through SysProcAttr, which must not be replaced.
func setProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
