package e2e

// Issue 21, MCP beyond tool calls: resources, @server:uri mentions, prompts as
// slash commands, roots and list_changed, through the built binary against the
// reference server (@modelcontextprotocol/server-everything) and the in-repo test
// server, with a fake OpenAI server recording what reaches the model.

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/provider/providertest"
)

// everythingEnv is a machine whose user config has the reference server as
// "everything" (allowed by an mcp_rules entry) and whose model is srv.
func everythingEnv(t *testing.T, srv *providertest.Server) *env {
	t.Helper()
	if testing.Short() {
		t.Skip("starts the npm reference server")
	}
	p, err := exec.LookPath("mcp-server-everything")
	if err != nil {
		t.Skip("mcp-server-everything not installed (npm install -g @modelcontextprotocol/server-everything; .ci/run does)")
	}
	e := provEnv(t, srv)
	e.userConfig("mcp:\n  servers:\n    everything:\n      command: " + p + "\n      args: [stdio]\n      startup_timeout: 60s\n" +
		"mcp_rules:\n  - {server: everything, decision: allow}\n")
	return e
}

// bodyHas reports whether some request srv received contains s.
func bodyHas(srv *providertest.Server, s string) bool {
	for _, r := range srv.Requests() {
		if strings.Contains(string(r.Body), s) {
			return true
		}
	}
	return false
}

func TestMCPPromptsAsSlashCommandsHeadless(t *testing.T) {
	srv := providertest.NewOpenAIServer(t, providertest.Turn{Text: "sunny"}, providertest.Turn{Text: "simple done"})
	e := everythingEnv(t, srv)
	p := provRun(e, 120*time.Second, "run", "-m", "openai:test-model", "/everything:args-prompt city=Paris state=TX")
	if p.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", p.code, provTail(p.stderr, 3000))
	}
	if !bodyHas(srv, "What's weather in Paris, TX?") {
		t.Fatalf("the prompt's text is not in the request: %s", provTail(string(srv.Requests()[0].Body), 2000))
	}
	// Positional: the words fill the declared arguments in order.
	p = provRun(e, 120*time.Second, "run", "-m", "openai:test-model", "/everything:simple-prompt")
	if p.code != 0 || !bodyHas(srv, "This is a simple prompt without arguments.") {
		t.Fatalf("simple prompt: exit %d\nstderr: %s", p.code, provTail(p.stderr, 3000))
	}
	// A missing required argument: exit 2, naming it; no request is sent.
	n := len(srv.Requests())
	p = provRun(e, 120*time.Second, "run", "-m", "openai:test-model", "/everything:args-prompt state=TX")
	if p.code != 2 || !strings.Contains(p.stderr, "missing required argument(s): city") || !strings.Contains(p.stderr, "/everything:args-prompt city=…") {
		t.Fatalf("missing city: exit %d\nstderr: %s", p.code, p.stderr)
	}
	if len(srv.Requests()) != n {
		t.Fatal("a request was sent for a prompt that failed")
	}
}

func TestMCPMentionHeadless(t *testing.T) {
	srv := providertest.NewOpenAIServer(t, providertest.Turn{Text: "read it"}, providertest.Turn{Text: "again"})
	e := everythingEnv(t, srv)
	p := provRun(e, 120*time.Second, "run", "-m", "openai:test-model", "summarize @everything:demo://resource/static/document/architecture.md please")
	if p.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", p.code, provTail(p.stderr, 3000))
	}
	if !bodyHas(srv, `\u003cmcp_resource server=\"everything\" uri=\"demo://resource/static/document/architecture.md\"\u003e`) && !bodyHas(srv, `<mcp_resource server=\"everything\" uri=\"demo://resource/static/document/architecture.md\">`) {
		t.Fatalf("no attached resource in the request: %s", provTail(string(srv.Requests()[0].Body), 2000))
	}
	if !bodyHas(srv, "Architecture") || !strings.Contains(p.stderr, "attached everything:demo://resource/static/document/architecture.md") {
		t.Fatalf("resource text or note missing; stderr: %s", p.stderr)
	}
	// A template filled in.
	p = provRun(e, 120*time.Second, "run", "-m", "openai:test-model", "see @everything:demo://resource/dynamic/text/5")
	if p.code != 0 || !bodyHas(srv, "Resource 5: This is a plaintext resource") {
		t.Fatalf("template mention: exit %d\nstderr: %s", p.code, provTail(p.stderr, 3000))
	}
	// Unknown server, unreadable resource: exit 2 with the cause and the fix.
	n := len(srv.Requests())
	p = provRun(e, 120*time.Second, "run", "-m", "openai:test-model", "see @evrything:demo://resource/static/document/architecture.md")
	if p.code != 2 || !strings.Contains(p.stderr, `no MCP server "evrything" (configured: everything)`) || !strings.Contains(p.stderr, "lovia mcp add") {
		t.Fatalf("unknown server: exit %d\nstderr: %s", p.code, p.stderr)
	}
	p = provRun(e, 120*time.Second, "run", "-m", "openai:test-model", "see @everything:demo://nothing/here")
	if p.code != 2 || !strings.Contains(p.stderr, "MCP server everything could not read demo://nothing/here") || !strings.Contains(p.stderr, "lovia mcp resources everything") {
		t.Fatalf("unreadable: exit %d\nstderr: %s", p.code, p.stderr)
	}
	if len(srv.Requests()) != n {
		t.Fatal("a request was sent for a prompt whose mention failed")
	}
	// readonly starts no server for a mention unless a rule allows it.
	e.userConfig("mcp:\n  servers:\n    everything:\n      command: mcp-server-everything\n      args: [stdio]\n")
	p = provRun(e, 120*time.Second, "run", "--policy", "readonly", "-m", "openai:test-model", "see @everything:demo://resource/dynamic/text/5")
	if p.code != 2 || !strings.Contains(p.stderr, "reading resources of MCP server everything is not allowed") || !strings.Contains(p.stderr, "--policy coding") {
		t.Fatalf("readonly: exit %d\nstderr: %s", p.code, p.stderr)
	}
}

func TestMCPResourcesAndPromptsCLI(t *testing.T) {
	e := everythingEnv(t, nil)
	r := e.run(nil, "mcp", "resources", "everything")
	if r.code != 0 || !strings.Contains(r.stdout, "everything (read: allow)") || !strings.Contains(r.stdout, "demo://resource/static/document/architecture.md") ||
		!strings.Contains(r.stdout, "template demo://resource/dynamic/text/{resourceId}") {
		t.Fatalf("resources: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = e.run(nil, "mcp", "prompts")
	if r.code != 0 || !strings.Contains(r.stdout, "/everything:args-prompt city=… [state=…]") || !strings.Contains(r.stdout, "/everything:simple-prompt") {
		t.Fatalf("prompts: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := e.run(nil, "mcp", "prompts", "nope"); r.code != 2 || !strings.Contains(r.stderr, `no MCP server "nope"`) {
		t.Fatalf("unknown server: exit %d\n%s", r.code, r.stderr)
	}
}

func TestMCPRootsAnsweredWithTheWorkspaceRoot(t *testing.T) {
	srv := providertest.NewOpenAIServer(t,
		providertest.Turn{Calls: []providertest.Call{{ID: "c1", Name: "everything__get-roots-list", Args: `{}`}}},
		providertest.Turn{Text: "roots seen"})
	e := everythingEnv(t, srv)
	p := provRun(e, 120*time.Second, "run", "-m", "openai:test-model", "which roots?")
	if p.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", p.code, provTail(p.stderr, 3000))
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "file://"+e.dir) {
		t.Fatalf("the tool result does not name the workspace root %s: %s", e.dir, provTail(string(reqs[len(reqs)-1].Body), 2000))
	}
}

func TestMCPListChangedNewToolInNextRun(t *testing.T) {
	srv := providertest.NewOpenAIServer(t,
		providertest.Turn{Calls: []providertest.Call{{ID: "c1", Name: "ts__add_tool", Args: `{"name":"fresh"}`}}},
		providertest.Turn{Text: "added"},
		providertest.Turn{Calls: []providertest.Call{{ID: "c2", Name: "ts__fresh", Args: `{}`}}},
		providertest.Turn{Text: "called"})
	e := provEnv(t, srv)
	e.userConfig("mcp:\n  servers:\n    ts:\n      command: " + mcpTestServer(t) + "\n      args: [-lists]\n" +
		"mcp_rules:\n  - {server: ts, decision: allow}\n")
	p := provRun(e, 120*time.Second, "run", "-m", "openai:test-model", "add a tool")
	if p.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", p.code, provTail(p.stderr, 3000))
	}
	if strings.Contains(string(srv.Requests()[0].Body), `"ts__fresh"`) {
		t.Fatal("the tool exists before it was added")
	}
	// The next run (a new process, and a new server process that does not have the
	// tool) offers it from the list the first run recorded; calling it starts the
	// server, which then lacks it: the point is that the model was told of it.
	p = provRun(e, 120*time.Second, "run", "-m", "openai:test-model", "use it")
	if p.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", p.code, provTail(p.stderr, 3000))
	}
	if !strings.Contains(string(srv.Requests()[2].Body), `"ts__fresh"`) {
		t.Fatalf("the new tool is not offered in the next run: %s", provTail(string(srv.Requests()[2].Body), 3000))
	}
}

// TestMCPMentionInChat: @server:uri typed in the chat reaches the request; an unknown
// server is refused with the fix and the message is back in the prompt; the
// server's prompts complete and run as /server:prompt.
func TestMCPMentionInChat(t *testing.T) {
	srv := providertest.NewOpenAIServer(t, providertest.Turn{Text: "chat read it"}, providertest.Turn{Text: "weather told"})
	e := everythingEnv(t, srv)
	s := renderChat(t, e, "mcpres", "-m", "openai:test-model")
	s.text("typo @evrything:demo://resource/dynamic/text/2")
	s.keys("Enter")
	s.waitFor(`"evrything" (configured: everything)`, 60*time.Second)
	s.waitVisible("the message was not sent; it is back in the prompt", 10*time.Second)
	s.keys("C-u")
	s.text("what is @everything:demo://resource/dynamic/text/2")
	s.keys("Enter")
	s.waitFor("chat read it", 90*time.Second)
	if !bodyHas(srv, "Resource 2: This is a plaintext resource") {
		t.Fatalf("the resource is not in the request: %s", provTail(string(srv.Requests()[0].Body), 2000))
	}
	if sc := s.screen(); !strings.Contains(sc, "attached everything:demo://resource/dynamic/text/2") {
		t.Fatalf("no attach note:\n%s", sc)
	}

	// The server runs now: its prompts complete.
	s.text("/everything:arg")
	s.waitVisible("(MCP prompt) A prompt with two arguments", 10*time.Second)
	s.keys("C-u")
	s.text("/everything:args-prompt Lyon")
	s.keys("Enter")
	s.waitFor("weather told", 60*time.Second)
	if !bodyHas(srv, "What's weather in Lyon?") {
		t.Fatalf("the prompt is not in the request: %s", provTail(string(srv.Requests()[1].Body), 2000))
	}
}
