//go:build linux

package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/lovia-dev/lovia/internal/workspace/sandbox"
)

// The system prompt's workspace section is ready while the sandbox helper is still
// starting (auto mode probes it in the background): the first model request does
// not wait for the helper. Commands still do.
func TestInstructionsDoNotWaitForSandboxProbe(t *testing.T) {
	needNS(t)
	e := newTestEnv(t)
	fifo := filepath.Join(e.base, "release")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := e.config(PresetCoding)
	// The helper blocks until the test writes to the FIFO, then runs as usual.
	// (The helper gets the commands' environment, so the path is in the script.)
	cfg.SandboxHelper = []string{"/bin/sh", "-c", `read x < '` + fifo + `'; exec "$0" "$@"`, os.Args[0], sandbox.Subcommand}
	cfg.Sandbox = SandboxAuto
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	done := make(chan string)
	go func() { done <- w.Instructions() }()
	got := <-done // would block until the release below if it waited for the probe
	if !strings.Contains(got, "Commands run in a sandbox") {
		t.Fatalf("instructions without the sandbox section:\n%s", got)
	}
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("go\n")
	f.Close()
	if _, nsErr, ok := w.SandboxLayers(); !ok || nsErr != nil {
		t.Fatalf("after the probe: layers ok=%v, %v", ok, nsErr)
	}
}
