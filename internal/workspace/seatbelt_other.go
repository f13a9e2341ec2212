//go:build !darwin

package workspace

import (
	"context"
	"errors"
	"runtime"
)

// platformSandbox: besides Linux (Landlock and namespaces, workspace.go) only macOS
// has a sandbox lovia uses; elsewhere (Windows) the policy checks alone confine
// commands.
func platformSandbox(*Policy, *Config, []string) (ShellExecutor, error) {
	return nil, errors.New("lovia has no OS sandbox on " + runtime.GOOS)
}

// ProbeSeatbelt: Seatbelt is macOS's.
func ProbeSeatbelt(context.Context) error {
	return errors.New("Seatbelt is a macOS sandbox; this is " + runtime.GOOS)
}
