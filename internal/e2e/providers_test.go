package e2e

// Issue 3 end to end: the built binary against fake servers speaking each real wire
// format (internal/provider/providertest). The tests read the exact requests the
// server received, the events lovia printed, and every file the run left behind.

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/provider/providertest"
	"github.com/lovia-dev/lovia/internal/usage"
)

// provKind is one wire format under test.
type provKind struct {
	name  string // the --model prefix
	model string
	serve func(testing.TB, ...providertest.Turn) *providertest.Server
	env   []string // extra variables
	// check asserts the shape of the two requests of the session test.
	check func(t *testing.T, first, second map[string]any)
}

var provKinds = []provKind{
	{name: "openai", model: "test-model", serve: providertest.NewOpenAIServer, check: checkChatRequests},
	// A reasoning model, so the adapter asks for encrypted reasoning to replay.
	{name: "openai-responses", model: "gpt-5-mini", serve: providertest.NewResponsesServer, check: checkResponsesRequests},
	{name: "anthropic", model: "claude-sonnet-4-5", serve: providertest.NewAnthropicServer,
		env: []string{"LOVIA_THINKING_BUDGET=16000"}, check: checkAnthropicRequests},
}

// The session every provider runs: turn 1 reasons, says something and calls two
// tools; turn 2 answers.
const (
	provPrompt    = "read notes.txt and say hi from the shell"
	provNotes     = "the notes are here: canary-notes-4711\n"
	provThinking1 = "I should read the notes and run echo."
	provSig1      = "sig-opaque-1/abc=="
	provAnswer    = "The notes mention canary-notes-4711 and the shell said hi."
)

func provSessionTurns() []providertest.Turn {
	return []providertest.Turn{
		{Reasoning: provThinking1, Signature: provSig1, Text: "Let me look.",
			Calls: []providertest.Call{
				{ID: "call_read_1", Name: "read_file", Args: `{"path":"notes.txt"}`},
				{ID: "call_shell_1", Name: "shell", Args: `{"command":"echo hi"}`},
			},
			Usage: usage.Usage{InputTokens: 3000, OutputTokens: 60, CacheWriteTokens: 2800}},
		{Reasoning: "Both tools answered.", Signature: "sig-opaque-2", Text: provAnswer,
			Usage: usage.Usage{InputTokens: 3200, OutputTokens: 25, CachedInputTokens: 2800}},
	}
}

func TestProviderSessions(t *testing.T) {
	for _, k := range provKinds {
		t.Run(k.name, func(t *testing.T) {
			srv := k.serve(t, provSessionTurns()...)
			e := provEnv(t, srv)
			e.vars = append(e.vars, k.env...)
			e.write("notes.txt", provNotes)
			p := provRun(e, 60*time.Second, "run", "-v", "--model", k.name+":"+k.model, "--output", "stream-json",
				"--approve", "all", "--policy", "trusted", "-C", e.dir, provPrompt)
			if p.code != 0 {
				t.Fatalf("exit %d\nstderr: %s\nstdout: %s", p.code, p.stderr, provTail(p.stdout, 3000))
			}
			done := p.terminal(t, "run_completed")
			if got := provStr(done["final_output"]); got != provAnswer {
				t.Errorf("final_output %q, want %q", got, provAnswer)
			}
			// Usage reaches the run totals from each wire format (cached tokens too).
			var u usage.Usage
			raw, _ := json.Marshal(done["usage"])
			_ = json.Unmarshal(raw, &u)
			if u.InputTokens != 6200 || u.OutputTokens != 85 || u.CachedInputTokens != 2800 {
				t.Errorf("run usage %+v, want input 6200 output 85 cached 2800", u)
			}
			outputs := map[string]string{}
			for _, ev := range p.ofType("tool_call_completed") {
				outputs[provStr(ev["call_id"])] = provStr(ev["output"])
			}
			if !strings.Contains(outputs["call_read_1"], "canary-notes-4711") || !strings.HasPrefix(outputs["call_shell_1"], "hi\n") {
				t.Errorf("tool outputs %q", outputs)
			}
			if n := len(p.ofType("tool_call_failed")); n != 0 {
				t.Errorf("%d tool calls failed", n)
			}

			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("the server got %d requests, want 2", len(reqs))
			}
			for _, r := range reqs {
				provCheckKey(t, k.name, r)
			}
			first, second := provBody(t, reqs[0]), provBody(t, reqs[1])
			for i, b := range []map[string]any{first, second} {
				if b["model"] != k.model || b["stream"] != true {
					t.Errorf("request %d: model %v stream %v, want %s streaming", i+1, b["model"], b["stream"], k.model)
				}
				provCheckTools(t, k.name, b)
			}
			k.check(t, first, second)

			if leaks := secretLeaks(t, e, "canary-notes-4711", map[string]string{"stdout": p.stdout, "stderr": p.stderr}); len(leaks) > 0 {
				t.Errorf("the API key leaked into %v", leaks)
			}
		})
	}
}

// provCheckKey: the key reaches the server in the header its API reads.
func provCheckKey(t *testing.T, kind string, r providertest.Request) {
	t.Helper()
	bearer := r.Header.Get("Authorization") == "Bearer "+providertest.APIKey
	if kind == providertest.KindAnthropic {
		// anthropic-sdk-go v2 sends the key as a bearer token; x-api-key is the
		// older form. Either is the key, verbatim, and nothing else carries it.
		if !bearer && r.Header.Get("X-Api-Key") != providertest.APIKey {
			t.Errorf("anthropic request: key in neither Authorization nor X-Api-Key: %v", r.Header)
		}
		if r.Header.Get("Anthropic-Version") == "" {
			t.Errorf("anthropic request without anthropic-version")
		}
		return
	}
	if !bearer {
		t.Errorf("%s request: Authorization %q, want the bearer key", kind, r.Header.Get("Authorization"))
	}
}

// provCheckTools: the workspace tools are declared with their JSON Schemas.
func provCheckTools(t *testing.T, kind string, b map[string]any) {
	t.Helper()
	names := map[string]map[string]any{}
	for _, tl := range provList(b, "tools") {
		name, schema := provStr(tl["name"]), tl["parameters"]
		switch kind {
		case providertest.KindOpenAI:
			fn, _ := tl["function"].(map[string]any)
			if tl["type"] != "function" || fn == nil {
				t.Errorf("chat tool %v is not a function tool", tl)
				continue
			}
			name, schema = provStr(fn["name"]), fn["parameters"]
		case providertest.KindResponses:
			if tl["type"] != "function" {
				t.Errorf("responses tool %v is not a function tool", tl)
			}
		case providertest.KindAnthropic:
			schema = tl["input_schema"]
		}
		s, _ := schema.(map[string]any)
		names[name] = s
	}
	for tool, arg := range map[string]string{"read_file": "path", "shell": "command", "write_file": "content"} {
		s := names[tool]
		props, _ := s["properties"].(map[string]any)
		if s["type"] != "object" || props[arg] == nil {
			t.Errorf("tool %s missing or without its %q argument in the schema: %v (tools: %d)", tool, arg, s, len(names))
		}
	}
}

// provRoles summarizes a chat message list as roles.
func provRoles(msgs []map[string]any) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, provStr(m["role"]))
	}
	return out
}

func checkChatRequests(t *testing.T, first, second map[string]any) {
	m1, m2 := provList(first, "messages"), provList(second, "messages")
	if got := provRoles(m1); !slices.Equal(got, []string{"system", "user"}) {
		t.Fatalf("request 1 roles %v, want [system user]", got)
	}
	if !strings.Contains(provStr(m1[0]["content"]), "lovia") || provStr(m1[1]["content"]) != provPrompt {
		t.Errorf("request 1: system %.80q user %q", provStr(m1[0]["content"]), m1[1]["content"])
	}
	if so, _ := first["stream_options"].(map[string]any); so["include_usage"] != true {
		t.Errorf("stream_options %v, want include_usage", first["stream_options"])
	}
	if got := provRoles(m2); !slices.Equal(got, []string{"system", "user", "assistant", "tool", "tool"}) {
		t.Fatalf("request 2 roles %v", got)
	}
	if !reflect.DeepEqual(m1, m2[:2]) {
		t.Errorf("request 2 does not start with request 1's messages")
	}
	asst := m2[2]
	if provStr(asst["content"]) != "Let me look." {
		t.Errorf("assistant content %q", asst["content"])
	}
	calls := map[string]string{}
	for _, c := range provList(asst, "tool_calls") {
		fn, _ := c["function"].(map[string]any)
		calls[provStr(c["id"])] = provStr(fn["name"]) + " " + provStr(fn["arguments"])
	}
	want := map[string]string{"call_read_1": `read_file {"path":"notes.txt"}`, "call_shell_1": `shell {"command":"echo hi"}`}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("assistant tool_calls %v, want %v", calls, want)
	}
	results := map[string]string{}
	for _, m := range m2[3:] {
		results[provStr(m["tool_call_id"])] = provStr(m["content"])
	}
	provCheckResults(t, results)
	t.Logf("chat: assistant reasoning_content replayed as %q", asst["reasoning_content"])
}

// provCheckResults: one result per call id, each the output of that call.
func provCheckResults(t *testing.T, results map[string]string) {
	t.Helper()
	if len(results) != 2 || !strings.Contains(results["call_read_1"], "canary-notes-4711") || !strings.HasPrefix(results["call_shell_1"], "hi\n") {
		t.Errorf("tool results by call id: %q", results)
	}
}

func provItemTypes(items []map[string]any) []string {
	var out []string
	for _, it := range items {
		typ := provStr(it["type"])
		if typ == "" || typ == "message" {
			typ = "message:" + provStr(it["role"])
		}
		out = append(out, typ)
	}
	return out
}

func checkResponsesRequests(t *testing.T, first, second map[string]any) {
	if !strings.Contains(provStr(first["instructions"]), "lovia") || first["instructions"] != second["instructions"] {
		t.Errorf("instructions %.80q / %.80q: want the same system prompt on both", first["instructions"], second["instructions"])
	}
	if first["store"] != false {
		t.Errorf("store %v, want false (stateless replay)", first["store"])
	}
	if inc, _ := first["include"].([]any); !slices.Contains(inc, any("reasoning.encrypted_content")) {
		t.Errorf("include %v lacks reasoning.encrypted_content: reasoning could not be replayed with store=false", first["include"])
	}
	in1, in2 := provList(first, "input"), provList(second, "input")
	if got := provItemTypes(in1); !slices.Equal(got, []string{"message:user"}) || provStr(in1[0]["content"]) != provPrompt {
		t.Fatalf("request 1 input %v", in1)
	}
	want := []string{"message:user", "reasoning", "message:assistant", "function_call", "function_call", "function_call_output", "function_call_output"}
	if got := provItemTypes(in2); !slices.Equal(got, want) {
		t.Fatalf("request 2 input types %v, want %v", got, want)
	}
	if !reflect.DeepEqual(in1, in2[:1]) {
		t.Errorf("request 2 does not start with request 1's input")
	}
	rs := in2[1]
	var summary []string
	for _, s := range provList(rs, "summary") {
		summary = append(summary, provStr(s["text"]))
	}
	if rs["encrypted_content"] != provSig1 || !slices.Equal(summary, []string{provThinking1}) {
		t.Errorf("reasoning item not replayed: %v", rs)
	}
	calls := map[string]string{}
	for _, it := range in2[3:5] {
		calls[provStr(it["call_id"])] = provStr(it["name"]) + " " + provStr(it["arguments"])
	}
	if !reflect.DeepEqual(calls, map[string]string{"call_read_1": `read_file {"path":"notes.txt"}`, "call_shell_1": `shell {"command":"echo hi"}`}) {
		t.Errorf("function calls %v", calls)
	}
	results := map[string]string{}
	for _, it := range in2[5:] {
		results[provStr(it["call_id"])] = provStr(it["output"])
	}
	provCheckResults(t, results)
}

// provBlocks returns a message's content blocks (a string is one text block).
func provBlocks(m map[string]any) []map[string]any {
	if s, ok := m["content"].(string); ok {
		return []map[string]any{{"type": "text", "text": s}}
	}
	return provList(m, "content")
}

// provCacheMarks lists where cache_control breakpoints are: "system", "tools[i]",
// "messages[i].j".
func provCacheMarks(b map[string]any) []string {
	var out []string
	for i, s := range provList(b, "system") {
		if s["cache_control"] != nil {
			out = append(out, fmt.Sprintf("system[%d]", i))
		}
	}
	for i, tl := range provList(b, "tools") {
		if tl["cache_control"] != nil {
			out = append(out, fmt.Sprintf("tools[%d]", i))
		}
	}
	for i, m := range provList(b, "messages") {
		for j, blk := range provBlocks(m) {
			if blk["cache_control"] != nil {
				out = append(out, fmt.Sprintf("messages[%d].%d", i, j))
			}
		}
	}
	return out
}

// provNoCache drops cache_control keys (they move as the prefix grows and are not
// part of what the model reads).
func provNoCache(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, val := range x {
			if k != "cache_control" {
				out[k] = provNoCache(val)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = provNoCache(val)
		}
		return out
	}
	return v
}

func checkAnthropicRequests(t *testing.T, first, second map[string]any) {
	for i, b := range []map[string]any{first, second} {
		sys := provList(b, "system")
		var text strings.Builder
		for _, s := range sys {
			text.WriteString(provStr(s["text"]))
		}
		if !strings.Contains(text.String(), "lovia") {
			t.Errorf("request %d: no system prompt: %v", i+1, b["system"])
		}
		th, _ := b["thinking"].(map[string]any)
		if th["type"] != "enabled" || th["budget_tokens"] != float64(16000) {
			t.Errorf("request %d: thinking %v, want enabled with budget 16000 (LOVIA_THINKING_BUDGET)", i+1, b["thinking"])
		}
		if mt, _ := b["max_tokens"].(float64); mt <= 16000 {
			t.Errorf("request %d: max_tokens %v must exceed the thinking budget", i+1, b["max_tokens"])
		}
		marks := provCacheMarks(b)
		tools := provList(b, "tools")
		if !slices.Contains(marks, fmt.Sprintf("system[%d]", len(sys)-1)) || !slices.Contains(marks, fmt.Sprintf("tools[%d]", len(tools)-1)) {
			t.Errorf("request %d: cache breakpoints %v, want the last system block and the last tool", i+1, marks)
		}
		if len(marks) > 4 {
			t.Errorf("request %d: %d cache breakpoints; the API allows 4", i+1, len(marks))
		}
		// The last block is written to the cache, for the next request to read.
		msgs := provList(b, "messages")
		lastMark := fmt.Sprintf("messages[%d].%d", len(msgs)-1, len(provBlocks(msgs[len(msgs)-1]))-1)
		if !slices.Contains(marks, lastMark) {
			t.Errorf("request %d: cache breakpoints %v lack the last block %s", i+1, marks, lastMark)
		}
	}
	m1, m2 := provList(first, "messages"), provList(second, "messages")
	if got := provRoles(m1); !slices.Equal(got, []string{"user"}) {
		t.Fatalf("request 1 roles %v", got)
	}
	if got := provRoles(m2); !slices.Equal(got, []string{"user", "assistant", "user"}) {
		t.Fatalf("request 2 roles %v, want [user assistant user]", got)
	}
	if !reflect.DeepEqual(provNoCache(first["messages"]), provNoCache(second["messages"].([]any)[:1])) {
		t.Errorf("request 2 does not start with request 1's messages")
	}
	// The stable prefix (what request 1 sent) ends with a breakpoint in request 2.
	var inPrefix bool
	for _, m := range provCacheMarks(second) {
		var i, j int
		if _, err := fmt.Sscanf(m, "messages[%d].%d", &i, &j); err == nil && i < len(m1) {
			inPrefix = true
		}
	}
	if !inPrefix {
		t.Errorf("request 2: cache breakpoints %v, want one at the end of the stable prefix (messages[0])", provCacheMarks(second))
	}
	var types []string
	blocks := provBlocks(m2[1])
	for _, blk := range blocks {
		types = append(types, provStr(blk["type"]))
	}
	if !slices.Equal(types, []string{"thinking", "text", "tool_use", "tool_use"}) {
		t.Fatalf("assistant blocks %v, want [thinking text tool_use tool_use]", types)
	}
	if blocks[0]["signature"] != provSig1 || blocks[0]["thinking"] != provThinking1 {
		t.Errorf("thinking not replayed with its signature: %v", blocks[0])
	}
	calls := map[string]string{}
	for _, blk := range blocks[2:] {
		args, _ := json.Marshal(blk["input"])
		calls[provStr(blk["id"])] = provStr(blk["name"]) + " " + string(args)
	}
	if !reflect.DeepEqual(calls, map[string]string{"call_read_1": `read_file {"path":"notes.txt"}`, "call_shell_1": `shell {"command":"echo hi"}`}) {
		t.Errorf("tool_use blocks %v", calls)
	}
	results := map[string]string{}
	for _, blk := range provBlocks(m2[2]) {
		if blk["type"] != "tool_result" {
			t.Errorf("user turn after tool use holds a %v block", blk["type"])
			continue
		}
		var text strings.Builder
		if s, ok := blk["content"].(string); ok {
			text.WriteString(s)
		}
		for _, c := range provList(blk, "content") {
			text.WriteString(provStr(c["text"]))
		}
		results[provStr(blk["tool_use_id"])] = text.String()
	}
	provCheckResults(t, results)
}

// provRunKind runs the standard flags against kind with a prompt; extra flags go
// before the prompt.
func provRunKind(e *env, k provKind, extra ...string) provProc {
	e.t.Helper()
	args := append([]string{"run", "--model", k.name + ":" + k.model, "--output", "stream-json", "--approve", "all", "--policy", "trusted"}, extra...)
	return provRun(e, 60*time.Second, append(args, "say hello")...)
}

// TestProviderRetries: a 429 with retry-after is waited out and retried with the
// same request, with nothing discarded; a connection cut after some deltas
// restarts the stream, announced by output_discarded, and the run succeeds with
// only the second attempt's text.
func TestProviderRetries(t *testing.T) {
	for _, k := range provKinds {
		t.Run(k.name+"/429 retry-after", func(t *testing.T) {
			t.Parallel()
			srv := k.serve(t,
				providertest.Turn{Status: 429, Message: "rate limited for key " + providertest.APIKey, Header: map[string][]string{"Retry-After": {"2"}}},
				providertest.Turn{Text: "hello after waiting"})
			front := newTimedServer(t, srv.Config.Handler)
			e := provEnv(t, srv)
			pointAt(e, k.name, front.URL)
			p := provRunKind(e, k, "-v")
			if p.code != 0 {
				t.Fatalf("exit %d\nstderr: %s", p.code, p.stderr)
			}
			// The retry is logged with the server's message, which quoted the key.
			if leaks := secretLeaks(t, e, "retrying", map[string]string{"stdout": p.stdout, "stderr": p.stderr}); len(leaks) > 0 {
				t.Errorf("the API key leaked into %v", leaks)
			}
			if got := provStr(p.terminal(t, "run_completed")["final_output"]); got != "hello after waiting" {
				t.Errorf("final output %q", got)
			}
			for _, typ := range []string{"run_failed", "output_discarded", "tool_call_failed"} {
				if n := len(p.ofType(typ)); n != 0 {
					t.Errorf("%d %s events", n, typ)
				}
			}
			reqs, at := srv.Requests(), front.arrivals()
			if len(reqs) != 2 || len(at) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			if string(reqs[0].Body) != string(reqs[1].Body) {
				t.Errorf("the retry sent a different request")
			}
			// The backoff alone is at most 1 s; the server asked for 2.
			if gap := at[1].Sub(at[0]); gap < 1900*time.Millisecond {
				t.Errorf("retried after %s; retry-after asked for 2s", gap)
			}
		})
		t.Run(k.name+"/cut mid-stream", func(t *testing.T) {
			t.Parallel()
			first := providertest.Turn{Text: "this partial answer must be thrown away entirely"}
			// Cut two thirds into the encoded stream: past several text deltas.
			var enc []byte
			switch k.name {
			case providertest.KindOpenAI:
				enc = providertest.OpenAIStream(first, 1)
			case providertest.KindResponses:
				enc = providertest.ResponsesStream(first, 1)
			default:
				enc = providertest.AnthropicStream(first, 1)
			}
			first.CutAfter = len(enc) * 2 / 3
			srv := k.serve(t, first, providertest.Turn{Text: "the complete second answer"})
			e := provEnv(t, srv)
			p := provRunKind(e, k)
			if p.code != 0 {
				t.Fatalf("exit %d\nstderr: %s", p.code, p.stderr)
			}
			done := p.terminal(t, "run_completed")
			if got := provStr(done["final_output"]); got != "the complete second answer" {
				t.Errorf("final output %q", got)
			}
			// Deltas, then the discard, then the second attempt's deltas only.
			var before, after strings.Builder
			discards := 0
			for _, ev := range p.events {
				switch ev["type"] {
				case "output_discarded":
					discards++
					if provStr(ev["text"]) == "" {
						t.Errorf("output_discarded without a reason")
					}
				case "text_delta":
					if discards == 0 {
						before.WriteString(provStr(ev["text"]))
					} else {
						after.WriteString(provStr(ev["text"]))
					}
				}
			}
			if discards != 1 || before.Len() == 0 || !strings.HasPrefix(first.Text, before.String()) || after.String() != "the complete second answer" {
				t.Errorf("discards %d, text before %q, after %q", discards, before.String(), after.String())
			}
			if n := len(srv.Requests()); n != 2 {
				t.Errorf("%d requests, want 2", n)
			}
			if msgs := p.ofType("message_completed"); len(msgs) != 1 || provStr(msgs[0]["text"]) != "the complete second answer" {
				t.Errorf("message_completed events %v", msgs)
			}
		})
	}
}

// TestProviderErrors: what a user sees when the key is refused or missing, or the
// provider prefix is wrong; the key never shows.
func TestProviderErrors(t *testing.T) {
	for _, k := range provKinds {
		keyVar := "OPENAI_API_KEY"
		if k.name == providertest.KindAnthropic {
			keyVar = "ANTHROPIC_API_KEY"
		}
		t.Run(k.name+"/401", func(t *testing.T) {
			t.Parallel()
			// A server that echoes the whole key back: lovia must redact it.
			srv := k.serve(t, providertest.Turn{Status: 401, Message: "Incorrect API key provided: " + providertest.APIKey})
			e := provEnv(t, srv)
			p := provRunKind(e, k, "-v")
			if p.code != 1 {
				t.Fatalf("exit %d, want 1\nstderr: %s", p.code, p.stderr)
			}
			failed := p.terminal(t, "run_failed")
			if !strings.Contains(p.stderr, keyVar) || !strings.Contains(strings.ToLower(p.stderr), "refused") {
				t.Errorf("stderr %q should say the key in %s was refused", p.stderr, keyVar)
			}
			if errObj, _ := failed["error"].(map[string]any); !strings.Contains(provStr(errObj["message"])+provStr(errObj["hint"]), keyVar) {
				t.Errorf("run_failed error %v does not name %s", failed["error"], keyVar)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests: a refused key must not be retried", n)
			}
			if leaks := secretLeaks(t, e, "say hello", map[string]string{"stdout": p.stdout, "stderr": p.stderr}); len(leaks) > 0 {
				t.Errorf("the API key leaked into %v", leaks)
			}
		})
		t.Run(k.name+"/missing key", func(t *testing.T) {
			t.Parallel()
			e := provEnv(t, nil) // no key, default (internet) base URL: nothing may be sent
			p := provRunKind(e, k)
			// A missing key is a configuration error: exit 2 (SPEC §1).
			if p.code != 2 {
				t.Fatalf("exit %d, want 2\nstderr: %s", p.code, p.stderr)
			}
			p.terminal(t, "run_failed")
			if !strings.Contains(p.stderr, keyVar+" is not set") || !strings.Contains(p.stderr, "export "+keyVar+"=") {
				t.Errorf("stderr %q should name %s and how to set it", p.stderr, keyVar)
			}
		})
	}
	t.Run("keyless compatible server", func(t *testing.T) {
		// A local OpenAI-compatible server (llama.cpp, vLLM) needs no key.
		srv := providertest.NewOpenAIServer(t, providertest.Turn{Text: "local hello"})
		e := provEnv(t, srv)
		for i, v := range e.vars {
			if strings.HasPrefix(v, "OPENAI_API_KEY=") {
				e.vars = slices.Delete(e.vars, i, i+1)
				break
			}
		}
		p := provRunKind(e, provKinds[0])
		if p.code != 0 {
			t.Fatalf("exit %d\nstderr: %s", p.code, p.stderr)
		}
		if reqs := srv.Requests(); len(reqs) != 1 || strings.TrimSpace(strings.TrimPrefix(reqs[0].Header.Get("Authorization"), "Bearer")) != "" {
			t.Errorf("requests %d, Authorization %q", len(reqs), reqs[0].Header.Get("Authorization"))
		}
	})
	t.Run("unknown provider", func(t *testing.T) {
		e := provEnv(t, nil)
		p := provRun(e, 30*time.Second, "run", "--model", "gemini:pro", "--output", "stream-json", "hi")
		if p.code != 2 {
			t.Fatalf("exit %d, want 2\nstderr: %s", p.code, p.stderr)
		}
		for _, want := range []string{`"gemini"`, "anthropic", "ollama", "openai", "openai-responses", "script"} {
			if !strings.Contains(p.stderr, want) {
				t.Errorf("stderr %q lacks %s", p.stderr, want)
			}
		}
	})
}
