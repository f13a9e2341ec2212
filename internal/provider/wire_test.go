package provider

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/transcript"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		h    http.Header
		want time.Duration
	}{
		{nil, 0},
		{http.Header{"Retry-After": {"3"}}, 3 * time.Second},
		{http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond},
		{http.Header{"Retry-After": {"-1"}}, 0},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := ParseRetryAfter(tt.h, now); got != tt.want {
			t.Errorf("ParseRetryAfter(%v) = %v, want %v", tt.h, got, tt.want)
		}
	}
}

func TestServerMessage(t *testing.T) {
	tests := map[string]string{
		`{"error":{"message":"bad thing","type":"x"}}`: "bad thing",
		`{"error":"plain"}`:                            "plain",
		`{"object":"error","message":"vllm says"}`:     "vllm says",
		`{"detail":"fastapi says"}`:                    "fastapi says",
		`{"detail":[{"msg":"field required"}]}`:        `[{"msg":"field required"}]`,
		"<html>502 Bad Gateway</html>\n":               "<html>502 Bad Gateway</html>",
		"<!DOCTYPE html><html><head><TITLE> 502: Bad gateway </TITLE></head><body>...</body></html>": "502: Bad gateway",
		`{"type":"error","error":{"message":"Overloaded"}}`:                                          "Overloaded",
	}
	for in, want := range tests {
		if got := ServerMessage([]byte(in)); got != want {
			t.Errorf("ServerMessage(%s) = %q, want %q", in, got, want)
		}
	}
	if got := ServerMessage([]byte(strings.Repeat("x", 2000))); len(got) > 510 {
		t.Errorf("not capped: %d", len(got))
	}
}

func TestRedact(t *testing.T) {
	key := "abc123secretvalue"
	s := Redact("key "+key+" and sk-proj-AbCdEf123456 and Bearer eyJhbGciOi.xyz", key)
	for _, leak := range []string{key, "sk-proj-AbCdEf123456", "eyJhbGciOi"} {
		if strings.Contains(s, leak) {
			t.Errorf("%q leaks %q", s, leak)
		}
	}
	if Redact("nothing secret here") != "nothing secret here" {
		t.Error("changed innocent text")
	}
}

func TestIsOverflowMessage(t *testing.T) {
	yes := []string{
		"This model's maximum context length is 128000 tokens.",
		"prompt is too long: 215321 tokens > 200000 maximum",
		"context_length_exceeded",
		"the request exceeds the available context size, try increasing it",
		"Your input exceeds the context window of this model.",
		"input length and `max_tokens` exceed context limit: 190000 + 21333 > 200000",
	}
	for _, m := range yes {
		if !IsOverflowMessage(m) {
			t.Errorf("not recognised: %q", m)
		}
	}
	for _, m := range []string{"Invalid value for tools", "rate limited", ""} {
		if IsOverflowMessage(m) {
			t.Errorf("false positive: %q", m)
		}
	}
}

func TestStatusForType(t *testing.T) {
	for in, want := range map[string]int{"overloaded_error": 529, "rate_limit_error": 429, "api_error": 500,
		"invalid_request_error": 400, "authentication_error": 401, "server_error": 500, "": 500} {
		if got := StatusForType(in); got != want {
			t.Errorf("StatusForType(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestPairedView(t *testing.T) {
	call := func(id string) transcript.Entry { return transcript.ToolCall(id, "f", json.RawMessage(`{}`)) }
	res := func(id string) transcript.Entry { return transcript.ToolResult(id, "f", "r"+id, false) }
	ids := func(es []transcript.Entry) []string {
		var out []string
		for _, e := range es {
			switch e.Type {
			case transcript.TypeToolCall:
				out = append(out, "call:"+e.CallID)
			case transcript.TypeToolResult:
				if e.Synthetic {
					out = append(out, "synth:"+e.CallID)
				} else {
					out = append(out, "res:"+e.CallID)
				}
			case transcript.TypeInput:
				out = append(out, "user:"+e.Text)
			default:
				out = append(out, string(e.Type))
			}
		}
		return out
	}
	tests := []struct {
		name string
		in   []transcript.Entry
		want []string
		orig []int
	}{
		{"results in completion order are put in call order",
			[]transcript.Entry{transcript.UserInput("u"), transcript.AssistantText("a"), call("1"), call("2"), res("2"), res("1")},
			[]string{"user:u", "assistant_text", "call:1", "call:2", "res:1", "res:2"}, []int{0, 1, 2, 3, 5, 4}},
		{"a user message between call and result moves after the result",
			[]transcript.Entry{call("1"), transcript.UserInput("steer"), res("1")},
			[]string{"call:1", "res:1", "user:steer"}, []int{0, 2, 1}},
		{"missing result is synthesised",
			[]transcript.Entry{call("1"), transcript.UserInput("next")},
			[]string{"call:1", "synth:1", "user:next"}, []int{0, -1, 1}},
		{"orphan result becomes user text",
			[]transcript.Entry{transcript.UserInput("u"), res("9")},
			[]string{"user:u", "user:[result of tool f (call 9)]\nr9"}, []int{0, 1}},
		{"two groups",
			[]transcript.Entry{call("1"), res("1"), transcript.Reasoning("r"), call("2"), res("2"), transcript.AssistantText("done")},
			[]string{"call:1", "res:1", "reasoning", "call:2", "res:2", "assistant_text"}, []int{0, 1, 2, 3, 4, 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, orig := PairedView(tt.in)
			if got := ids(out); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			if !reflect.DeepEqual(orig, tt.orig) {
				t.Errorf("orig %v, want %v", orig, tt.orig)
			}
		})
	}
}

func TestContextWindow(t *testing.T) {
	tests := []struct {
		prefix, model string
		want          int
	}{
		{"openai", "gpt-4.1", 1047576},
		{"openai", "gpt-4.1-mini-2025-04-14", 1047576},
		{"openai", "gpt-4o", 128000},
		{"openai", "gpt-4o-mini", 128000},
		{"openai", "o3", 200000},
		{"openai", "o4-mini", 200000},
		{"openai-responses", "gpt-5", 400000},
		{"openai", "gpt-5-chat-latest", 128000},
		{"anthropic", "claude-sonnet-4-5-20250929", 200000},
		{"anthropic", "claude-opus-4-1", 200000},
		{"anthropic", "claude-3-5-haiku-latest", 200000},
		{"ollama", "llama3.1:8b", 131072},
		{"openai", "meta-llama/Llama-3.3-70B-Instruct", 131072},
		{"ollama", "qwen2.5-coder:32b", 32768},
		{"openai", "anthropic/claude-sonnet-4", 200000},
		{"openai", "totally-unknown", 777},
	}
	for _, tt := range tests {
		if got := ContextWindow(tt.prefix, tt.model, nil, 777); got != tt.want {
			t.Errorf("ContextWindow(%s:%s) = %d, want %d", tt.prefix, tt.model, got, tt.want)
		}
	}
	over := map[string]int{"gpt-4o": 1000, "ollama:llama3.1:8b": 8192}
	if ContextWindow("openai", "gpt-4o", over, 0) != 1000 || ContextWindow("ollama", "llama3.1:8b", over, 0) != 8192 {
		t.Error("overrides ignored")
	}
	if MaxOutputTokens("claude-opus-4-1", 1) != 32000 || MaxOutputTokens("mystery", 1) != 1 {
		t.Error("MaxOutputTokens")
	}
}
