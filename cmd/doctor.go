package cmd

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lovia-dev/lovia/internal/doctor"
	"github.com/lovia-dev/lovia/internal/workspace"
	"github.com/lovia-dev/lovia/internal/workspace/sandbox"
	bundledskills "github.com/lovia-dev/lovia/skills"
)

// DoctorOptions are the inputs of `lovia doctor`.
type DoctorOptions struct {
	F       *Factory
	JSON    bool
	Timeout time.Duration
	// HTTPClient and Landlock replace the real network and kernel probe in tests.
	HTTPClient *http.Client
	Landlock   func() (int, error)
	// Sandbox replaces starting the real sandbox (default: probeSandbox, which
	// re-executes this binary as the helper).
	Sandbox func(workspace.Config) (sandbox.Report, error, error)
}

// NewCmdDoctor builds `lovia doctor`.
func NewCmdDoctor(f *Factory, runF func(*DoctorOptions) error) *cobra.Command {
	opts := &DoctorOptions{F: f}
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Check keys, model reachability, database, sandbox, skills and MCP servers",
		Long: `Check that lovia can work here and say what to fix: config files parse, the
preset exists, API keys are set (never printed), the configured model's server
answers (within --timeout), the database opens and passes SQLite's integrity
check, the Landlock sandbox is available, skills load and every configured MCP
server starts and lists its tools.

Each line starts with ✓ (fine), ! (works, with a caveat) or ✗ (must be fixed).
Exit codes: 0 nothing to fix, 1 at least one ✗.`,
		Example: `  lovia doctor
  lovia doctor -m ollama:qwen3 --timeout 2s
  lovia doctor --json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return doctorRun(c.Context(), opts)
		},
	}
	c.Flags().BoolVar(&opts.JSON, "json", false, "print the results as JSON")
	c.Flags().DurationVar(&opts.Timeout, "timeout", doctor.DefaultTimeout, "how long to wait for the model's server")
	addTrustFlag(c.Flags(), f)
	return c
}

func doctorRun(ctx context.Context, opts *DoctorOptions) error {
	f := opts.F
	if ctx == nil {
		ctx = context.Background()
	}
	probe := opts.Sandbox
	if exe, err := os.Executable(); probe == nil && err == nil && !strings.HasSuffix(exe, ".test") {
		// Only a lovia binary has the helper subcommand (a test binary would run its
		// tests again): tests get the kernel probe.
		probe = probeSandbox
	}
	rs := doctor.Run(ctx, doctor.Options{
		Cwd: f.Common.Cwd, Getenv: f.Getenv, Flags: f.Common.Overrides(),
		HTTPClient: opts.HTTPClient, Timeout: opts.Timeout, Landlock: opts.Landlock,
		Sandbox: probe, Bundled: bundledskills.FS, Trust: f.Common.Trust,
	})
	var err error
	if opts.JSON {
		err = doctor.WriteJSON(f.IO.Out, rs)
	} else {
		err = doctor.Write(f.IO.Out, rs)
	}
	if err != nil {
		return err
	}
	if doctor.Failed(rs) {
		return &exitError{1}
	}
	return nil
}

// probeSandbox starts the sandbox as lovia would for cfg and reports its layers.
func probeSandbox(cfg workspace.Config) (sandbox.Report, error, error) {
	w, err := workspace.New(cfg)
	if err != nil {
		return sandbox.Report{}, nil, err
	}
	defer w.Close()
	rep, nsErr, ok := w.SandboxLayers()
	if !ok {
		return rep, nil, errors.New("commands do not run in the sandbox: " + w.SandboxNote())
	}
	return rep, nsErr, nil
}
