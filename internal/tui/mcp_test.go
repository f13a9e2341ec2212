package tui

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// mcpBackend is a fakeBackend with one MCP server "ev".
type mcpBackend struct {
	*fakeBackend
	fail error
}

func (b *mcpBackend) ExpandMCPMentions(_ context.Context, typed, prompt string) (string, []string, error) {
	if !strings.Contains(typed, "@ev:") {
		return prompt, nil, nil
	}
	if b.fail != nil {
		return prompt, nil, b.fail
	}
	return prompt + "\n\n<mcp_resource server=\"ev\">doc text</mcp_resource>", []string{"attached ev:demo://doc"}, nil
}

func (b *mcpBackend) MCPPromptCommands() []CustomCommand {
	return []CustomCommand{{Name: "/ev:greet", Args: "who=…", Help: "(MCP prompt) Greet"}}
}

func (b *mcpBackend) IsMCPCommand(name string) bool { return strings.HasPrefix(name, "/ev:") }

func (b *mcpBackend) MCPResourceURIs() []string {
	return []string{"@ev:demo://doc", "@ev:demo://items/{id}"}
}

func mcpHarness(t *testing.T) (*harness, *mcpBackend) {
	h := newHarness(t, 100, 30)
	b := &mcpBackend{fakeBackend: h.b}
	h.m.backend = b
	return h, b
}

func TestMCPMentionAttachedToTheRequest(t *testing.T) {
	h, _ := mcpHarness(t)
	h.typeText("read @ev:demo://doc")
	h.enter()
	if len(h.b.reqs) != 1 || !strings.Contains(h.b.reqs[0].Prompt, "<mcp_resource server=\"ev\">doc text</mcp_resource>") {
		t.Fatalf("requests = %+v", h.b.reqs)
	}
	if !strings.Contains(h.scrollback(), "attached ev:demo://doc") {
		t.Fatalf("no note:\n%s", h.scrollback())
	}
}

func TestMCPMentionFailureKeepsTheMessage(t *testing.T) {
	h, b := mcpHarness(t)
	b.fail = errors.New(`no MCP server "ev2"`)
	h.typeText("read @ev:demo://gone")
	h.enter()
	if len(h.b.reqs) != 0 {
		t.Fatalf("a run started: %+v", h.b.reqs)
	}
	if got := h.m.input.Value(); got != "read @ev:demo://gone" {
		t.Fatalf("input = %q", got)
	}
	if !strings.Contains(h.scrollback(), `no MCP server "ev2"`) || !strings.Contains(h.view(), "back in the prompt") {
		t.Fatalf("no error shown:\n%s\n%s", h.scrollback(), h.view())
	}
	if h.m.starting {
		t.Fatal("still starting")
	}
}

func TestMCPCompletion(t *testing.T) {
	h, _ := mcpHarness(t)
	h.typeText("/ev:g")
	if h.m.comp == nil || len(h.m.comp.items) != 1 || h.m.comp.items[0] != "/ev:greet" {
		t.Fatalf("slash completion = %+v", h.m.comp)
	}
	h.m.input.SetValue("")
	h.typeText("see @ev:demo://i")
	if h.m.comp == nil || len(h.m.comp.items) != 1 || h.m.comp.items[0] != "@ev:demo://items/{id}" {
		t.Fatalf("resource completion = %+v", h.m.comp)
	}
}

func TestMCPPromptCommandRuns(t *testing.T) {
	h, _ := mcpHarness(t)
	// Listed or not, /ev:… of a configured server is sent to the backend as a prompt.
	h.typeText("/ev:other x=1")
	h.enter()
	if len(h.b.reqs) != 1 || h.b.reqs[0].Prompt != "/ev:other x=1" {
		t.Fatalf("requests = %+v", h.b.reqs)
	}
}

// failingBackend refuses every run, as a /server:prompt with a missing argument is.
type failingBackend struct{ *mcpBackend }

func (b *failingBackend) Start(context.Context, StartRequest) (Handle, error) {
	return nil, errors.New("/ev:greet: missing required argument(s): who")
}

func TestMCPPromptFailureKeepsTheCommand(t *testing.T) {
	h, b := mcpHarness(t)
	h.m.backend = &failingBackend{b}
	h.typeText("/ev:greet mood=calm")
	h.enter()
	if got := h.m.input.Value(); got != "/ev:greet mood=calm" {
		t.Fatalf("input = %q", got)
	}
	if !strings.Contains(h.scrollback(), "missing required argument(s): who") {
		t.Fatalf("no error shown:\n%s", h.scrollback())
	}
}
