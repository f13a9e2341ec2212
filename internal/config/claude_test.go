package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/plugin/mcp"
)

func writeFile(t *testing.T, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestClaudeFiles: hooks and MCP servers from Claude Code's files: the user's apply,
// the project's need folder trust (and are named in the notice until then).
func TestClaudeFiles(t *testing.T) {
	base := t.TempDir()
	home, repo := filepath.Join(base, "home"), filepath.Join(base, "repo")
	os.MkdirAll(filepath.Join(repo, ".git"), 0o755)
	writeFile(t, filepath.Join(home, ".claude", "settings.json"), `{"hooks":{"Notification":[{"hooks":[{"type":"command","command":"notify-send lovia"}]}]}}`)
	writeFile(t, filepath.Join(home, ".claude.json"), `{"mcpServers":{"memory":{"command":"npx","args":["-y","@modelcontextprotocol/server-memory"]}},
"projects":{"`+repo+`":{"mcpServers":{"local-db":{"type":"stdio","command":"db-mcp","env":{"DSN":"${DB_DSN:-sqlite://dev.db}"}}}}}}`)
	writeFile(t, filepath.Join(repo, ".claude", "settings.json"), `{
  "permissions": {"allow": ["Bash(npm run lint)"]},
  "hooks": {
    "PreToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/guard.sh", "timeout": 10}]}],
    "PermissionRequest": [{"hooks": [{"type": "command", "command": "true"}]}],
    "Stop": [{"hooks": [{"type": "prompt", "prompt": "Is the task done?"}]}]
  }
}`)
	writeFile(t, filepath.Join(repo, ".mcp.json"), `{"mcpServers":{
  "github":{"type":"http","url":"https://api.githubcopilot.com/mcp/","headers":{"Authorization":"Bearer ${GITHUB_TOKEN}"}},
  "files":{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","${PROJECT_ROOT:-.}"]},
  "legacy":{"type":"sse","url":"http://127.0.0.1:3001/sse"}
}}`)
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "LOVIA_HOME": filepath.Join(home, "data"), "GITHUB_TOKEN": "ghp_x"}
	getenv := func(k string) string { return env[k] }

	c, err := Load(Options{Cwd: repo, Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Hooks) != 1 || c.Hooks[0].Command != "notify-send lovia" || !c.Hooks[0].Claude {
		t.Errorf("untrusted: want only the user's hook, got %+v", c.Hooks)
	}
	if _, ok := c.MCP.Servers["memory"]; !ok {
		t.Errorf("the user's ~/.claude.json server is missing: %v", c.MCP.Servers)
	}
	if s := c.MCP.Servers["local-db"]; s.Env["DSN"] != "sqlite://dev.db" {
		t.Errorf("~/.claude.json project server with ${VAR:-default}: %+v", s)
	}
	if _, ok := c.MCP.Servers["github"]; ok {
		t.Error("an untrusted project's .mcp.json server applies")
	}
	notice := c.Trust.Notice()
	for _, want := range []string{".claude/settings.json", "hooks.PreToolUse[0]", ".mcp.json", "mcpServers.github", "mcpServers.files"} {
		if !strings.Contains(notice, want) {
			t.Errorf("notice lacks %q:\n%s", want, notice)
		}
	}
	notes := strings.Join(c.Compat.Notes, "\n")
	for _, want := range []string{"PermissionRequest left out", `type "prompt" left out`} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}

	c, err = Load(Options{Cwd: repo, Getenv: getenv, Trust: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Hooks) != 2 || c.Hooks[1].Matcher != "Edit|Write" || c.Hooks[1].Timeout != 10 {
		t.Errorf("trusted: hooks = %+v", c.Hooks)
	}
	if s := c.MCP.Servers["github"]; s.URL != "https://api.githubcopilot.com/mcp/" || s.Headers["Authorization"] != "Bearer ghp_x" {
		t.Errorf("github = %+v", s)
	}
	if s := c.MCP.Servers["legacy"]; s.Transport != "sse" || s.URL != "http://127.0.0.1:3001/sse" || c.MCP.Servers["github"].Transport != "http" {
		t.Errorf(".mcp.json type sse/http: legacy = %+v, github = %+v", s, c.MCP.Servers["github"])
	}
	if s := c.MCP.Servers["files"]; len(s.Args) != 3 || s.Args[2] != "." {
		t.Errorf("files = %+v", s)
	}
}

func TestExpandVars(t *testing.T) {
	env := map[string]string{"A": "1"}
	got := ExpandVars("${A}-${B:-two}-${C}-$A", func(k string) string { return env[k] })
	if got != "1-two--$A" {
		t.Fatalf("got %q", got)
	}
}

// TestMCPEdit: add and remove keep the file's comments and other settings.
func TestMCPEdit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.yaml")
	writeFile(t, p, "# my settings\nmodel: openai:gpt-4.1 # default model\npolicy: coding\n")
	if err := AddMCPServer(p, "github", mcpServer("npx", "-y", "server-github")); err != nil {
		t.Fatal(err)
	}
	if err := AddMCPServer(p, "fs", mcpServer("fs-mcp")); err != nil {
		t.Fatal(err)
	}
	if err := AddMCPServer(p, "fs", mcpServer("other")); err == nil || !strings.Contains(err.Error(), "already has") {
		t.Fatalf("adding twice: %v", err)
	}
	data, _ := os.ReadFile(p)
	for _, want := range []string{"# my settings", "# default model", "policy: coding", "github:", "command: npx", "fs:"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("file lacks %q:\n%s", want, data)
		}
	}
	if err := RemoveMCPServer(p, "github"); err != nil {
		t.Fatal(err)
	}
	if err := RemoveMCPServer(p, "fs"); err != nil {
		t.Fatal(err)
	}
	if err := RemoveMCPServer(p, "fs"); err == nil {
		t.Fatal("removing a missing server succeeded")
	}
	data, _ = os.ReadFile(p)
	if strings.Contains(string(data), "github") || !strings.Contains(string(data), "# default model") {
		t.Errorf("after remove:\n%s", data)
	}
	// A fresh file.
	q := filepath.Join(t.TempDir(), "sub", "config.yaml")
	if err := AddMCPServer(q, "web", mcpURL("https://example.com/mcp")); err != nil {
		t.Fatal(err)
	}
}

func mcpServer(cmd string, args ...string) mcp.ServerConfig {
	return mcp.ServerConfig{Command: cmd, Args: args}
}

func mcpURL(u string) mcp.ServerConfig { return mcp.ServerConfig{URL: u} }

func TestCodexConfig(t *testing.T) {
	home := t.TempDir()
	repo := t.TempDir()
	writeFile(t, filepath.Join(home, ".codex", "config.toml"), `model = "o3"

[mcp_servers.docs]
command = "docs-server"
args = ["--port", "4000"]
env = { "MODE" = "ro" }
env_vars = ["DOCS_TOKEN"]

[mcp_servers.linear]
url = "https://mcp.linear.app/mcp"
bearer_token_env_var = "LINEAR_TOKEN"

[mcp_servers.off]
command = "x"
enabled = false
`)
	env := map[string]string{"HOME": home, "LOVIA_HOME": filepath.Join(home, "data")}
	c, err := Load(Options{Cwd: repo, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	d := c.MCP.Servers["docs"]
	if d.Command != "docs-server" || len(d.Args) != 2 || d.Env["MODE"] != "ro" || d.Env["DOCS_TOKEN"] != "${DOCS_TOKEN}" {
		t.Errorf("docs = %+v", d)
	}
	if l := c.MCP.Servers["linear"]; l.URL == "" || l.Headers["Authorization"] != "Bearer ${LINEAR_TOKEN}" {
		t.Errorf("linear = %+v", l)
	}
	if _, ok := c.MCP.Servers["off"]; ok {
		t.Error("a disabled server applies")
	}
}
