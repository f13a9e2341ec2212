package providertest

import (
	"fmt"
	"strings"
)

// OpenAIStream encodes t as a Chat Completions stream, as api.openai.com sends
// it: a role chunk, reasoning_content and content deltas, tool calls (id and
// name first, then argument pieces, by index), a finish chunk, a usage chunk
// (stream_options.include_usage) and [DONE]. n numbers the turn (ids).
func OpenAIStream(t Turn, n int) []byte {
	var b strings.Builder
	b.Grow(len(t.Text)*40 + 1024)
	head := fmt.Sprintf(`{"id":"chatcmpl-%d","object":"chat.completion.chunk","created":1700000000,"model":"fake","system_fingerprint":"fp_1","choices":[{"index":0,"delta":`, n)
	chunk := func(delta, finish string) {
		sse(&b, "", head+delta+`,"logprobs":null,"finish_reason":`+finish+`}]}`)
	}
	chunk(`{"role":"assistant","content":"","refusal":null}`, "null")
	for _, p := range pieces(t.Reasoning, t.Chunk) {
		chunk(`{"reasoning_content":`+jstr(p)+`}`, "null")
	}
	for _, p := range pieces(t.Text, t.Chunk) {
		chunk(`{"content":`+jstr(p)+`}`, "null")
	}
	for i, c := range t.Calls {
		chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":%s,"type":"function","function":{"name":%s,"arguments":""}}]}`, i, jstr(c.ID), jstr(c.Name)), "null")
		for _, p := range pieces(c.Args, t.Chunk) {
			chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"function":{"arguments":%s}}]}`, i, jstr(p)), "null")
		}
	}
	finish := `"stop"`
	if len(t.Calls) > 0 {
		finish = `"tool_calls"`
	}
	chunk(`{}`, finish)
	u := t.Usage
	sse(&b, "", fmt.Sprintf(`{"id":"chatcmpl-%d","object":"chat.completion.chunk","created":1700000000,"model":"fake","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":%d,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":%d,"audio_tokens":0}}}`,
		n, u.InputTokens, u.OutputTokens, u.InputTokens+u.OutputTokens, u.CachedInputTokens, u.ReasoningTokens))
	sse(&b, "", "[DONE]")
	return []byte(b.String())
}

// ResponsesStream encodes t as a Responses API stream: reasoning item (summary
// deltas, encrypted content on done), message item (output_text deltas),
// function_call items (argument deltas), response.completed with usage.
func ResponsesStream(t Turn, n int) []byte {
	var b strings.Builder
	b.Grow(len(t.Text)*40 + 1024)
	seq := 0
	ev := func(typ, body string) {
		seq++
		sse(&b, typ, fmt.Sprintf(`{"type":%q,"sequence_number":%d,%s}`, typ, seq, body))
	}
	resp := fmt.Sprintf(`"id":"resp_%d","object":"response","created_at":1700000000,"model":"fake"`, n)
	ev("response.created", `"response":{`+resp+`,"status":"in_progress","output":[]}`)
	ev("response.in_progress", `"response":{`+resp+`,"status":"in_progress","output":[]}`)
	out := 0
	if t.Reasoning != "" || t.Signature != "" {
		id := fmt.Sprintf("rs_%d_%d", n, out)
		enc := t.Signature
		if enc == "" {
			enc = fmt.Sprintf("enc-%d", n)
		}
		ev("response.output_item.added", fmt.Sprintf(`"output_index":%d,"item":{"id":%q,"type":"reasoning","summary":[]}`, out, id))
		if t.Reasoning != "" {
			ev("response.reasoning_summary_part.added", fmt.Sprintf(`"item_id":%q,"output_index":%d,"summary_index":0,"part":{"type":"summary_text","text":""}`, id, out))
			for _, p := range pieces(t.Reasoning, t.Chunk) {
				ev("response.reasoning_summary_text.delta", fmt.Sprintf(`"item_id":%q,"output_index":%d,"summary_index":0,"delta":%s`, id, out, jstr(p)))
			}
			ev("response.reasoning_summary_text.done", fmt.Sprintf(`"item_id":%q,"output_index":%d,"summary_index":0,"text":%s`, id, out, jstr(t.Reasoning)))
		}
		summary := "[]"
		if t.Reasoning != "" {
			summary = `[{"type":"summary_text","text":` + jstr(t.Reasoning) + `}]`
		}
		ev("response.output_item.done", fmt.Sprintf(`"output_index":%d,"item":{"id":%q,"type":"reasoning","summary":%s,"encrypted_content":%s}`, out, id, summary, jstr(enc)))
		out++
	}
	if t.Text != "" {
		id := fmt.Sprintf("msg_%d_%d", n, out)
		ev("response.output_item.added", fmt.Sprintf(`"output_index":%d,"item":{"id":%q,"type":"message","status":"in_progress","role":"assistant","content":[]}`, out, id))
		ev("response.content_part.added", fmt.Sprintf(`"item_id":%q,"output_index":%d,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}`, id, out))
		for _, p := range pieces(t.Text, t.Chunk) {
			ev("response.output_text.delta", fmt.Sprintf(`"item_id":%q,"output_index":%d,"content_index":0,"delta":%s,"logprobs":[]`, id, out, jstr(p)))
		}
		ev("response.output_text.done", fmt.Sprintf(`"item_id":%q,"output_index":%d,"content_index":0,"text":%s`, id, out, jstr(t.Text)))
		ev("response.output_item.done", fmt.Sprintf(`"output_index":%d,"item":{"id":%q,"type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":%s,"annotations":[]}]}`, out, id, jstr(t.Text)))
		out++
	}
	for _, c := range t.Calls {
		id := fmt.Sprintf("fc_%d_%d", n, out)
		ev("response.output_item.added", fmt.Sprintf(`"output_index":%d,"item":{"id":%q,"type":"function_call","status":"in_progress","call_id":%s,"name":%s,"arguments":""}`, out, id, jstr(c.ID), jstr(c.Name)))
		for _, p := range pieces(c.Args, t.Chunk) {
			ev("response.function_call_arguments.delta", fmt.Sprintf(`"item_id":%q,"output_index":%d,"delta":%s`, id, out, jstr(p)))
		}
		ev("response.function_call_arguments.done", fmt.Sprintf(`"item_id":%q,"output_index":%d,"arguments":%s`, id, out, jstr(c.Args)))
		ev("response.output_item.done", fmt.Sprintf(`"output_index":%d,"item":{"id":%q,"type":"function_call","status":"completed","call_id":%s,"name":%s,"arguments":%s}`, out, id, jstr(c.ID), jstr(c.Name), jstr(c.Args)))
		out++
	}
	u := t.Usage
	ev("response.completed", fmt.Sprintf(`"response":{%s,"status":"completed","usage":{"input_tokens":%d,"input_tokens_details":{"cached_tokens":%d},"output_tokens":%d,"output_tokens_details":{"reasoning_tokens":%d},"total_tokens":%d}}`,
		resp, u.InputTokens, u.CachedInputTokens, u.OutputTokens, u.ReasoningTokens, u.InputTokens+u.OutputTokens))
	return []byte(b.String())
}

// AnthropicStream encodes t as a Messages stream: message_start (input and
// cache usage), a thinking block (thinking + signature deltas), a text block,
// tool_use blocks (input_json_delta pieces), message_delta, message_stop.
func AnthropicStream(t Turn, n int) []byte {
	var b strings.Builder
	b.Grow(len(t.Text)*40 + 1024)
	u := t.Usage
	in := max(u.InputTokens-u.CachedInputTokens-u.CacheWriteTokens, 0)
	sse(&b, "message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_%d","type":"message","role":"assistant","model":"fake","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":1}}}`,
		n, in, u.CacheWriteTokens, u.CachedInputTokens))
	sse(&b, "ping", `{"type": "ping"}`)
	idx := 0
	block := func(start string, deltas []string) {
		sse(&b, "content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":%s}`, idx, start))
		for _, d := range deltas {
			sse(&b, "content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":%s}`, idx, d))
		}
		sse(&b, "content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, idx))
		idx++
	}
	if t.Reasoning != "" {
		sig := t.Signature
		if sig == "" {
			sig = fmt.Sprintf("sig-%d", n)
		}
		var ds []string
		for _, p := range pieces(t.Reasoning, t.Chunk) {
			ds = append(ds, `{"type":"thinking_delta","thinking":`+jstr(p)+`}`)
		}
		ds = append(ds, `{"type":"signature_delta","signature":`+jstr(sig)+`}`)
		block(`{"type":"thinking","thinking":"","signature":""}`, ds)
	}
	if t.Text != "" {
		ps := pieces(t.Text, t.Chunk)
		ds := make([]string, 0, len(ps))
		for _, p := range ps {
			ds = append(ds, `{"type":"text_delta","text":`+jstr(p)+`}`)
		}
		block(`{"type":"text","text":""}`, ds)
	}
	for _, c := range t.Calls {
		var ds []string
		for _, p := range pieces(c.Args, t.Chunk) {
			ds = append(ds, `{"type":"input_json_delta","partial_json":`+jstr(p)+`}`)
		}
		block(fmt.Sprintf(`{"type":"tool_use","id":%s,"name":%s,"input":{}}`, jstr(c.ID), jstr(c.Name)), ds)
	}
	stop := "end_turn"
	if len(t.Calls) > 0 {
		stop = "tool_use"
	}
	sse(&b, "message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`, stop, u.OutputTokens))
	sse(&b, "message_stop", `{"type":"message_stop"}`)
	return []byte(b.String())
}
