package workspace

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/lovia-dev/lovia/internal/workspace/sandbox"
)

// SeatbeltExecutor starts each command under macOS's sandbox-exec with a profile
// generated for that command from the policy (sandbox.SeatbeltProfile). It is plain
// code on every system, so its profiles are tested on Linux; only macOS selects it
// (seatbelt_darwin.go).
type SeatbeltExecutor struct {
	// Launcher is sandbox-exec's path (default sandbox.SandboxExecPath).
	Launcher string
	// Writable are the directories every command may write (root, temp, grants);
	// Caches are lovia's own build caches, writable by commands too.
	Writable, Caches []string
	// Protect are never written (.git/config, .git/hooks, .lovia, nested
	// repositories' config and hooks); Hide are credential stores, neither read nor
	// written.
	Protect, Hide []string
	// Network is the workspace.network mode: with anything but allow, commands have
	// no sockets unless they passed the policy as needing the network.
	Network string
}

// newSeatbeltExecutor builds the executor for p, giving commands lovia's own build
// caches as the Linux sandbox does (cfg.Env gains their variables); protect are the
// paths kept read-only (protectedPaths).
func newSeatbeltExecutor(p *Policy, cfg *Config, protect []string) *SeatbeltExecutor {
	s := &SeatbeltExecutor{Writable: p.WritableRoots(), Protect: protect, Hide: p.seatbeltHidden(), Network: p.network}
	if !cfg.StrictSandbox && p.preset.WriteInside == Allow {
		var env map[string]string
		s.Caches, env = sandboxCaches(p)
		for k, v := range env {
			if _, set := cfg.Env[k]; !set {
				if cfg.Env == nil {
					cfg.Env = map[string]string{}
				}
				cfg.Env[k] = v
			}
		}
	}
	return s
}

// seatbeltHidden are the credential stores commands may not read. Unlike a mount,
// a Seatbelt rule names a path whether it exists or not, so a store that does not
// exist yet is covered too (a glob only by what it matches now).
func (p *Policy) seatbeltHidden() []string {
	var out []string
	for _, c := range credentialStores {
		pat := expandHome(c, p.home)
		ms := []string{pat}
		if strings.ContainsAny(pat, "*?[") {
			ms, _ = filepath.Glob(pat)
		}
		for _, m := range ms {
			abs := resolveLoose(m)
			if d, _ := p.DecidePath(abs, OpRead); d == Allow {
				continue
			}
			if under(abs, p.root) || under(p.root, abs) {
				continue // the workspace itself: keep it visible, as on Linux
			}
			out = append(out, abs)
		}
	}
	return append(out, p.ownSecrets()...)
}

// Spec is the profile's input for one command.
func (s *SeatbeltExecutor) Spec(req ExecRequest) sandbox.SeatbeltSpec {
	w := append(append(append([]string(nil), s.Writable...), s.Caches...), req.Writable...)
	return sandbox.SeatbeltSpec{
		Writable: w,
		Protect:  s.Protect,
		Hide:     s.Hide,
		Network:  s.Network == NetworkAllow || req.Network,
	}
}

func (s *SeatbeltExecutor) Command(ctx context.Context, req ExecRequest) (*exec.Cmd, error) {
	if req.Path == "" || len(req.Args) == 0 {
		return nil, errors.New("seatbelt: no command given")
	}
	prof, err := sandbox.SeatbeltProfile(s.Spec(req))
	if err != nil {
		// Fail closed: a path the profile cannot name is not left unconfined.
		return nil, fmt.Errorf("the Seatbelt profile cannot be built, so the command does not run: %w", err)
	}
	argv := sandbox.SeatbeltArgs(prof, req.Path, req.Args)
	if s.Launcher != "" {
		argv[0] = s.Launcher
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = req.Dir, req.Env
	return cmd, nil
}

func (s *SeatbeltExecutor) Describe() string {
	d := "Commands run in a sandbox (macOS Seatbelt): child processes (including scripts such as python -c) can write only to " + strings.Join(s.Writable, ", ")
	if len(s.Caches) > 0 {
		d += ", and lovia's own build caches " + strings.Join(s.Caches, ", ") + " (GOCACHE, npm and pip caches point there)"
	}
	d += "; other writes fail with \"Operation not permitted\" (.git/config, .git/hooks and .lovia are read-only)."
	switch s.Network {
	case NetworkAllow:
	case NetworkDeny:
		d += " Commands have no network access (not even localhost)."
	default:
		d += " Commands have no network access (not even localhost) unless they are known to need it (curl, git fetch/push, go get, npm install, pip install, ...), which needs the user's approval."
	}
	return d
}
