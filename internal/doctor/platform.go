package doctor

import (
	"context"
	"runtime"

	"github.com/lovia-dev/lovia/internal/textutil"
	"github.com/lovia-dev/lovia/internal/workspace"
)

// checkSandbox reports what confines commands on this platform: Landlock and the
// namespaces on Linux, Seatbelt on macOS, and plainly nothing but the policy
// checks elsewhere (Windows).
func checkSandbox(ctx context.Context, opts Options, cfg workspace.Config) []Result {
	goos := opts.GOOS
	if goos == "" {
		goos = runtime.GOOS
	}
	if goos == "linux" {
		ll := checkLandlock(opts.Landlock, cfg.Sandbox)
		out := []Result{ll}
		if cfg.Sandbox != workspace.SandboxOff && ll.Status == OK {
			out = append(out, checkNamespaces(opts, cfg)...)
		}
		return out
	}
	r := Result{Check: "sandbox"}
	required := cfg.Sandbox == workspace.SandboxRequired
	if cfg.Sandbox == workspace.SandboxOff {
		r.Status, r.Detail = Warn, "off in config (workspace.sandbox: off): commands are confined by the policy checks only"
		r.Fix = "remove workspace.sandbox: off to use the system's sandbox where lovia has one"
		return []Result{r}
	}
	switch goos {
	case "darwin":
		probe := opts.Seatbelt
		if probe == nil {
			probe = workspace.ProbeSeatbelt
		}
		if err := probe(ctx); err != nil {
			r.Status, r.Detail = Warn, "Seatbelt (sandbox-exec) unavailable: commands are confined by the policy checks only ("+textutil.OneLine(err.Error())+")"
			r.Fix = "lovia uses /usr/bin/sandbox-exec, part of macOS; check that it runs"
			if required {
				r.Status, r.Fix = Fail, "workspace.sandbox is required, which on macOS needs sandbox-exec; or set it to auto"
			}
			return []Result{r}
		}
		r.Status = OK
		r.Detail = "Seatbelt (sandbox-exec): commands write only to the workspace, temp and writable paths; .git/config, .git/hooks and .lovia read-only; credential stores unreadable; " + seatbeltNetwork(workspace.NetworkMode(cfg)) + " (the profile is unit-tested; lovia's test suite has not run it on a Mac)"
		return []Result{r}
	default:
		r.Status = Warn
		r.Detail = "no sandbox on " + goos + ": commands are confined by lovia's policy checks (the command guard and run-time path checks) only; a program the policy allows can write wherever the user can"
		r.Fix = "use Linux (Landlock and namespaces) or macOS (Seatbelt) for a kernel-enforced sandbox, or keep the coding or readonly policy so commands are asked for"
		if required {
			r.Status, r.Fix = Fail, "workspace.sandbox is required, and lovia has no sandbox on "+goos+"; set it to auto"
		}
		return []Result{r}
	}
}

func seatbeltNetwork(mode string) string {
	switch mode {
	case workspace.NetworkAllow:
		return "network allowed (workspace.network: allow)"
	case workspace.NetworkDeny:
		return "no network, not even localhost (workspace.network: deny)"
	}
	return "no network, not even localhost, unless a command passed the policy as needing it (workspace.network: ask)"
}
