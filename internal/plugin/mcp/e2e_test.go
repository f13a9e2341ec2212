package mcp

import (
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/plugin/plugintest"
	"github.com/lovia-dev/lovia/internal/provider/script"
	"github.com/lovia-dev/lovia/internal/workspace"
)

func TestThroughTheLoop(t *testing.T) {
	p, err := New(Config{Servers: map[string]ServerConfig{"ts": stdioCfg(), "gone": {Command: "lovia-no-such-mcp-server"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	r := plugintest.Start(t, "use the server", []script.Turn{
		plugintest.Calls(
			plugintest.Call("ts__echo", map[string]any{"text": "hi"}),
			plugintest.Call("ts__image", map[string]any{}),
		),
		plugintest.Calls(plugintest.Call("ts__crash", map[string]any{})),
		plugintest.Say("done"),
	}, plugintest.Options{}, p.For(policy(t, "coding", workspace.MCPRule{Server: "ts", Decision: "allow"})))
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	req := r.Request(t, 0)
	if !plugintest.HasTool(req, "ts__echo") || !strings.Contains(req.System, "gone: MCP server \"gone\"") {
		t.Fatalf("first request: tools %v\n%s", req.Tools, req.System)
	}
	if res := r.ToolResult(t, "ts__echo", 0); res.Text != "echo: hi" {
		t.Fatalf("echo = %+v", res)
	}
	if res := r.ToolResult(t, "ts__image", 0); len(res.Attachments) != 1 || res.Attachments[0].MIME != "image/png" {
		t.Fatalf("image = %+v", res)
	}
	if res := r.ToolResult(t, "ts__crash", 0); !res.IsError || !strings.Contains(res.Text, "stopped while running crash") {
		t.Fatalf("crash = %+v", res)
	}
	last := r.Request(t, 2)
	if tail := last.Entries[len(last.Entries)-1]; !strings.Contains(tail.Text, "MCP server(s) stopped during this run: ts") {
		t.Fatalf("no notice after the crash: %+v", tail)
	}
}
