//go:build !unix

package workspace

import (
	"context"

	"mvdan.cc/sh/v3/interp"
)

type execServer struct{ exited chan struct{} }

func (e *SandboxExecutor) server(ExecRequest) *execServer { return nil }

// probeServer: without the exec server, nothing to probe.
func (e *SandboxExecutor) probeServer() error { return nil }

// Close stops the exec server.
func (e *SandboxExecutor) Close() {}

func (r *shellRun) runViaServer(context.Context, *execServer, interp.HandlerContext, string, []string, []string) (bool, error) {
	return false, nil
}

func (s *execServer) alive() bool { return false }

func (s *execServer) close() {}
