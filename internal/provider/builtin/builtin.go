// Package builtin registers lovia's network model providers. It lives apart from
// package provider because the adapters import provider (a cycle otherwise).
//
// Variables read (through provider.Env.Getenv):
//
//	openai:, openai-responses:  OPENAI_API_KEY (required for api.openai.com only),
//	                            OPENAI_BASE_URL, OPENAI_ORG_ID, OPENAI_PROJECT_ID,
//	                            OPENAI_CUSTOM_HEADERS ("Name: value" lines)
//	openai-responses:           LOVIA_REASONING_EFFORT (low|medium|high, reasoning models)
//	anthropic:                  ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL,
//	                            ANTHROPIC_CUSTOM_HEADERS, LOVIA_THINKING_BUDGET
//	                            (tokens, or "adaptive": extended thinking)
//	ollama:                     OLLAMA_HOST (default localhost:11434), OLLAMA_API_KEY,
//	                            OLLAMA_CONTEXT_LENGTH (the server's default context)
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
