package anthropic

import (
	"context"
	"encoding/json"
	"errors"
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

func fixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "providers", "anthropic", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func envWith(srv *pt.Server, extra ...string) provider.Env {
	env := srv.Env()
	vars := srv.EnvVars()
	for i := 0; i+1 < len(extra); i += 2 {
		vars[extra[i]] = extra[i+1]
	}
	env.Getenv = func(k string) string { return vars[k] }
	return env
}

func newFor(t testing.TB, srv *pt.Server, extra ...string) provider.Provider {
	t.Helper()
	p, err := Factory(context.Background(), "claude-sonnet-4-5", envWith(srv, extra...))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func userReq(text string) provider.Request {
	return provider.Request{System: "SYS", Entries: []transcript.Entry{transcript.UserInput(text)}}
}

func TestFixtures(t *testing.T) {
	tests := []struct {
		file      string
		text      string
		reasoning string
		announced []string
		entries   []transcript.Entry
		usage     *usage.Usage
		finish    string
	}{
		{file: "text.sse", text: "Hello! How can I help?",
			entries: []transcript.Entry{transcript.AssistantText("Hello! How can I help?")},
			usage:   &usage.Usage{InputTokens: 4225, OutputTokens: 15, CachedInputTokens: 3000, CacheWriteTokens: 1200, Requests: 1},
			finish:  "stop"},
		{file: "thinking_tools.sse", text: "Reading them now.", reasoning: "I should read both files.",
			announced: []string{"toolu_01A:read_file", "toolu_01B:list_dir"},
			entries: []transcript.Entry{
				{Type: transcript.TypeReasoning, Text: "I should read both files.", Signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds==", Provider: "anthropic"},
				{Type: transcript.TypeReasoning, Encrypted: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP", Provider: "anthropic"},
				transcript.AssistantText("Reading them now."),
				transcript.ToolCall("toolu_01A", "read_file", json.RawMessage(`{"path": "main.go"}`)),
				transcript.ToolCall("toolu_01B", "list_dir", json.RawMessage(`{}`)),
			},
			usage: &usage.Usage{InputTokens: 400, OutputTokens: 89, Requests: 1}, finish: "tool_calls"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			srv := pt.NewAnthropicServer(t, pt.Turn{Raw: fixture(t, tt.file)})
			r := pt.Collect(context.Background(), newFor(t, srv), userReq("hi"))
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
			if !reflect.DeepEqual(r.Usage, tt.usage) || r.Finish != tt.finish {
				t.Errorf("usage %+v finish %q, want %+v %q", r.Usage, r.Finish, tt.usage, tt.finish)
			}
		})
	}
}

func TestFailures(t *testing.T) {
	tests := []struct {
		name  string
		turn  pt.Turn
		check func(error) bool
	}{
		{"overloaded mid-stream", pt.Turn{Raw: fixture(t, "error_midstream.sse")}, func(err error) bool {
			var he *provider.HTTPError
			return errors.As(err, &he) && he.Status == 529 && he.Retryable() && he.Message == "Overloaded"
		}},
		{"malformed", pt.Turn{Raw: fixture(t, "malformed.sse")}, func(err error) bool {
			var he *provider.HTTPError
			return errors.As(err, &he) && he.Protocol && he.Status == 0 && he.Retryable() && strings.Contains(err.Error(), "protocol error")
		}},
		{"cut", pt.Turn{Raw: fixture(t, "cut.sse")}, func(err error) bool { return errors.Is(err, provider.ErrStreamCut) }},
		{"dropped connection", pt.Turn{Text: strings.Repeat("word ", 400), CutAfter: 2500}, func(err error) bool { return errors.Is(err, provider.ErrStreamCut) }},
		{"overflow", pt.Turn{Status: 400, Raw: fixture(t, "overflow.json")}, func(err error) bool {
			return errors.Is(err, provider.ErrContextOverflow)
		}},
		{"unknown model", pt.Turn{Status: 404, Raw: fixture(t, "not_found.json")}, func(err error) bool {
			return errs.KindOf(err) == errs.KindConfig && strings.Contains(err.Error(), "model: claude-sonnet-9")
		}},
		{"key refused", pt.Turn{Status: 401, Message: "invalid x-api-key " + pt.APIKey}, func(err error) bool {
			return errs.KindOf(err) == errs.KindAuth && strings.Contains(err.Error(), "the key in ANTHROPIC_API_KEY was refused")
		}},
		{"529 retry-after", pt.Turn{Status: 529, Raw: fixture(t, "overloaded.json"), Header: http.Header{"Retry-After": {"2"}}}, func(err error) bool {
			var he *provider.HTTPError
			return errors.As(err, &he) && he.Retryable() && he.RetryAfter == 2*time.Second && he.Message == "Overloaded"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := pt.NewAnthropicServer(t, tt.turn)
			r := pt.Collect(context.Background(), newFor(t, srv), userReq("hi"))
			if r.Err == nil || !tt.check(r.Err) {
				t.Errorf("got %#v", r.Err)
			}
			if r.Err != nil && strings.Contains(r.Err.Error(), pt.APIKey) {
				t.Errorf("error leaks the key: %v", r.Err)
			}
		})
	}
}

func TestRequestShape(t *testing.T) {
	srv := pt.NewAnthropicServer(t, pt.Turn{Text: "done"})
	p := newFor(t, srv, "LOVIA_THINKING_BUDGET", "2000", "ANTHROPIC_CUSTOM_HEADERS", "anthropic-beta: interleaved-thinking-2025-05-14")
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)
	entries := []transcript.Entry{
		transcript.UserInput("read a and b"),                                                                       // 0
		{Type: transcript.TypeReasoning, Text: "plan", Signature: "SIG1", Provider: "anthropic"},                   // 1
		{Type: transcript.TypeReasoning, Encrypted: "REDACTED", Provider: "anthropic"},                             // 2
		{Type: transcript.TypeReasoning, Text: "openai thought", ProviderID: "rs_1", Provider: "openai-responses"}, // 3 skipped
		transcript.AssistantText("Reading."),                                                                       // 4
		transcript.ToolCall("t1", "read_file", json.RawMessage(`{"path":"a"}`)),                                    // 5
		transcript.ToolCall("t2", "read_file", json.RawMessage(`{"path":"b"}`)),                                    // 6
		transcript.ToolResult("t2", "read_file", "B", false),                                                       // 7
		transcript.ToolResult("t1", "read_file", "missing", true),                                                  // 8
		transcript.UserInput("and c?"),                                                                             // 9
	}
	req := provider.Request{System: "SYS", Entries: entries, StablePrefix: 9,
		Tools: []provider.ToolDef{{Name: "read_file", Description: "Read", Schema: schema}, {Name: "shell", Schema: nil}}}
	r := pt.Collect(context.Background(), p, req)
	if r.Err != nil || r.Text != "done" {
		t.Fatalf("%+v", r)
	}
	got := srv.Requests()[0]
	if got.Header.Get("Anthropic-Beta") != "interleaved-thinking-2025-05-14" {
		t.Errorf("custom header missing: %v", got.Header)
	}
	if got.Header.Get("Authorization") != "Bearer "+pt.APIKey || got.Header.Get("Anthropic-Version") == "" || got.Path != "/v1/messages" {
		t.Errorf("headers %v path %s", got.Header, got.Path)
	}
	body := got.JSON()
	if body["stream"] != true || body["model"] != "claude-sonnet-4-5" || body["max_tokens"] != float64(64000) {
		t.Errorf("top level %v %v %v", body["stream"], body["model"], body["max_tokens"])
	}
	if th, _ := json.Marshal(body["thinking"]); !jsonEqual(t, th, `{"type":"enabled","budget_tokens":2000}`) {
		t.Errorf("thinking %s", th)
	}
	sys, _ := json.Marshal(body["system"])
	if !jsonEqual(t, sys, `[{"type":"text","text":"SYS","cache_control":{"type":"ephemeral"}}]`) {
		t.Errorf("system %s", sys)
	}
	tools, _ := json.Marshal(body["tools"])
	if !jsonEqual(t, tools, `[
		{"name":"read_file","description":"Read","input_schema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}},
		{"name":"shell","input_schema":{"type":"object","properties":{}},"cache_control":{"type":"ephemeral"}}]`) {
		t.Errorf("tools %s", tools)
	}
	msgs, _ := json.Marshal(body["messages"])
	want := `[
		{"role":"user","content":[{"type":"text","text":"read a and b"}]},
		{"role":"assistant","content":[
			{"type":"thinking","thinking":"plan","signature":"SIG1"},
			{"type":"redacted_thinking","data":"REDACTED"},
			{"type":"text","text":"Reading."},
			{"type":"tool_use","id":"t1","name":"read_file","input":{"path":"a"}},
			{"type":"tool_use","id":"t2","name":"read_file","input":{"path":"b"}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":[{"type":"text","text":"missing"}]},
			{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"B"}],"cache_control":{"type":"ephemeral"}},
			{"type":"text","text":"and c?","cache_control":{"type":"ephemeral"}}]}]`
	if !jsonEqual(t, msgs, want) {
		t.Errorf("messages\n got %s\nwant %s", msgs, want)
	}
}

// The stable-prefix breakpoint skips blocks that cannot carry cache_control
// (thinking) and never lands past the prefix; the last block always gets one.
func TestCacheBreakpoint(t *testing.T) {
	entries := []transcript.Entry{
		transcript.UserInput("one"),
		{Type: transcript.TypeReasoning, Text: "t", Signature: "S", Provider: "anthropic"},
		transcript.AssistantText("two"),
		transcript.UserInput("three"),
	}
	count := func(prefix int) (marks []string) {
		msgs := messages(entries, prefix, nil)
		b, _ := json.Marshal(msgs)
		var decoded []struct {
			Content []map[string]any `json:"content"`
		}
		_ = json.Unmarshal(b, &decoded)
		for _, m := range decoded {
			for _, c := range m.Content {
				if c["cache_control"] != nil {
					marks = append(marks, c["type"].(string)+":"+c["text"].(string))
				}
			}
		}
		return marks
	}
	for prefix, want := range map[int][]string{0: {"text:three"}, 1: {"text:one", "text:three"}, 2: {"text:one", "text:three"},
		3: {"text:two", "text:three"}, 4: {"text:three"}, 10: {"text:three"}} {
		if got := count(prefix); !reflect.DeepEqual(got, want) {
			t.Errorf("StablePrefix %d: marks %v, want %v", prefix, got, want)
		}
	}
}

func jsonEqual(t *testing.T, a []byte, b string) bool {
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

func TestFactory(t *testing.T) {
	env := func(kv ...string) provider.Env {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return provider.Env{Getenv: func(k string) string { return m[k] }}
	}
	_, err := Factory(context.Background(), "claude-sonnet-4-5", env())
	if errs.KindOf(err) != errs.KindConfig || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("missing key: %v", err)
	}
	_, err = Factory(context.Background(), "claude-sonnet-4-5", env("ANTHROPIC_API_KEY", "k", "LOVIA_THINKING_BUDGET", "lots"))
	if errs.KindOf(err) != errs.KindConfig || errs.HintOf(err) == "" {
		t.Errorf("bad budget: %v", err)
	}
	p, err := Factory(context.Background(), "claude-opus-4-1-20250805", env("ANTHROPIC_AUTH_TOKEN", "tok", "ANTHROPIC_BASE_URL", "https://gw.example/v1/"))
	if err == nil && p.(*Provider).cfg.BaseURL != "https://gw.example" {
		t.Errorf("base URL %q", p.(*Provider).cfg.BaseURL)
	}
	if err != nil || p.Info().ContextWindow != 200000 || p.Info().MaxOutputTokens != 32000 || p.Info().Provider != "anthropic" {
		t.Errorf("info %+v %v", p, err)
	}
	p, _ = Factory(context.Background(), "claude-haiku-4-5", provider.Env{Getenv: env("ANTHROPIC_API_KEY", "k").Getenv,
		ContextWindows: map[string]int{"claude-haiku-4-5": 1000000}})
	if p.Info().ContextWindow != 1000000 {
		t.Errorf("override ignored: %+v", p.Info())
	}
}

func TestRetryOverloaded(t *testing.T) {
	srv := pt.NewAnthropicServer(t,
		pt.Turn{Raw: fixture(t, "error_midstream.sse")},
		pt.Turn{Status: 529, Raw: fixture(t, "overloaded.json")},
		pt.Turn{Reasoning: "hmm", Text: "fine", Usage: usage.Usage{InputTokens: 100, CachedInputTokens: 60, CacheWriteTokens: 30, OutputTokens: 5}})
	var waits []time.Duration
	pol := provider.DefaultRetryPolicy()
	pol.Sleep = func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	r := pt.Collect(context.Background(), provider.WithRetry(newFor(t, srv), pol), userReq("hi"))
	if r.Err != nil || r.Text != "fine" || len(r.Discards) != 1 || len(waits) != 2 {
		t.Fatalf("%+v waits %v", r, waits)
	}
	want := &usage.Usage{InputTokens: 100, CachedInputTokens: 60, CacheWriteTokens: 30, OutputTokens: 5, Requests: 1}
	if !reflect.DeepEqual(r.Usage, want) {
		t.Errorf("usage %+v, want %+v", r.Usage, want)
	}
	if len(r.Entries) != 2 || r.Entries[0].Signature != "sig-3" || r.Entries[0].Text != "hmm" {
		t.Errorf("entries %+v", r.Entries)
	}
}
