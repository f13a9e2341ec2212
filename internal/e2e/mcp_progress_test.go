package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// everythingServer is the reference MCP server's config, or a skip when it is not
// installed (`.ci/run` installs it from npm).
func everythingAllowed(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("mcp-server-everything")
	if err != nil {
		t.Skip("mcp-server-everything not installed (npm install -g @modelcontextprotocol/server-everything)")
	}
	return "mcp:\n  servers:\n    everything:\n      command: " + p + "\n      startup_timeout: 60s\n" +
		"mcp_rules:\n  - {server: everything, decision: allow}\n"
}

const longOp = "everything__trigger-long-running-operation"

// The reference server's long-running operation reports progress: `lovia run
// --output stream-json` carries it as tool_call_progress events between the call's
// start and end, each valid against the schema.
func TestMCPProgressInStreamJSON(t *testing.T) {
	cfg := everythingAllowed(t)
	validate := loadSchema(t)
	e := newEnv(t)
	e.userConfig(cfg)
	e.write("script.yaml", "turns:\n  - tool_calls: [{name: "+longOp+", args: {duration: 2, steps: 4}}]\n  - text: done\n")
	r := e.run(nil, "run", "-m", "script:script.yaml", "--output", "stream-json", "wait for it")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var started, completed bool
	var progress []float64
	for i, line := range strings.Split(strings.TrimRight(r.stdout, "\n"), "\n") {
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", i+1, err, line)
		}
		if err := validate(v); err != nil {
			t.Errorf("line %d does not match the schema: %v\n%s", i+1, err, line)
		}
		if v["name"] != longOp {
			continue
		}
		switch v["type"] {
		case "tool_call_started":
			started = true
		case "tool_call_completed":
			completed = true
		case "tool_call_progress":
			if !started || completed {
				t.Fatalf("progress outside the call:\n%s", r.stdout)
			}
			p := v["progress"].(map[string]any)
			if p["total"] != 4.0 {
				t.Fatalf("progress %v", p)
			}
			progress = append(progress, p["progress"].(float64))
		}
	}
	if !completed || len(progress) == 0 {
		t.Fatalf("no progress events for the call (completed %v):\n%s", completed, r.stdout)
	}
	for i := 1; i < len(progress); i++ {
		if progress[i] <= progress[i-1] {
			t.Fatalf("progress not increasing: %v", progress)
		}
	}
}

// In chat, the running tool's line shows the progress while it runs.
func TestMCPProgressInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	cfg := everythingAllowed(t)
	repo, home := t.TempDir(), t.TempDir()
	conf := filepath.Join(home, ".config", "lovia", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(conf), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	script := "turns:\n  - tool_calls: [{name: " + longOp + ", args: {duration: 8, steps: 4}}]\n  - text: the operation is done\n"
	if err := os.WriteFile(filepath.Join(repo, "script.yaml"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", repo, "init", "-q").CombinedOutput(); err != nil {
		t.Logf("git init: %v %s", err, out)
	}
	s := &tmuxSession{t: t, socket: fmt.Sprintf("lovia-e2e-progress-%d", os.Getpid())}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", s.socket, "kill-server").Run() })
	command := fmt.Sprintf("env HOME=%s XDG_CONFIG_HOME=%s LOVIA_HOME=%s TERM=xterm-256color %s chat -m script:script.yaml; echo LOVIA-EXITED; sleep 600",
		home, filepath.Join(home, ".config"), filepath.Join(home, "data"), bin)
	s.run("new-session", "-d", "-s", "main", "-x", "100", "-y", "30", "-c", repo, command)
	s.waitFor("new session", 30*time.Second)
	s.text("run the long operation")
	s.keys("Enter")

	// The running line: spinner, tool name, then the progress (steps of 2s each).
	running := regexp.MustCompile(regexp.QuoteMeta(longOp) + `  [1-3]/4  `)
	deadline := time.Now().Add(60 * time.Second)
	for {
		sc := s.visible()
		if running.MatchString(sc) {
			break
		}
		if strings.Contains(sc, "✓ "+longOp) || time.Now().After(deadline) {
			t.Fatalf("no progress on the running tool's line; screen:\n%s", sc)
		}
		time.Sleep(100 * time.Millisecond)
	}
	sc := s.waitFor("the operation is done", 60*time.Second)
	if !strings.Contains(sc, "✓ "+longOp) {
		t.Fatalf("the call did not finish:\n%s", sc)
	}
	// The finished block and the reply are printed above the live area, and the live
	// area is redrawn on the renderer's next frame: the running line must go then.
	s.waitUntil("the running line gone", 10*time.Second, func(sc string) bool { return !running.MatchString(sc) })
}

// Esc in chat cancels a running MCP call on the server (notifications/cancelled): the
// in-repo server's block tool is cancelled, and the next call on the same connection
// reports it.
func TestMCPEscCancelsTheServerCall(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	ts := mcpTestServer(t)
	repo, home := t.TempDir(), t.TempDir()
	conf := filepath.Join(home, ".config", "lovia", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(conf), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := "mcp:\n  servers:\n    ts:\n      command: " + ts + "\nmcp_rules:\n  - {server: ts, decision: allow}\n"
	if err := os.WriteFile(conf, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	script := "scope: session\nturns:\n  - tool_calls: [{name: ts__block, args: {}}]\n  - tool_calls: [{name: ts__cancelled, args: {}}]\n  - text: checked the server\n"
	if err := os.WriteFile(filepath.Join(repo, "script.yaml"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", repo, "init", "-q").CombinedOutput(); err != nil {
		t.Logf("git init: %v %s", err, out)
	}
	s := &tmuxSession{t: t, socket: fmt.Sprintf("lovia-e2e-mcpcancel-%d", os.Getpid())}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", s.socket, "kill-server").Run() })
	command := fmt.Sprintf("env HOME=%s XDG_CONFIG_HOME=%s LOVIA_HOME=%s TERM=xterm-256color %s chat -m script:script.yaml; echo LOVIA-EXITED; sleep 600",
		home, filepath.Join(home, ".config"), filepath.Join(home, "data"), bin)
	s.run("new-session", "-d", "-s", "main", "-x", "100", "-y", "30", "-c", repo, command)
	s.waitFor("new session", 30*time.Second)
	s.text("block please")
	s.keys("Enter")
	// The server reports progress once it is blocked.
	s.waitVisible("ts__block  1 · waiting to be cancelled", 30*time.Second)
	s.keys("Escape")
	s.waitFor("interrupted", 10*time.Second)
	s.text("was it cancelled?")
	s.keys("Enter")
	sc := s.waitFor("checked the server", 30*time.Second)
	if !strings.Contains(sc, "✓ ts__cancelled") || !strings.Contains(sc, "cancelled: 1") {
		t.Fatalf("the server did not see the cancellation:\n%s", sc)
	}
}

// lovia serve: the run's event stream carries the long-running operation's progress.
func TestMCPProgressInServeStream(t *testing.T) {
	cfg := everythingAllowed(t)
	e := serveEnv(t)
	e.userConfig(cfg)
	e.write("script.yaml", "turns:\n  - tool_calls: [{name: "+longOp+", args: {duration: 2, steps: 4}}]\n  - text: done\n")
	sp := startServe(t, e, "-m", "script:script.yaml")
	st := sp.start("wait for it", "")
	evs := sp.stream(st.RunID, "").rest()
	if l := last(evs); l.typ() != "run_completed" {
		t.Fatalf("run ended with %s", l.raw)
	}
	prog := ofType(evs, "tool_call_progress")
	if len(prog) == 0 {
		t.Fatalf("no tool_call_progress on the stream: %d events", len(evs))
	}
	p, _ := prog[0].ev["progress"].(map[string]any)
	if provStr(prog[0].ev["name"]) != longOp || p["total"] != 4.0 {
		t.Fatalf("progress event %s", prog[0].raw)
	}
}
