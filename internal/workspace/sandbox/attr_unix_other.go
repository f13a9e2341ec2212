//go:build unix && !linux

package sandbox

import "syscall"

// NamespaceAttr is nil: there are no namespaces here.
func NamespaceAttr(bool) *syscall.SysProcAttr { return nil }

// PlainAttr starts a helper in its own process group.
func PlainAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func commandAttr(bool) *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
