package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const touchScript = `turns:
  - tool_calls:
      - name: shell
        args: {command: "touch x.txt"}
  - text: "Made x.txt."
`

// startChat runs lovia chat with the scripted model in a fresh repository under the
// default policy (no --approve, no --policy) and waits for the prompt.
func startChat(t *testing.T, name, script string) (*tmuxSession, string) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	if testing.Short() {
		t.Skip("builds the binary and drives tmux")
	}
	bin := buildLovia(t)
	if out, _ := exec.Command(bin, "chat", "--help").CombinedOutput(); !bytes.Contains(out, []byte("lovia chat [PROMPT]")) {
		t.Skipf("lovia chat is not registered:\n%s", out)
	}
	repo, home := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(repo, "script.yaml"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", repo, "init", "-q").CombinedOutput(); err != nil {
		t.Logf("git init: %v %s", err, out)
	}
	s := &tmuxSession{t: t, socket: fmt.Sprintf("lovia-e2e-%s-%d", name, os.Getpid())}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", s.socket, "kill-server").Run() })
	command := fmt.Sprintf("env LOVIA_HOME=%s TERM=xterm-256color %s chat -m script:script.yaml; echo LOVIA-EXITED; sleep 600", home, bin)
	s.run("new-session", "-d", "-s", "main", "-x", "100", "-y", "30", "-c", repo, command)
	s.waitFor("new session", 10*time.Second)
	return s, repo
}

// waitGone waits until what is no longer on screen.
func (s *tmuxSession) waitGone(what string, timeout time.Duration) string {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		sc := s.visible()
		if !strings.Contains(sc, what) {
			return sc
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out waiting for %q to go; screen:\n%s", what, sc)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// promptLine is the prompt's first line on screen (it starts with "› " and follows
// the rule above the prompt).
func promptLine(screen string) string {
	lines := strings.Split(screen, "\n")
	for i := len(lines) - 1; i > 0; i-- {
		if strings.HasPrefix(lines[i-1], "────") && strings.HasPrefix(lines[i], "› ") {
			return lines[i]
		}
	}
	return ""
}

// Typed text never answers an approval: a sentence full of y, a, n and m, typed both
// during the guard and after it, stays in the prompt and the command does not run;
// the arrow key and Enter then answer it.
func TestTypingNeverAnswersApprovalInTmux(t *testing.T) {
	s, repo := startChat(t, "approve", touchScript)
	s.text("make the file")
	s.keys("Enter")
	s.waitVisible("1. allow once", 10*time.Second)
	sc := s.waitVisible("Approval waiting above", 5*time.Second)
	if !strings.Contains(sc, "touch x.txt") {
		t.Fatalf("approval does not show the command:\n%s", sc)
	}

	const first = "hey yes and more, any news"
	s.text(first)
	s.waitVisible(first, 5*time.Second)
	// Wall time for the guard to pass (this waits on the binary's real clock; it does
	// not order events), then more of the same.
	time.Sleep(time.Second)
	const second = " y a n m"
	s.text(second)
	sc = s.waitVisible(first+second, 5*time.Second)
	if got := promptLine(sc); !strings.Contains(got, first+second) {
		t.Fatalf("typed text not in the prompt (prompt line %q):\n%s", got, sc)
	}
	if !strings.Contains(sc, "Run this command?") {
		t.Fatalf("the approval is no longer pending:\n%s", sc)
	}
	if _, err := os.Stat(filepath.Join(repo, "x.txt")); err == nil {
		t.Fatalf("typing ran the command:\n%s", sc)
	}

	// The explicit choice answers it; the prompt keeps its text.
	s.keys("Down")
	s.waitVisible("Enter confirms allow once", 5*time.Second)
	s.keys("Enter")
	sc = s.waitFor("Made x.txt.", 10*time.Second)
	if _, err := os.Stat(filepath.Join(repo, "x.txt")); err != nil {
		t.Fatalf("the approved command did not run: %v\n%s", err, sc)
	}
	if got := promptLine(s.visible()); !strings.Contains(got, first+second) {
		t.Fatalf("prompt lost its text after the answer: %q\n%s", got, s.visible())
	}
}

// One Ctrl-C on an empty prompt does not quit: the status line asks for a second
// press, the request lapses without quitting, and two presses in a row quit.
func TestCtrlCTwiceInTmux(t *testing.T) {
	s, _ := startChat(t, "ctrlc", touchScript)
	s.keys("C-c")
	s.waitVisible("press Ctrl-C again to quit", 5*time.Second)
	// The request lapses after a second; lovia is still there.
	sc := s.waitGone("press Ctrl-C again to quit", 5*time.Second)
	if strings.Contains(s.screen(), "LOVIA-EXITED") {
		t.Fatalf("one Ctrl-C quit:\n%s", sc)
	}
	// Two presses in a row (one send-keys) quit.
	s.keys("C-c", "C-c")
	s.waitFor("LOVIA-EXITED", 10*time.Second)
}
