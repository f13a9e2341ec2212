// Package e2e drives the built lovia binary as a user would.
package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// moduleRoot is the repository root (this file is internal/e2e/tui_test.go).
func moduleRoot(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// buildLovia builds the binary once per test into a temp dir.
func buildLovia(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "lovia")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = moduleRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// tmuxSession is one detached tmux session on a private server socket.
type tmuxSession struct {
	t      *testing.T
	socket string
}

func (s *tmuxSession) run(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// keys sends tmux key names (Enter, Escape, C-c, Down) or literal text with -l.
func (s *tmuxSession) keys(k ...string) { s.run(append([]string{"send-keys", "-t", "main"}, k...)...) }
func (s *tmuxSession) text(txt string)  { s.run("send-keys", "-t", "main", "-l", txt) }

// screen is the whole pane including its scrollback history.
func (s *tmuxSession) screen() string {
	return s.run("capture-pane", "-p", "-J", "-S", "-", "-t", "main")
}

// visible is the pane as currently shown.
func (s *tmuxSession) visible() string { return s.run("capture-pane", "-p", "-t", "main") }

func (s *tmuxSession) waitFor(what string, timeout time.Duration) string {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		sc := s.screen()
		if strings.Contains(sc, what) {
			return sc
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out waiting for %q; screen:\n%s", what, sc)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *tmuxSession) waitVisible(what string, timeout time.Duration) string {
	s.t.Helper()
	return s.waitUntil(fmt.Sprintf("%q on screen", what), timeout, func(sc string) bool { return strings.Contains(sc, what) })
}

// waitUntil polls the visible pane until cond holds (the terminal is another
// process: there is nothing to wait on but its screen).
func (s *tmuxSession) waitUntil(what string, timeout time.Duration, cond func(visible string) bool) string {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		sc := s.visible()
		if cond(sc) {
			return sc
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out waiting for %s; screen:\n%s", what, sc)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

const chatScript = `turns:
  - text: "Reading the **files** now.\n\nThen I run a command."
    delay: 1500ms
    tool_calls:
      - name: shell
        args: {command: "touch made-by-shell.txt && echo hello-from-shell"}
  - text: "The shell said hello. I also saw your note about the docs."
`

const slowScript = `turns:
  - text: "this reply is never finished"
    delay: 20s
`

const plainScript = `turns:
  - text: "Second session reply."
`

// TestChatInTmux drives lovia chat in a real terminal: a prompt typed, the reply
// streamed, an approval answered, a steering message queued and delivered, Esc
// interrupting a turn, /sessions switching back, and the scrollback holding it all.
func TestChatInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	if testing.Short() {
		t.Skip("builds the binary and drives tmux")
	}
	bin := buildLovia(t)
	if out, _ := exec.Command(bin, "chat", "--help").CombinedOutput(); !bytes.Contains(out, []byte("lovia chat [PROMPT]")) {
		t.Skipf("lovia chat is not registered in cmd/root.go yet:\n%s", out)
	}
	repo := t.TempDir()
	home := t.TempDir()
	for name, body := range map[string]string{"chat.yaml": chatScript, "slow.yaml": slowScript, "plain.yaml": plainScript,
		"README.md": "# demo\n"} {
		if err := os.WriteFile(filepath.Join(repo, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("git", "-C", repo, "init", "-q").CombinedOutput(); err != nil {
		t.Logf("git init: %v %s", err, out)
	}

	s := &tmuxSession{t: t, socket: fmt.Sprintf("lovia-e2e-%d", os.Getpid())}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", s.socket, "kill-server").Run() })
	// Bare `lovia` is `lovia chat` (the root delegates; `chat --help` was checked above).
	command := fmt.Sprintf("env LOVIA_HOME=%s TERM=xterm-256color %s -m script:chat.yaml --policy coding; echo LOVIA-EXITED; sleep 600", home, bin)
	s.run("new-session", "-d", "-s", "main", "-x", "100", "-y", "30", "-c", repo, command)
	s.waitFor("new session", 10*time.Second)

	// A prompt, typed; the reply streams in.
	s.text("what is in this repo?")
	s.keys("Enter")
	s.waitFor("› what is in this repo?", 5*time.Second)
	// Once turn 1 has started (its mailbox drained), and while the model is still
	// "thinking" (the script's delay), queue a steering message: it waits for turn 2.
	s.waitVisible("turn 1", 5*time.Second)
	s.text("also check the docs")
	s.keys("Enter")
	s.waitVisible("queued: also check the docs", 5*time.Second)
	s.waitFor("Reading the files now.", 10*time.Second)

	// The shell call needs approval under the coding policy: allow it once.
	// Answered by an explicit choice: a digit selects, Enter confirms after the guard.
	s.waitVisible("1. allow once", 10*time.Second)
	s.text("1")
	s.waitVisible("Enter confirms allow once", 5*time.Second)
	s.keys("Enter")
	// (the command itself is on screen in the approval box: wait for the result line)
	s.waitFor("✓ shell touch made-by-shell.txt", 10*time.Second)
	if _, err := os.Stat(filepath.Join(repo, "made-by-shell.txt")); err != nil {
		t.Fatalf("the approved command did not run: %v", err)
	}

	// The steering message is delivered at the next turn, then the reply ends.
	sc := s.waitFor("I also saw your note about the docs.", 10*time.Second)
	if !strings.Contains(sc, "› also check the docs  (steering)") {
		t.Fatalf("steering message not shown as delivered:\n%s", sc)
	}
	// The live area is redrawn on the frame after the printed lines.
	s.waitUntil("the delivered message no longer queued", 10*time.Second, func(sc string) bool { return !strings.Contains(sc, "queued:") })
	first := sessionID(t, s.waitFor("turn 2", 5*time.Second))

	// Esc interrupts a slow turn; the run stays resumable.
	s.text("/model script:slow.yaml")
	s.keys("Enter")
	s.text("take your time")
	s.keys("Enter")
	s.waitVisible("esc interrupts", 5*time.Second) // shown while the run is live
	s.keys("Escape")
	s.waitFor("interrupted · /resume continues run", 10*time.Second)

	// A new session, then /sessions switches back to the first one.
	s.text("/new")
	s.keys("Enter")
	s.text("/model script:plain.yaml")
	s.keys("Enter")
	s.text("second session please")
	s.keys("Enter")
	s.waitFor("Second session reply.", 10*time.Second)
	s.text("/sessions")
	s.keys("Enter")
	s.waitVisible("Sessions (Enter switches", 5*time.Second)
	// Newest first: the second session is on top; pick the first one.
	picked := false
	for i := 0; i < 5 && !picked; i++ {
		line := selectedLine(s.visible())
		if strings.Contains(line, first) {
			picked = true
			break
		}
		s.keys("Down")
		s.waitUntil("the selection to move", 5*time.Second, func(sc string) bool { return selectedLine(sc) != line })
	}
	if !picked {
		t.Fatalf("session %s not in the picker:\n%s", first, s.visible())
	}
	s.keys("Enter")
	s.waitFor("── session "+first, 5*time.Second)
	s.waitVisible("session "+first, 5*time.Second)

	// Quit (Ctrl-C twice on an empty prompt); the exit line says how to continue.
	s.keys("C-c")
	s.keys("C-c")
	sc = s.waitFor("LOVIA-EXITED", 10*time.Second)
	if !strings.Contains(sc, "Continue this session with: lovia chat -s "+first) {
		t.Fatalf("no continue hint:\n%s", sc)
	}
	// The scrollback holds the whole conversation, each message once.
	for _, want := range []string{"› what is in this repo?", "Reading the files now.", "› take your time", "› second session please"} {
		if !strings.Contains(sc, want) {
			t.Errorf("scrollback lacks %q", want)
		}
	}
	if n := strings.Count(sc, "The shell said hello."); n != 2 { // once live, once when /sessions re-printed it
		t.Errorf("reply printed %d times, want 2 (the run and the session replay):\n%s", n, sc)
	}
	if lines := strings.Count(sc, "\n"); lines <= 30 {
		t.Errorf("scrollback has only %d lines; earlier messages should scroll off the 30-line screen", lines)
	}
}

var sessionRe = regexp.MustCompile(`session (ses_[0-9a-f]+)`)

func sessionID(t *testing.T, screen string) string {
	t.Helper()
	m := sessionRe.FindAllStringSubmatch(screen, -1)
	if len(m) == 0 {
		t.Fatalf("no session id on screen:\n%s", screen)
	}
	return m[len(m)-1][1]
}

func selectedLine(screen string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, "▸ ses_") {
			return l
		}
	}
	return ""
}
