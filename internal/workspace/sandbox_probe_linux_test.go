//go:build linux

package workspace

import (
	"errors"
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

// The kernel's namespace check runs in the background (auto mode): New does not wait
// for it, but the system prompt does, so it never claims the namespace layer
// (read-only .git/config, .lovia) where the kernel refuses it; the helper then starts
// without namespaces and the layers say why.
func TestPromptWaitsForKernelCheck(t *testing.T) {
	if v, _ := sandbox.ABI(); v == 0 {
		t.Skip("Landlock unavailable")
	}
	e := newTestEnv(t)
	cfg := e.config(PresetCoding)
	cfg.Sandbox = SandboxAuto
	release := make(chan struct{})
	refused := errors.New("namespaces unavailable: operation not permitted")
	cfg.KernelCheck = func() error {
		<-release
		return refused
	}
	w, err := New(cfg) // would never return if it waited for the check
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	done := make(chan string)
	go func() { done <- w.Instructions() }()
	close(release)
	got := <-done
	if !strings.Contains(got, "Commands run in a sandbox") || strings.Contains(got, "read-only file system") {
		t.Fatalf("instructions claim a layer the kernel refused:\n%s", got)
	}
	rep, nsErr, ok := w.SandboxLayers()
	if !ok || !errors.Is(nsErr, refused) || rep.Namespaces || rep.Landlock == 0 {
		t.Fatalf("layers: %+v, %v, %v", rep, nsErr, ok)
	}
}

// Required mode needs the kernel's answer before New returns: a refusal fails it.
func TestRequiredWaitsForKernelCheck(t *testing.T) {
	if v, _ := sandbox.ABI(); v == 0 {
		t.Skip("Landlock unavailable")
	}
	e := newTestEnv(t)
	cfg := e.config(PresetCoding)
	cfg.Sandbox = SandboxRequired
	cfg.KernelCheck = func() error { return errors.New("namespaces unavailable: operation not permitted") }
	if w, err := New(cfg); err == nil || !strings.Contains(err.Error(), "namespace layer is unavailable") {
		if w != nil {
			w.Close()
		}
		t.Fatalf("required started although the kernel refused the namespaces: %v", err)
	}
}

// The exec server starts with GOGC=off (sandbox.ServerEnv) and drops it at once:
// commands see the GOGC of their own environment, or none.
func TestSandboxCommandsDoNotInheritServerGOGC(t *testing.T) {
	if v, _ := sandbox.ABI(); v == 0 {
		t.Skip("Landlock unavailable")
	}
	for _, c := range []struct {
		env  map[string]string
		want string
	}{{nil, "unset\n"}, {map[string]string{"GOGC": "50"}, "50\n"}} {
		e := newTestEnv(t)
		cfg := e.config(PresetCoding)
		cfg.Sandbox = SandboxAuto
		cfg.Env = c.env
		w, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		res, out := bypass(t, w, `echo "${GOGC-unset}"`, 0)
		w.Close()
		if res.ExitCode != 0 || out != c.want {
			t.Errorf("env %v: %+v %q, want %q", c.env, res, out, c.want)
		}
	}
}

// With a start signal (Config.SandboxStart) the helper starts when the signal comes,
// not in New: the front end gives it once the first model request is on its way.
func TestSandboxHelperStartsOnSignal(t *testing.T) {
	if v, _ := sandbox.ABI(); v == 0 {
		t.Skip("Landlock unavailable")
	}
	e := newTestEnv(t)
	fifo := filepath.Join(e.base, "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := e.config(PresetCoding)
	// The helper says it started (blocking until the test listens), then runs as usual.
	cfg.SandboxHelper = []string{"/bin/sh", "-c", `echo started > '` + fifo + `'; exec "$0" "$@"`, os.Args[0], sandbox.Subcommand}
	cfg.Sandbox = SandboxAuto
	start := make(chan struct{})
	cfg.SandboxStart = start
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if got := w.Instructions(); !strings.Contains(got, "Commands run in a sandbox") {
		t.Fatalf("instructions without the sandbox section:\n%s", got)
	}
	close(start)
	// Blocks until the helper writes: only the signal can have started it.
	if b, err := os.ReadFile(fifo); err != nil || string(b) != "started\n" {
		t.Fatalf("helper wrote %q, %v", b, err)
	}
	if _, nsErr, ok := w.SandboxLayers(); !ok || nsErr != nil {
		t.Fatalf("layers: ok=%v, %v", ok, nsErr)
	}
}

// A command needs the helper: without the start signal it starts it itself.
func TestSandboxHelperStartsForFirstCommand(t *testing.T) {
	if v, _ := sandbox.ABI(); v == 0 {
		t.Skip("Landlock unavailable")
	}
	e := newTestEnv(t)
	cfg := e.config(PresetCoding)
	cfg.Sandbox = SandboxAuto
	cfg.SandboxStart = make(chan struct{}) // never closed
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if res, out := bypass(t, w, "echo ok", 0); res.ExitCode != 0 || out != "ok\n" {
		t.Fatalf("%+v %q", res, out)
	}
	if rep, nsErr, ok := w.SandboxLayers(); !ok || rep.Landlock == 0 {
		t.Fatalf("layers: %+v, %v, %v", rep, nsErr, ok)
	}
}
