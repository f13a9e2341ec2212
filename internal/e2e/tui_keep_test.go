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

// Nothing a user saw is dropped: after Esc, a failure or a turn limit, the next
// message of the chat carries on the same conversation. A fake OpenAI server
// captures what the model is sent.

// keepChat is lovia chat against a fake OpenAI server in a fresh repository.
type keepChat struct {
	*tmuxSession
	repo, home string
	srv        *providertest.Server
	bin        string
}

func newKeepChat(t *testing.T, name string, turns ...providertest.Turn) *keepChat {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	if testing.Short() {
		t.Skip("builds the binary and drives tmux")
	}
	k := &keepChat{repo: t.TempDir(), home: t.TempDir(), srv: providertest.NewOpenAIServer(t, turns...), bin: buildLovia(t)}
	if out, err := exec.Command("git", "-C", k.repo, "init", "-q").CombinedOutput(); err != nil {
		t.Logf("git init: %v %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(k.repo, "notes.txt"), []byte("contents-of-notes-7781\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	k.tmuxSession = &tmuxSession{t: t, socket: fmt.Sprintf("lovia-keep-%s-%d", name, os.Getpid())}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", k.socket, "kill-server").Run() })
	return k
}

// start runs `lovia chat -m openai:gpt-4.1 ARGS...` in the tmux session "main".
func (k *keepChat) start(args ...string) {
	k.t.Helper()
	vars := []string{"LOVIA_HOME=" + k.home, "HOME=" + k.home, "XDG_CONFIG_HOME=" + filepath.Join(k.home, ".config"),
		"TERM=xterm-256color", "HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9", "NO_PROXY=127.0.0.1,localhost"}
	for key, v := range k.srv.EnvVars() {
		vars = append(vars, key+"="+v)
	}
	command := fmt.Sprintf("env %s %s chat -m openai:gpt-4.1 %s; echo LOVIA-EXITED; sleep 600",
		strings.Join(vars, " "), k.bin, strings.Join(args, " "))
	k.run("new-session", "-d", "-s", "main", "-x", "100", "-y", "30", "-c", k.repo, command)
}

// send types a message and presses Enter.
func (k *keepChat) send(msg string) {
	k.text(msg)
	k.keys("Enter")
}

// request is the body of the n-th request (0-based) the server got, waiting for it.
func (k *keepChat) request(n int) string {
	k.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if r := k.srv.Requests(); len(r) > n {
			return string(r[n].Body)
		}
		if time.Now().After(deadline) {
			k.t.Fatalf("the server got %d requests, want %d; screen:\n%s", len(k.srv.Requests()), n+1, k.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// inOrder fails unless body holds every want, in this order.
func inOrder(t *testing.T, what, body string, want ...string) {
	t.Helper()
	at := 0
	for _, w := range want {
		i := strings.Index(body[at:], w)
		if i < 0 {
			t.Fatalf("%s: %q missing (or out of order) in:\n%s", what, w, body)
		}
		at += i + len(w)
	}
}

func readNotes(id string) providertest.Call {
	return providertest.Call{ID: id, Name: "read_file", Args: `{"path":"notes.txt"}`}
}

// partial streams the first half of a long reply, then stalls until the client goes.
var partial = providertest.Turn{Text: "PARTIAL-ALPHA the answer starts here and " + strings.Repeat("goes on and on ", 40), Stall: "stream"}

// TestEscKeepsTheConversationInTmux: a prompt whose reply read a file and then was
// interrupted mid-text with Esc; the next typed message's request holds the prompt,
// the tool call and its result, the partial text and a note that it was cut off.
func TestEscKeepsTheConversationInTmux(t *testing.T) {
	k := newKeepChat(t, "esc",
		providertest.Turn{Calls: []providertest.Call{readNotes("call_r1")}},
		partial,
		providertest.Turn{Text: "SECOND-REPLY-DONE"},
	)
	k.start()
	k.waitFor("new session", 10*time.Second)
	k.send("first question about notes")
	k.waitVisible("PARTIAL-ALPHA", 15*time.Second)
	k.keys("Escape")
	k.waitFor("interrupted", 10*time.Second)
	k.waitGone("interrupting", 10*time.Second)

	k.send("next question")
	k.waitFor("SECOND-REPLY-DONE", 15*time.Second)
	body := k.request(2)
	inOrder(t, "request after Esc", body,
		"first question about notes", `"id":"call_r1"`, "read_file", "contents-of-notes-7781", `"tool_call_id":"call_r1"`,
		"PARTIAL-ALPHA", "[lovia note]", "interrupted", "next question")
}

// TestEscDuringToolKeepsPairsInTmux: Esc while a command runs; the finished call
// keeps its result, the cut-off one is answered (paired), and the prompt is kept.
func TestEscDuringToolKeepsPairsInTmux(t *testing.T) {
	k := newKeepChat(t, "esctool",
		providertest.Turn{Calls: []providertest.Call{readNotes("call_a"), {ID: "call_b", Name: "shell", Args: `{"command":"sleep 30"}`}}},
		providertest.Turn{Text: "AFTER-TOOLS-DONE"},
	)
	k.start()
	k.waitFor("new session", 10*time.Second)
	k.send("read then wait")
	k.waitVisible("sleep 30", 15*time.Second) // the command runs
	k.keys("Escape")
	k.waitFor("interrupted", 10*time.Second)
	k.waitGone("interrupting", 10*time.Second)
	k.send("what happened?")
	k.waitFor("AFTER-TOOLS-DONE", 15*time.Second)
	body := k.request(1)
	inOrder(t, "request after Esc during tools", body,
		"read then wait", `"id":"call_a"`, `"id":"call_b"`,
		"contents-of-notes-7781", `"tool_call_id":"call_a"`, `"tool_call_id":"call_b"`,
		"[lovia note]", "what happened?")
}

// TestTurnLimitContinueInTmux: in chat the turn limit is per message; after it,
// typing "continue" and /continue carry on with the earlier turns' tool pairs. The
// hints name what works in chat, never a command-line flag.
func TestTurnLimitContinueInTmux(t *testing.T) {
	k := newKeepChat(t, "limit",
		providertest.Turn{Calls: []providertest.Call{readNotes("call_l1")}},
		providertest.Turn{Calls: []providertest.Call{readNotes("call_l2")}},
		providertest.Turn{Text: "CONTINUED-AFTER-TYPING"},
		providertest.Turn{Calls: []providertest.Call{readNotes("call_m1")}},
		providertest.Turn{Calls: []providertest.Call{readNotes("call_m2")}},
		providertest.Turn{Text: "CONTINUED-AFTER-SLASH"},
	)
	k.start("--max-turns", "2")
	k.waitFor("new session", 10*time.Second)
	k.send("loop over the notes")
	sc := k.waitFor("max turns reached (2)", 15*time.Second)
	k.waitFor("/continue", 5*time.Second)
	if strings.Contains(sc, "--max-turns") || strings.Contains(k.screen(), "--max-turns") {
		t.Fatalf("the chat hint names a command-line flag:\n%s", k.screen())
	}
	k.send("continue")
	k.waitFor("CONTINUED-AFTER-TYPING", 15*time.Second)
	inOrder(t, "request after typing continue", k.request(2),
		"loop over the notes", `"id":"call_l1"`, "contents-of-notes-7781", `"tool_call_id":"call_l1"`,
		`"id":"call_l2"`, `"tool_call_id":"call_l2"`, "[lovia note]", "limit", `"continue"`)

	k.send("loop again")
	k.waitFor("CONTINUED-AFTER-TYPING", 5*time.Second)
	deadline := time.Now().Add(15 * time.Second)
	for strings.Count(k.screen(), "max turns reached (2)") < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("second turn limit not shown:\n%s", k.screen())
		}
		time.Sleep(100 * time.Millisecond)
	}
	k.send("/continue")
	k.waitFor("CONTINUED-AFTER-SLASH", 15*time.Second)
	inOrder(t, "request after /continue", k.request(5),
		"loop over the notes", `"tool_call_id":"call_l2"`, "CONTINUED-AFTER-TYPING",
		"loop again", `"tool_call_id":"call_m1"`, `"tool_call_id":"call_m2"`, "[lovia note]", `"continue"`)
}

// TestContinueOffersResumeInTmux: `chat -c` after a run interrupted in an earlier
// chat offers /resume, and /resume continues that run with its prompt and partial
// text.
func TestContinueOffersResumeInTmux(t *testing.T) {
	k := newKeepChat(t, "resume",
		partial,
		providertest.Turn{Text: "RESUMED-REPLY-DONE"},
	)
	k.start()
	k.waitFor("new session", 10*time.Second)
	k.send("question to resume later")
	k.waitVisible("PARTIAL-ALPHA", 15*time.Second)
	k.keys("Escape")
	k.waitFor("interrupted", 10*time.Second)
	k.waitGone("interrupting", 10*time.Second)
	k.send("/quit")
	k.waitFor("LOVIA-EXITED", 10*time.Second)
	k.run("rename-session", "-t", "main", "first")

	k.start("-c")
	k.run("kill-session", "-t", "first")
	k.waitFor("was interrupted", 15*time.Second)
	k.waitFor("/resume continues it", 5*time.Second)
	k.send("/resume")
	k.waitFor("RESUMED-REPLY-DONE", 15*time.Second)
	inOrder(t, "request of /resume", k.request(1),
		"question to resume later", "PARTIAL-ALPHA", "[lovia note]")
}
