package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/provider/providertest"
)

// renderChat is lovia chat in tmux (100×30) in e's workspace with e's environment,
// started with args after "chat"; it waits for the status line.
func renderChat(t *testing.T, e *env, name string, args ...string) *tmuxSession {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	if testing.Short() {
		t.Skip("drives the binary in tmux")
	}
	s := &tmuxSession{t: t, socket: fmt.Sprintf("lovia-render-%s-%d", name, os.Getpid())}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", s.socket, "kill-server").Run() })
	vars := append([]string{"TERM=xterm-256color"}, e.vars...)
	quoted := make([]string, 0, len(vars)+len(args)+2)
	for _, v := range vars {
		quoted = append(quoted, shellQuote(v))
	}
	quoted = append(quoted, shellQuote(bin), "chat")
	for _, a := range args {
		quoted = append(quoted, shellQuote(a))
	}
	command := "env -i " + strings.Join(quoted, " ") + "; echo LOVIA-EXITED; sleep 600"
	s.run("new-session", "-d", "-s", "main", "-x", "100", "-y", "30", "-c", e.dir, command)
	s.waitVisible("↑", 10*time.Second) // the status line's token counts
	return s
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// longestBlank is the longest run of empty lines in screen before its last
// non-empty line.
func longestBlank(screen string) int {
	lines := strings.Split(strings.TrimRight(screen, "\n "), "\n")
	best, run := 0, 0
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

// liveRegion waits until the bottom of the visible pane is the prompt box: the rule,
// the prompt line, the status line (a capture may catch a frame half drawn).
func liveRegion(t *testing.T, s *tmuxSession, status string) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		visible := s.visible()
		lines := strings.Split(strings.TrimRight(visible, "\n "), "\n")
		n := len(lines)
		if n >= 3 && strings.HasPrefix(lines[n-3], "────") && strings.HasPrefix(lines[n-2], "› ") && strings.Contains(lines[n-1], status) {
			return visible
		}
		if time.Now().After(deadline) {
			t.Fatalf("the screen does not end with the prompt box and the status line (%q):\n%s", status, visible)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// `chat -c` on a session whose replay is 1,000 lines: the replay scrolls by, the
// prompt box and the status line are on screen at the end (no resize needed), and the
// scrollback has no block of blank lines and no stray copy of the box.
func TestChatContinueLongSessionInTmux(t *testing.T) {
	e := newEnv(t)
	var b strings.Builder
	b.WriteString("turns:\n  - text: \"Here it is:\\n\\n```\\n")
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&b, "replayed line %04d\\n", i)
	}
	b.WriteString("```\\n\\nThat was all.\"\n")
	e.write("long.yaml", b.String())
	e.write("plain.yaml", "turns:\n  - text: \"fine\"\n")
	if r := e.run(nil, "run", "-m", "script:long.yaml", "print a thousand lines"); r.code != 0 {
		t.Fatalf("seeding the session: %d\n%s", r.code, r.stderr)
	}

	s := renderChat(t, e, "long", "-c", "-m", "script:plain.yaml")
	s.waitFor("That was all.", 15*time.Second)
	s.waitVisible("session ses_", 10*time.Second)
	liveRegion(t, s, "session ses_")

	sc := s.screen()
	for _, want := range []string{"replayed line 0001", "replayed line 0500", "replayed line 1000", "› print a thousand lines"} {
		if !strings.Contains(sc, want) {
			t.Errorf("scrollback lacks %q", want)
		}
	}
	if n := longestBlank(sc); n > 2 {
		t.Errorf("the scrollback holds a block of %d blank lines:\n%s", n, provTail(sc, 3000))
	}
	if n := strings.Count(sc, "Message lovia"); n != 1 {
		t.Errorf("the prompt box is %d times in the scrollback, want once (on screen):\n%s", n, provTail(sc, 3000))
	}
	if first := strings.TrimSpace(strings.SplitN(strings.TrimLeft(sc, "\n "), "\n", 2)[0]); !strings.HasPrefix(first, "lovia ") {
		t.Errorf("the scrollback does not start with the welcome line: %q", first)
	}

	// Still usable: a message goes out and its reply lands above the prompt.
	s.text("and now?")
	s.keys("Enter")
	s.waitFor("fine", 10*time.Second)
	s.waitVisible("turn 1", 10*time.Second)
	liveRegion(t, s, "session ses_")
}

// The prompt growing and shrinking (ctrl+j lines typed, then erased) while the box
// sits near the top of a fresh screen leaves no copy of the box in the scrollback.
func TestInputHeightLeavesNoCopiesInTmux(t *testing.T) {
	e := newEnv(t)
	e.write("plain.yaml", "turns:\n  - text: \"fine\"\n")
	s := renderChat(t, e, "height", "-m", "script:plain.yaml")
	s.text("first line")
	for i := 2; i <= 5; i++ {
		s.keys("C-j")
		s.text(fmt.Sprintf("line %d", i))
		s.waitVisible(fmt.Sprintf("  line %d", i), 5*time.Second)
	}
	for i := 5; i >= 2; i-- {
		s.keys("BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace")
		s.waitGone(fmt.Sprintf("  line %d", i), 5*time.Second)
	}
	s.keys("C-j")
	s.text("again")
	s.waitVisible("  again", 5*time.Second)
	sc := s.screen()
	if n := strings.Count(sc, "new session ·"); n != 1 {
		t.Fatalf("the status line is %d times in the scrollback, want 1:\n%s", n, sc)
	}
	if n := strings.Count(sc, "› first line"); n != 1 {
		t.Fatalf("the prompt is %d times in the scrollback, want 1:\n%s", n, sc)
	}
	if !strings.Contains(sc, "lovia ") || !strings.Contains(sc, "Ctrl-C twice quits") {
		t.Fatalf("no welcome line:\n%s", sc)
	}
}

// A 50-line bracketed paste shows as "[pasted 50 lines]" in a one-line prompt; the
// model receives all 50 lines, and no tall box is left in the scrollback.
func TestLongPasteInTmux(t *testing.T) {
	srv := providertest.NewOpenAIServer(t, providertest.Turn{Text: "Got your lines."})
	e := provEnv(t, srv)
	var lines []string
	for i := 1; i <= 50; i++ {
		lines = append(lines, fmt.Sprintf("pasted row %02d", i))
	}
	buf := filepath.Join(t.TempDir(), "paste.txt")
	if err := os.WriteFile(buf, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := renderChat(t, e, "paste", "-m", "openai:test-model")
	s.text("please sort these: ")
	s.run("load-buffer", "-b", "p50", buf)
	s.run("paste-buffer", "-p", "-d", "-b", "p50", "-t", "main")
	vis := s.waitVisible("[pasted 50 lines]", 5*time.Second)
	if got := promptLine(vis); !strings.Contains(got, "please sort these: [pasted 50 lines]") {
		t.Fatalf("prompt line %q:\n%s", got, vis)
	}
	if strings.Contains(vis, "pasted row 02") {
		t.Fatalf("the paste is unfolded in the prompt:\n%s", vis)
	}
	s.text(" thanks")
	s.keys("Enter")
	s.waitFor("Got your lines.", 15*time.Second)

	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("the server received no request")
	}
	body := string(reqs[0].Body)
	for _, l := range lines {
		if !strings.Contains(body, l) {
			t.Fatalf("the request lacks %q:\n%s", l, provTail(body, 2000))
		}
	}
	if strings.Contains(body, "[pasted 50 lines]") || !strings.Contains(body, "please sort these: pasted row 01") || !strings.Contains(body, "pasted row 50 thanks") {
		t.Fatalf("the message is not the text with the paste in place:\n%s", provTail(body, 2000))
	}
	sc := s.screen()
	if n := strings.Count(sc, "[pasted 50 lines]"); n != 0 {
		t.Errorf("a copy of the prompt box with the paste is in the scrollback %d times:\n%s", n, sc)
	}
	if n := strings.Count(sc, "pasted row 25"); n != 1 {
		t.Errorf("the sent message shows row 25 %d times, want once:\n%s", n, sc)
	}
}

// The welcome line names the version, directory, model, policy, /help and how to
// quit; /model with an unknown provider fails at once and keeps the model; /compact
// between runs compacts now and says what it saved.
func TestWelcomeModelCompactInTmux(t *testing.T) {
	e := newEnv(t)
	var big strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&big, "row %d: lorem ipsum dolor sit amet, consectetur adipiscing elit\n", i)
	}
	e.write("big.txt", big.String())
	e.write("read.yaml", "turns:\n  - tool_calls:\n      - name: read_file\n        args: {path: big.txt}\n  - text: \"Read it.\"\n")
	e.write("plain.yaml", "turns:\n  - text: \"fine\"\n")
	for i := 0; i < 4; i++ {
		args := []string{"run", "-m", "script:read.yaml", fmt.Sprintf("read it, take %d", i)}
		if i > 0 {
			args = append([]string{"run", "-c"}, args[1:]...)
		}
		if r := e.run(nil, args...); r.code != 0 {
			t.Fatalf("seeding: %d\n%s", r.code, r.stderr)
		}
	}
	if r := e.run(nil, "run", "-c", "-m", "script:plain.yaml", "thanks"); r.code != 0 {
		t.Fatalf("seeding: %d\n%s", r.code, r.stderr)
	}

	e.write("after.yaml", "turns:\n  - text: \"Still here after compaction.\"\n")
	s := renderChat(t, e, "habits", "-c", "-m", "script:after.yaml")
	sc := s.waitFor("Ctrl-C twice quits", 5*time.Second)
	welcome := ""
	for _, l := range strings.Split(sc, "\n") {
		if strings.HasPrefix(l, "lovia ") {
			welcome = l
			break
		}
	}
	for _, want := range []string{"script:after.yaml", "policy coding", "/help", "Ctrl-C twice quits", filepath.Base(e.dir)} {
		if !strings.Contains(welcome, want) {
			t.Errorf("welcome line %q lacks %q", welcome, want)
		}
	}

	s.text("/model nosuch:thing")
	s.keys("Enter")
	s.waitVisible(`unknown model provider "nosuch"`, 5*time.Second)
	s.waitVisible("model unchanged: script:after.yaml", 5*time.Second)
	liveRegion(t, s, "script:after.yaml · session ses_")

	s.text("/compact")
	s.keys("Enter")
	vis := s.waitVisible("⊘ compacted:", 20*time.Second)
	if !strings.Contains(vis, "tokens (saved ") {
		t.Fatalf("/compact does not say what it saved:\n%s", vis)
	}
	// The next message still works, on the compacted context.
	s.text("and now?")
	s.keys("Enter")
	s.waitFor("Still here after compaction.", 15*time.Second)
}

// @path attaches a workspace file's content to the message; a symlink in the
// repository pointing outside it attaches nothing (the workspace policy judges it),
// and a word like @alice that names no file stays a word.
func TestAttachMentionInTmux(t *testing.T) {
	srv := providertest.NewOpenAIServer(t, providertest.Turn{Text: "Seen."})
	e := provEnv(t, srv)
	e.write("notes/plan.md", "PLAN-CANARY-41 step one\n")
	// Outside the workspace and not in a temp dir (the policy lets temp files be read).
	const secret = "/etc/passwd"
	if _, err := os.Stat(secret); err != nil {
		t.Skip("no /etc/passwd")
	}
	if err := os.Symlink(secret, filepath.Join(e.dir, "innocent.md")); err != nil {
		t.Fatal(err)
	}
	s := renderChat(t, e, "attach", "-m", "openai:test-model")
	s.text("compare @notes/plan.md with @innocent.md, ask @alice today")
	s.waitVisible("ask @alice today", 5*time.Second)
	s.keys("Enter")
	sc := s.waitFor("Seen.", 15*time.Second)
	if !strings.Contains(sc, "attached notes/plan.md") || !strings.Contains(sc, "@innocent.md not attached") {
		t.Errorf("the notes do not say what was attached:\n%s", sc)
	}
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request")
	}
	body := string(reqs[0].Body)
	if !strings.Contains(body, "PLAN-CANARY-41") {
		t.Errorf("the request lacks the attached file:\n%s", provTail(body, 2000))
	}
	if strings.Contains(body, "root:") {
		t.Fatalf("a symlink attached a file outside the workspace:\n%s", provTail(body, 2000))
	}
}
