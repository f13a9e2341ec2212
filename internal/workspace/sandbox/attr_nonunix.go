//go:build !unix

package sandbox

import "syscall"

// NamespaceAttr is nil: there are no namespaces here.
func NamespaceAttr(bool) *syscall.SysProcAttr { return nil }

// PlainAttr is nil: no process groups here.
func PlainAttr() *syscall.SysProcAttr { return nil }
