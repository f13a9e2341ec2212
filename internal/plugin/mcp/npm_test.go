package mcp

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// npmServer configures a reference server from npm, or skips when npx is missing or
// the package cannot be fetched (offline machines).
func npmServer(t *testing.T, pkg string, args ...string) ServerConfig {
	t.Helper()
	if testing.Short() {
		t.Skip("npm reference servers are slow to start; skipped with -short")
	}
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("npx not installed")
	}
	return ServerConfig{Command: "npx", Args: append([]string{"-y", "--prefer-offline", pkg}, args...), StartupTimeout: 90 * time.Second}
}

func skipIfUnavailable(t *testing.T, p *Plugin, name string) {
	t.Helper()
	if _, err, _ := p.servers[name].snapshot(); err != nil {
		t.Skipf("reference server unavailable (offline?): %v", err)
	}
}

func TestReferenceServerEverything(t *testing.T) {
	cfg := npmServer(t, "@modelcontextprotocol/server-everything")
	p, c := setup(t, Config{Servers: map[string]ServerConfig{"everything": cfg}})
	skipIfUnavailable(t, p, "everything")
	if res := run(t, c, "everything__echo", `{"message":"hello mcp"}`); res.IsError || !strings.Contains(res.Text, "hello mcp") {
		t.Fatalf("echo = %+v", res)
	}
	var imageTool string
	for _, tl := range c.Tools {
		if n := tl.Spec().Name; strings.Contains(n, "image") && strings.Contains(n, "tiny") {
			imageTool = n
		}
	}
	if imageTool == "" {
		t.Fatal("no tiny-image tool listed")
	}
	res := run(t, c, imageTool, `{}`)
	if res.IsError || len(res.Attachments) == 0 || !strings.HasPrefix(res.Attachments[0].MIME, "image/") {
		t.Fatalf("%s = %+v", imageTool, res)
	}
}

func TestReferenceServerFilesystem(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello from lovia"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir, _ = filepath.EvalSymlinks(dir)
	cfg := npmServer(t, "@modelcontextprotocol/server-filesystem", dir)
	p, c := setup(t, Config{Servers: map[string]ServerConfig{"fs": cfg}})
	skipIfUnavailable(t, p, "fs")
	if res := run(t, c, "fs__read_text_file", `{"path":"`+filepath.Join(dir, "hello.txt")+`"}`); res.IsError || !strings.Contains(res.Text, "hello from lovia") {
		t.Fatalf("read_text_file = %+v", res)
	}
	// Outside the allowed directory: the server refuses, as an error result.
	if res := run(t, c, "fs__read_text_file", `{"path":"/etc/hostname"}`); !res.IsError {
		t.Fatalf("read outside = %+v", res)
	}
}
