// Package anthropic adapts the Anthropic Messages API to the provider seam.
// Requests are built and sent with the official client
// (github.com/anthropics/anthropic-sdk-go/v2, its retries off: lovia's policy
// governs); the event stream is decoded here for speed (provider.SSEReader and
// provider.WalkObject for content deltas, provider.Value for the rare events).
// Extended thinking is preserved (signatures and redacted blocks kept on
// reasoning entries and replayed), and prompt-cache breakpoints go on the system
// prompt, the last tool and the end of the stable prefix.
package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/tidwall/sjson"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

// Prefix is the registry prefix; reasoning entries carry it in Entry.Provider.
const Prefix = "anthropic"

// DefaultBaseURL is the Anthropic API.
const DefaultBaseURL = "https://api.anthropic.com"

// DefaultMaxTokens is max_tokens (required by the API) for unknown models.
const DefaultMaxTokens = 8192

// Config is everything the adapter needs; Factory fills it from provider.Env.
type Config struct {
	BaseURL string
	APIKey  string
	// AuthToken is a bearer token (ANTHROPIC_AUTH_TOKEN) for gateways, used
	// when no API key is set.
	AuthToken     string
	HTTPClient    *http.Client
	ContextWindow int
	MaxTokens     int
	// Thinking: "" (off), "adaptive", or a budget in tokens ("16000").
	Thinking string
	// Headers are sent with every request (ANTHROPIC_CUSTOM_HEADERS), e.g. an
	// anthropic-beta flag or a gateway's own header.
	Headers http.Header
	// Vision: whether the model takes images (provider.ModelVision).
	Vision provider.Vision
}

// Factory builds the "anthropic:" provider from ANTHROPIC_API_KEY (or
// ANTHROPIC_AUTH_TOKEN), ANTHROPIC_BASE_URL and LOVIA_THINKING_BUDGET.
func Factory(_ context.Context, model string, env provider.Env) (provider.Provider, error) {
	get := func(k string) string {
		if env.Getenv == nil {
			return ""
		}
		return strings.TrimSpace(env.Getenv(k))
	}
	cfg := Config{
		BaseURL:    get("ANTHROPIC_BASE_URL"),
		APIKey:     get("ANTHROPIC_API_KEY"),
		AuthToken:  get("ANTHROPIC_AUTH_TOKEN"),
		HTTPClient: env.HTTPClient,
		Thinking:   get("LOVIA_THINKING_BUDGET"),
		Headers:    provider.ParseHeaders(get("ANTHROPIC_CUSTOM_HEADERS")),
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	// The client appends /v1/messages; a URL copied with /v1 would double it.
	cfg.BaseURL = strings.TrimSuffix(strings.TrimRight(cfg.BaseURL, "/"), "/v1")
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errs.Newf(errs.KindConfig, "set ANTHROPIC_BASE_URL to a URL like https://api.anthropic.com",
			"ANTHROPIC_BASE_URL=%q is not an http(s) URL", cfg.BaseURL)
	}
	if cfg.APIKey == "" && cfg.AuthToken == "" && u.Host == "api.anthropic.com" {
		return nil, errs.Newf(errs.KindConfig, "export ANTHROPIC_API_KEY=sk-ant-...",
			"anthropic:%s needs an API key: ANTHROPIC_API_KEY is not set", model)
	}
	if t := cfg.Thinking; t != "" && t != "adaptive" {
		if n, err := strconv.Atoi(t); err != nil || n < 0 {
			return nil, errs.Newf(errs.KindConfig, "set LOVIA_THINKING_BUDGET to a token count such as 16000, or adaptive",
				"LOVIA_THINKING_BUDGET=%q is not a number of tokens", t)
		} else if n == 0 {
			cfg.Thinking = ""
		}
	}
	cfg.ContextWindow = provider.ContextWindow(Prefix, model, env.ContextWindows, provider.DefaultContextWindow)
	cfg.MaxTokens = provider.MaxOutputTokens(model, DefaultMaxTokens)
	cfg.Vision = provider.ModelVision(Prefix, model, env.Vision)
	return New(model, cfg), nil
}

// Provider is the Messages API adapter.
type Provider struct {
	model string
	cfg   Config
	api   sdk.Client
	cache provider.PieceCache
	imgs  *images // images.go
	heads provider.HeadCache
	sse   provider.SSEBuffers
}

// New returns a Messages API provider for model.
func New(model string, cfg Config) *Provider {
	opts := []option.RequestOption{
		option.WithBaseURL(strings.TrimRight(cfg.BaseURL, "/") + "/"),
		option.WithMaxRetries(0), // lovia's RetryPolicy governs
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	switch {
	case cfg.APIKey != "":
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	case cfg.AuthToken != "":
		opts = append(opts, option.WithAuthToken(cfg.AuthToken))
	}
	for k, vs := range cfg.Headers {
		for _, v := range vs {
			opts = append(opts, option.WithHeaderAdd(k, v))
		}
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = DefaultMaxTokens
	}
	// Without the client's environment defaults: lovia reads ANTHROPIC_* through
	// provider.Env, so nothing of the process environment is sent unasked.
	opts = append(opts, option.WithoutEnvironmentDefaults())
	return &Provider{model: model, cfg: cfg, api: sdk.NewClient(opts...), imgs: newImages(cfg, model)}
}

// Info implements provider.Provider.
func (p *Provider) Info() provider.Info {
	return provider.Info{Provider: Prefix, Model: p.model, ContextWindow: p.cfg.ContextWindow, MaxOutputTokens: p.cfg.MaxTokens, Vision: p.cfg.Vision}
}

// Stream implements provider.Provider.
func (p *Provider) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Delta, error] {
	return func(yield func(provider.Delta, error) bool) {
		var resp *http.Response
		params := p.params(req)
		body, err := p.body(params, req)
		if err != nil {
			yield(provider.Delta{}, p.mapError(ctx, err, nil))
			return
		}
		// The client's documented route for a prebuilt body (Client.Post, the raw
		// *http.Response as the result): its Messages.NewStreaming would decode
		// the stream into typed events, which decode (below) does far faster.
		if err := p.api.Post(ctx, "v1/messages", body, &resp); err != nil {
			yield(provider.Delta{}, p.mapError(ctx, err, resp))
			return
		}
		defer resp.Body.Close()
		if err := provider.NotStream(Prefix, resp, p.cfg.APIKey, p.cfg.AuthToken); err != nil {
			yield(provider.Delta{}, err)
			return
		}
		dec := p.sse.Reader(resp.Body)
		defer p.sse.Release(dec)
		p.decode(ctx, dec, yield)
	}
}

// adaptiveOnly lists models where budget thinking is deprecated; the client
// warns on stderr when it is used, so those get adaptive thinking instead.
func adaptiveOnly(model string) bool {
	return strings.Contains(model, "opus-4-6") || strings.Contains(model, "mythos")
}

// params renders the request without its messages (body adds them).
func (p *Provider) params(req provider.Request) sdk.MessageNewParams {
	model := req.Model
	if model == "" {
		model = p.model
	}
	maxTokens := p.cfg.MaxTokens
	if req.MaxOutputTokens > 0 {
		maxTokens = req.MaxOutputTokens
	}
	params := sdk.MessageNewParams{Model: sdk.Model(model), MaxTokens: int64(maxTokens)}
	if req.System != "" {
		params.System = []sdk.TextBlockParam{{Text: req.System, CacheControl: sdk.NewCacheControlEphemeralParam()}}
	}
	for _, t := range req.Tools {
		tp := &sdk.ToolParam{Name: t.Name, InputSchema: inputSchema(t.Schema)}
		if t.Description != "" {
			tp.Description = sdk.String(t.Description)
		}
		params.Tools = append(params.Tools, sdk.ToolUnionParam{OfTool: tp})
	}
	if n := len(params.Tools); n > 0 {
		params.Tools[n-1].OfTool.CacheControl = sdk.NewCacheControlEphemeralParam()
	}
	thinking := false
	switch t := p.cfg.Thinking; {
	case t == "adaptive" || (t != "" && adaptiveOnly(model)):
		params.Thinking = sdk.ThinkingConfigParamUnion{OfAdaptive: &sdk.ThinkingConfigAdaptiveParam{}}
		thinking = true
	case t != "":
		budget, _ := strconv.Atoi(t)
		budget = max(budget, 1024) // the API minimum
		params.Thinking = sdk.ThinkingConfigParamUnion{OfEnabled: &sdk.ThinkingConfigEnabledParam{BudgetTokens: int64(budget)}}
		params.MaxTokens = max(params.MaxTokens, int64(budget)+4096)
		thinking = true
	}
	if len(req.Tools) > 0 {
		switch req.ToolChoice {
		case "none":
			params.ToolChoice = sdk.ToolChoiceUnionParam{OfNone: &sdk.ToolChoiceNoneParam{}}
		case "required":
			if !thinking { // thinking allows only auto and none
				params.ToolChoice = sdk.ToolChoiceUnionParam{OfAny: &sdk.ToolChoiceAnyParam{}}
			}
		}
	}
	return params
}

// inputSchema splits a JSON Schema into the client's typed fields.
func inputSchema(raw json.RawMessage) sdk.ToolInputSchemaParam {
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	s := sdk.ToolInputSchemaParam{Properties: map[string]any{}}
	for k, v := range m {
		switch k {
		case "type":
		case "properties":
			s.Properties = v
		case "required":
			if list, ok := v.([]any); ok {
				for _, r := range list {
					if str, ok := r.(string); ok {
						s.Required = append(s.Required, str)
					}
				}
			}
		default:
			if s.ExtraFields == nil {
				s.ExtraFields = map[string]any{}
			}
			s.ExtraFields[k] = v
		}
	}
	return s
}

// messages maps the view to alternating user/assistant messages: consecutive
// assistant entries form one assistant message (thinking first, as the API
// requires), tool results go in the next user message right after their calls
// (PairedView), followed by any user text. Cache breakpoints go on the last
// cacheable block wholly inside the stable prefix (read from the cache) and on
// the last cacheable block of all (written, so the next call's stable prefix,
// which ends about here, is a cache hit).
func messages(entries []transcript.Entry, stablePrefix int, im *images) []sdk.MessageParam {
	view, orig := provider.PairedView(entries)
	var (
		msgs   []sdk.MessageParam
		blocks []sdk.ContentBlockParamUnion
		role   string
		// mark is the breakpoint candidate: message and block index.
		markMsg, markBlock = -1, -1
		lastMsg, lastBlock = -1, -1
		maxOrig            = -1
	)
	flush := func() {
		if len(blocks) == 0 {
			return
		}
		if role == "assistant" {
			msgs = append(msgs, sdk.NewAssistantMessage(blocks...))
		} else {
			msgs = append(msgs, sdk.NewUserMessage(blocks...))
		}
		blocks = nil
	}
	add := func(side string, b sdk.ContentBlockParamUnion, from int) {
		if side != role {
			flush()
			role = side
		}
		blocks = append(blocks, b)
		maxOrig = max(maxOrig, from)
		if cacheable(b) {
			lastMsg, lastBlock = len(msgs), len(blocks)-1
			if maxOrig < stablePrefix {
				markMsg, markBlock = lastMsg, lastBlock
			}
		}
	}
	for i, e := range view {
		side, blocks := entryBlocks(e, im)
		for _, b := range blocks {
			add(side, b, orig[i])
		}
	}
	flush()
	if markMsg >= 0 {
		setCache(msgs[markMsg], markBlock)
	}
	if lastMsg >= 0 && (lastMsg != markMsg || lastBlock != markBlock) {
		setCache(msgs[lastMsg], lastBlock)
	}
	return msgs
}

// entryBlocks is the content one view entry adds, and the side ("user" or
// "assistant") it goes on; none for entries the API cannot take.
func entryBlocks(e transcript.Entry, im *images) (string, []sdk.ContentBlockParamUnion) {
	switch e.Type {
	case transcript.TypeInput:
		var blocks []sdk.ContentBlockParamUnion
		if e.Text != "" || len(e.Attachments) == 0 {
			text := e.Text
			if text == "" {
				text = "(empty message)"
			}
			blocks = append(blocks, sdk.NewTextBlock(text))
		}
		for _, a := range e.Attachments {
			blocks = append(blocks, im.attachment(a))
		}
		return "user", blocks
	case transcript.TypeToolResult:
		tr := sdk.ToolResultBlockParam{ToolUseID: e.CallID}
		if e.IsError {
			tr.IsError = sdk.Bool(true)
		}
		if e.Text != "" {
			tr.Content = append(tr.Content, sdk.ToolResultBlockParamContentUnion{OfText: &sdk.TextBlockParam{Text: e.Text}})
		}
		for _, a := range e.Attachments {
			if b := im.attachment(a); b.OfImage != nil {
				tr.Content = append(tr.Content, sdk.ToolResultBlockParamContentUnion{OfImage: b.OfImage})
			} else if b.OfText != nil {
				tr.Content = append(tr.Content, sdk.ToolResultBlockParamContentUnion{OfText: b.OfText})
			}
		}
		return "user", []sdk.ContentBlockParamUnion{{OfToolResult: &tr}}
	case transcript.TypeReasoning:
		switch {
		case e.Provider != Prefix:
			// Another provider's reasoning cannot be verified here.
		case e.Encrypted != "":
			return "assistant", []sdk.ContentBlockParamUnion{sdk.NewRedactedThinkingBlock(e.Encrypted)}
		case e.Signature != "":
			return "assistant", []sdk.ContentBlockParamUnion{sdk.NewThinkingBlock(e.Signature, e.Text)}
		}
	case transcript.TypeAssistantText:
		if strings.TrimSpace(e.Text) != "" { // the API rejects empty text blocks
			return "assistant", []sdk.ContentBlockParamUnion{sdk.NewTextBlock(e.Text)}
		}
	case transcript.TypeToolCall:
		args := e.Args
		if len(args) == 0 || !json.Valid(args) || args[0] != '{' {
			args = json.RawMessage(`{}`)
		}
		return "assistant", []sdk.ContentBlockParamUnion{sdk.NewToolUseBlock(e.CallID, args, e.Name)}
	}
	return "", nil
}

// entryShape is what entryBlocks would make of e, without making it: the side,
// the number of blocks and whether they are cacheable (all an entry makes are
// alike).
func entryShape(e *transcript.Entry) (side msgSide, n int, cacheable bool) {
	switch e.Type {
	case transcript.TypeInput:
		n = len(e.Attachments)
		if e.Text != "" || len(e.Attachments) == 0 {
			n++
		}
		return sideUser, n, true
	case transcript.TypeToolResult:
		return sideUser, 1, true
	case transcript.TypeReasoning:
		if e.Provider == Prefix && (e.Encrypted != "" || e.Signature != "") {
			return sideAssistant, 1, false
		}
	case transcript.TypeAssistantText:
		if strings.TrimSpace(e.Text) != "" {
			return sideAssistant, 1, true
		}
	case transcript.TypeToolCall:
		return sideAssistant, 1, true
	}
	return sideNone, 0, false
}

// msgSide is the side a message is on.
type msgSide uint8

const (
	sideNone msgSide = iota
	sideUser
	sideAssistant
)

// msgSpan is the part of the view one message is made from, and the blocks of
// it that carry a cache breakpoint (index+1; 0: none).
type msgSpan struct {
	start, end int
	side       msgSide
	mark, last int
}

func (m msgSpan) flags() uint64 { return uint64(m.mark)<<32 | uint64(m.last) }

// spans splits the view into messages as messages does, with its cache
// breakpoints, without building any block. Two plain passes: the breakpoints
// are known only at the end, and this runs over the whole history every turn.
func spans(view []transcript.Entry, orig []int, stablePrefix int) iter.Seq[msgSpan] {
	return func(yield func(msgSpan) bool) {
		markMsg, markBlock, lastMsg, lastBlock := -1, -1, -1, -1
		role, msg, nb, maxOrig := sideNone, -1, 0, -1
		for i := range view {
			side, n, cacheable := entryShape(&view[i])
			if n == 0 {
				continue
			}
			if side != role {
				role, msg, nb = side, msg+1, 0
			}
			// All n blocks of an entry are alike; the last of them counts.
			maxOrig = max(maxOrig, orig[i])
			nb += n
			if cacheable {
				lastMsg, lastBlock = msg, nb-1
				if maxOrig < stablePrefix {
					markMsg, markBlock = msg, nb-1
				}
			}
		}
		var cur msgSpan
		role, msg = sideNone, -1
		for i := range view {
			side, n, _ := entryShape(&view[i])
			if n == 0 || side == role {
				continue
			}
			if msg >= 0 {
				cur.end = i
				if !yield(cur.withMarks(msg, markMsg, markBlock, lastMsg, lastBlock)) {
					return
				}
			}
			start := i
			if msg < 0 {
				start = 0 // entries that make nothing go with the next message
			}
			role, msg, cur = side, msg+1, msgSpan{start: start, side: side}
		}
		if msg >= 0 {
			cur.end = len(view)
			yield(cur.withMarks(msg, markMsg, markBlock, lastMsg, lastBlock))
		}
	}
}

func (m msgSpan) withMarks(msg, markMsg, markBlock, lastMsg, lastBlock int) msgSpan {
	if msg == markMsg {
		m.mark = markBlock + 1
	}
	if msg == lastMsg {
		m.last = lastBlock + 1
	}
	return m
}

// body is the request's JSON, as the client would encode params with messages
// as its messages and "stream" set (put first: the client sets it with sjson,
// and a key found first costs no scan of the whole history), with each message
// encoded once per conversation (provider.PieceCache): the client's reflective
// encoding of the whole history on every turn made long runs slow down turn
// after turn. Only the messages the cache breakpoints move through are encoded
// again.
func (p *Provider) body(params sdk.MessageNewParams, req provider.Request) ([]byte, error) {
	// params derive from req and the fixed configuration (Stream builds them with
	// p.params), so the head is kept per request shape.
	head, err := p.heads.Head(req, func() ([]byte, error) {
		params.Messages = []sdk.MessageParam{}
		return params.MarshalJSON()
	})
	if err != nil {
		return nil, err
	}
	b, view, orig := p.cache.BeginOrig(req.Entries)
	defer b.Done()
	for sp := range spans(view, orig, req.StablePrefix) {
		if _, ok := b.Get(sp.start, sp.end, sp.flags()); ok {
			continue
		}
		var blocks []sdk.ContentBlockParamUnion
		for i := sp.start; i < sp.end; i++ {
			_, bs := entryBlocks(view[i], p.imgs)
			blocks = append(blocks, bs...)
		}
		var m sdk.MessageParam
		if sp.side == sideAssistant {
			m = sdk.NewAssistantMessage(blocks...)
		} else {
			m = sdk.NewUserMessage(blocks...)
		}
		if sp.mark > 0 {
			setCache(m, sp.mark-1)
		}
		if sp.last > 0 {
			setCache(m, sp.last-1)
		}
		js, err := m.MarshalJSON()
		if err != nil {
			return nil, err
		}
		b.Put(sp.start, sp.end, sp.flags(), js)
	}
	pieces := b.Pieces()
	if len(pieces) == 0 { // as the client encodes no messages (nil): none
		out, err := sjson.DeleteBytes(append([]byte(`{"stream":true,`), head[1:]...), "messages")
		if err == nil {
			b.OK()
		}
		return out, err
	}
	out, err := provider.StreamBody(head, "messages", pieces)
	if err != nil {
		return nil, err
	}
	b.OK()
	return out, nil
}

func cacheable(b sdk.ContentBlockParamUnion) bool {
	return b.OfText != nil || b.OfToolUse != nil || b.OfToolResult != nil || b.OfImage != nil
}

func setCache(m sdk.MessageParam, i int) {
	var blocks []sdk.ContentBlockParamUnion
	switch {
	case m.OfUser != nil:
		blocks = m.OfUser.Content
	case m.OfAssistant != nil:
		blocks = m.OfAssistant.Content
	}
	if i < 0 || i >= len(blocks) {
		return
	}
	cc := sdk.NewCacheControlEphemeralParam()
	switch b := blocks[i]; {
	case b.OfText != nil:
		b.OfText.CacheControl = cc
	case b.OfToolUse != nil:
		b.OfToolUse.CacheControl = cc
	case b.OfToolResult != nil:
		b.OfToolResult.CacheControl = cc
	case b.OfImage != nil:
		b.OfImage.CacheControl = cc
	}
}

// mapError turns a client or transport failure into *provider.HTTPError, or
// *errs.Error for what the user must fix.
func (p *Provider) mapError(ctx context.Context, err error, resp *http.Response) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if te, ok := provider.AsTimeout(err); ok {
		return &provider.HTTPError{Provider: Prefix, Transport: te}
	}
	if resp == nil || resp.StatusCode < 400 {
		return &provider.HTTPError{Provider: Prefix, Transport: errors.New(p.redact(err.Error()))}
	}
	var body []byte
	if resp.Body != nil {
		body, _ = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body = io.NopCloser(bytes.NewReader(body))
	}
	typ := provider.Value(body).Get("error", "type").String()
	return p.statusError(resp.StatusCode, provider.ServerMessage(body), typ, provider.ParseRetryAfter(resp.Header, time.Now()))
}

func (p *Provider) redact(s string) string { return provider.Redact(s, p.cfg.APIKey, p.cfg.AuthToken) }

func (p *Provider) statusError(status int, msg, typ string, retryAfter time.Duration) error {
	keyVar := "ANTHROPIC_API_KEY"
	if p.cfg.APIKey == "" && p.cfg.AuthToken != "" {
		keyVar = "ANTHROPIC_AUTH_TOKEN"
	}
	return provider.StatusError(provider.Failure{Provider: Prefix, Model: p.model, Status: status,
		Message: p.redact(msg), Code: typ, RetryAfter: retryAfter,
		KeyVar: keyVar, KeySet: p.cfg.APIKey != "" || p.cfg.AuthToken != "", BaseVar: "ANTHROPIC_BASE_URL", BaseURL: p.cfg.BaseURL})
}

// block accumulates one streamed content block.
type block struct {
	kind      string // text, thinking, redacted_thinking, tool_use
	id, name  string
	signature string
	data      string // redacted thinking
	text      strings.Builder
	input     string // tool_use input sent whole in content_block_start
}

// decode reads a Messages event stream and yields deltas; it always ends (EOF,
// message_stop, an error or the consumer stopping) and never panics on bad input.
func (p *Provider) decode(ctx context.Context, dec *provider.SSEReader, yield func(provider.Delta, error) bool) {
	var (
		blocks []*block
		byIdx  = map[int64]*block{}
		use    usage.Usage
		seen   bool // a usage figure arrived
		stop   string
		done   bool
	)
	for !done && dec.Next() {
		data := dec.Data()
		if len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		// One validating walk; the hot event (a content delta) is handled from
		// its raw members, the rare ones read as provider.Value.
		var typ, index, delta []byte
		if !provider.WalkObject(data, func(k, v []byte) bool {
			switch string(k) {
			case "type":
				typ = v
			case "index":
				index = v
			case "delta":
				delta = v
			}
			return true
		}) {
			yield(provider.Delta{}, p.badChunk(data))
			return
		}
		if string(typ) == `"content_block_delta"` {
			n, _ := provider.JSONInt(index)
			b := byIdx[n]
			if b == nil || len(delta) == 0 || delta[0] != '{' {
				yield(provider.Delta{}, p.badChunk(data))
				return
			}
			if !p.blockDelta(b, delta, yield) {
				return
			}
			continue
		}
		ev := provider.Value(data) // read within this event: the reader reuses data
		switch ev.Get("type").String() {
		case "message_start":
			if u := ev.Get("message", "usage"); u.IsObject() {
				readUsage(&use, u)
				seen = true
			}
		case "content_block_start":
			cb := ev.Get("content_block")
			b := &block{kind: cb.Get("type").String()}
			idx := ev.Get("index").Int()
			if _, dup := byIdx[idx]; dup {
				yield(provider.Delta{}, p.badChunk(data))
				return
			}
			byIdx[idx] = b
			blocks = append(blocks, b)
			switch b.kind {
			case "text":
				b.text.WriteString(cb.Get("text").String())
			case "thinking":
				b.text.WriteString(cb.Get("thinking").String())
				b.signature = cb.Get("signature").String()
			case "redacted_thinking":
				b.data = cb.Get("data").String()
			case "tool_use":
				b.id, b.name = cb.Get("id").String(), cb.Get("name").String()
				if in := cb.Get("input"); in.IsObject() && string(in) != "{}" {
					b.input = string(in)
				}
				if b.name != "" && !yield(provider.Delta{Kind: provider.DeltaToolCall, CallID: b.id, Name: b.name}, nil) {
					return
				}
			}
		case "message_delta":
			if s := ev.Get("delta", "stop_reason").String(); s != "" {
				stop = s
			}
			if u := ev.Get("usage"); u.IsObject() {
				readUsage(&use, u)
				seen = true
			}
		case "message_stop":
			done = true
		case "error":
			e := ev.Get("error")
			typ, msg := e.Get("type").String(), e.Get("message").String()
			if msg == "" {
				msg = typ
			}
			yield(provider.Delta{}, p.statusError(provider.StatusForType(typ+" "+msg), msg, typ, 0))
			return
		}
	}
	if !done {
		if ctx.Err() != nil {
			yield(provider.Delta{}, ctx.Err())
			return
		}
		cause := dec.Err()
		if cause == nil {
			cause = errors.New("stream ended before message_stop")
		}
		if te, ok := provider.AsTimeout(cause); ok {
			yield(provider.Delta{}, &provider.HTTPError{Provider: Prefix, Transport: fmt.Errorf("%w: %w", provider.ErrStreamCut, te)})
			return
		}
		yield(provider.Delta{}, &provider.HTTPError{Provider: Prefix,
			Transport: fmt.Errorf("%w: %s", provider.ErrStreamCut, p.redact(cause.Error()))})
		return
	}
	calls := 0
	for _, b := range blocks {
		var e transcript.Entry
		switch b.kind {
		case "text":
			if b.text.Len() == 0 {
				continue
			}
			e = transcript.AssistantText(b.text.String())
		case "thinking":
			e = transcript.Reasoning(b.text.String())
			e.Signature, e.Provider = b.signature, Prefix
		case "redacted_thinking":
			e = transcript.Reasoning("")
			e.Encrypted, e.Provider = b.data, Prefix
		case "tool_use":
			args := b.text.String()
			if strings.TrimSpace(args) == "" {
				args = b.input
			}
			e = transcript.ToolCall(b.id, b.name, provider.ToolArgs(args))
			calls++
		default:
			continue // server tools lovia does not request
		}
		if !yield(provider.Delta{Kind: provider.DeltaEntry, Entry: &e}, nil) {
			return
		}
	}
	if seen {
		u := use
		u.Requests = 1
		if !yield(provider.Delta{Kind: provider.DeltaUsage, Usage: &u}, nil) {
			return
		}
	}
	yield(provider.Delta{Kind: provider.DeltaFinish, FinishReason: finishReason(stop, calls)}, nil)
}

// blockDelta applies one content_block_delta; false when the consumer stopped.
func (p *Provider) blockDelta(b *block, delta []byte, yield func(provider.Delta, error) bool) bool {
	var typ, text, thinking, sig, partial []byte
	provider.WalkObject(delta, func(k, v []byte) bool {
		switch string(k) {
		case "type":
			typ = v
		case "text":
			text = v
		case "thinking":
			thinking = v
		case "signature":
			sig = v
		case "partial_json":
			partial = v
		}
		return true
	})
	switch string(typ) {
	case `"text_delta"`:
		s, _ := provider.JSONText(text)
		b.text.WriteString(s)
		return s == "" || yield(provider.Delta{Kind: provider.DeltaText, Text: s}, nil)
	case `"thinking_delta"`:
		s, _ := provider.JSONText(thinking)
		b.text.WriteString(s)
		return s == "" || yield(provider.Delta{Kind: provider.DeltaReasoning, Text: s}, nil)
	case `"signature_delta"`:
		s, _ := provider.JSONText(sig)
		b.signature += s
	case `"input_json_delta"`:
		s, _ := provider.JSONText(partial)
		b.text.WriteString(s)
	}
	return true
}

// readUsage folds an Anthropic usage object into u. Anthropic counts cache reads
// and writes apart from input_tokens; lovia's InputTokens is the whole prompt
// (as OpenAI reports it), so compaction calibrates against the real size.
func readUsage(u *usage.Usage, r provider.Value) {
	in, hasIn := r.Get("input_tokens"), false
	read, write := r.Get("cache_read_input_tokens"), r.Get("cache_creation_input_tokens")
	if in.Exists() {
		hasIn = true
	}
	if read.Exists() {
		u.CachedInputTokens = int(read.Int())
	}
	if write.Exists() {
		u.CacheWriteTokens = int(write.Int())
	}
	if hasIn {
		u.InputTokens = int(in.Int()) + u.CachedInputTokens + u.CacheWriteTokens
	}
	if o := r.Get("output_tokens"); o.Exists() {
		u.OutputTokens = int(o.Int())
	}
}

func finishReason(stop string, calls int) string {
	switch stop {
	case "tool_use":
		return "tool_calls"
	case "max_tokens", "model_context_window_exceeded":
		return "length"
	case "refusal":
		return "refusal"
	}
	if calls > 0 {
		return "tool_calls"
	}
	return "stop"
}

func (p *Provider) badChunk(data []byte) error {
	s := string(data)
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return &provider.HTTPError{Provider: Prefix, Protocol: true, Message: "malformed stream data: " + p.redact(s)}
}

// decodeBody runs the stream decoder over a raw body (tests, fuzzing, benchmarks).
func (p *Provider) decodeBody(ctx context.Context, body io.Reader, yield func(provider.Delta, error) bool) {
	p.decode(ctx, provider.NewSSEReader(body), yield)
}
