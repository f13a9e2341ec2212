package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

// In lovia acp, an MCP server's form is declined without a permission request (a
// request has no form), and its sampling request is a permission request like a
// tool call's.
func TestMCPAskACP(t *testing.T) {
	everything, err := exec.LookPath("mcp-server-everything")
	if err != nil {
		t.Skip("mcp-server-everything not installed (npm install -g @modelcontextprotocol/server-everything)")
	}
	e := newEnv(t)
	script := filepath.Join(e.home, "acp.yaml")
	body := `
turns:
  - tool_calls: [{name: everything__trigger-elicitation-request, args: {}}]
  - tool_calls: [{name: everything__trigger-sampling-request, args: {prompt: "say hi"}}]
  - text: "done"
`
	if err := os.WriteFile(script, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := newACPClient("allow", "allow", "allow")
	p := startACP(t, e, c, "-m", "script:"+script)
	p.initialize(ctx)
	ns, err := p.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: e.dir, McpServers: []sdk.McpServer{
		{Stdio: &sdk.McpServerStdio{Name: "everything", Command: everything, Args: []string{}, Env: []sdk.EnvVariable{}}},
	}})
	if err != nil {
		t.Fatalf("session/new: %v\nstderr:\n%s", err, p.stderr)
	}
	pr, err := p.conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("go")}})
	if err != nil || pr.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %q %v\nstderr:\n%s", pr.StopReason, err, p.stderr)
	}
	ups, asked := c.snapshot()
	var titles []string
	for _, a := range asked {
		if a.ToolCall.Title != nil {
			titles = append(titles, *a.ToolCall.Title)
		}
	}
	// The two tool calls and the sampling request; no request for the form.
	if len(asked) != 3 || !strings.Contains(titles[2], "asks your model") {
		t.Fatalf("permission requests: %q", titles)
	}
	starts, updates, order := acpCalls(ups)
	outs := map[string]string{}
	for _, id := range order {
		for _, u := range updates[id] {
			for _, ct := range u.Content {
				if ct.Content != nil && ct.Content.Content.Text != nil {
					outs[starts[id].Title] += ct.Content.Content.Text.Text
				}
			}
		}
	}
	all := strings.Join(func() []string {
		var s []string
		for _, v := range outs {
			s = append(s, v)
		}
		return s
	}(), "\n")
	if !strings.Contains(all, "User declined") || !strings.Contains(all, "LLM sampling result") {
		t.Fatalf("tool outputs: %v", outs)
	}
}
