//go:build linux

package workspace

import (
	"context"
	"testing"

	"github.com/lovia-dev/lovia/internal/workspace/sandbox"
)

// BenchmarkSandboxCommand is the cost of one sandboxed simple command through the
// exec server: "landlock" is the server before sandbox v2 (Landlock, a process
// group), "namespaces" is v2 (server in user/mount/PID/net namespaces, each command
// in a nested PID namespace under a /bin/sh init).
func BenchmarkSandboxCommand(b *testing.B) {
	if v, _ := sandbox.ABI(); v == 0 {
		b.Skip("Landlock unavailable")
	}
	for _, c := range []struct {
		name string
		ns   bool
	}{{"landlock", false}, {"namespaces", true}} {
		b.Run(c.name, func(b *testing.B) {
			if c.ns && sandbox.ProbeKernel() != nil {
				b.Skip("no namespaces")
			}
			e := newTestEnv(b)
			cfg := e.config(PresetCoding)
			cfg.Sandbox = SandboxRequired
			w, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			sb := w.executor.(*SandboxExecutor)
			sb.Close()
			sb.Namespaces = c.ns
			req := ShellRequest{Command: "/bin/true", Approved: true, ApprovedPaths: []string{"/"}}
			// The first command starts the server: not part of the per-command cost.
			if res := w.RunShell(context.Background(), req); res.ExitCode != 0 {
				b.Fatalf("%+v", res)
			}
			if rep, _ := sb.Layers(); rep.Namespaces != c.ns {
				b.Fatalf("namespaces %v, want %v", rep.Namespaces, c.ns)
			}
			b.ResetTimer()
			for b.Loop() {
				if res := w.RunShell(context.Background(), req); res.ExitCode != 0 {
					b.Fatalf("%+v", res)
				}
			}
		})
	}
}
