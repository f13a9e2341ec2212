//go:build unix && !linux

package sandbox

import "syscall"

// NamespaceAttr is nil: there are no namespaces here.
func NamespaceAttr(bool) *syscall.SysProcAttr { return nil }

// PlainAttr starts a helper in a session of its own, without lovia's controlling
// terminal (see the Linux PlainAttr).
func PlainAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

func commandAttr(bool) *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
