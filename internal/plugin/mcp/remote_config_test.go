package mcp

import (
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

func TestRemoteConfigYAML(t *testing.T) {
	src := `
servers:
  legacy:
    url: http://127.0.0.1:3001/sse
    transport: sse
  corp:
    url: https://mcp.example.com/mcp
    client_id: lovia-cli
    client_secret: ${CORP_SECRET}
    scopes: [mcp.read, mcp.write]
  plain:
    url: https://mcp.example.com/open
    oauth: false
  static:
    url: https://mcp.example.com/static
    headers: {authorization: "Bearer ${TOKEN}"}
`
	var cfg Config
	if err := yaml.UnmarshalWithOptions([]byte(src), &cfg, yaml.DisallowUnknownField()); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	s := cfg.Servers
	if s["legacy"].transport() != "sse" || s["corp"].transport() != "http" || len(s["corp"].Scopes) != 2 || s["corp"].ClientSecret != "${CORP_SECRET}" {
		t.Fatalf("servers = %+v", s)
	}
	for name, want := range map[string]bool{"legacy": true, "corp": true, "plain": false, "static": false} {
		if got := s[name].oauthEnabled(); got != want {
			t.Errorf("%s: oauth = %v, want %v", name, got, want)
		}
	}
	if got := AuthStatus("plain", s["plain"], t.TempDir()); got != "off" {
		t.Errorf("plain: %q", got)
	}
	if got := AuthStatus("static", s["static"], t.TempDir()); got != "header" {
		t.Errorf("static: %q", got)
	}
}

func TestRemoteConfigValidate(t *testing.T) {
	off := false
	for _, tc := range []struct {
		sc   ServerConfig
		want string
	}{
		{ServerConfig{URL: "http://x", Transport: "websocket"}, "unknown transport"},
		{ServerConfig{Command: "x", Transport: "sse"}, "remote settings without url"},
		{ServerConfig{Command: "x", ClientID: "id"}, "remote settings without url"},
		{ServerConfig{Command: "x", OAuth: &off}, "remote settings without url"},
	} {
		err := Config{Servers: map[string]ServerConfig{"s": tc.sc}}.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v", tc.sc, err)
		}
	}
}
