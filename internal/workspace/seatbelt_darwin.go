//go:build darwin

package workspace

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/lovia-dev/lovia/internal/workspace/sandbox"
)

// platformSandbox is macOS's sandbox: sandbox-exec with a generated Seatbelt profile.
func platformSandbox(p *Policy, cfg *Config, protect []string) (ShellExecutor, error) {
	if _, err := os.Stat(sandbox.SandboxExecPath); err != nil {
		return nil, fmt.Errorf("Seatbelt is unavailable: %w", err)
	}
	s := newSeatbeltExecutor(p, cfg, protect)
	if p.tmp != "" && p.tmp != "/private/tmp" {
		// TMPDIR is a per-user /var/folders directory; scripts that write /tmp
		// (/private/tmp) by name get it too, as on Linux where it is TMPDIR.
		s.Writable = append(s.Writable, "/private/tmp")
	}
	return s, nil
}

// ProbeSeatbelt runs /usr/bin/true under a profile of the generator's shape (for
// lovia doctor): sandbox-exec exists and accepts what lovia writes.
func ProbeSeatbelt(ctx context.Context) error {
	prof, err := sandbox.SeatbeltProfile(sandbox.SeatbeltSpec{Writable: []string{os.TempDir()}, Protect: []string{filepath.Join(os.TempDir(), ".git", "config")}, Hide: []string{"/nonexistent/.ssh"}})
	if err != nil {
		return err
	}
	argv := sandbox.SeatbeltArgs(prof, "/usr/bin/true", []string{"true"})
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("sandbox-exec refused lovia's profile: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}
