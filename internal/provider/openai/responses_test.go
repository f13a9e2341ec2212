package openai

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/provider"
	pt "github.com/lovia-dev/lovia/internal/provider/providertest"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

func responsesFor(t testing.TB, srv *pt.Server, model string) provider.Provider {
	t.Helper()
	p, err := ResponsesFactory(context.Background(), model, srv.Env())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestResponsesFixtures(t *testing.T) {
	tests := []struct {
		file      string
		text      string
		reasoning string
		announced []string
		entries   []transcript.Entry
		usage     *usage.Usage
		finish    string
	}{
		{file: "text.sse", text: "Hi there!", entries: []transcript.Entry{transcript.AssistantText("Hi there!")},
			usage: &usage.Usage{InputTokens: 312, OutputTokens: 4, CachedInputTokens: 256, Requests: 1}, finish: "stop"},
		{file: "reasoning_calls.sse", reasoning: "**Planning** read two files.", announced: []string{"call_X1:read_file", "call_X2:read_file"},
			entries: []transcript.Entry{
				{Type: transcript.TypeReasoning, Text: "**Planning** read two files.", ProviderID: "rs_abc", Encrypted: "gAAAAABoENCRYPTED==", Provider: "openai-responses"},
				transcript.ToolCall("call_X1", "read_file", json.RawMessage(`{"path":"a.go"}`)),
				transcript.ToolCall("call_X2", "read_file", json.RawMessage(`{"path":"b.go"}`)),
			},
			usage: &usage.Usage{InputTokens: 900, OutputTokens: 120, ReasoningTokens: 64, Requests: 1}, finish: "tool_calls"},
		{file: "incomplete.sse", text: "Truncated ans", entries: []transcript.Entry{transcript.AssistantText("Truncated ans")},
			usage: &usage.Usage{InputTokens: 10, OutputTokens: 16, Requests: 1}, finish: "length"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			srv := pt.NewResponsesServer(t, pt.Turn{Raw: fixture(t, "openai-responses", tt.file)})
			r := pt.Collect(context.Background(), responsesFor(t, srv, "o4-mini"), userReq("hi"))
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

func TestResponsesFailures(t *testing.T) {
	tests := []struct {
		file  string
		check func(error) bool
	}{
		{"failed.sse", func(err error) bool {
			var he *provider.HTTPError
			return errors.As(err, &he) && he.Status == 500 && he.Retryable() && strings.Contains(he.Message, "failed to generate")
		}},
		{"error_event.sse", func(err error) bool { return errors.Is(err, provider.ErrContextOverflow) }},
		{"malformed.sse", func(err error) bool {
			var he *provider.HTTPError
			return errors.As(err, &he) && he.Protocol && he.Status == 0 && strings.Contains(err.Error(), "protocol error")
		}},
		{"cut.sse", func(err error) bool { return errors.Is(err, provider.ErrStreamCut) }},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			srv := pt.NewResponsesServer(t, pt.Turn{Raw: fixture(t, "openai-responses", tt.file)})
			r := pt.Collect(context.Background(), responsesFor(t, srv, "gpt-4.1"), userReq("hi"))
			if r.Err == nil || !tt.check(r.Err) {
				t.Errorf("got %#v", r.Err)
			}
		})
	}
}

// A two-turn tool loop: the reasoning item of turn 1 (id + encrypted content)
// must be sent back in turn 2, before its function calls, with the outputs
// paired by call id.
func TestResponsesReasoningReplay(t *testing.T) {
	srv := pt.NewResponsesServer(t,
		pt.Turn{Reasoning: "need the file", Signature: "ENC-1", Calls: []pt.Call{{ID: "call_1", Name: "read_file", Args: `{"path":"x"}`}}},
		pt.Turn{Text: "It says hello."})
	p := responsesFor(t, srv, "o3")
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)
	req := provider.Request{System: "SYS", Entries: []transcript.Entry{transcript.UserInput("what is in x?")},
		Tools: []provider.ToolDef{{Name: "read_file", Description: "Read", Schema: schema}}}
	r1 := pt.Collect(context.Background(), p, req)
	if r1.Err != nil || len(r1.Entries) != 2 {
		t.Fatalf("turn 1: %+v", r1)
	}
	req.Entries = append(req.Entries, r1.Entries...)
	req.Entries = append(req.Entries,
		transcript.Entry{Type: transcript.TypeReasoning, Text: "foreign", Signature: "s", Provider: "anthropic"},
		transcript.ToolResult("call_1", "read_file", "hello", false))
	r2 := pt.Collect(context.Background(), p, req)
	if r2.Err != nil || r2.Text != "It says hello." {
		t.Fatalf("turn 2: %+v", r2)
	}
	body := srv.Requests()[1].JSON()
	if body["instructions"] != "SYS" || body["store"] != false || body["stream"] != true || body["model"] != "o3" {
		t.Errorf("top level: %v", body)
	}
	if inc, _ := body["include"].([]any); len(inc) != 1 || inc[0] != "reasoning.encrypted_content" {
		t.Errorf("include %v", body["include"])
	}
	if rs, _ := body["reasoning"].(map[string]any); rs["summary"] != "auto" {
		t.Errorf("reasoning %v", body["reasoning"])
	}
	input, _ := json.Marshal(body["input"])
	want := `[
		{"content":"what is in x?","role":"user"},
		{"id":"rs_1_0","summary":[{"text":"need the file","type":"summary_text"}],"encrypted_content":"ENC-1","type":"reasoning"},
		{"arguments":"{\"path\":\"x\"}","call_id":"call_1","name":"read_file","type":"function_call"},
		{"call_id":"call_1","output":"hello","type":"function_call_output"}]`
	if !jsonEqual(t, input, want) {
		t.Errorf("input\n got %s\nwant %s", input, want)
	}
	tools, _ := json.Marshal(body["tools"])
	if !jsonEqual(t, tools, `[{"type":"function","name":"read_file","description":"Read","strict":false,"parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}]`) {
		t.Errorf("tools %s", tools)
	}
}

func TestResponsesPlainModel(t *testing.T) {
	srv := pt.NewResponsesServer(t, pt.Turn{Text: "ok"})
	r := pt.Collect(context.Background(), responsesFor(t, srv, "gpt-4.1"), provider.Request{
		Entries: []transcript.Entry{transcript.UserInput("go")}, OutputSchema: json.RawMessage(`{"type":"object","properties":{}}`)})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	body := srv.Requests()[0].JSON()
	if _, ok := body["reasoning"]; ok {
		t.Error("reasoning params sent to a non-reasoning model")
	}
	format, _ := json.Marshal(body["text"])
	if !strings.Contains(string(format), `"type":"json_schema"`) || !strings.Contains(string(format), `"name":"final_output"`) {
		t.Errorf("text format %s", format)
	}
}
