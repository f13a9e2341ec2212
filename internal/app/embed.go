package app

import (
	"strings"

	"github.com/lovia-dev/lovia/internal/plugin/memory"
)

// memoryEmbedder returns the embedder memory.embed_model names (nil when none is
// configured: keyword search only).
func (a *App) memoryEmbedder() memory.Embedder {
	m := a.Config.Memory
	prov, name, ok := strings.Cut(m.EmbedModel, ":")
	if !ok || name == "" {
		return nil
	}
	switch prov {
	case "openai":
		base := m.EmbedBaseURL
		if base == "" {
			base = a.getenv("OPENAI_BASE_URL")
		}
		if base == "" {
			base = "https://api.openai.com/v1"
		}
		return &memory.OpenAIEmbedder{BaseURL: base, APIKey: a.getenv("OPENAI_API_KEY"), Name: name}
	case "ollama":
		host := m.EmbedBaseURL
		if host == "" {
			host = a.getenv("OLLAMA_HOST")
		}
		if host == "" {
			host = "http://localhost:11434"
		} else if !strings.Contains(host, "://") {
			host = "http://" + host
		}
		return &memory.OllamaEmbedder{Host: host, Name: name}
	}
	return nil
}
