// Package builtin registers lovia's network model providers. It lives apart from
// package provider because the adapters import provider (a cycle otherwise).
package builtin

import (
	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/provider/anthropic"
	"github.com/lovia-dev/lovia/internal/provider/openai"
)

// Register adds openai (aliases oai, openai-chat), openai-responses, anthropic
// (alias claude) and ollama to r. The script provider is registered separately.
// Wrap resolved providers with provider.WithRetry for the retry policy.
func Register(r *provider.Registry) {
	r.Register("openai", openai.ChatFactory, "oai", "openai-chat")
	r.Register("openai-responses", openai.ResponsesFactory)
	r.Register("anthropic", anthropic.Factory, "claude")
	r.Register("ollama", openai.OllamaFactory)
}
