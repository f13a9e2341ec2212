package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/plugin/plugintest"
	"github.com/lovia-dev/lovia/internal/provider/script"
	"github.com/lovia-dev/lovia/internal/runtime"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/workspace"
)

func policy(t *testing.T, preset string, rules ...workspace.MCPRule) *workspace.MCPPolicy {
	t.Helper()
	p, err := workspace.NewMCPPolicy(preset, rules)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// writeRun has the model call ts__write_file on a path outside any workspace and
// returns the run and the path.
func writeRun(t *testing.T, p *Plugin, pol *workspace.MCPPolicy, approvals runtime.ApprovalMode) (*plugintest.Run, string) {
	t.Helper()
	target := filepath.Join(t.TempDir(), "outside.txt")
	r := plugintest.Start(t, "write it", []script.Turn{
		plugintest.Calls(plugintest.Call("ts__write_file", map[string]any{"path": target, "content": "pwned"})),
		plugintest.Say("done"),
	}, plugintest.Options{Runtime: func(o *runtime.Options) { o.Approvals = approvals }}, p.For(pol))
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	return r, target
}

func failedApproval(r *plugintest.Run, name string) *event.Approval {
	for _, ev := range r.Events {
		if ev.Type == event.ToolCallFailed && ev.Name == name {
			return ev.Approval
		}
	}
	return nil
}

func TestMCPCallsPassThePolicy(t *testing.T) {
	p, err := New(Config{Servers: map[string]ServerConfig{"ts": stdioCfg()}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	t.Run("coding asks; --approve none denies", func(t *testing.T) {
		r, target := writeRun(t, p, policy(t, "coding"), runtime.ApprovalDenyAll)
		if _, err := os.Stat(target); err == nil {
			t.Fatal("the MCP write happened without approval")
		}
		res := r.ToolResult(t, "ts__write_file", 0)
		a := failedApproval(r, "ts__write_file")
		if !res.IsError || a == nil || a.Decision != "denied_by_default" || a.Kind != "mcp" {
			t.Fatalf("result %+v, approval %+v", res, a)
		}
		if !strings.Contains(a.Summary, "MCP server ts, tool write_file, arguments") || !strings.Contains(a.Summary, target) {
			t.Fatalf("approval does not show server, tool and arguments: %q", a.Summary)
		}
	})
	t.Run("coding with --approve all", func(t *testing.T) {
		_, target := writeRun(t, p, policy(t, "coding"), runtime.ApprovalAllowAll)
		if b, err := os.ReadFile(target); err != nil || string(b) != "pwned" {
			t.Fatalf("approved write did not happen: %v", err)
		}
	})
	t.Run("an mcp_rules allow", func(t *testing.T) {
		_, target := writeRun(t, p, policy(t, "coding", workspace.MCPRule{Tool: "ts__write_*", Decision: "allow"}), runtime.ApprovalDenyAll)
		if _, err := os.Stat(target); err != nil {
			t.Fatalf("allowed write did not happen: %v", err)
		}
	})
	t.Run("a more specific deny beats a server allow", func(t *testing.T) {
		pol := policy(t, "trusted", workspace.MCPRule{Server: "ts", Decision: "allow"}, workspace.MCPRule{Tool: "ts__write_file", Decision: "deny"})
		r, target := writeRun(t, p, pol, runtime.ApprovalAllowAll)
		if _, err := os.Stat(target); err == nil {
			t.Fatal("denied write happened")
		}
		if res := r.ToolResult(t, "ts__write_file", 0); !res.IsError || !strings.Contains(res.Text, "denied") || !strings.Contains(res.Text, `mcp_rules "ts__write_file"`) {
			t.Fatalf("result %+v", res)
		}
	})
	t.Run("readOnlyHint grants nothing", func(t *testing.T) {
		r := plugintest.Start(t, "peek", []script.Turn{
			plugintest.Calls(plugintest.Call("ts__peek", map[string]any{})),
			plugintest.Say("done"),
		}, plugintest.Options{}, p.For(policy(t, "coding")))
		a := failedApproval(r, "ts__peek")
		if a == nil || a.Decision != "denied_by_default" || !strings.Contains(a.Summary, "not verified") {
			t.Fatalf("approval %+v", a)
		}
	})
}

func TestReadonlyStartsNoServer(t *testing.T) {
	p, err := New(Config{Servers: map[string]ServerConfig{"ts": stdioCfg()}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	target := filepath.Join(t.TempDir(), "outside.txt")
	r := plugintest.Start(t, "write it", []script.Turn{
		plugintest.Calls(plugintest.Call("ts__write_file", map[string]any{"path": target, "content": "pwned"})),
		plugintest.Say("done"),
	}, plugintest.Options{Runtime: func(o *runtime.Options) { o.Approvals = runtime.ApprovalAllowAll }}, p.For(policy(t, "readonly")))
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if _, err := os.Stat(target); err == nil {
		t.Fatal("the MCP write happened under readonly")
	}
	if res := r.ToolResult(t, "ts__write_file", 0); !res.IsError {
		t.Fatalf("result %+v", res)
	}
	if plugintest.HasTool(r.Request(t, 0), "ts__write_file") {
		t.Fatal("readonly lists a tool it denies")
	}
	if cur, _, _ := p.servers["ts"].snapshot(); cur != nil {
		t.Fatal("readonly started a server none of whose tools may run")
	}
	if !strings.Contains(r.Request(t, 0).System, "readonly") {
		t.Fatal("the model is not told why the MCP tools are missing")
	}
	// A server another run (under coding) started is still not offered under readonly.
	if _, err := p.servers["ts"].ensure(context.Background()); err != nil {
		t.Fatal(err)
	}
	c, err := p.For(policy(t, "readonly")).Setup(context.Background(), &tool.RunContext{})
	if err != nil || len(c.Tools) != 0 {
		t.Fatalf("readonly tools %d, %v", len(c.Tools), err)
	}
}

func TestServerGetsMinimalEnv(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test-provider-key-123456")
	t.Setenv("LOVIA_TEST_TOKEN", "tok-explicit-7890")
	cfg := stdioCfg()
	cfg.Env = map[string]string{"PASSED_TOKEN": "${LOVIA_TEST_TOKEN}"}
	_, c := setup(t, Config{Servers: map[string]ServerConfig{"ts": cfg}})
	res := run(t, c, "ts__get_env", `{}`)
	if strings.Contains(res.Text, "sk-test-provider-key") || strings.Contains(res.Text, "OPENAI_API_KEY") {
		t.Fatalf("the server sees the provider key:\n%s", res.Text)
	}
	if !strings.Contains(res.Text, "PASSED_TOKEN=tok-explicit-7890") || !strings.Contains(res.Text, "PATH=") {
		t.Fatalf("explicit env or PATH missing:\n%s", res.Text)
	}
}

func TestServerStartsAtFirstCallWhenToolsAreCached(t *testing.T) {
	cache := t.TempDir()
	cfg := Config{Servers: map[string]ServerConfig{"ts": stdioCfg()}, CacheDir: cache}
	// `lovia mcp list` (or an earlier run) starts the server and records its tools.
	list, err := ListServers(context.Background(), cfg, nil)
	if err != nil || len(list) != 1 || list[0].Status != "ok" {
		t.Fatalf("list = %+v, %v", list, err)
	}
	files, _ := filepath.Glob(filepath.Join(cache, "ts-*.json"))
	if len(files) != 1 {
		t.Fatalf("no tool cache written: %v", files)
	}
	if st, err := os.Stat(files[0]); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("cache mode: %v %v", st.Mode(), err)
	}
	p, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := p.For(policy(t, "coding", workspace.MCPRule{Server: "ts", Decision: "allow"})).Setup(context.Background(), &tool.RunContext{})
	if err != nil {
		t.Fatal(err)
	}
	find(t, c, "ts__echo")
	if cur, _, _ := p.servers["ts"].snapshot(); cur != nil {
		t.Fatal("the server started although no tool was called")
	}
	if res := run(t, c, "ts__echo", `{"text":"lazy"}`); res.Text != "echo: lazy" {
		t.Fatalf("echo = %+v", res)
	}
	if cur, _, _ := p.servers["ts"].snapshot(); cur == nil {
		t.Fatal("the call did not start the server")
	}
	// A changed configuration lists afresh.
	cfg2 := cfg
	cfg2.Servers = map[string]ServerConfig{"ts": stdioCfg("-startup-delay", "1ms")}
	if s := newServer("ts", cfg2.Servers["ts"], cache, p.logger); s.cachedTools() != nil {
		t.Fatal("a changed server config used the old tool list")
	}
}

func TestResultBounds(t *testing.T) {
	big := strings.Repeat("é", MaxResultText) // 2 bytes each
	img := make([]byte, MaxImageBytes+1)
	ok := make([]byte, MaxImageBytes)
	res := convert(&sdk.CallToolResult{Content: []sdk.Content{
		&sdk.TextContent{Text: big},
		&sdk.ImageContent{MIMEType: "image/png", Data: img},
		&sdk.ImageContent{MIMEType: "image/png", Data: ok},
		&sdk.ImageContent{MIMEType: "image/png", Data: ok},
		&sdk.ImageContent{MIMEType: "image/png", Data: ok},
	}})
	if len(res.Text) > MaxResultText+200 || !strings.Contains(res.Text, "[MCP result truncated: showing the first") {
		t.Fatalf("text not capped: %d bytes, tail %q", len(res.Text), res.Text[len(res.Text)-100:])
	}
	if len(res.Attachments) != 2 {
		t.Fatalf("attachments = %d, want 2 (one too large, one over the total)", len(res.Attachments))
	}
	// The notes about dropped images come after the cut text, so check them on a
	// small result.
	res = convert(&sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{MIMEType: "image/png", Data: img}}})
	if len(res.Attachments) != 0 || !strings.Contains(res.Text, "not shown: larger than") {
		t.Fatalf("oversized image: %+v", res.Text)
	}
}

func TestBigResultIsCapped(t *testing.T) {
	_, c := setup(t, Config{Servers: map[string]ServerConfig{"ts": stdioCfg()}})
	res := run(t, c, "ts__big", `{"n":300000}`)
	if len(res.Text) > MaxResultText+200 || !strings.Contains(res.Text, "[MCP result truncated: showing the first 100000 of 300000 bytes]") {
		t.Fatalf("%d bytes, tail %q", len(res.Text), res.Text[max(0, len(res.Text)-120):])
	}
}
