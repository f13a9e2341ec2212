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

const rewindChatScript = `scope: session
turns:
  - tool_calls:
      - {name: write_file, args: {path: notes.txt, content: "v1\n"}}
  - text: "created the notes"
  - tool_calls:
      - {name: write_file, args: {path: notes.txt, content: "v2\n"}}
      - {name: write_file, args: {path: extra.txt, content: "extra\n"}}
  - text: "changed the notes"
`

// TestChatUndoAndRewindInTmux: /undo takes back the last message (its files and the
// conversation) and puts the prompt back; /rewind picks an older message from a list.
func TestChatUndoAndRewindInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	if testing.Short() {
		t.Skip("drives tmux")
	}
	if out, _ := exec.Command(bin, "chat", "--help").CombinedOutput(); !bytes.Contains(out, []byte("lovia chat [PROMPT]")) {
		t.Skip("lovia chat is not registered")
	}
	repo, home := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(repo, "rw.yaml"), []byte(rewindChatScript), 0o644)
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(repo, name))
		if err != nil {
			return "<missing>"
		}
		return string(b)
	}

	s := &tmuxSession{t: t, socket: fmt.Sprintf("lovia-e2e-rw-%d", os.Getpid())}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", s.socket, "kill-server").Run() })
	command := fmt.Sprintf("env LOVIA_HOME=%s HOME=%s TERM=xterm-256color %s -m script:rw.yaml --policy coding; echo LOVIA-EXITED; sleep 600", home, home, bin)
	s.run("new-session", "-d", "-s", "main", "-x", "110", "-y", "30", "-c", repo, command)
	s.waitFor("new session", 10*time.Second)

	s.text("create notes")
	s.keys("Enter")
	s.waitFor("created the notes", 10*time.Second)
	s.text("change notes")
	s.keys("Enter")
	s.waitFor("changed the notes", 10*time.Second)
	s.waitVisible("/undo · /rewind", 5*time.Second)
	if read("notes.txt") != "v2\n" || read("extra.txt") != "extra\n" {
		t.Fatalf("the run did not write: %q %q", read("notes.txt"), read("extra.txt"))
	}

	// /undo: the last message's files and conversation; its prompt comes back.
	s.text("/undo")
	s.keys("Enter")
	s.waitFor("rewound to before “change notes”", 10*time.Second)
	if read("notes.txt") != "v1\n" || read("extra.txt") != "<missing>" {
		t.Fatalf("after /undo: notes %q extra %q", read("notes.txt"), read("extra.txt"))
	}
	if v := s.waitVisible("› change notes", 5*time.Second); !strings.Contains(v, "› change notes") {
		t.Fatalf("the prompt was not put back:\n%s", v)
	}
	s.keys("C-c") // clear the prompt

	// /rewind: pick the first message, then "code and conversation".
	s.text("/rewind")
	s.keys("Enter")
	s.waitVisible("Rewind to before which message?", 5*time.Second)
	s.waitVisible("create notes", 5*time.Second)
	s.keys("Enter")
	s.waitVisible("Restore what?", 5*time.Second)
	s.keys("Enter")
	s.waitFor("rewound to before “create notes”", 10*time.Second)
	if read("notes.txt") != "<missing>" {
		t.Fatalf("after /rewind notes.txt = %q", read("notes.txt"))
	}
	s.waitVisible("› create notes", 5*time.Second)
}
