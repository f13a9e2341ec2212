package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lovia-dev/lovia/internal/elicit"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
	"github.com/lovia-dev/lovia/internal/workspace"
)

// Requests a server sends to lovia (sampling/createMessage, elicitation/create) are
// answered for the run whose tool call is in flight on that server: its model, its
// policy, its approval channel (rc.Ask), its usage. The SDK handles each incoming
// request on a goroutine of its own, so a request waiting for a person never blocks
// the tool call's reply or other requests.

// DefaultSamplingMaxTokens caps the reply of one sampling request (mcp.sampling_max_tokens).
const DefaultSamplingMaxTokens = 4096

// maxSamplingText bounds what a server may send the model in one sampling request.
const maxSamplingText = 200_000

// maxFormAsks is how often an invalid form answer is put back to the person.
const maxFormAsks = 3

// codeUserRejected is the MCP error code for a request the user did not approve.
const codeUserRejected = -1

// caller is a tool call in flight: who answers its server's requests.
type caller struct {
	ctx    context.Context
	rc     *tool.RunContext
	policy *workspace.MCPPolicy
	model  string
	// mu puts one request at a time to the person (one approval per call id).
	mu sync.Mutex
}

type callerKey struct{}

// withCaller marks ctx as a tool call of the run rc under the view v.
func withCaller(ctx context.Context, v *view, rc *tool.RunContext) context.Context {
	if rc == nil {
		return ctx
	}
	return context.WithValue(ctx, callerKey{}, &caller{ctx: ctx, rc: rc, policy: v.policy, model: v.model})
}

// callers tracks the tool calls in flight on one server.
type callers struct {
	mu   sync.Mutex
	list []*caller
}

// enter registers the call of ctx (if any) until the returned function runs.
func (cs *callers) enter(ctx context.Context) func() {
	c, _ := ctx.Value(callerKey{}).(*caller)
	if c == nil {
		return func() {}
	}
	cs.mu.Lock()
	cs.list = append(cs.list, c)
	cs.mu.Unlock()
	return func() {
		cs.mu.Lock()
		defer cs.mu.Unlock()
		for i, x := range cs.list {
			if x == c {
				cs.list = append(cs.list[:i], cs.list[i+1:]...)
				break
			}
		}
	}
}

// current is the most recent call in flight: MCP does not say which call a request
// belongs to over stdio, and the newest is the one most likely waiting for it.
func (cs *callers) current() *caller {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if len(cs.list) == 0 {
		return nil
	}
	return cs.list[len(cs.list)-1]
}

// askOptions adds sampling and elicitation (form and URL) to the client options.
func (s *server) askOptions(o *sdk.ClientOptions) {
	o.CreateMessageHandler = s.sample
	o.ElicitationHandler = s.elicit
	if o.Capabilities == nil {
		o.Capabilities = &sdk.ClientCapabilities{}
	}
	o.Capabilities.Sampling = &sdk.SamplingCapabilities{}
	o.Capabilities.Elicitation = &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}, URL: &sdk.URLElicitationCapabilities{}}
}

// during returns a context that also ends when the tool call does.
func (c *caller) during(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(c.ctx, cancel)
	return ctx, func() { stop(); cancel() }
}

func rejected(format string, args ...any) error {
	return &jsonrpc.Error{Code: codeUserRejected, Message: fmt.Sprintf(format, args...)}
}

// sample answers sampling/createMessage with the run's own model, once the policy or
// the person allows it. Provider keys stay in lovia: the server gets the reply text,
// the model's name and why it stopped.
func (s *server) sample(ctx context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
	c := s.ask.current()
	if c == nil {
		return nil, rejected("lovia answers sampling requests only while a run is calling one of this server's tools")
	}
	ctx, done := c.during(ctx)
	defer done()
	p := req.Params
	if p == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "missing params"}
	}
	if c.model == "" || s.resolve == nil {
		return nil, rejected("this lovia run has no model to answer sampling requests with")
	}
	limit := s.samplingMax
	if limit <= 0 {
		limit = DefaultSamplingMaxTokens
	}
	maxTokens := int(p.MaxTokens)
	if maxTokens <= 0 || maxTokens > limit {
		maxTokens = limit
	}
	entries, size, err := samplingEntries(p.Messages)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	if size+len(p.SystemPrompt) > maxSamplingText {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("the sampling request is too large (%d bytes of text; lovia accepts %d)", size+len(p.SystemPrompt), maxSamplingText)}
	}
	if len(entries) == 0 {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "the sampling request has no messages"}
	}
	a, err := c.policy.SamplingApproval(s.name, samplingSummary(s.name, c.model, maxTokens, p, entries))
	if err != nil {
		s.logger.Info("mcp sampling refused", "err", err)
		return nil, rejected("%v", err)
	}
	if a != nil {
		d, err := c.askPerson(ctx, a)
		if err != nil {
			return nil, rejected("the sampling request was not approved: %v", err)
		}
		if !d.Allow {
			why := "the user denied it, or no one could approve it (a headless run without --approve all)"
			if m := strings.TrimSpace(d.Message); m != "" {
				why = "the user denied it: " + m
			}
			return nil, rejected("lovia did not answer the sampling request of MCP server %s: %s", s.name, why)
		}
		if d.Session {
			c.policy.Grant(a)
		}
	}
	prov, err := s.resolve(ctx, c.model)
	if err != nil {
		return nil, errors.New(s.scrubbed(fmt.Sprintf("lovia's model %s is unavailable: %v", c.model, err)))
	}
	text, model, stop, u, err := drain(ctx, prov, provider.Request{Model: prov.Info().Model, System: p.SystemPrompt, Entries: entries, MaxOutputTokens: maxTokens, ToolChoice: "none"})
	if c.rc.AddUsage != nil {
		// Even a failed attempt may have been billed; it counts in the run's usage,
		// priced like the run's own calls (an unpriced part would make the run's
		// cost unknown and stop a run under --max-budget-usd).
		if c.rc.PriceUsage != nil {
			u = c.rc.PriceUsage(prov.Info().Provider, prov.Info().Model, u)
		}
		c.rc.AddUsage(u)
	}
	if err != nil {
		// Not %w: an error from the provider may carry request details; the server
		// gets the message only (keys are never in it: adapters scrub them).
		return nil, errors.New(s.scrubbed("lovia's model failed to answer the sampling request: " + err.Error()))
	}
	if model == "" {
		model = prov.Info().Model
	}
	return &sdk.CreateMessageResult{Content: &sdk.TextContent{Text: text}, Model: model, Role: "assistant", StopReason: stop}, nil
}

func (s *server) scrubbed(msg string) string {
	if s.scrub == nil {
		return msg
	}
	return s.scrub(msg)
}

// askPerson puts one approval to the run's front end, one at a time per call.
func (c *caller) askPerson(ctx context.Context, a *event.Approval) (tool.Decision, error) {
	if c.rc.Ask == nil {
		return tool.Decision{}, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rc.Ask(ctx, a)
}

// samplingEntries converts the server's messages: text as text, images attached to
// user messages (within the bounds of a tool result's images), anything else
// described. size is the text's length.
func samplingEntries(msgs []*sdk.SamplingMessage) ([]transcript.Entry, int, error) {
	var out []transcript.Entry
	size, images := 0, 0
	for i, m := range msgs {
		if m == nil {
			continue
		}
		var text string
		var att []transcript.Attachment
		switch v := m.Content.(type) {
		case *sdk.TextContent:
			text = v.Text
		case *sdk.ImageContent:
			if len(v.Data) > MaxImageBytes {
				return nil, 0, fmt.Errorf("message %d: image of %d bytes is larger than the %d-byte limit", i, len(v.Data), MaxImageBytes)
			}
			if m.Role != "user" {
				text = fmt.Sprintf("[image %s, not shown]", v.MIMEType)
				break
			}
			if images += len(v.Data); images > MaxAttachmentBytes {
				return nil, 0, fmt.Errorf("the images of the request exceed %d bytes", MaxAttachmentBytes)
			}
			att = append(att, transcript.Attachment{MIME: v.MIMEType, Data: v.Data})
		case *sdk.AudioContent:
			text = fmt.Sprintf("[audio %s, %d bytes, not shown]", v.MIMEType, len(v.Data))
		case nil:
			continue
		default:
			return nil, 0, fmt.Errorf("message %d: unsupported content %T", i, v)
		}
		size += len(text)
		switch m.Role {
		case "assistant":
			out = append(out, transcript.AssistantText(text))
		case "user", "":
			e := transcript.UserInput(text)
			e.Attachments = att
			out = append(out, e)
		default:
			return nil, 0, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	return out, size, nil
}

// maxSummary bounds what an approval shows of a sampling request.
const maxSummary = 2000

func samplingSummary(server, model string, maxTokens int, p *sdk.CreateMessageParams, entries []transcript.Entry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "MCP server %s asks your model %s for a reply (at most %d tokens).", server, model, maxTokens)
	if sp := strings.TrimSpace(p.SystemPrompt); sp != "" {
		fmt.Fprintf(&b, "\nSystem prompt: %s", sp)
	}
	for _, e := range entries {
		role := "user"
		if e.Type == transcript.TypeAssistantText {
			role = "assistant"
		}
		fmt.Fprintf(&b, "\n%s: %s", role, e.Text)
		for _, a := range e.Attachments {
			fmt.Fprintf(&b, " [image %s, %d bytes]", a.MIME, len(a.Data))
		}
	}
	s := b.String()
	if len(s) > maxSummary {
		cut := maxSummary
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// drain streams one reply and returns its text, the model, the MCP stop reason and
// the usage.
func drain(ctx context.Context, p provider.Provider, req provider.Request) (text, model, stop string, u usage.Usage, err error) {
	var final, streamed strings.Builder
	finish := ""
	for d, derr := range p.Stream(ctx, req) {
		if derr != nil {
			return "", "", "", u, derr
		}
		switch d.Kind {
		case provider.DeltaDiscard:
			final.Reset()
			streamed.Reset()
		case provider.DeltaText:
			streamed.WriteString(d.Text)
		case provider.DeltaEntry:
			if d.Entry != nil && d.Entry.Type == transcript.TypeAssistantText {
				final.WriteString(d.Entry.Text)
			}
		case provider.DeltaUsage:
			if d.Usage != nil {
				u = u.Add(*d.Usage)
			}
		case provider.DeltaFinish:
			finish = d.FinishReason
		}
	}
	text = final.String()
	if strings.TrimSpace(text) == "" {
		text = streamed.String()
	}
	switch finish {
	case "stop", "end_turn", "":
		stop = "endTurn"
	case "length", "max_tokens":
		stop = "maxTokens"
	case "tool_calls", "tool_use":
		stop = "toolUse"
	case "stop_sequence":
		stop = "stopSequence"
	default:
		stop = finish
	}
	return text, p.Info().Model, stop, u, nil
}

// elicit answers elicitation/create: a form (or a URL to open) put to the person of
// the run whose tool call is in flight. Without a person (headless), a form is
// declined, except under --approve all, where it is accepted with the schema's
// defaults when they fill every required field; a URL is always declined there.
func (s *server) elicit(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	decline := &sdk.ElicitResult{Action: "decline"}
	c := s.ask.current()
	if c == nil {
		s.logger.Info("mcp elicitation declined: no tool call of this server is in flight")
		return decline, nil
	}
	ctx, done := c.during(ctx)
	defer done()
	p := req.Params
	if p == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "missing params"}
	}
	msg := strings.TrimSpace(p.Message)
	if len(msg) > maxSummary {
		cut := maxSummary
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	if p.Mode == "url" || p.URL != "" {
		a := &event.Approval{Kind: elicit.URLKind, Summary: fmt.Sprintf("MCP server %s asks you to open a URL yourself: %s", s.name, msg), URL: p.URL}
		d, err := c.askPerson(ctx, a)
		if err != nil {
			return decline, nil
		}
		_, cancel, _ := elicit.Answer(d.Allow, d.Message)
		switch {
		case d.Allow && d.Message == elicit.AcceptMessage:
			return &sdk.ElicitResult{Action: "accept"}, nil
		case cancel:
			return &sdk.ElicitResult{Action: "cancel"}, nil
		}
		return decline, nil
	}
	raw, err := json.Marshal(p.RequestedSchema)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	form, err := elicit.Parse(raw)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "lovia cannot show this form: " + err.Error()}
	}
	summary := fmt.Sprintf("MCP server %s asks: %s", s.name, msg)
	for range maxFormAsks {
		a := &event.Approval{Kind: elicit.Kind, Summary: summary, Form: raw}
		d, err := c.askPerson(ctx, a)
		if err != nil {
			return decline, nil
		}
		content, cancel, aerr := elicit.Answer(d.Allow, d.Message)
		switch {
		case cancel:
			return &sdk.ElicitResult{Action: "cancel"}, nil
		case !d.Allow:
			return decline, nil
		case aerr != nil:
			summary = fmt.Sprintf("MCP server %s asks: %s\n(the previous answer was not accepted: %v)", s.name, msg, aerr)
			continue
		case strings.TrimSpace(d.Message) == "":
			// Allowed without an answer: nobody filled the form (--approve all).
			content = form.Defaults()
			if miss := form.MissingRequired(content); len(miss) > 0 {
				s.logger.Info("mcp elicitation declined: allowed without a person, and required fields have no default", "fields", strings.Join(miss, ", "))
				return decline, nil
			}
		}
		if verr := form.Validate(content); verr != nil {
			if strings.TrimSpace(d.Message) == "" {
				return decline, nil
			}
			summary = fmt.Sprintf("MCP server %s asks: %s\n(the previous answer was not accepted: %v)", s.name, msg, verr)
			continue
		}
		return &sdk.ElicitResult{Action: "accept", Content: normalize(content)}, nil
	}
	return decline, nil
}

// normalize round-trips content through JSON so numbers are float64, as the SDK's
// validator expects.
func normalize(content map[string]any) map[string]any {
	b, err := json.Marshal(content)
	if err != nil {
		return content
	}
	var out map[string]any
	if json.Unmarshal(b, &out) != nil {
		return content
	}
	return out
}

// ForModel is For with the run's model ("provider:model"), which answers the
// servers' sampling requests during the run's tool calls.
func (p *Plugin) ForModel(pol *workspace.MCPPolicy, model string) plugin.Plugin {
	return &view{p: p, policy: pol, model: model}
}
