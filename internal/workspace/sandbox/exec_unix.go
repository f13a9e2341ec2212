//go:build unix

package sandbox

import "syscall"

// execve replaces the helper with the command (keeping the Landlock domain).
func execve(path string, argv, env []string) error { return syscall.Exec(path, argv, env) }
