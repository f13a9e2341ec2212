//go:build linux

package redteam

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// bin is the lovia binary under test and mcpServer the MCP test server (the one in
// internal/plugin/mcp/testserver), both built once by TestMain. REDTEAM_BIN and
// REDTEAM_MCPSERVER reuse binaries built elsewhere, e.g. from a merge of branches.
var bin, mcpServer string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "lovia-redteam-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	root, _ := filepath.Abs("../..")
	build := func(env, name, pkg string) string {
		if p := os.Getenv(env); p != "" {
			return p
		}
		out := filepath.Join(dir, name)
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Dir = root
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n", pkg, err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
		return out
	}
	bin = build("REDTEAM_BIN", "lovia", ".")
	mcpServer = build("REDTEAM_MCPSERVER", "testserver", "./internal/plugin/mcp/testserver")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
