package hooks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/lovia-dev/lovia/internal/hostshell"
	"github.com/lovia-dev/lovia/internal/workspace"
)

// Check is a command that judges something (an output guardrail): unlike a hook,
// it fails closed, so a check that cannot run or exits oddly is an error.
type Check struct {
	Name    string
	Command string
	// Timeout in seconds (0 = DefaultTimeout).
	Timeout float64
	Env     map[string]string
}

// CheckResult is a check's verdict: Tripped on exit status 2, with Reason from its
// stderr (else its stdout), scrubbed and capped.
type CheckResult struct {
	Tripped bool
	Reason  string
}

// RunCheck runs c as hooks run (the Runner's executor and directory, a minimal
// environment, payload on stdin, the process group killed on timeout). Exit 0
// passes, exit 2 trips; anything else (a start failure, a timeout, another status)
// is an error.
func (r *Runner) RunCheck(ctx context.Context, c Check, event string, payload []byte) (CheckResult, error) {
	timeout := DefaultTimeout
	if c.Timeout > 0 {
		timeout = time.Duration(c.Timeout * float64(time.Second))
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	extra := append([]string(nil), r.env...)
	for k, v := range c.Env {
		extra = append(extra, k+"="+os.ExpandEnv(v))
	}
	extra = append(extra, "LOVIA_HOOK_EVENT="+event)
	if r.project != "" {
		extra = append(extra, "LOVIA_PROJECT_DIR="+r.project)
	}
	env := workspace.MinimalEnv(extra...)
	argv := hostshell.Host().Argv(c.Command)
	cmd, stdout, stderr, err := r.prepare(cctx, argv, env, payload)
	if err != nil {
		return CheckResult{}, fmt.Errorf("%s: not started: %w", c.Name, err)
	}
	err = cmd.Run()
	switch {
	case errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		return CheckResult{}, fmt.Errorf("%s: timed out after %s", c.Name, timeout)
	case ctx.Err() != nil:
		return CheckResult{}, ctx.Err()
	case err == nil:
		return CheckResult{}, nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == BlockExitCode {
		reason := stderr.String()
		if reason == "" {
			reason = stdout.String()
		}
		if reason == "" {
			reason = c.Name + " exited with status 2"
		}
		return CheckResult{Tripped: true, Reason: r.clean(reason, maxMessage)}, nil
	}
	return CheckResult{}, fmt.Errorf("%s: %w: %s", c.Name, err, r.clean(stderr.String(), 2<<10))
}
