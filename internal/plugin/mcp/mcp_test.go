package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/tool"
)

var serverBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "lovia-mcp-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBin = filepath.Join(dir, "testserver")
	out, err := exec.Command("go", "build", "-o", serverBin, "./testserver").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building testserver: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// startHTTP runs the test server over streamable HTTP and returns its URL.
func startHTTP(t *testing.T, args ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(serverBin, append([]string{"-http", "127.0.0.1:0"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("test server did not start: %v", err)
	}
	return strings.TrimSpace(strings.TrimPrefix(line, "listening on ")), cmd
}

func stdioCfg(args ...string) ServerConfig {
	return ServerConfig{Command: serverBin, Args: args, StartupTimeout: 20 * time.Second}
}

func setup(t *testing.T, cfg Config) (*Plugin, *plugin.Contribution) {
	t.Helper()
	p, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	c, err := p.Setup(context.Background(), &tool.RunContext{})
	if err != nil {
		t.Fatal(err)
	}
	return p, c
}

func find(t *testing.T, c *plugin.Contribution, name string) tool.Tool {
	t.Helper()
	for _, tl := range c.Tools {
		if tl.Spec().Name == name {
			return tl
		}
	}
	var names []string
	for _, tl := range c.Tools {
		names = append(names, tl.Spec().Name)
	}
	t.Fatalf("no tool %s in %v", name, names)
	return nil
}

func run(t *testing.T, c *plugin.Contribution, name, args string) tool.Result {
	t.Helper()
	tl := find(t, c, name)
	if err := tl.Spec().Validate(json.RawMessage(args)); err != nil {
		t.Fatalf("%s: args %s rejected: %v", name, args, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := tl.Invoke(ctx, &tool.RunContext{}, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		cfg  ServerConfig
		name string
		want string
	}{
		{ServerConfig{}, "a", "neither command nor url"},
		{ServerConfig{Command: "x", URL: "http://x"}, "a", "both command and url"},
		{ServerConfig{Command: "x", Headers: map[string]string{"a": "b"}}, "a", "headers without url"},
		{ServerConfig{Command: "x"}, "bad name", "invalid server name"},
		{ServerConfig{Command: "x"}, "a__b", "invalid server name"},
	}
	for _, tc := range tests {
		err := Config{Servers: map[string]ServerConfig{tc.name: tc.cfg}}.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) || errs.KindOf(err) != errs.KindConfig || errs.HintOf(err) == "" {
			t.Errorf("%s %+v: err = %v, want %q", tc.name, tc.cfg, err, tc.want)
		}
	}
}

func TestToolsOverTransports(t *testing.T) {
	url, _ := startHTTP(t, "-require-header", "X-Token=s3cret")
	t.Setenv("LOVIA_TEST_TOKEN", "s3cret")
	for _, tc := range []struct {
		name string
		cfg  ServerConfig
	}{
		{"stdio", stdioCfg()},
		{"http", ServerConfig{URL: url, Headers: map[string]string{"X-Token": "${LOVIA_TEST_TOKEN}"}, StartupTimeout: 20 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := setup(t, Config{Servers: map[string]ServerConfig{"ts": tc.cfg}})
			if len(c.Tools) < 12 {
				t.Fatalf("want 12 tools, got %d", len(c.Tools))
			}
			echo := find(t, c, "ts__echo").Spec()
			if !strings.Contains(string(echo.Schema), `"text"`) || echo.Description != "Echo the text back" {
				t.Fatalf("echo spec = %+v / %s", echo, echo.Schema)
			}
			if err := echo.Validate(json.RawMessage(`{"text": 3}`)); err == nil {
				t.Fatal("server schema not enforced locally")
			}
			if res := run(t, c, "ts__echo", `{"text":"hi"}`); res.IsError || res.Text != "echo: hi" {
				t.Fatalf("echo = %+v", res)
			}
			if res := run(t, c, "ts__add", `{"a":2,"b":3}`); res.IsError || !strings.Contains(res.Text, `"sum":5`) {
				t.Fatalf("add = %+v", res)
			}
			res := run(t, c, "ts__image", `{}`)
			if res.IsError || len(res.Attachments) != 1 || res.Attachments[0].MIME != "image/png" || len(res.Attachments[0].Data) == 0 || !strings.Contains(res.Text, "here is a pixel") {
				t.Fatalf("image = %+v", res)
			}
			res = run(t, c, "ts__resource", `{}`)
			for _, want := range []string{"[resource file:///notes.txt]\nembedded notes", "[binary resource file:///blob.bin, application/octet-stream, 3 bytes", "[resource link: https://example.com/doc (doc) text/html]"} {
				if !strings.Contains(res.Text, want) {
					t.Errorf("resource result lacks %q:\n%s", want, res.Text)
				}
			}
			if res := run(t, c, "ts__fail", `{"message":"disk on fire"}`); !res.IsError || !strings.Contains(res.Text, "disk on fire") {
				t.Fatalf("fail = %+v", res)
			}
		})
	}
}

func TestStdioEnv(t *testing.T) {
	t.Setenv("LOVIA_OUTER", "outer")
	cfg := stdioCfg()
	cfg.Env = map[string]string{"LOVIA_INNER": "in-${LOVIA_OUTER}"}
	_, c := setup(t, Config{Servers: map[string]ServerConfig{"ts": cfg}})
	if res := run(t, c, "ts__env", `{"name":"LOVIA_INNER"}`); res.Text != "in-outer" {
		t.Fatalf("env = %+v", res)
	}
}

func TestCrashMidCallStdio(t *testing.T) {
	_, c := setup(t, Config{Servers: map[string]ServerConfig{"ts": stdioCfg()}})
	start := time.Now()
	res := run(t, c, "ts__crash", `{}`)
	if !res.IsError || !strings.Contains(res.Text, "MCP server ts stopped while running crash") || !strings.Contains(res.Text, "crashing on purpose") {
		t.Fatalf("crash = %+v", res)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("crash took %v to surface", d)
	}
	// The model is told at the next turn.
	es, _ := c.ViewInjectors[0](context.Background(), &tool.RunContext{})
	if len(es) != 1 || !strings.Contains(es[0].Text, "MCP server(s) stopped during this run: ts") {
		t.Fatalf("notice = %+v", es)
	}
	// The next call restarts the server.
	if res := run(t, c, "ts__echo", `{"text":"again"}`); res.IsError || res.Text != "echo: again" {
		t.Fatalf("after restart = %+v", res)
	}
	if es, _ := c.ViewInjectors[0](context.Background(), &tool.RunContext{}); len(es) != 0 {
		t.Fatalf("notice after restart = %+v", es)
	}
}

func TestCrashMidCallHTTP(t *testing.T) {
	url, _ := startHTTP(t)
	_, c := setup(t, Config{Servers: map[string]ServerConfig{"ts": {URL: url, StartupTimeout: 20 * time.Second}}})
	start := time.Now()
	res := run(t, c, "ts__crash", `{}`)
	if !res.IsError || !strings.Contains(res.Text, "MCP server ts stopped while running crash") {
		t.Fatalf("crash = %+v", res)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Fatalf("crash took %v to surface", d)
	}
	// The server is gone for good: the next call fails clearly, without hanging.
	res = run(t, c, "ts__echo", `{"text":"x"}`)
	if !res.IsError || !strings.Contains(res.Text, "failed to start") {
		t.Fatalf("call to dead server = %+v", res)
	}
}

func TestSlowStart(t *testing.T) {
	t.Run("within timeout", func(t *testing.T) {
		cfg := stdioCfg("-startup-delay", "300ms")
		_, c := setup(t, Config{Servers: map[string]ServerConfig{"ts": cfg}})
		if res := run(t, c, "ts__echo", `{"text":"late"}`); res.Text != "echo: late" {
			t.Fatalf("echo = %+v", res)
		}
	})
	for _, transport := range []string{"stdio", "http"} {
		t.Run("timeout "+transport, func(t *testing.T) {
			cfg := stdioCfg("-startup-delay", "30s")
			if transport == "http" {
				// An endpoint that accepts requests but never answers. It reads the
				// body so it notices a client that gives up; a request lovia leaks
				// would hold hang.Close (and this test) for 30s.
				hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					io.ReadAll(r.Body)
					select {
					case <-r.Context().Done():
					case <-time.After(30 * time.Second):
					}
				}))
				t.Cleanup(hang.Close)
				cfg = ServerConfig{URL: hang.URL}
			}
			cfg.StartupTimeout = 500 * time.Millisecond
			start := time.Now()
			p, c := setup(t, Config{Servers: map[string]ServerConfig{
				"slow": cfg,
				"ok":   stdioCfg(),
			}})
			if d := time.Since(start); d > 10*time.Second {
				t.Fatalf("setup took %v", d)
			}
			if len(c.Tools) < 12 {
				t.Fatalf("the healthy server's tools are missing: %d", len(c.Tools))
			}
			if !strings.Contains(c.Instructions, "slow: MCP server \"slow\"") {
				t.Fatalf("instructions do not report the failed server:\n%s", c.Instructions)
			}
			if !strings.Contains(c.Instructions, "did not start within 500ms") {
				t.Fatalf("instructions do not name the timeout:\n%s", c.Instructions)
			}
			st, _, _ := p.servers["slow"].snapshot()
			if st != nil {
				t.Fatal("slow server marked as running")
			}
		})
	}
}

func TestCommandNotFound(t *testing.T) {
	_, c := setup(t, Config{Servers: map[string]ServerConfig{"gone": {Command: "lovia-no-such-mcp-server"}}})
	if len(c.Tools) != 0 || !strings.Contains(c.Instructions, "gone: MCP server \"gone\"") || !strings.Contains(c.Instructions, "failed to start") {
		t.Fatalf("contribution = %+v", c)
	}
}

func TestListServers(t *testing.T) {
	sts, err := ListServers(context.Background(), Config{Servers: map[string]ServerConfig{
		"ts":   stdioCfg(),
		"off":  {Command: "x", Disabled: true},
		"gone": {Command: "lovia-no-such-mcp-server"},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sts) != 3 || sts[0].Name != "gone" || sts[1].Name != "off" || sts[2].Name != "ts" {
		t.Fatalf("statuses = %+v", sts)
	}
	if sts[0].Status != "failed" || sts[0].Error == "" || sts[1].Status != "disabled" || sts[2].Status != "ok" {
		t.Fatalf("statuses = %+v", sts)
	}
	if len(sts[2].Tools) < 12 || sts[2].Tools[0].Name != "ts__add" || sts[2].Tools[0].Original != "add" {
		t.Fatalf("tools = %+v", sts[2].Tools)
	}
}

func TestToolName(t *testing.T) {
	used := map[string]bool{}
	if n := toolName("gh", "repo.search", used); n != "gh__repo_search" {
		t.Fatalf("got %s", n)
	}
	if n := toolName("gh", "repo search", used); n == "gh__repo_search" || !strings.HasPrefix(n, "gh__repo_search_") {
		t.Fatalf("collision not resolved: %s", n)
	}
	long := toolName("server", strings.Repeat("x", 100), used)
	if len(long) != 64 {
		t.Fatalf("long name %d chars", len(long))
	}
}
