package builtin

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/provider"
	pt "github.com/lovia-dev/lovia/internal/provider/providertest"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

func TestRegister(t *testing.T) {
	vars := map[string]string{"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}
	r := provider.NewRegistry(provider.Env{Getenv: func(k string) string { return vars[k] }})
	Register(r)
	for spec, prefix := range map[string]string{
		"openai:gpt-4.1": "openai", "oai:gpt-4o": "openai", "openai-chat:gpt-4o": "openai",
		"openai-responses:o3": "openai-responses", "anthropic:claude-sonnet-4-5": "anthropic",
		"claude:claude-opus-4-1": "anthropic", "ollama:llama3.2": "ollama",
	} {
		p, err := r.Resolve(context.Background(), spec)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if p.Info().Provider != prefix || p.Info().ContextWindow <= 0 {
			t.Errorf("%s: info %+v", spec, p.Info())
		}
	}
	_, err := r.Resolve(context.Background(), "gemini:pro")
	if errs.KindOf(err) != errs.KindConfig || !strings.Contains(errs.HintOf(err), "openai-responses") {
		t.Errorf("unknown prefix: %v (hint %q)", err, errs.HintOf(err))
	}
}

// A multi-turn tool-using session against each fake server, through the
// registry and the retry policy (with one transient failure on the way): the
// second request must carry the call and its result paired by id.
func TestToolLoopEachWireFormat(t *testing.T) {
	turns := func() []pt.Turn {
		return []pt.Turn{
			{Status: 503, Message: "warming up"},
			{Reasoning: "I need the file.", Text: "Reading it.", Calls: []pt.Call{{ID: "call_1", Name: "read_file", Args: `{"path":"go.mod"}`}},
				Usage: usage.Usage{InputTokens: 100, OutputTokens: 10}},
			{Text: "It declares module lovia.", Usage: usage.Usage{InputTokens: 150, CachedInputTokens: 100, OutputTokens: 8}},
		}
	}
	servers := map[string]*pt.Server{
		"openai:gpt-4.1":              pt.NewOpenAIServer(t, turns()...),
		"openai-responses:o4-mini":    pt.NewResponsesServer(t, turns()...),
		"anthropic:claude-sonnet-4-5": pt.NewAnthropicServer(t, turns()...),
	}
	for spec, srv := range servers {
		t.Run(spec, func(t *testing.T) {
			r := provider.NewRegistry(srv.Env())
			Register(r)
			p, err := r.Resolve(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			pol := provider.DefaultRetryPolicy()
			pol.Sleep = func(ctx context.Context, d time.Duration) error { return ctx.Err() }
			p = provider.WithRetry(p, pol)
			tools := []provider.ToolDef{{Name: "read_file", Description: "Read a file",
				Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}}
			req := provider.Request{System: "You are lovia.", Tools: tools,
				Entries: []transcript.Entry{transcript.UserInput("What module is this?")}}

			r1 := pt.Collect(context.Background(), p, req)
			if r1.Err != nil || r1.Finish != "tool_calls" {
				t.Fatalf("turn 1: %+v", r1)
			}
			var call transcript.Entry
			for _, e := range r1.Entries {
				if e.Type == transcript.TypeToolCall {
					call = e
				}
			}
			if call.CallID != "call_1" || string(call.Args) != `{"path":"go.mod"}` {
				t.Fatalf("call %+v", call)
			}
			req.Entries = append(req.Entries, r1.Entries...)
			req.Entries = append(req.Entries, transcript.ToolResult("call_1", "read_file", "module lovia", false))
			req.StablePrefix = len(req.Entries)
			r2 := pt.Collect(context.Background(), p, req)
			if r2.Err != nil || r2.Text != "It declares module lovia." || r2.Finish != "stop" {
				t.Fatalf("turn 2: %+v", r2)
			}
			if r2.Usage == nil || r2.Usage.InputTokens != 150 || r2.Usage.CachedInputTokens != 100 {
				t.Errorf("usage %+v", r2.Usage)
			}
			reqs := srv.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests, want 3 (one retried)", len(reqs))
			}
			body := string(reqs[2].Body)
			callAt := strings.Index(body, `"call_1"`)
			resultAt := strings.Index(body, "module lovia")
			if callAt < 0 || resultAt < callAt {
				t.Errorf("call/result not paired in order: %s", body)
			}
			switch srv.Kind {
			case pt.KindAnthropic:
				if n := strings.Count(body, `"cache_control"`); n != 3 {
					t.Errorf("%d cache_control markers, want 3 (system, last tool, prefix end): %s", n, body)
				}
				if !strings.Contains(body, `"signature":"sig-2"`) {
					t.Errorf("thinking signature not replayed: %s", body)
				}
			case pt.KindResponses:
				if !strings.Contains(body, `"encrypted_content":"enc-2"`) {
					t.Errorf("reasoning item not replayed: %s", body)
				}
			case pt.KindOpenAI:
				if !strings.Contains(body, `"tool_call_id":"call_1"`) || !strings.Contains(body, `"role":"tool"`) {
					t.Errorf("tool message missing: %s", body)
				}
			}
			for _, q := range reqs {
				for k, vs := range q.Header {
					if strings.EqualFold(k, "Authorization") || strings.EqualFold(k, "X-Api-Key") {
						continue
					}
					for _, v := range vs {
						if strings.Contains(v, pt.APIKey) {
							t.Errorf("key sent in header %s", k)
						}
					}
				}
			}
		})
	}
}
