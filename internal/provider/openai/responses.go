package openai

import (
	"context"
	"io"
	"iter"
	"net/http"
	"strings"

	oa "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

// Responses is the Responses API adapter ("openai-responses:"). It runs stateless
// (store=false): reasoning items come back with their encrypted content, are kept
// as reasoning entries (ProviderID = item id, Encrypted = encrypted_content) and
// sent back on later turns, so the model keeps its chain of thought across tool
// calls without server-side state.
type Responses struct {
	model string
	cfg   Config
	api   oa.Client
	cache provider.PieceCache
	imgs  *images // images.go
	heads provider.HeadCache
	sse   provider.SSEBuffers
}

// NewResponses returns a Responses API provider for model.
func NewResponses(model string, cfg Config) *Responses {
	return &Responses{model: model, cfg: cfg, api: cfg.client(), imgs: newImages(cfg, model)}
}

// Info implements provider.Provider.
func (r *Responses) Info() provider.Info {
	return provider.Info{Provider: r.cfg.Provider, Model: r.model, ContextWindow: r.cfg.ContextWindow,
		MaxOutputTokens: r.cfg.MaxOutputTokens, NativeSchema: r.cfg.NativeSchema, Vision: r.cfg.Vision}
}

// isReasoningModel reports whether model takes reasoning parameters (o-series,
// gpt-5 and codex models); others reject them.
func isReasoningModel(model string) bool {
	n := strings.ToLower(model)
	if i := strings.LastIndexByte(n, '/'); i >= 0 {
		n = n[i+1:]
	}
	switch {
	case strings.HasPrefix(n, "gpt-5-chat"):
		return false
	case strings.HasPrefix(n, "o1"), strings.HasPrefix(n, "o3"), strings.HasPrefix(n, "o4"),
		strings.HasPrefix(n, "gpt-5"), strings.Contains(n, "codex"), strings.HasPrefix(n, "gpt-oss"):
		return true
	}
	return false
}

// Stream implements provider.Provider.
func (r *Responses) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Delta, error] {
	return func(yield func(provider.Delta, error) bool) {
		var resp *http.Response
		body, err := r.body(req)
		if err != nil {
			yield(provider.Delta{}, r.cfg.mapError(ctx, r.model, err, nil))
			return
		}
		if err := r.api.Post(ctx, "responses", body, &resp); err != nil {
			yield(provider.Delta{}, r.cfg.mapError(ctx, r.model, err, resp))
			return
		}
		defer resp.Body.Close()
		if err := provider.NotStream(r.cfg.Provider, resp, r.cfg.APIKey); err != nil {
			yield(provider.Delta{}, err)
			return
		}
		dec := r.sse.Reader(resp.Body)
		defer r.sse.Release(dec)
		r.decode(ctx, dec, yield)
	}
}

// params renders the request with an empty input list (body fills it in).
func (r *Responses) params(req provider.Request) responses.ResponseNewParams {
	model := req.Model
	if model == "" {
		model = r.model
	}
	p := responses.ResponseNewParams{
		Model: shared.ResponsesModel(model),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{}},
		Store: oa.Bool(false),
	}
	if req.System != "" {
		p.Instructions = oa.String(req.System)
	}
	if isReasoningModel(model) {
		p.Reasoning = shared.ReasoningParam{Summary: shared.ReasoningSummaryAuto}
		if r.cfg.ReasoningEffort != "" {
			p.Reasoning.Effort = shared.ReasoningEffort(r.cfg.ReasoningEffort)
		}
		p.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
	}
	for _, t := range req.Tools {
		ft := &responses.FunctionToolParam{Name: t.Name, Parameters: toolSchema(t.Schema), Strict: oa.Bool(false)}
		if t.Description != "" {
			ft.Description = oa.String(t.Description)
		}
		p.Tools = append(p.Tools, responses.ToolUnionParam{OfFunction: ft})
	}
	if len(req.Tools) > 0 && (req.ToolChoice == "none" || req.ToolChoice == "required") {
		p.ToolChoice = responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: oa.Opt(responses.ToolChoiceOptions(req.ToolChoice))}
	}
	if req.MaxOutputTokens > 0 {
		p.MaxOutputTokens = oa.Int(int64(req.MaxOutputTokens))
	}
	if len(req.OutputSchema) > 0 && r.cfg.NativeSchema {
		name := req.OutputName
		if name == "" {
			name = "final_output"
		}
		js := &responses.ResponseFormatTextJSONSchemaConfigParam{Name: name, Schema: toolSchema(req.OutputSchema)}
		if strictCompatible(req.OutputSchema) {
			js.Strict = oa.Bool(true)
		}
		p.Text = responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{OfJSONSchema: js}}
	}
	return p
}

// responseItems maps the view to input items, results right after their calls.
func responseItems(prefix string, entries []transcript.Entry, im *images) responses.ResponseInputParam {
	view, _ := provider.PairedView(entries)
	items := make(responses.ResponseInputParam, 0, len(view))
	for _, e := range view {
		if it, ok := responseItem(prefix, e, im); ok {
			items = append(items, it)
		}
	}
	return items
}

// responseItem is the input item for one view entry; false when it makes none.
func responseItem(prefix string, e transcript.Entry, im *images) (responses.ResponseInputItemUnionParam, bool) {
	switch e.Type {
	case transcript.TypeInput:
		role := responses.EasyInputMessageRoleUser
		if e.Role == transcript.RoleSystem {
			role = responses.EasyInputMessageRoleSystem
		}
		return responses.ResponseInputItemUnionParam{OfMessage: &responses.EasyInputMessageParam{
			Role: role, Content: inputContent(e, im)}}, true
	case transcript.TypeAssistantText:
		return responses.ResponseInputItemUnionParam{OfMessage: &responses.EasyInputMessageParam{
			Role: responses.EasyInputMessageRoleAssistant, Content: responses.EasyInputMessageContentUnionParam{OfString: oa.String(e.Text)}}}, true
	case transcript.TypeReasoning:
		// Stateless replay needs the encrypted content; an id alone would make
		// the server look up a stored item that does not exist.
		if e.Provider != prefix || e.ProviderID == "" || e.Encrypted == "" {
			return responses.ResponseInputItemUnionParam{}, false
		}
		ri := &responses.ResponseReasoningItemParam{ID: e.ProviderID, Summary: []responses.ResponseReasoningItemSummaryParam{},
			EncryptedContent: oa.String(e.Encrypted)}
		if e.Text != "" {
			ri.Summary = append(ri.Summary, responses.ResponseReasoningItemSummaryParam{Text: e.Text})
		}
		return responses.ResponseInputItemUnionParam{OfReasoning: ri}, true
	case transcript.TypeToolCall:
		return responses.ResponseInputItemUnionParam{OfFunctionCall: &responses.ResponseFunctionToolCallParam{
			CallID: e.CallID, Name: e.Name, Arguments: argsText(e.Args)}}, true
	case transcript.TypeToolResult:
		return responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
			CallID: oa.String(e.CallID), Output: im.responsesOutput(e)}}, true
	}
	return responses.ResponseInputItemUnionParam{}, false
}

// body is the request's JSON, as the client would encode params(req) with
// responseItems as its input and "stream" set (put first), with each item encoded
// once per conversation (see Chat.body).
func (r *Responses) body(req provider.Request) ([]byte, error) {
	head, err := r.heads.Head(req, func() ([]byte, error) { return r.params(req).MarshalJSON() })
	if err != nil {
		return nil, err
	}
	b, view := r.cache.Begin(req.Entries)
	defer b.Done()
	for i := range view {
		if _, ok := b.Get(i, i+1, 0); ok {
			continue
		}
		js := []byte{} // no item: remembered as such
		if it, ok := responseItem(r.cfg.Provider, view[i], r.imgs); ok {
			if js, err = it.MarshalJSON(); err != nil {
				return nil, err
			}
		}
		b.Put(i, i+1, 0, js)
	}
	out, err := provider.StreamBody(head, "input", b.Pieces())
	if err != nil {
		return nil, err
	}
	b.OK()
	return out, nil
}

func inputContent(e transcript.Entry, im *images) responses.EasyInputMessageContentUnionParam {
	if len(e.Attachments) == 0 {
		return responses.EasyInputMessageContentUnionParam{OfString: oa.String(e.Text)}
	}
	return im.responsesInput(e)
}

// respItem is one output item as it streams.
type respItem struct {
	kind      string // message, reasoning, function_call
	id        string
	callID    string
	name      string
	encrypted string
	text      strings.Builder // message text / reasoning summary / call arguments
	final     string          // complete text from output_item.done, when sent
	hasFinal  bool
	refused   bool // the message holds a refusal
}

// decode reads a Responses API event stream; see Chat.decode for its guarantees.
func (r *Responses) decode(ctx context.Context, dec *provider.SSEReader, yield func(provider.Delta, error) bool) {
	var (
		items   []*respItem
		byIdx   = map[int64]*respItem{}
		use     *usage.Usage
		done    bool
		refused bool
		finish  = "stop"
	)
	itemAt := func(idx int64) *respItem {
		it, ok := byIdx[idx]
		if !ok {
			it = &respItem{}
			byIdx[idx] = it
			items = append(items, it)
		}
		return it
	}
	item := func(ev provider.Value) *respItem { return itemAt(ev.Get("output_index").Int()) }
	for !done && dec.Next() {
		data := dec.Data()
		if len(data) == 0 {
			continue
		}
		// One validating walk; the hot events (text, reasoning and argument
		// deltas) are handled from their raw members, the rare ones as provider.Value.
		var typRaw, idxRaw, deltaRaw []byte
		if !provider.WalkObject(data, func(k, v []byte) bool {
			switch string(k) {
			case "type":
				typRaw = v
			case "output_index":
				idxRaw = v
			case "delta":
				deltaRaw = v
			}
			return true
		}) {
			yield(provider.Delta{}, r.cfg.badChunk(data))
			return
		}
		kind, dk := "", provider.DeltaText
		switch string(typRaw) {
		case `"response.output_text.delta"`:
			kind = "message"
		case `"response.refusal.delta"`:
			kind, refused = "message", true
		case `"response.reasoning_summary_text.delta"`, `"response.reasoning_text.delta"`:
			kind, dk = "reasoning", provider.DeltaReasoning
		case `"response.function_call_arguments.delta"`:
			kind = "function_call"
		}
		if kind != "" {
			idx, _ := provider.JSONInt(idxRaw)
			d, _ := provider.JSONText(deltaRaw)
			it := itemAt(idx)
			if kind != "function_call" {
				it.kind = kind
			}
			it.text.WriteString(d)
			if kind != "function_call" && d != "" && !yield(provider.Delta{Kind: dk, Text: d}, nil) {
				return
			}
			continue
		}
		ev := provider.Value(data) // read within this event: the reader reuses data
		switch typ := ev.Get("type").String(); typ {
		case "response.reasoning_summary_part.added":
			if it := item(ev); it.text.Len() > 0 {
				it.text.WriteString("\n\n")
			}
		case "response.output_item.added", "response.output_item.done":
			it := item(ev)
			x := ev.Get("item")
			it.kind = x.Get("type").String()
			it.id = x.Get("id").String()
			if it.kind == "function_call" {
				announce := it.name == ""
				it.callID, it.name = x.Get("call_id").String(), x.Get("name").String()
				if it.callID == "" {
					it.callID = newCallID()
				}
				if announce && it.name != "" && !yield(provider.Delta{Kind: provider.DeltaToolCall, CallID: it.callID, Name: it.name}, nil) {
					return
				}
			}
			if typ == "response.output_item.done" {
				r.finishItem(it, x)
			}
		case "response.completed", "response.incomplete":
			done = true
			resp := ev.Get("response")
			if u := resp.Get("usage"); u.IsObject() {
				use = &usage.Usage{
					InputTokens:       int(u.Get("input_tokens").Int()),
					OutputTokens:      int(u.Get("output_tokens").Int()),
					CachedInputTokens: int(u.Get("input_tokens_details", "cached_tokens").Int()),
					ReasoningTokens:   int(u.Get("output_tokens_details", "reasoning_tokens").Int()),
					Requests:          1,
				}
			}
			switch resp.Get("incomplete_details", "reason").String() {
			case "max_output_tokens":
				finish = "length"
			case "content_filter":
				finish = "content_filter"
			}
		case "response.failed":
			e := ev.Get("response", "error")
			if e.IsNull() {
				e = provider.Value(`{"message":"the response failed"}`)
			}
			yield(provider.Delta{}, r.cfg.streamError(r.model, e))
			return
		case "error":
			e := ev.Get("error")
			if !e.IsObject() {
				e = ev
			}
			yield(provider.Delta{}, r.cfg.streamError(r.model, e))
			return
		}
	}
	if !done {
		if ctx.Err() != nil {
			yield(provider.Delta{}, ctx.Err())
			return
		}
		yield(provider.Delta{}, r.cfg.cut(dec.Err()))
		return
	}
	calls := 0
	for _, it := range items {
		var e transcript.Entry
		switch it.kind {
		case "message":
			e = transcript.AssistantText(it.content())
			if e.Text == "" {
				continue
			}
		case "reasoning":
			e = transcript.Reasoning(it.content())
			e.ProviderID, e.Encrypted, e.Provider = it.id, it.encrypted, r.cfg.Provider
			if e.Text == "" && e.Encrypted == "" {
				continue
			}
		case "function_call":
			if it.name == "" {
				continue
			}
			calls++
			e = transcript.ToolCall(it.callID, it.name, provider.ToolArgs(it.content()))
		default:
			continue // hosted tools (web search, ...) lovia does not request
		}
		if !yield(provider.Delta{Kind: provider.DeltaEntry, Entry: &e}, nil) {
			return
		}
	}
	if use != nil && !yield(provider.Delta{Kind: provider.DeltaUsage, Usage: use}, nil) {
		return
	}
	if calls > 0 && finish == "stop" {
		finish = "tool_calls"
	}
	for _, it := range items {
		refused = refused || it.refused
	}
	if refused && calls == 0 {
		finish = "refusal"
	}
	yield(provider.Delta{Kind: provider.DeltaFinish, FinishReason: finish}, nil)
}

// finishItem records the complete item sent with output_item.done.
func (r *Responses) finishItem(it *respItem, x provider.Value) {
	switch it.kind {
	case "message":
		var b strings.Builder
		x.Get("content").Each(func(c provider.Value) bool {
			switch c.Get("type").String() {
			case "output_text":
				b.WriteString(c.Get("text").String())
			case "refusal":
				it.refused = true
				b.WriteString(c.Get("refusal").String())
			}
			return true
		})
		it.final, it.hasFinal = b.String(), true
	case "reasoning":
		it.encrypted = x.Get("encrypted_content").String()
		var parts []string
		x.Get("summary").Each(func(s provider.Value) bool {
			parts = append(parts, s.Get("text").String())
			return true
		})
		if len(parts) == 0 {
			x.Get("content").Each(func(s provider.Value) bool {
				parts = append(parts, s.Get("text").String())
				return true
			})
		}
		if len(parts) > 0 {
			it.final, it.hasFinal = strings.Join(parts, "\n\n"), true
		}
	case "function_call":
		if a := x.Get("arguments"); a.Exists() {
			it.final, it.hasFinal = a.String(), true
		}
	}
}

// content prefers the complete text from output_item.done over the deltas.
func (it *respItem) content() string {
	if it.hasFinal {
		return it.final
	}
	return it.text.String()
}

// decodeBody runs the stream decoder over a raw body (tests, fuzzing, benchmarks).
func (r *Responses) decodeBody(ctx context.Context, body io.Reader, yield func(provider.Delta, error) bool) {
	r.decode(ctx, provider.NewSSEReader(body), yield)
}
