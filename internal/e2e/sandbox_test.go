//go:build linux

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/workspace/sandbox"
)

// Sandbox v2 through the built binary (issue 13): the model's commands see no
// provider key, and nothing they start outlives lovia, not even after SIGKILL.

func needSandbox(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the namespace sandbox is Linux only")
	}
	if v, _ := sandbox.ABI(); v == 0 {
		t.Skip("Landlock unavailable")
	}
	if err := sandbox.ProbeKernel(); err != nil {
		t.Skip(err)
	}
}

func shellScript(cmd string) string {
	return fmt.Sprintf("turns:\n  - tool_calls:\n      - name: shell\n        args: {command: %q}\n  - text: done\n", cmd)
}

func TestSandboxNoKeysInCommands(t *testing.T) {
	needSandbox(t)
	e := newEnv(t)
	e.vars = append(e.vars, "OPENAI_API_KEY=sk-e2e-canary-1", "ANTHROPIC_API_KEY=sk-e2e-canary-2")
	cmd := `cat /proc/$PPID/environ; cat /proc/*/environ; tr "\0" "\n" < /proc/1/environ; env`
	if _, err := exec.LookPath("ps"); err == nil {
		cmd += "; ps eww"
	}
	e.write("s.yaml", shellScript(cmd))
	r := e.run(nil, "run", "--sandbox", "required", "--approve", "all", "--output", "stream-json", "-m", "script:s.yaml", "go")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "PATH=") {
		t.Fatalf("the command did not run: %s", r.stdout)
	}
	if strings.Contains(r.stdout+r.stderr, "sk-e2e-canary") {
		t.Fatalf("a provider key reached a command:\n%s", r.stdout)
	}
}

func TestSandboxNothingOutlivesSIGKILL(t *testing.T) {
	needSandbox(t)
	e := newEnv(t)
	m := fmt.Sprintf("%d.%d", 4000+os.Getpid()%1000, time.Now().UnixNano()%100000)
	e.write("s.yaml", shellScript(fmt.Sprintf("sh -c 'setsid -f sleep %s; sleep 600'", m)))
	cmd := exec.Command(bin, "run", "--approve", "all", "-m", "script:s.yaml", "go")
	cmd.Dir, cmd.Env = e.dir, e.vars
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	alive := func() bool {
		out, _ := exec.Command("pgrep", "-f", "sleep "+m).Output()
		return len(bytes.TrimSpace(out)) > 0
	}
	// Wait (bounded) for the daemon the command left, then kill lovia outright.
	deadline := time.Now().Add(60 * time.Second)
	for !alive() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !alive() {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the command's daemon never started: %s", errb.String())
	}
	cmd.Process.Kill()
	cmd.Wait()
	deadline = time.Now().Add(10 * time.Second)
	for alive() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if alive() {
		if out, _ := exec.Command("pgrep", "-f", "sleep "+m).Output(); len(out) > 0 {
			for _, pid := range strings.Fields(string(out)) {
				if n, err := strconv.Atoi(pid); err == nil {
					syscall.Kill(n, syscall.SIGKILL)
				}
			}
		}
		t.Fatal("a process the command started outlived lovia's SIGKILL (resume would run the call again while it still runs)")
	}
}
