package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/provider"
	pt "github.com/lovia-dev/lovia/internal/provider/providertest"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

func fixture(t testing.TB, kind, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "providers", kind, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func chatFor(t testing.TB, srv *pt.Server) provider.Provider {
	t.Helper()
	p, err := ChatFactory(context.Background(), "gpt-4.1", srv.Env())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func userReq(text string) provider.Request {
	return provider.Request{System: "You are terse.", Entries: []transcript.Entry{transcript.UserInput(text)}}
}

func TestChatFixtures(t *testing.T) {
	tests := []struct {
		file      string
		text      string
		reasoning string
		announced []string
		entries   []transcript.Entry
		usage     *usage.Usage
		finish    string
	}{
		{file: "text.sse", text: "Hello, world — \"quoted\"\n",
			entries: []transcript.Entry{transcript.AssistantText("Hello, world — \"quoted\"\n")},
			usage:   &usage.Usage{InputTokens: 1520, OutputTokens: 9, CachedInputTokens: 1280, Requests: 1}, finish: "stop"},
		{file: "tool_calls.sse", text: "Let me look.", announced: []string{"call_rd1:read_file", "call_sh2:shell"},
			entries: []transcript.Entry{
				transcript.AssistantText("Let me look."),
				transcript.ToolCall("call_rd1", "read_file", json.RawMessage(`{"path": "main.go"}`)),
				transcript.ToolCall("call_sh2", "shell", json.RawMessage(`{"command": "go test ./..."}`)),
			},
			usage: &usage.Usage{InputTokens: 800, OutputTokens: 41, Requests: 1}, finish: "tool_calls"},
		{file: "tool_calls_noindex.sse", announced: []string{"call_a:list_dir", "call_b:read_file"},
			entries: []transcript.Entry{
				transcript.ToolCall("call_a", "list_dir", json.RawMessage(`{"path": "."}`)),
				transcript.ToolCall("call_b", "read_file", json.RawMessage(`{"path": "go.mod"}`)),
			},
			usage: &usage.Usage{InputTokens: 300, OutputTokens: 20, Requests: 1}, finish: "tool_calls"},
		{file: "reasoning.sse", text: "The answer is 5.", reasoning: "The user wants a sum: 2+3=5.",
			entries: []transcript.Entry{
				{Type: transcript.TypeReasoning, Text: "The user wants a sum: 2+3=5.", Provider: "openai", ProviderID: "reasoning_content"},
				transcript.AssistantText("The answer is 5."),
			},
			usage: &usage.Usage{InputTokens: 20, OutputTokens: 30, ReasoningTokens: 22, Requests: 1}, finish: "stop"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			srv := pt.NewOpenAIServer(t, pt.Turn{Raw: fixture(t, "openai", tt.file)})
			r := pt.Collect(context.Background(), chatFor(t, srv), userReq("hi"))
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			if r.Text != tt.text || r.Reasoning != tt.reasoning {
				t.Errorf("text %q reasoning %q, want %q %q", r.Text, r.Reasoning, tt.text, tt.reasoning)
			}
			if !reflect.DeepEqual(r.Announced, tt.announced) {
				t.Errorf("announced %v, want %v", r.Announced, tt.announced)
			}
			if !reflect.DeepEqual(r.Entries, tt.entries) {
				t.Errorf("entries\n got %+v\nwant %+v", r.Entries, tt.entries)
			}
			if !reflect.DeepEqual(r.Usage, tt.usage) {
				t.Errorf("usage %+v, want %+v", r.Usage, tt.usage)
			}
			if r.Finish != tt.finish {
				t.Errorf("finish %q, want %q", r.Finish, tt.finish)
			}
		})
	}
}

func TestChatStreamFailures(t *testing.T) {
	tests := []struct {
		name  string
		turn  pt.Turn
		check func(t *testing.T, err error)
	}{
		{"error mid-stream", pt.Turn{Raw: fixture(t, "openai", "error_midstream.sse")}, func(t *testing.T, err error) {
			var he *provider.HTTPError
			if !errors.As(err, &he) || he.Status != 500 || !he.Retryable() || !strings.Contains(he.Message, "server had an error") {
				t.Errorf("got %#v", err)
			}
		}},
		{"malformed chunk", pt.Turn{Raw: fixture(t, "openai", "malformed.sse")}, func(t *testing.T, err error) {
			var he *provider.HTTPError
			if !errors.As(err, &he) || !he.Protocol || he.Status != 0 || !he.Retryable() || !strings.Contains(err.Error(), "protocol error") || strings.Contains(err.Error(), "HTTP 502") {
				t.Errorf("got %#v", err)
			}
		}},
		{"stream ends without finish", pt.Turn{Raw: fixture(t, "openai", "cut.sse")}, func(t *testing.T, err error) {
			if !errors.Is(err, provider.ErrStreamCut) {
				t.Errorf("got %v, want ErrStreamCut", err)
			}
		}},
		{"connection dropped halfway", pt.Turn{Text: strings.Repeat("abcdef", 200), CutAfter: 3000}, func(t *testing.T, err error) {
			var he *provider.HTTPError
			if !errors.Is(err, provider.ErrStreamCut) || !errors.As(err, &he) || !he.Retryable() {
				t.Errorf("got %v, want a retryable ErrStreamCut", err)
			}
		}},
		{"429 retry-after", pt.Turn{Status: 429, Message: "Rate limit reached", Header: http.Header{"Retry-After": {"7"}}}, func(t *testing.T, err error) {
			var he *provider.HTTPError
			if !errors.As(err, &he) || he.Status != 429 || he.RetryAfter != 7*time.Second || !he.Retryable() || he.Message != "Rate limit reached" {
				t.Errorf("got %#v", err)
			}
		}},
		{"retry-after-ms", pt.Turn{Status: 503, Message: "busy", Header: http.Header{"Retry-After-Ms": {"250"}}}, func(t *testing.T, err error) {
			var he *provider.HTTPError
			if !errors.As(err, &he) || he.RetryAfter != 250*time.Millisecond {
				t.Errorf("got %#v", err)
			}
		}},
		{"overflow", pt.Turn{Status: 400, Raw: fixture(t, "openai", "overflow.json")}, func(t *testing.T, err error) {
			var he *provider.HTTPError
			if !errors.Is(err, provider.ErrContextOverflow) || !errors.As(err, &he) || he.Retryable() {
				t.Errorf("got %v, want overflow", err)
			}
		}},
		{"overflow vllm", pt.Turn{Status: 400, Raw: fixture(t, "openai", "overflow_vllm.json")}, func(t *testing.T, err error) {
			if !errors.Is(err, provider.ErrContextOverflow) {
				t.Errorf("got %v, want overflow", err)
			}
		}},
		{"413", pt.Turn{Status: 413, Message: "request too large"}, func(t *testing.T, err error) {
			if !errors.Is(err, provider.ErrContextOverflow) {
				t.Errorf("got %v, want overflow", err)
			}
		}},
		{"plain 400 is not overflow", pt.Turn{Status: 400, Message: "Invalid value for 'tools'"}, func(t *testing.T, err error) {
			var he *provider.HTTPError
			if errors.Is(err, provider.ErrContextOverflow) || !errors.As(err, &he) || he.Retryable() || he.Message != "Invalid value for 'tools'" {
				t.Errorf("got %#v", err)
			}
		}},
		{"unknown model", pt.Turn{Status: 404, Raw: fixture(t, "openai", "unknown_model.json")}, func(t *testing.T, err error) {
			if errs.KindOf(err) != errs.KindConfig || !strings.Contains(err.Error(), "does not exist or you do not have access") {
				t.Errorf("got %v (kind %s)", err, errs.KindOf(err))
			}
		}},
		{"key refused", pt.Turn{Status: 401, Raw: fixture(t, "openai", "bad_key.json")}, func(t *testing.T, err error) {
			if errs.KindOf(err) != errs.KindAuth || !strings.Contains(err.Error(), "the key in OPENAI_API_KEY was refused") {
				t.Errorf("got %v (kind %s)", err, errs.KindOf(err))
			}
			if errs.HintOf(err) == "" {
				t.Error("no hint")
			}
		}},
		{"json instead of a stream", pt.Turn{Status: 200, Raw: `{"id":"x","choices":[{"message":{"content":"hi"}}]}`}, func(t *testing.T, err error) {
			var he *provider.HTTPError
			if !errors.As(err, &he) || he.Retryable() || !strings.Contains(he.Message, "instead of an event stream") {
				t.Errorf("got %#v", err)
			}
		}},
		{"quota", pt.Turn{Status: 429, Code: "insufficient_quota", Message: "You exceeded your current quota, please check your plan and billing details."}, func(t *testing.T, err error) {
			var he *provider.HTTPError
			if errors.As(err, &he) || errs.KindOf(err) != errs.KindProvider || !strings.Contains(errs.HintOf(err), "OPENAI_API_KEY") {
				t.Errorf("got %v (hint %q)", err, errs.HintOf(err))
			}
		}},
		{"forbidden", pt.Turn{Status: 403, Message: "Project does not have access"}, func(t *testing.T, err error) {
			if errs.KindOf(err) != errs.KindAuth {
				t.Errorf("got %v", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := pt.NewOpenAIServer(t, tt.turn)
			r := pt.Collect(context.Background(), chatFor(t, srv), userReq("hi"))
			if r.Err == nil {
				t.Fatalf("no error; reply %+v", r)
			}
			if strings.Contains(r.Err.Error(), pt.APIKey) {
				t.Errorf("error leaks the API key: %v", r.Err)
			}
			tt.check(t, r.Err)
		})
	}
}

func TestChatRequestShape(t *testing.T) {
	srv := pt.NewOpenAIServer(t, pt.Turn{Text: "ok"})
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"file"}},"required":["path"]}`)
	entries := []transcript.Entry{
		transcript.UserInput("list and read"),
		{Type: transcript.TypeReasoning, Text: "claude thought", Signature: "sig", Provider: "anthropic"},
		transcript.AssistantText("Reading both."),
		transcript.ToolCall("c1", "read_file", json.RawMessage(`{"path":"a.go"}`)),
		transcript.ToolCall("c2", "read_file", json.RawMessage(`{"path":"b.go"}`)),
		// results in completion order, not call order
		transcript.ToolResult("c2", "read_file", "package b", false),
		transcript.ToolResult("c1", "read_file", "no such file", true),
		transcript.UserInput("now summarise"),
		{Type: transcript.TypeReasoning, Text: "thinking about it", Provider: "openai", ProviderID: "reasoning_content"},
		transcript.ToolCall("c3", "shell", nil),
		transcript.ToolResult("c3", "shell", "ok", false),
	}
	req := provider.Request{System: "SYS", Entries: entries,
		Tools: []provider.ToolDef{{Name: "read_file", Description: "Read a file", Schema: schema}}, MaxOutputTokens: 1000}
	r := pt.Collect(context.Background(), chatFor(t, srv), req)
	if r.Err != nil || r.Text != "ok" {
		t.Fatalf("%+v", r)
	}
	got := srv.Requests()[0]
	if got.Path != "/v1/chat/completions" || got.Header.Get("Authorization") != "Bearer "+pt.APIKey {
		t.Errorf("path %s auth %q", got.Path, got.Header.Get("Authorization"))
	}
	var body struct {
		Model         string            `json:"model"`
		Stream        bool              `json:"stream"`
		StreamOptions map[string]any    `json:"stream_options"`
		MaxTokens     int               `json:"max_tokens"`
		Messages      []json.RawMessage `json:"messages"`
		Tools         []map[string]any  `json:"tools"`
	}
	if err := json.Unmarshal(got.Body, &body); err != nil {
		t.Fatal(err)
	}
	if body.Model != "gpt-4.1" || !body.Stream || body.StreamOptions["include_usage"] != true || body.MaxTokens != 1000 {
		t.Errorf("model %q stream %v options %v max %d", body.Model, body.Stream, body.StreamOptions, body.MaxTokens)
	}
	want := []string{
		`{"content":"SYS","role":"system"}`,
		`{"content":"list and read","role":"user"}`,
		`{"content":"Reading both.","tool_calls":[{"id":"c1","function":{"arguments":"{\"path\":\"a.go\"}","name":"read_file"},"type":"function"},{"id":"c2","function":{"arguments":"{\"path\":\"b.go\"}","name":"read_file"},"type":"function"}],"role":"assistant"}`,
		`{"content":"error: no such file","tool_call_id":"c1","role":"tool"}`,
		`{"content":"package b","tool_call_id":"c2","role":"tool"}`,
		`{"content":"now summarise","role":"user"}`,
		`{"tool_calls":[{"id":"c3","function":{"arguments":"{}","name":"shell"},"type":"function"}],"role":"assistant","reasoning_content":"thinking about it"}`,
		`{"content":"ok","tool_call_id":"c3","role":"tool"}`,
	}
	if len(body.Messages) != len(want) {
		t.Fatalf("%d messages, want %d:\n%s", len(body.Messages), len(want), got.Body)
	}
	for i, m := range body.Messages {
		if !jsonEqual(t, m, want[i]) {
			t.Errorf("message %d\n got %s\nwant %s", i, m, want[i])
		}
	}
	if len(body.Tools) != 1 || body.Tools[0]["type"] != "function" {
		t.Fatalf("tools %v", body.Tools)
	}
	fn := body.Tools[0]["function"].(map[string]any)
	if fn["name"] != "read_file" || fn["description"] != "Read a file" || fn["parameters"].(map[string]any)["required"] == nil {
		t.Errorf("tool %v", fn)
	}
}

func jsonEqual(t *testing.T, a json.RawMessage, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}

func TestChatNativeSchema(t *testing.T) {
	tests := []struct {
		schema string
		strict bool
	}{
		{`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`, true},
		{`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a"]}`, false},
	}
	for _, tt := range tests {
		srv := pt.NewOpenAIServer(t, pt.Turn{Text: `{"a":"x"}`})
		p := chatFor(t, srv)
		if !p.Info().NativeSchema {
			t.Fatal("openai must report NativeSchema")
		}
		r := pt.Collect(context.Background(), p, provider.Request{Entries: []transcript.Entry{transcript.UserInput("go")},
			OutputSchema: json.RawMessage(tt.schema), OutputName: "answer"})
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		rf := srv.Requests()[0].JSON()["response_format"].(map[string]any)
		js := rf["json_schema"].(map[string]any)
		if rf["type"] != "json_schema" || js["name"] != "answer" || js["schema"] == nil {
			t.Errorf("response_format %v", rf)
		}
		if strict, _ := js["strict"].(bool); strict != tt.strict {
			t.Errorf("strict %v, want %v for %s", js["strict"], tt.strict, tt.schema)
		}
	}
}

func TestFactoryConfig(t *testing.T) {
	env := func(kv ...string) provider.Env {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return provider.Env{Getenv: func(k string) string { return m[k] }}
	}
	_, err := ChatFactory(context.Background(), "gpt-4.1", env())
	// A missing key is a configuration error (exit 2), not a refused one.
	if errs.KindOf(err) != errs.KindConfig || !strings.Contains(err.Error(), "OPENAI_API_KEY") || !strings.Contains(errs.HintOf(err), "OPENAI_API_KEY") {
		t.Errorf("missing key: %v (hint %q)", err, errs.HintOf(err))
	}
	_, err = ResponsesFactory(context.Background(), "o3", env())
	if errs.KindOf(err) != errs.KindConfig {
		t.Errorf("responses missing key: %v", err)
	}
	_, err = ChatFactory(context.Background(), "m", env("OPENAI_BASE_URL", "localhost:8000"))
	if errs.KindOf(err) != errs.KindConfig || !strings.Contains(err.Error(), "OPENAI_BASE_URL") {
		t.Errorf("bad base url: %v", err)
	}
	p, err := ChatFactory(context.Background(), "my-local-model", env("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1"))
	if err != nil {
		t.Fatalf("a compatible server needs no key: %v", err)
	}
	if p.Info().ContextWindow != provider.LocalContextWindow {
		t.Errorf("unknown local model window %d", p.Info().ContextWindow)
	}
	p, _ = ChatFactory(context.Background(), "gpt-4.1-mini", env("OPENAI_API_KEY", "k"))
	if p.Info().ContextWindow != 1047576 || p.Info().Provider != "openai" {
		t.Errorf("info %+v", p.Info())
	}
	p, _ = ChatFactory(context.Background(), "gpt-4.1-mini", provider.Env{Getenv: env("OPENAI_API_KEY", "k").Getenv,
		ContextWindows: map[string]int{"openai:gpt-4.1-mini": 5000}})
	if p.Info().ContextWindow != 5000 {
		t.Errorf("override ignored: %+v", p.Info())
	}
	o, err := OllamaFactory(context.Background(), "llama3.1:8b", env())
	if err != nil || o.Info().Provider != "ollama" || o.(*Chat).cfg.BaseURL != OllamaBaseURL || o.Info().ContextWindow != 131072 {
		t.Errorf("ollama %v %+v", err, o)
	}
	for in, want := range map[string]string{
		"0.0.0.0:11434":          "http://localhost:11434/v1",
		"gpu-box":                "http://gpu-box:11434/v1",
		"https://ollama.lan/":    "https://ollama.lan:11434/v1",
		"http://10.0.0.2:9999":   "http://10.0.0.2:9999/v1",
		"http://h:1/custom/path": "http://h:1/custom/path",
	} {
		if got := ollamaURL(in); got != want {
			t.Errorf("ollamaURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOllamaNoKey(t *testing.T) {
	srv := pt.NewOpenAIServer(t, pt.Turn{Text: "hi from llama"})
	p, err := OllamaFactory(context.Background(), "llama3.2", provider.Env{
		Getenv: func(k string) string {
			if k == "OLLAMA_HOST" {
				return srv.URL
			}
			return ""
		}})
	if err != nil {
		t.Fatal(err)
	}
	r := pt.Collect(context.Background(), p, userReq("hi"))
	if r.Err != nil || r.Text != "hi from llama" {
		t.Fatalf("%+v", r)
	}
	if h := srv.Requests()[0].Header.Get("Authorization"); h != "" {
		t.Errorf("sent Authorization %q with no key", h)
	}
}

// fakeSleep records waits without sleeping.
type fakeSleep struct{ waits []time.Duration }

func (f *fakeSleep) sleep(ctx context.Context, d time.Duration) error {
	f.waits = append(f.waits, d)
	return ctx.Err()
}

func fastPolicy(fs *fakeSleep, log *bytes.Buffer) provider.RetryPolicy {
	p := provider.DefaultRetryPolicy()
	p.Sleep = fs.sleep
	p.Jitter = func(d time.Duration) time.Duration { return d }
	if log != nil {
		p.Logger = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return p
}

func TestChatWithRetry(t *testing.T) {
	long := strings.Repeat("0123456789", 100)
	tests := []struct {
		name     string
		turns    []pt.Turn
		discards int
		waits    []time.Duration
	}{
		{"500 then success", []pt.Turn{{Status: 500, Message: "boom"}, {Text: long}}, 0, []time.Duration{time.Second}},
		{"429 honours retry-after", []pt.Turn{{Status: 429, Message: "slow down", Header: http.Header{"Retry-After": {"3"}}}, {Text: long}}, 0, []time.Duration{3 * time.Second}},
		{"cut halfway restarts", []pt.Turn{{Text: long, CutAfter: 2000}, {Text: long}}, 1, []time.Duration{time.Second}},
		{"error mid-stream restarts", []pt.Turn{{Raw: fixture(t, "openai", "error_midstream.sse")}, {Text: long}}, 1, []time.Duration{time.Second}},
		{"malformed then success", []pt.Turn{{Raw: fixture(t, "openai", "malformed.sse")}, {Status: 502, Message: "bad gateway"}, {Text: long}}, 1, []time.Duration{time.Second, 2 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := pt.NewOpenAIServer(t, tt.turns...)
			fs := &fakeSleep{}
			var log bytes.Buffer
			p := provider.WithRetry(chatFor(t, srv), fastPolicy(fs, &log))
			r := pt.Collect(context.Background(), p, userReq("hi"))
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			if r.Text != long || len(r.Entries) != 1 || r.Entries[0].Text != long || r.Finish != "stop" {
				t.Errorf("reply text %d bytes, entries %d, finish %q", len(r.Text), len(r.Entries), r.Finish)
			}
			if len(r.Discards) != tt.discards {
				t.Errorf("discards %q, want %d", r.Discards, tt.discards)
			}
			if !reflect.DeepEqual(fs.waits, tt.waits) {
				t.Errorf("waits %v, want %v", fs.waits, tt.waits)
			}
			if n := len(srv.Requests()); n != len(tt.turns) {
				t.Errorf("%d requests, want %d", n, len(tt.turns))
			}
			if strings.Contains(log.String(), pt.APIKey) || !strings.Contains(log.String(), "retrying") {
				t.Errorf("log leaks key or says nothing: %s", log.String())
			}
		})
	}
}

func TestChatRetryGivesUp(t *testing.T) {
	turns := make([]pt.Turn, 5)
	for i := range turns {
		turns[i] = pt.Turn{Status: 503, Message: "overloaded"}
	}
	srv := pt.NewOpenAIServer(t, turns...)
	fs := &fakeSleep{}
	r := pt.Collect(context.Background(), provider.WithRetry(chatFor(t, srv), fastPolicy(fs, nil)), userReq("hi"))
	var he *provider.HTTPError
	if !errors.As(r.Err, &he) || he.Status != 503 || errs.KindOf(r.Err) != errs.KindProvider {
		t.Fatalf("got %v", r.Err)
	}
	if len(srv.Requests()) != 5 || len(fs.waits) != 4 {
		t.Errorf("%d requests, %d waits", len(srv.Requests()), len(fs.waits))
	}
	if want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}; !reflect.DeepEqual(fs.waits, want) {
		t.Errorf("backoff %v, want %v", fs.waits, want)
	}
	// Overflow and auth errors are not retried.
	srv = pt.NewOpenAIServer(t, pt.Turn{Status: 400, Raw: fixture(t, "openai", "overflow.json")})
	r = pt.Collect(context.Background(), provider.WithRetry(chatFor(t, srv), fastPolicy(&fakeSleep{}, nil)), userReq("hi"))
	if !errors.Is(r.Err, provider.ErrContextOverflow) || len(srv.Requests()) != 1 {
		t.Errorf("overflow: %v after %d requests", r.Err, len(srv.Requests()))
	}
}

func TestChatCancel(t *testing.T) {
	srv := pt.NewOpenAIServer(t, pt.Turn{Text: strings.Repeat("x", 10000)})
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	var gotErr error
	for d, err := range chatFor(t, srv).Stream(ctx, userReq("hi")) {
		if err != nil {
			gotErr = err
			break
		}
		if d.Kind == provider.DeltaText {
			n++
			if n == 3 {
				cancel()
			}
		}
	}
	cancel()
	if gotErr != nil && !errors.Is(gotErr, context.Canceled) {
		t.Errorf("err %v", gotErr)
	}
	// Breaking out early must not hang or panic either.
	for range chatFor(t, pt.NewOpenAIServer(t, pt.Turn{Text: "abc"})).Stream(context.Background(), userReq("hi")) {
		break
	}
}

func TestChatMessagesReasoningOnly(t *testing.T) {
	msgs := chatMessages("openai", "", []transcript.Entry{
		transcript.UserInput("hi"),
		{Type: transcript.TypeReasoning, Text: "hmm", Provider: "openai", ProviderID: "reasoning"},
		transcript.UserInput("again"),
	}, nil)
	b, _ := json.Marshal(msgs)
	if !jsonEqual(t, b, `[{"content":"hi","role":"user"},{"content":"again","role":"user"}]`) {
		t.Errorf("got %s", b)
	}
}

func TestChatServerDown(t *testing.T) {
	srv := pt.NewOpenAIServer(t)
	env := srv.Env()
	srv.Close() // nothing listens there any more
	p, err := ChatFactory(context.Background(), "m", env)
	if err != nil {
		t.Fatal(err)
	}
	fs := &fakeSleep{}
	r := pt.Collect(context.Background(), provider.WithRetry(p, fastPolicy(fs, nil)), userReq("hi"))
	var he *provider.HTTPError
	if !errors.As(r.Err, &he) || he.Transport == nil || len(fs.waits) != 4 {
		t.Fatalf("err %v, %d waits", r.Err, len(fs.waits))
	}
	if h := errs.HintOf(r.Err); !strings.Contains(h, "server is running") {
		t.Errorf("hint %q", h)
	}
}

func TestChatCancelWhileStreaming(t *testing.T) {
	srv := pt.NewOpenAIServer(t, pt.Turn{Text: strings.Repeat("slow ", 100), Delay: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	var texts int
	var gotErr error
	for d, err := range chatFor(t, srv).Stream(ctx, userReq("hi")) {
		if err != nil {
			gotErr = err
			break
		}
		if d.Kind == provider.DeltaText {
			if texts++; texts == 2 {
				cancel()
			}
		}
	}
	if !errors.Is(gotErr, context.Canceled) || time.Since(start) > 3*time.Second {
		t.Fatalf("err %v after %v (%d deltas)", gotErr, time.Since(start), texts)
	}
}

func TestArgsRoundTrip(t *testing.T) {
	for _, raw := range []string{`{"a":1}`, `{"a":`, ``, `not json`} {
		stored := provider.ToolArgs(raw)
		if !json.Valid(stored) {
			t.Fatalf("stored %q is not JSON", stored)
		}
		want := raw
		if strings.TrimSpace(raw) == "" {
			want = "{}"
		}
		if got := argsText(stored); got != want {
			t.Errorf("replayed %q, want %q", got, want)
		}
	}
}

func TestChatOrgProjectHeaders(t *testing.T) {
	srv := pt.NewOpenAIServer(t, pt.Turn{Text: "ok"})
	vars := srv.EnvVars()
	vars["OPENAI_ORG_ID"], vars["OPENAI_PROJECT_ID"] = "org-1", "proj-2"
	vars["OPENAI_CUSTOM_HEADERS"] = "HTTP-Referer: https://lovia.dev\nX-Title: lovia\nbroken line"
	env := srv.Env()
	env.Getenv = func(k string) string { return vars[k] }
	p, err := ChatFactory(context.Background(), "gpt-4.1", env)
	if err != nil {
		t.Fatal(err)
	}
	if r := pt.Collect(context.Background(), p, userReq("hi")); r.Err != nil {
		t.Fatal(r.Err)
	}
	h := srv.Requests()[0].Header
	if h.Get("OpenAI-Organization") != "org-1" || h.Get("OpenAI-Project") != "proj-2" ||
		h.Get("HTTP-Referer") != "https://lovia.dev" || h.Get("X-Title") != "lovia" {
		t.Errorf("headers %v", h)
	}
}
