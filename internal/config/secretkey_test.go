package config

import "testing"

func TestSecretKeyCountsAreShown(t *testing.T) {
	for key, secret := range map[string]bool{
		"budget_tokens":                       false,
		"mcp.sampling_max_tokens":             false,
		"mcp.servers.gh.env.GITHUB_TOKENS":    true,
		"mcp.servers.gh.headers.X_API_TOKENS": true,
		"mcp.servers.gh.env.GITHUB_TOKEN":     true,
		"provider.api_key":                    true,
	} {
		if got := secretKey(key); got != secret {
			t.Errorf("secretKey(%q) = %v, want %v", key, got, secret)
		}
	}
}
