//go:build unix

package rewind

import (
	"syscall"
	"time"
)

// cpuTime is the process's user+system CPU time: on a loaded machine it shows the
// work a checkpoint does, where wall time also counts waiting for a core.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// mkfifo makes a named pipe at p.
func mkfifo(p string) { syscall.Mkfifo(p, 0o600) }
