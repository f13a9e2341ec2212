//go:build darwin

package workspace

import (
	"fmt"
	"os"

	"github.com/lovia-dev/lovia/internal/workspace/sandbox"
)

// platformSandbox is macOS's sandbox: sandbox-exec with a generated Seatbelt profile.
func platformSandbox(p *Policy, cfg *Config) (ShellExecutor, error) {
	if _, err := os.Stat(sandbox.SandboxExecPath); err != nil {
		return nil, fmt.Errorf("Seatbelt is unavailable: %w", err)
	}
	return newSeatbeltExecutor(p, cfg), nil
}
