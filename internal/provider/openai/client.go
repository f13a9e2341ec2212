// Package openai adapts OpenAI's Chat Completions and Responses APIs (and every
// OpenAI-compatible server: vLLM, llama.cpp, LM Studio, OpenRouter, Ollama) to the
// provider seam. Requests are built and sent with the official client
// (github.com/openai/openai-go/v3, its retries off: lovia's policy governs); the
// event stream is decoded here (provider.SSEReader, provider.WalkObject for the
// hot delta events, provider.Value for the rare ones), about 15 times less CPU
// than the client's typed decoding (see BenchmarkChatStreamSDK).
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	oa "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/provider"
)

// DefaultBaseURL is the OpenAI API; OllamaBaseURL the local Ollama server.
const (
	DefaultBaseURL = "https://api.openai.com/v1"
	OllamaBaseURL  = "http://localhost:11434/v1"
)

// Config is everything an adapter needs; factories fill it from provider.Env.
type Config struct {
	// Provider is the registry prefix reported in Info and set on entries
	// ("openai", "ollama", "openai-responses").
	Provider string
	BaseURL  string
	APIKey   string
	// KeyVar names the variable the key came from, for error messages.
	KeyVar string
	// BaseVar names the variable that sets the base URL, for error messages.
	BaseVar    string
	HTTPClient *http.Client
	// ContextWindow and MaxOutputTokens are reported by Info.
	ContextWindow   int
	MaxOutputTokens int
	// NativeSchema: send OutputSchema as a response format.
	NativeSchema bool
	// Vision: whether the model takes images (provider.ModelVision).
	Vision provider.Vision
	// ReasoningEffort ("low", "medium", "high"; "" = model default) for reasoning
	// models on the Responses API.
	ReasoningEffort string
	// Organization and Project select an OpenAI organization/project
	// (OPENAI_ORG_ID, OPENAI_PROJECT_ID); Headers are sent with every request
	// (OPENAI_CUSTOM_HEADERS).
	Organization, Project string
	Headers               http.Header
	// BeforeSend, when set, sees each request before it is sent (Ollama's context
	// check).
	BeforeSend func(provider.Request)
}

func (c Config) options() []option.RequestOption {
	opts := []option.RequestOption{
		option.WithBaseURL(strings.TrimRight(c.BaseURL, "/") + "/"),
		option.WithMaxRetries(0), // lovia's RetryPolicy governs
	}
	if c.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(c.HTTPClient))
	}
	if c.APIKey != "" {
		opts = append(opts, option.WithAPIKey(c.APIKey))
	}
	if c.Organization != "" {
		opts = append(opts, option.WithOrganization(c.Organization))
	}
	if c.Project != "" {
		opts = append(opts, option.WithProject(c.Project))
	}
	for k, vs := range c.Headers {
		for _, v := range vs {
			opts = append(opts, option.WithHeaderAdd(k, v))
		}
	}
	return opts
}

// client is the official client with only these options. Requests go through
// its documented Client.Post with the body lovia built, the raw *http.Response
// as the result. It is not made by NewClient, which would add OPENAI_* from the
// process environment: lovia reads its variables through provider.Env, and a
// compatible server (Ollama) must never receive OPENAI_API_KEY.
func (c Config) client() oa.Client {
	return oa.Client{Options: c.options()}
}

func (c Config) official() bool {
	u, err := url.Parse(c.BaseURL)
	return err == nil && u.Host == "api.openai.com"
}

func getenv(env provider.Env, k string) string {
	if env.Getenv == nil {
		return ""
	}
	return strings.TrimSpace(env.Getenv(k))
}

// configFromEnv reads OPENAI_API_KEY / OPENAI_BASE_URL. A key is required only
// for the OpenAI API itself; compatible servers often need none.
func configFromEnv(prefix, model string, env provider.Env) (Config, error) {
	cfg := Config{
		Provider:   prefix,
		BaseURL:    getenv(env, "OPENAI_BASE_URL"),
		APIKey:     getenv(env, "OPENAI_API_KEY"),
		KeyVar:     "OPENAI_API_KEY",
		BaseVar:    "OPENAI_BASE_URL",
		HTTPClient: env.HTTPClient,

		Organization: getenv(env, "OPENAI_ORG_ID"),
		Project:      getenv(env, "OPENAI_PROJECT_ID"),
		Headers:      provider.ParseHeaders(getenv(env, "OPENAI_CUSTOM_HEADERS")),
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if err := checkURL(cfg.BaseURL, "OPENAI_BASE_URL"); err != nil {
		return cfg, err
	}
	if cfg.APIKey == "" && cfg.official() {
		return cfg, errs.Newf(errs.KindConfig,
			"export OPENAI_API_KEY=sk-... (or set OPENAI_BASE_URL to a compatible server that needs no key)",
			"%s:%s needs an API key: OPENAI_API_KEY is not set", prefix, model)
	}
	fallback := provider.DefaultContextWindow
	if !cfg.official() {
		fallback = provider.LocalContextWindow
	}
	cfg.ContextWindow = provider.ContextWindow(prefix, model, env.ContextWindows, fallback)
	cfg.MaxOutputTokens = provider.MaxOutputTokens(model, 0)
	cfg.NativeSchema = true
	cfg.Vision = provider.ModelVision(prefix, model, env.Vision)
	cfg.ReasoningEffort = getenv(env, "LOVIA_REASONING_EFFORT")
	return cfg, nil
}

func checkURL(raw, varName string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errs.Newf(errs.KindConfig,
			fmt.Sprintf("set %s to a URL like https://host/v1", varName),
			"%s=%q is not an http(s) URL", varName, raw)
	}
	return nil
}

// ChatFactory builds the "openai:" provider (Chat Completions).
func ChatFactory(_ context.Context, model string, env provider.Env) (provider.Provider, error) {
	cfg, err := configFromEnv("openai", model, env)
	if err != nil {
		return nil, err
	}
	return NewChat(model, cfg), nil
}

// ResponsesFactory builds the "openai-responses:" provider.
func ResponsesFactory(_ context.Context, model string, env provider.Env) (provider.Provider, error) {
	cfg, err := configFromEnv("openai-responses", model, env)
	if err != nil {
		return nil, err
	}
	return NewResponses(model, cfg), nil
}

// OllamaFactory builds the "ollama:" provider: Chat Completions against
// http://localhost:11434/v1, or OLLAMA_HOST ("host:port" or a URL). No key. The
// server is asked what context it keeps for the model (ollama.go): that is the
// context window, unless config sets one.
func OllamaFactory(ctx context.Context, model string, env provider.Env) (provider.Provider, error) {
	base := OllamaBaseURL
	if h := getenv(env, "OLLAMA_HOST"); h != "" {
		base = ollamaURL(h)
	}
	if err := checkURL(base, "OLLAMA_HOST"); err != nil {
		return nil, err
	}
	cfg := Config{
		Provider:      "ollama",
		BaseURL:       base,
		APIKey:        getenv(env, "OLLAMA_API_KEY"),
		KeyVar:        "OLLAMA_API_KEY",
		BaseVar:       "OLLAMA_HOST",
		HTTPClient:    env.HTTPClient,
		ContextWindow: provider.ContextWindow("ollama", model, env.ContextWindows, provider.LocalContextWindow),
		NativeSchema:  true,
		Vision:        provider.ModelVision("ollama", model, env.Vision),
	}
	oc := probeOllama(ctx, env.HTTPClient, ollamaRoot(base), cfg.APIKey, model)
	if n, err := strconv.Atoi(getenv(env, "OLLAMA_CONTEXT_LENGTH")); err == nil && n > 0 {
		oc.EnvLength = n
	}
	_, set := env.ContextWindows["ollama:"+model]
	if _, bare := env.ContextWindows[model]; bare {
		set = true
	}
	if w := oc.window(); w > 0 && !set {
		cfg.ContextWindow = w
	}
	if env.Warn != nil {
		cc := &contextCheck{model: model, oc: oc, warn: env.Warn}
		cfg.BeforeSend = cc.check
	}
	return NewChat(model, cfg), nil
}

// ollamaURL turns OLLAMA_HOST ("0.0.0.0:11434", "http://box:11434", "box") into
// the OpenAI-compatible base URL.
func ollamaURL(h string) string {
	if !strings.Contains(h, "://") {
		h = "http://" + h
	}
	u, err := url.Parse(h)
	if err != nil {
		return h
	}
	if u.Port() == "" && !strings.Contains(u.Host, ":") {
		u.Host += ":11434"
	}
	if u.Hostname() == "0.0.0.0" {
		u.Host = strings.Replace(u.Host, "0.0.0.0", "localhost", 1)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1"
	}
	return u.String()
}

// mapError turns a client or transport failure into *provider.HTTPError, or
// *errs.Error for what the user must fix (auth, unknown model).
func (c Config) mapError(ctx context.Context, model string, err error, resp *http.Response) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if te, ok := provider.AsTimeout(err); ok {
		return &provider.HTTPError{Provider: c.Provider, Transport: te}
	}
	if resp == nil || resp.StatusCode < 400 {
		return &provider.HTTPError{Provider: c.Provider, Transport: errors.New(provider.Redact(err.Error(), c.APIKey))}
	}
	var body []byte
	if resp.Body != nil {
		body, _ = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body = io.NopCloser(bytes.NewReader(body))
	}
	code := provider.Value(body).Get("error", "code").String()
	return c.statusError(model, resp.StatusCode, provider.ServerMessage(body), code, provider.ParseRetryAfter(resp.Header, time.Now()))
}

// statusError classifies an HTTP status (or a mid-stream error mapped to one).
func (c Config) statusError(model string, status int, msg, code string, retryAfter time.Duration) error {
	return provider.StatusError(provider.Failure{Provider: c.Provider, Model: model, Status: status,
		Message: provider.Redact(msg, c.APIKey), Code: code, RetryAfter: retryAfter,
		KeyVar: c.KeyVar, KeySet: c.APIKey != "", BaseVar: c.BaseVar, BaseURL: c.BaseURL})
}

// streamError maps an {"error":{...}} object received mid-stream.
func (c Config) streamError(model string, e provider.Value) error {
	msg := e.Get("message").String()
	if msg == "" && e.IsString() {
		msg = e.String()
	}
	code := e.Get("code").String()
	typ := e.Get("type").String()
	status := int(e.Get("code").Int())
	if status < 400 || status > 599 {
		status = provider.StatusForType(typ + " " + code)
	}
	if msg == "" {
		msg = strings.TrimSpace(typ + " " + code)
	}
	return c.statusError(model, status, msg, typ+" "+code, 0)
}

// badChunk is the error for stream data that is not what the wire format says.
func (c Config) badChunk(data []byte) error {
	return &provider.HTTPError{Provider: c.Provider, Protocol: true,
		Message: "malformed stream data from server: " + provider.Redact(capBytes(data, 120), c.APIKey)}
}

// cut is the error for a stream that ended before the reply was complete.
func (c Config) cut(cause error) error {
	if cause == nil {
		cause = errors.New("stream ended before the reply was complete")
	}
	if te, ok := provider.AsTimeout(cause); ok {
		return &provider.HTTPError{Provider: c.Provider, Transport: fmt.Errorf("%w: %w", provider.ErrStreamCut, te)}
	}
	return &provider.HTTPError{Provider: c.Provider, Transport: fmt.Errorf("%w: %v", provider.ErrStreamCut, provider.Redact(cause.Error(), c.APIKey))}
}

func capBytes(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// toolSchema decodes a tool's JSON Schema for the client's map-typed fields.
func toolSchema(raw json.RawMessage) map[string]any {
	m := map[string]any{}
	if len(raw) > 0 && json.Unmarshal(raw, &m) == nil && len(m) > 0 {
		return m
	}
	return map[string]any{"type": "object", "properties": map[string]any{}}
}

// newCallID makes an id for servers that send tool calls without one; ids pair
// calls to results across the whole transcript, so they must not repeat.
func newCallID() string {
	return fmt.Sprintf("call_%016x", rand.Uint64())
}

// strictCompatible reports whether a schema meets OpenAI's strict mode rules
// (every object closed and listing all its properties as required); only then is
// strict enforcement requested, since a non-conforming schema is a 400.
func strictCompatible(raw json.RawMessage) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	return strictNode(v)
}

func strictNode(v any) bool {
	switch n := v.(type) {
	case map[string]any:
		if props, ok := n["properties"].(map[string]any); ok {
			if ap, ok := n["additionalProperties"].(bool); !ok || ap {
				return false
			}
			req, _ := n["required"].([]any)
			if len(req) != len(props) {
				return false
			}
		}
		for _, c := range n {
			if !strictNode(c) {
				return false
			}
		}
	case []any:
		for _, c := range n {
			if !strictNode(c) {
				return false
			}
		}
	}
	return true
}
