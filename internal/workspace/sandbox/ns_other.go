//go:build !linux

package sandbox

import (
	"errors"
	"io"
)

// NamespacesSupported reports whether this system has the namespace layer.
const NamespacesSupported = false

var errNoNamespaces = errors.New("namespaces are a Linux feature")

// ProbeKernel reports that there are no namespaces here.
func ProbeKernel() error { return errNoNamespaces }

// NamespaceError explains why starting in new namespaces failed.
func NamespaceError(err error) error { return err }

func setupNamespaces(Options, *Report) error { return errNoNamespaces }

func bestEffortLifetime() {}

func detachTerminal() {}

func runAsInit(string, []string, io.Writer) int { return 126 }
