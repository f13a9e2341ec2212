package app

import (
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/config"
	"github.com/lovia-dev/lovia/internal/plugin/mcp"
)

func TestSecretScrubberCollects(t *testing.T) {
	env := map[string]string{
		"ANTHROPIC_API_KEY": "sk-ant-from-getenv-123",
		"GH_TOKEN_SRC":      "ghp-referenced-456789",
		"DEPLOY_PASS":       "named-by-secrets-000",
	}
	getenv := func(k string) string { return env[k] }
	cfg := &config.Config{}
	cfg.Secrets = []string{"DEPLOY_PASS"}
	cfg.MCP.Servers = map[string]mcp.ServerConfig{"gh": {
		URL:     "https://example.invalid/mcp",
		Headers: map[string]string{"Authorization": "Bearer ${GH_TOKEN_SRC}"},
	}}
	s := secretScrubber(cfg, getenv)
	got := s.Scrub("a=sk-ant-from-getenv-123 b=ghp-referenced-456789 c=named-by-secrets-000 d=short")
	if got != "a=[redacted] b=[redacted] c=[redacted] d=short" {
		t.Fatalf("got %q", got)
	}
	if strings.Contains(s.Scrub("Bearer ghp-referenced-456789"), "ghp-") {
		t.Fatal("header token not scrubbed")
	}
}
