//go:build unix

package workspace

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestShellTimeoutKillsGroup(t *testing.T) {
	e := newTestEnv(t)
	w := newWS(t, e, PresetTrusted, SandboxOff)
	start := time.Now()
	res, _ := run(t, w, ShellRequest{Command: `sh -c 'sleep 30 & echo $! > bg.pid; wait'`, Timeout: 500 * time.Millisecond})
	if !res.TimedOut {
		t.Fatalf("not timed out: %+v", res)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
	b, err := os.ReadFile(filepath.Join(e.root, "bg.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	deadline := time.Now().Add(3 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("background child %d survived the timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
