package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/http"
	"strings"
	"sync"

	oa "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

// Chat is the Chat Completions adapter ("openai:" and "ollama:").
type Chat struct {
	model string
	cfg   Config
	api   oa.Client
	cache provider.PieceCache
	imgs  *images // images.go
	heads provider.HeadCache
	sse   provider.SSEBuffers
	sys   sysCache
}

// sysCache keeps the last system message encoded: the system text is the same on
// every turn of a run, and escaping it again cost a quarter of body.
type sysCache struct {
	mu   sync.Mutex
	text string
	js   []byte // shared: callers must not modify it
}

func (s *sysCache) get(text string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.js != nil && s.text == text {
		return s.js, nil
	}
	js, err := oa.SystemMessage(text).MarshalJSON()
	if err != nil {
		return nil, err
	}
	s.text, s.js = text, js
	return js, nil
}

// NewChat returns a Chat Completions provider for model.
func NewChat(model string, cfg Config) *Chat {
	return &Chat{model: model, cfg: cfg, api: cfg.client(), imgs: newImages(cfg, model)}
}

// Info implements provider.Provider.
func (c *Chat) Info() provider.Info {
	return provider.Info{Provider: c.cfg.Provider, Model: c.model, ContextWindow: c.cfg.ContextWindow,
		MaxOutputTokens: c.cfg.MaxOutputTokens, NativeSchema: c.cfg.NativeSchema, Vision: c.cfg.Vision}
}

// Stream implements provider.Provider.
func (c *Chat) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Delta, error] {
	return func(yield func(provider.Delta, error) bool) {
		var resp *http.Response
		if c.cfg.BeforeSend != nil {
			c.cfg.BeforeSend(req)
		}
		body, err := c.body(req)
		if err != nil {
			yield(provider.Delta{}, c.cfg.mapError(ctx, c.model, err, nil))
			return
		}
		if err := c.api.Post(ctx, "chat/completions", body, &resp); err != nil {
			yield(provider.Delta{}, c.cfg.mapError(ctx, c.model, err, resp))
			return
		}
		defer resp.Body.Close()
		if err := provider.NotStream(c.cfg.Provider, resp, c.cfg.APIKey); err != nil {
			yield(provider.Delta{}, err)
			return
		}
		dec := c.sse.Reader(resp.Body)
		defer c.sse.Release(dec)
		c.decode(ctx, dec, yield)
	}
}

// params renders the request in the Chat Completions shape, without its
// messages (body adds them).
func (c *Chat) params(req provider.Request) oa.ChatCompletionNewParams {
	model := req.Model
	if model == "" {
		model = c.model
	}
	p := oa.ChatCompletionNewParams{
		Model:         shared.ChatModel(model),
		StreamOptions: oa.ChatCompletionStreamOptionsParam{IncludeUsage: oa.Bool(true)},
	}
	for _, t := range req.Tools {
		fd := shared.FunctionDefinitionParam{Name: t.Name, Parameters: toolSchema(t.Schema)}
		if t.Description != "" {
			fd.Description = oa.String(t.Description)
		}
		p.Tools = append(p.Tools, oa.ChatCompletionFunctionTool(fd))
	}
	if len(req.Tools) > 0 && (req.ToolChoice == "none" || req.ToolChoice == "required") {
		p.ToolChoice = oa.ChatCompletionToolChoiceOptionUnionParam{OfAuto: oa.String(req.ToolChoice)}
	}
	if req.MaxOutputTokens > 0 {
		if c.cfg.official() {
			p.MaxCompletionTokens = oa.Int(int64(req.MaxOutputTokens))
		} else {
			p.MaxTokens = oa.Int(int64(req.MaxOutputTokens))
		}
	}
	if len(req.OutputSchema) > 0 && c.cfg.NativeSchema {
		name := req.OutputName
		if name == "" {
			name = "final_output"
		}
		js := shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: name, Schema: req.OutputSchema}
		if strictCompatible(req.OutputSchema) {
			js.Strict = oa.Bool(true)
		}
		p.ResponseFormat = oa.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{JSONSchema: js}}
	}
	return p
}

// chatMessages maps the view to messages: consecutive assistant entries become
// one assistant message, each followed by its tool results (PairedView).
// Reasoning from this same adapter is replayed only within the current tool loop
// (after the last user input), as reasoning servers such as DeepSeek expect;
// reasoning from any other provider is skipped.
func chatMessages(prefix, system string, entries []transcript.Entry, im *images) []oa.ChatCompletionMessageParamUnion {
	view, _ := provider.PairedView(entries)
	msgs := make([]oa.ChatCompletionMessageParamUnion, 0, len(view)+1)
	if system != "" {
		msgs = append(msgs, oa.SystemMessage(system))
	}
	for sp := range chatSpans(view) {
		if m, ok := chatMessage(prefix, view, sp, im); ok {
			msgs = append(msgs, m)
		}
		if m, ok := toolImages(view, sp, im); ok {
			msgs = append(msgs, m)
		}
	}
	return msgs
}

// chatSpan is the part of the view one message is made from: one entry, or a
// run of assistant-side entries (replayReasoning: the run follows the last user
// input, so this adapter's reasoning in it is replayed).
type chatSpan struct {
	start, end      int
	replayReasoning bool
	// endsToolRun: a tool result that ends a run of results; the images of the
	// run follow it in a user message (toolImages).
	endsToolRun bool
}

func (s chatSpan) flags() uint64 {
	var f uint64
	if s.replayReasoning {
		f |= 1
	}
	if s.endsToolRun {
		f |= 2
	}
	return f
}

// chatSpans splits a paired view into the spans chatMessage encodes.
func chatSpans(view []transcript.Entry) iter.Seq[chatSpan] {
	return func(yield func(chatSpan) bool) {
		lastUser := -1
		for i := range view {
			if view[i].Type == transcript.TypeInput {
				lastUser = i
			}
		}
		for i := 0; i < len(view); {
			if !isAssistantSide(view[i].Type) {
				_, ends := toolRun(view, i)
				if !yield(chatSpan{start: i, end: i + 1, endsToolRun: ends}) {
					return
				}
				i++
				continue
			}
			j := i + 1
			for j < len(view) && isAssistantSide(view[j].Type) {
				j++
			}
			if !yield(chatSpan{start: i, end: j, replayReasoning: i > lastUser}) {
				return
			}
			i = j
		}
	}
}

func isAssistantSide(t transcript.Type) bool {
	return t == transcript.TypeAssistantText || t == transcript.TypeReasoning || t == transcript.TypeToolCall
}

// chatMessage is the message for one span; false when the span makes none
// (reasoning alone, an unknown entry type).
func chatMessage(prefix string, view []transcript.Entry, sp chatSpan, im *images) (oa.ChatCompletionMessageParamUnion, bool) {
	e := view[sp.start]
	switch e.Type {
	case transcript.TypeToolResult:
		return oa.ToolMessage(im.resultText(e, true), e.CallID), true
	case transcript.TypeInput:
		if e.Role == transcript.RoleSystem {
			return oa.SystemMessage(e.Text), true
		}
		return userMessage(e, im), true
	}
	if !isAssistantSide(e.Type) {
		return oa.ChatCompletionMessageParamUnion{}, false
	}
	asst := &oa.ChatCompletionAssistantMessageParam{}
	var text strings.Builder
	var reasoning, reasoningField string
	for _, e := range view[sp.start:sp.end] {
		switch e.Type {
		case transcript.TypeReasoning:
			if e.Provider != prefix || !sp.replayReasoning || e.Text == "" {
				continue
			}
			reasoningField = e.ProviderID
			if reasoningField != "reasoning" {
				reasoningField = "reasoning_content"
			}
			reasoning += e.Text
		case transcript.TypeAssistantText:
			text.WriteString(e.Text)
		case transcript.TypeToolCall:
			asst.ToolCalls = append(asst.ToolCalls, oa.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &oa.ChatCompletionMessageFunctionToolCallParam{ID: e.CallID,
					Function: oa.ChatCompletionMessageFunctionToolCallFunctionParam{Name: e.Name, Arguments: argsText(e.Args)}}})
		}
	}
	if text.Len() == 0 && len(asst.ToolCalls) == 0 {
		// Reasoning alone makes no valid assistant message.
		return oa.ChatCompletionMessageParamUnion{}, false
	}
	if text.Len() > 0 {
		asst.Content.OfString = oa.String(text.String())
	}
	if reasoning != "" {
		asst.SetExtraFields(map[string]any{reasoningField: reasoning})
	}
	return oa.ChatCompletionMessageParamUnion{OfAssistant: asst}, true
}

// body is the request's JSON, as the client would encode params(req) with
// chatMessages as its messages and "stream" set, but with each message encoded once per
// conversation (provider.PieceCache): the client's reflective encoding of the
// whole history on every turn made long runs slow down turn after turn.
func (c *Chat) body(req provider.Request) ([]byte, error) {
	head, err := c.heads.Head(req, func() ([]byte, error) { return c.params(req).MarshalJSON() })
	if err != nil {
		return nil, err
	}
	var sys []byte
	if req.System != "" {
		if sys, err = c.sys.get(req.System); err != nil {
			return nil, err
		}
	}
	b, view := c.cache.Begin(req.Entries)
	defer b.Done()
	for sp := range chatSpans(view) {
		if _, ok := b.Get(sp.start, sp.end, sp.flags()); ok {
			continue
		}
		js, fast := fastMessage(c.cfg.Provider, view, sp, c.imgs)
		if !fast {
			js = []byte{} // no message: remembered as such
			if m, ok := chatMessage(c.cfg.Provider, view, sp, c.imgs); ok {
				if js, err = m.MarshalJSON(); err != nil {
					return nil, err
				}
			}
		}
		if m, ok := toolImages(view, sp, c.imgs); ok {
			// One piece, two messages: the body joins pieces with commas.
			um, err := m.MarshalJSON()
			if err != nil {
				return nil, err
			}
			if len(js) > 0 {
				js = append(js, ',')
			}
			js = append(js, um...)
		}
		b.Put(sp.start, sp.end, sp.flags(), js)
	}
	pieces := b.Pieces()
	size := len(head) + len(sys) + 32
	for _, p := range pieces {
		size += len(p.JSON) + 1
	}
	out := make([]byte, 0, size)
	// "stream" leads: the client sets it (sjson) on the body we hand over, and a
	// key it finds first costs no scan of the whole history.
	out = append(out, `{"stream":true,"messages":[`...)
	out = append(out, sys...)
	first := len(sys) == 0
	for _, p := range pieces {
		if len(p.JSON) == 0 {
			continue
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, p.JSON...)
	}
	out = append(out, ']')
	if len(head) > 2 {
		out = append(out, ',')
		out = append(out, head[1:]...)
	} else {
		out = append(out, '}')
	}
	b.OK()
	return out, nil
}

// argsText is a call's arguments as the API carries them (a JSON text). Invalid
// model output was stored as a JSON string (validArgs); it is replayed as the
// model wrote it.
func argsText(a []byte) string {
	if len(a) == 0 {
		return "{}"
	}
	if a[0] == '"' {
		var s string
		if json.Unmarshal(a, &s) == nil {
			return s
		}
	}
	return string(a)
}

// toolImages is the user message that follows the span when it ends a run of tool
// results with images (images.go).
func toolImages(view []transcript.Entry, sp chatSpan, im *images) (oa.ChatCompletionMessageParamUnion, bool) {
	if !sp.endsToolRun {
		return oa.ChatCompletionMessageParamUnion{}, false
	}
	start, _ := toolRun(view, sp.start)
	return im.toolImagesMessage(view[start:sp.end])
}

func userMessage(e transcript.Entry, im *images) oa.ChatCompletionMessageParamUnion {
	if len(e.Attachments) == 0 {
		return oa.UserMessage(e.Text)
	}
	return oa.UserMessage(im.chatUserParts(e))
}

var doneMark = []byte("[DONE]")

// chatCall accumulates one streamed tool call.
type chatCall struct {
	id, name string
	args     strings.Builder
}

// decode reads a Chat Completions event stream and yields deltas; it always
// ends (EOF, [DONE], an error or the consumer stopping) and never panics on bad
// input.
func (c *Chat) decode(ctx context.Context, dec *provider.SSEReader, yield func(provider.Delta, error) bool) {
	var (
		text, reasoning strings.Builder
		reasoningField  string
		calls           []*chatCall
		byIndex         = map[int64]*chatCall{}
		finish          string
		use             *usage.Usage
		done            bool
		refused         bool
	)
	for !done && dec.Next() {
		data := dec.Data()
		if len(data) == 0 {
			continue
		}
		if data[0] == '[' && bytes.HasPrefix(data, doneMark) {
			done = true
			break
		}
		// One validating walk over the chunk picks out the members we use; only
		// the rare ones (usage, error, tool calls) are read as provider.Value.
		var choiceRaw, errRaw, usageRaw []byte
		ok := provider.WalkObject(data, func(k, v []byte) bool {
			switch string(k) {
			case "choices":
				provider.WalkArray(v, func(e []byte) bool { choiceRaw = e; return false })
			case "error":
				errRaw = v
			case "usage":
				usageRaw = v
			}
			return true
		})
		if !ok {
			yield(provider.Delta{}, c.cfg.badChunk(data))
			return
		}
		if len(errRaw) > 0 && string(errRaw) != "null" {
			yield(provider.Delta{}, c.cfg.streamError(c.model, errRaw))
			return
		}
		if len(usageRaw) > 0 && usageRaw[0] == '{' {
			u := provider.Value(usageRaw)
			use = &usage.Usage{
				InputTokens:       int(u.Get("prompt_tokens").Int()),
				OutputTokens:      int(u.Get("completion_tokens").Int()),
				CachedInputTokens: int(u.Get("prompt_tokens_details", "cached_tokens").Int()),
				ReasoningTokens:   int(u.Get("completion_tokens_details", "reasoning_tokens").Int()),
				Requests:          1,
			}
		}
		if len(choiceRaw) == 0 || choiceRaw[0] != '{' {
			continue
		}
		var stop bool
		provider.WalkObject(choiceRaw, func(ck, cv []byte) bool {
			switch string(ck) {
			case "finish_reason":
				if f, ok := provider.JSONText(cv); ok && f != "" {
					finish = f
				}
			case "delta":
				provider.WalkObject(cv, func(k, v []byte) bool {
					field := ""
					switch string(k) {
					case "content":
						field = "content"
					case "refusal":
						// Shown like text; the turn ends with finish reason "refusal".
						field = "content"
						if s, ok := provider.JSONText(v); ok && s != "" {
							refused = true
						}
					case "reasoning_content":
						field = "reasoning_content"
					case "reasoning":
						field = "reasoning"
					}
					if field != "" {
						s, ok := provider.JSONText(v)
						if !ok || s == "" {
							return true
						}
						if field == "content" {
							text.WriteString(s)
							stop = !yield(provider.Delta{Kind: provider.DeltaText, Text: s}, nil)
						} else {
							reasoningField = field
							reasoning.WriteString(s)
							stop = !yield(provider.Delta{Kind: provider.DeltaReasoning, Text: s}, nil)
						}
						return !stop
					}
					if string(k) == "tool_calls" {
						provider.Value(v).Each(func(tc provider.Value) bool {
							cl := chatCallFor(tc, &calls, byIndex)
							fn := tc.Get("function")
							announce := cl.name == ""
							if n := fn.Get("name").String(); n != "" && cl.name == "" {
								cl.name = n
							}
							cl.args.WriteString(fn.Get("arguments").String())
							if announce && cl.name != "" {
								stop = !yield(provider.Delta{Kind: provider.DeltaToolCall, CallID: cl.id, Name: cl.name}, nil)
							}
							return !stop
						})
					}
					return !stop
				})
			}
			return !stop
		})
		if stop {
			return
		}
	}
	if !done && finish == "" {
		// EOF or a read error before the reply said it was finished: a cut.
		if ctx.Err() != nil {
			yield(provider.Delta{}, ctx.Err())
			return
		}
		yield(provider.Delta{}, c.cfg.cut(dec.Err()))
		return
	}
	if reasoning.Len() > 0 {
		e := transcript.Reasoning(reasoning.String())
		e.Provider, e.ProviderID = c.cfg.Provider, reasoningField
		if !yield(provider.Delta{Kind: provider.DeltaEntry, Entry: &e}, nil) {
			return
		}
	}
	if text.Len() > 0 {
		e := transcript.AssistantText(text.String())
		if !yield(provider.Delta{Kind: provider.DeltaEntry, Entry: &e}, nil) {
			return
		}
	}
	for _, cl := range calls {
		if cl.name == "" {
			continue // a call that never got a name cannot be run or answered
		}
		e := transcript.ToolCall(cl.id, cl.name, provider.ToolArgs(cl.args.String()))
		if !yield(provider.Delta{Kind: provider.DeltaEntry, Entry: &e}, nil) {
			return
		}
	}
	if use != nil && !yield(provider.Delta{Kind: provider.DeltaUsage, Usage: use}, nil) {
		return
	}
	switch finish {
	case "", "function_call":
		finish = "stop"
		if len(calls) > 0 {
			finish = "tool_calls"
		}
	case "stop":
		if len(calls) > 0 {
			finish = "tool_calls"
		}
	}
	if refused && len(calls) == 0 {
		finish = "refusal"
	}
	yield(provider.Delta{Kind: provider.DeltaFinish, FinishReason: finish}, nil)
}

// chatCallFor finds the accumulator a tool_calls element belongs to: by index
// when the server sends one, else by id, else the latest call (servers that
// stream a call's pieces without either).
func chatCallFor(tc provider.Value, calls *[]*chatCall, byIndex map[int64]*chatCall) *chatCall {
	id := tc.Get("id").String()
	idx := tc.Get("index")
	if idx.Exists() {
		if cl, ok := byIndex[idx.Int()]; ok && (id == "" || id == cl.id) {
			return cl
		}
	} else {
		for _, cl := range *calls {
			if id != "" && cl.id == id {
				return cl
			}
		}
		if id == "" && len(*calls) > 0 {
			return (*calls)[len(*calls)-1]
		}
	}
	if id == "" {
		id = newCallID()
	}
	cl := &chatCall{id: id}
	*calls = append(*calls, cl)
	if idx.Exists() {
		byIndex[idx.Int()] = cl
	}
	return cl
}

// decodeBody runs the stream decoder over a raw body (tests, fuzzing, benchmarks).
func (c *Chat) decodeBody(ctx context.Context, body io.Reader, yield func(provider.Delta, error) bool) {
	c.decode(ctx, provider.NewSSEReader(body), yield)
}
