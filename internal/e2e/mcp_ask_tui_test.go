package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/provider/providertest"
)

// startEverythingChat runs lovia chat against srv with server-everything configured
// (its tools allowed) and waits for the prompt.
func startEverythingChat(t *testing.T, name string, srv *providertest.Server) *tmuxSession {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	if testing.Short() {
		t.Skip("drives tmux")
	}
	e := provEnv(t, srv)
	e.userConfig(everythingConfig(t, ""))
	s := &tmuxSession{t: t, socket: fmt.Sprintf("lovia-e2e-%s-%d", name, os.Getpid())}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", s.socket, "kill-server").Run() })
	command := "env -i " + strings.Join(append(e.vars, "TERM=xterm-256color"), " ") + " " + bin + " chat -m openai:gpt-test; echo LOVIA-EXITED; sleep 600"
	s.run("new-session", "-d", "-s", "main", "-x", "120", "-y", "50", "-c", e.dir, command)
	s.waitFor("new session", 20*time.Second)
	return s
}

// An MCP server's elicitation is a form in the TUI: the required field is filled in
// the prompt, the defaults stand, accept sends the values to the server.
func TestMCPElicitationFormInTmux(t *testing.T) {
	srv := providertest.NewOpenAIServer(t,
		providertest.Turn{Calls: []providertest.Call{{ID: "c1", Name: "everything__trigger-elicitation-request", Args: `{}`}}},
		providertest.Turn{Text: "Thanks, noted."})
	s := startEverythingChat(t, "elicit", srv)
	s.text("ask me")
	s.keys("Enter")
	sc := s.waitVisible("An MCP server asks you to fill in a form", 60*time.Second)
	for _, want := range []string{"Please provide inputs", "String*: (empty)", "It was a dark and stormy night.", "accept (send the form)", "Monica"} {
		if !strings.Contains(sc, want) {
			t.Fatalf("form lacks %q:\n%s", want, sc)
		}
	}
	// Accepting with the required field empty is refused, with the reason.
	for range 13 {
		s.keys("Down")
	}
	time.Sleep(500 * time.Millisecond) // wall time for the approval guard (not ordering)
	s.keys("Enter")
	s.waitVisible("required: String", 5*time.Second)
	for range 13 {
		s.keys("Up")
	}
	s.keys("Enter")
	s.waitVisible("type the value in the prompt", 5*time.Second)
	s.text("Ada Lovelace")
	s.keys("Enter")
	s.waitVisible("String*: Ada Lovelace", 5*time.Second)
	for range 13 {
		s.keys("Down")
	}
	s.keys("Enter")
	s.waitFor("Thanks, noted.", 30*time.Second)
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	body := string(reqs[1].Body)
	for _, want := range []string{"Name: Ada Lovelace", "Favorite Integer: 42", "User provided the requested information"} {
		if !strings.Contains(body, want) {
			t.Fatalf("tool result lacks %q: %s", want, body)
		}
	}
}

// A sampling request is an approval in the TUI like a tool call's; once allowed, the
// run's own model answers it and the reply reaches the tool result.
func TestMCPSamplingApprovalInTmux(t *testing.T) {
	srv := providertest.NewOpenAIServer(t, samplingCall(),
		providertest.Turn{Text: "SAMPLED-IN-TUI"},
		providertest.Turn{Text: "All sampled."})
	s := startEverythingChat(t, "sampling", srv)
	s.text("sample it")
	s.keys("Enter")
	sc := s.waitVisible("Let an MCP server use your model?", 60*time.Second)
	for _, want := range []string{"MCP server everything asks your model openai:gpt-test", "six times seven", "allow for session (mcp-sampling:everything)"} {
		if !strings.Contains(sc, want) {
			t.Fatalf("approval lacks %q:\n%s", want, sc)
		}
	}
	s.keys("Down")
	s.waitVisible("Enter confirms allow once", 5*time.Second)
	s.keys("Enter")
	s.waitFor("All sampled.", 30*time.Second)
	reqs := srv.Requests()
	if len(reqs) != 3 || !strings.Contains(string(reqs[2].Body), "SAMPLED-IN-TUI") {
		t.Fatalf("%d requests; last: %s", len(reqs), reqs[len(reqs)-1].Body)
	}
}
