package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Embedder turns texts into vectors for the archive's semantic index. Vectors of
// one model are compared with each other only (Model keys them).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	Model() string
}

// maxEmbedResponse bounds an embedding server's reply.
const maxEmbedResponse = 64 << 20

// OpenAIEmbedder calls an OpenAI-compatible POST {BaseURL}/embeddings (BaseURL ends
// in /v1, as OPENAI_BASE_URL does).
type OpenAIEmbedder struct {
	BaseURL string
	APIKey  string
	Name    string
	Client  *http.Client
}

// Model implements Embedder.
func (e *OpenAIEmbedder) Model() string { return "openai:" + e.Name }

// Embed implements Embedder.
func (e *OpenAIEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	var out struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	hdr := map[string]string{}
	if e.APIKey != "" {
		hdr["Authorization"] = "Bearer " + e.APIKey
	}
	if err := postJSON(ctx, e.Client, strings.TrimRight(e.BaseURL, "/")+"/embeddings", hdr, map[string]any{"model": e.Name, "input": texts}, &out); err != nil {
		return nil, err
	}
	vecs := make([][]float32, len(texts))
	for _, d := range out.Data {
		if d.Index < 0 || d.Index >= len(vecs) {
			return nil, fmt.Errorf("embeddings: index %d out of range", d.Index)
		}
		vecs[d.Index] = d.Embedding
	}
	for i, v := range vecs {
		if len(v) == 0 {
			return nil, fmt.Errorf("embeddings: no vector for input %d", i)
		}
	}
	return vecs, nil
}

// OllamaEmbedder calls Ollama's POST {Host}/api/embed.
type OllamaEmbedder struct {
	Host   string
	Name   string
	Client *http.Client
}

// Model implements Embedder.
func (e *OllamaEmbedder) Model() string { return "ollama:" + e.Name }

// Embed implements Embedder.
func (e *OllamaEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	var out struct {
		Embeddings [][]float32 `json:"embeddings"`
	}
	if err := postJSON(ctx, e.Client, strings.TrimRight(e.Host, "/")+"/api/embed", nil, map[string]any{"model": e.Name, "input": texts}, &out); err != nil {
		return nil, err
	}
	if len(out.Embeddings) != len(texts) {
		return nil, fmt.Errorf("embeddings: %d vectors for %d inputs", len(out.Embeddings), len(texts))
	}
	return out.Embeddings, nil
}

func postJSON(ctx context.Context, c *http.Client, url string, hdr map[string]string, body, out any) error {
	if c == nil {
		c = &http.Client{Timeout: 60 * time.Second}
	}
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("embeddings: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxEmbedResponse))
	if err != nil {
		return fmt.Errorf("embeddings: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		msg := string(raw)
		if len(msg) > 300 {
			msg = msg[:300]
		}
		return fmt.Errorf("embeddings: %s: %s", resp.Status, strings.TrimSpace(msg))
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("embeddings: bad reply: %w", err)
	}
	return nil
}
