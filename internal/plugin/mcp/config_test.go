package mcp

import (
	"testing"
	"time"

	"github.com/goccy/go-yaml"
)

// TestConfigYAML decodes the mcp section the way users write it (the config package
// decodes with goccy/go-yaml and unknown fields disallowed).
func TestConfigYAML(t *testing.T) {
	src := `
servers:
  github:
    url: https://api.githubcopilot.com/mcp/
    headers: {Authorization: "Bearer ${GITHUB_TOKEN}"}
    startup_timeout: 45s
  fs:
    command: npx
    args: [-y, "@modelcontextprotocol/server-filesystem", .]
    env: {DEBUG: "1"}
    call_timeout: 2m
    disabled: true
`
	var cfg Config
	if err := yaml.UnmarshalWithOptions([]byte(src), &cfg, yaml.DisallowUnknownField()); err != nil {
		t.Fatal(err)
	}
	gh, fs := cfg.Servers["github"], cfg.Servers["fs"]
	if gh.StartupTimeout != 45*time.Second || gh.Headers["Authorization"] != "Bearer ${GITHUB_TOKEN}" || gh.transport() != "http" {
		t.Fatalf("github = %+v", gh)
	}
	if fs.CallTimeout != 2*time.Minute || !fs.Disabled || len(fs.Args) != 3 || fs.Env["DEBUG"] != "1" || fs.transport() != "stdio" {
		t.Fatalf("fs = %+v", fs)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
}
