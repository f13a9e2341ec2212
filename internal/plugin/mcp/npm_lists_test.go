package mcp

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/workspace"
)

// The reference server's resources, templates, prompts, roots and list_changed.
func TestReferenceServerEverythingBeyondTools(t *testing.T) {
	root := t.TempDir()
	cfg := npmServer(t, "@modelcontextprotocol/server-everything")
	p := newPlugin(t, Config{Root: root, Servers: map[string]ServerConfig{"everything": cfg}})
	pol := policy(t, "coding", workspace.MCPRule{Server: "everything", Decision: "allow"})
	c, err := p.For(pol).Setup(ctxT(t), &tool.RunContext{})
	if err != nil {
		t.Fatal(err)
	}
	skipIfUnavailable(t, p, "everything")

	list := run(t, c, "mcp_list_resources", `{"server":"everything"}`)
	for _, want := range []string{"demo://resource/static/document/architecture.md", "template demo://resource/dynamic/text/{resourceId}"} {
		if !strings.Contains(list.Text, want) {
			t.Fatalf("resources lack %q:\n%s", want, list.Text)
		}
	}
	if res := run(t, c, "mcp_read_resource", `{"server":"everything","uri":"demo://resource/static/document/architecture.md"}`); res.IsError || !strings.Contains(res.Text, "Architecture") {
		t.Fatalf("static read = %.300s", res.Text)
	}
	if res := run(t, c, "mcp_read_resource", `{"server":"everything","uri":"demo://resource/dynamic/text/3"}`); res.IsError || !strings.Contains(res.Text, "Resource 3: This is a plaintext resource") {
		t.Fatalf("template read = %+v", res)
	}

	text, _, err := p.GetPrompt(ctxT(t), pol, "everything:simple-prompt", "")
	if err != nil || text != "This is a simple prompt without arguments." {
		t.Fatalf("simple prompt = %q, %v", text, err)
	}
	if text, _, err = p.GetPrompt(ctxT(t), pol, "everything:args-prompt", "Paris state=TX"); err != nil || text != "What's weather in Paris, TX?" {
		t.Fatalf("args prompt = %q, %v", text, err)
	}
	if _, _, err = p.GetPrompt(ctxT(t), pol, "everything:args-prompt", ""); err == nil || !strings.Contains(err.Error(), "missing required argument(s): city") {
		t.Fatalf("missing city: %v", err)
	}

	if res := run(t, c, "everything__get-roots-list", `{}`); res.IsError || !strings.Contains(res.Text, "file://"+root) {
		t.Fatalf("roots = %+v (root %s)", res, root)
	}

	// A session resource registered by a tool: resources/list_changed lists it.
	data := "data:text/plain;base64," + base64.StdEncoding.EncodeToString([]byte("hello gzip"))
	if res := run(t, c, "everything__gzip-file-as-resource", `{"name":"fresh.gz","data":"`+data+`"}`); res.IsError {
		t.Fatalf("gzip = %+v", res)
	}
	waitFor(t, p, "everything", func() bool {
		l, _ := p.Offers("everything")
		return strings.Contains(FormatResources("everything", l), "demo://resource/session/fresh.gz")
	})
}
