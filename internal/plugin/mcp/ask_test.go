package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lovia-dev/lovia/internal/elicit"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/provider/builtin"
	"github.com/lovia-dev/lovia/internal/provider/providertest"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/usage"
	"github.com/lovia-dev/lovia/internal/workspace"
)

// asks records what a run's front end was asked and answers with answer.
type asks struct {
	mu     sync.Mutex
	got    []*event.Approval
	answer func(a *event.Approval) tool.Decision
	usage  usage.Usage
}

func (a *asks) rc() *tool.RunContext {
	return &tool.RunContext{
		Ask: func(_ context.Context, ap *event.Approval) (tool.Decision, error) {
			a.mu.Lock()
			a.got = append(a.got, ap)
			a.mu.Unlock()
			if a.answer == nil {
				return tool.Decision{}, nil
			}
			return a.answer(ap), nil
		},
		AddUsage: func(u usage.Usage) { a.mu.Lock(); a.usage = a.usage.Add(u); a.mu.Unlock() },
		// $1 per million input tokens, $2 per million output tokens.
		PriceUsage: func(_, _ string, u usage.Usage) usage.Usage {
			u.CostUSD, u.Priced = float64(u.InputTokens)/1e6+2*float64(u.OutputTokens)/1e6, true
			return u
		},
	}
}

func (a *asks) asked() []*event.Approval {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*event.Approval(nil), a.got...)
}

// everythingRun starts server-everything with sampling answered by a fake OpenAI
// server, under rules, and returns a function calling one of its tools in a run.
func everythingRun(t *testing.T, fake *providertest.Server, preset string, rules []workspace.MCPRule) func(a *asks, name, args string) tool.Result {
	t.Helper()
	cfg := npmServer(t, "@modelcontextprotocol/server-everything")
	var resolve func(context.Context, string) (provider.Provider, error)
	if fake != nil {
		reg := provider.NewRegistry(fake.Env())
		builtin.Register(reg)
		resolve = reg.Resolve
	}
	p, err := New(Config{Servers: map[string]ServerConfig{"everything": cfg}, Resolve: resolve, SamplingMaxTokens: 64}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	pol, err := workspace.NewMCPPolicy(preset, append([]workspace.MCPRule{{Server: "everything", Decision: "allow"}}, rules...))
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.ForModel(pol, "openai:gpt-sampler").Setup(context.Background(), &tool.RunContext{})
	if err != nil {
		t.Fatal(err)
	}
	skipIfUnavailable(t, p, "everything")
	return func(a *asks, name, args string) tool.Result {
		t.Helper()
		tl := find(t, c, name)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		res, err := tl.Invoke(ctx, a.rc(), json.RawMessage(args))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
}

func allowAll(*event.Approval) tool.Decision { return tool.Decision{Allow: true} }

func TestSamplingEverythingApproved(t *testing.T) {
	fake := providertest.NewOpenAIServer(t, providertest.Turn{Text: "sampled: the answer is 42", Usage: usage.Usage{InputTokens: 30, OutputTokens: 7}})
	call := everythingRun(t, fake, workspace.PresetCoding, nil)
	a := &asks{answer: allowAll}
	res := call(a, "everything__trigger-sampling-request", `{"prompt":"what is six times seven?","maxTokens":500}`)
	if res.IsError || !strings.Contains(res.Text, "sampled: the answer is 42") {
		t.Fatalf("result = %+v", res)
	}
	if !strings.Contains(res.Text, `"model": "gpt-sampler"`) || !strings.Contains(res.Text, `"stopReason": "endTurn"`) {
		t.Fatalf("result lacks the model or stop reason: %s", res.Text)
	}
	got := a.asked()
	if len(got) != 1 || got[0].Kind != workspace.SamplingApprovalKind || !strings.Contains(got[0].Summary, "six times seven") || !strings.Contains(got[0].Summary, "everything") {
		t.Fatalf("approvals = %+v", got)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("provider requests = %d", len(reqs))
	}
	body := string(reqs[0].Body)
	if !strings.Contains(body, "You are a helpful test server.") || !strings.Contains(body, "six times seven") {
		t.Fatalf("the system prompt and message did not reach the model: %s", body)
	}
	// The server asked for 500 tokens; mcp.sampling_max_tokens (64) caps it.
	m := reqs[0].JSON()
	if mt, _ := m["max_tokens"].(float64); mt == 0 {
		mt, _ = m["max_completion_tokens"].(float64)
		if mt != 64 {
			t.Fatalf("max tokens = %v in %s", m, body)
		}
	} else if mt != 64 {
		t.Fatalf("max_tokens = %v", mt)
	}
	if a.usage.InputTokens != 30 || a.usage.OutputTokens != 7 {
		t.Fatalf("run usage = %+v", a.usage)
	}
	// The sampled call is priced like the run's own: the run's cost stays known.
	if c, ok := a.usage.Cost(); !ok || c != 44e-6 {
		t.Fatalf("run cost = %v, %v; want 0.000044 (priced)", c, ok)
	}
	if strings.Contains(res.Text, providertest.APIKey) {
		t.Fatal("the provider key reached the server")
	}
}

func TestSamplingEverythingDenied(t *testing.T) {
	fake := providertest.NewOpenAIServer(t)
	call := everythingRun(t, fake, workspace.PresetCoding, nil)
	a := &asks{} // headless without --approve all: every ask is denied
	res := call(a, "everything__trigger-sampling-request", `{"prompt":"hello"}`)
	if !res.IsError || !strings.Contains(res.Text, "did not answer the sampling request") {
		t.Fatalf("result = %+v", res)
	}
	if len(a.asked()) != 1 {
		t.Fatalf("asked %d times", len(a.asked()))
	}
	if n := len(fake.Requests()); n != 0 {
		t.Fatalf("the model was called %d times", n)
	}
}

func TestSamplingEverythingRuleAllows(t *testing.T) {
	fake := providertest.NewOpenAIServer(t, providertest.Turn{Text: "ruled reply"})
	call := everythingRun(t, fake, workspace.PresetCoding, []workspace.MCPRule{{Sampling: "every*", Decision: "allow"}})
	a := &asks{answer: func(ap *event.Approval) tool.Decision {
		t.Errorf("asked although a rule allows: %+v", ap)
		return tool.Decision{}
	}}
	if res := call(a, "everything__trigger-sampling-request", `{"prompt":"hello"}`); res.IsError || !strings.Contains(res.Text, "ruled reply") {
		t.Fatalf("result = %+v", res)
	}
}

func TestSamplingEverythingRuleDenies(t *testing.T) {
	fake := providertest.NewOpenAIServer(t)
	call := everythingRun(t, fake, workspace.PresetCoding, []workspace.MCPRule{{Sampling: "everything", Decision: "deny"}})
	a := &asks{answer: allowAll}
	res := call(a, "everything__trigger-sampling-request", `{"prompt":"hello"}`)
	if !res.IsError || !strings.Contains(res.Text, "not allowed") || len(a.asked()) != 0 || len(fake.Requests()) != 0 {
		t.Fatalf("result = %+v, asked %d", res, len(a.asked()))
	}
}

const elicitTool = "everything__trigger-elicitation-request"

func TestElicitationEverythingAccepted(t *testing.T) {
	call := everythingRun(t, nil, workspace.PresetCoding, nil)
	a := &asks{answer: func(ap *event.Approval) tool.Decision {
		return tool.Decision{Allow: true, Message: `{"name":"Ada Lovelace","check":true,"integer":7}`}
	}}
	res := call(a, elicitTool, `{}`)
	if res.IsError || !strings.Contains(res.Text, "- Name: Ada Lovelace") || !strings.Contains(res.Text, "Favorite Integer: 7") {
		t.Fatalf("result = %+v", res)
	}
	got := a.asked()
	if len(got) != 1 || got[0].Kind != elicit.Kind || len(got[0].Form) == 0 {
		t.Fatalf("approvals = %+v", got)
	}
	form, err := elicit.Parse(got[0].Form)
	if err != nil || len(form.Fields) != 13 || form.Fields[0].Name != "name" || !form.Fields[0].Required {
		t.Fatalf("form = %+v, %v", form, err)
	}
}

func TestElicitationEverythingInvalidAnswerAskedAgain(t *testing.T) {
	call := everythingRun(t, nil, workspace.PresetCoding, nil)
	n := 0
	a := &asks{answer: func(ap *event.Approval) tool.Decision {
		n++
		if n == 1 {
			return tool.Decision{Allow: true, Message: `{"name":"Ada","integer":1000}`} // out of range
		}
		if !strings.Contains(ap.Summary, "not accepted") {
			t.Errorf("second ask does not say why: %q", ap.Summary)
		}
		return tool.Decision{Allow: true, Message: `{"name":"Ada","integer":5}`}
	}}
	res := call(a, elicitTool, `{}`)
	if res.IsError || !strings.Contains(res.Text, "Favorite Integer: 5") || n != 2 {
		t.Fatalf("result = %+v after %d asks", res, n)
	}
}

func TestElicitationEverythingDeclinedHeadless(t *testing.T) {
	call := everythingRun(t, nil, workspace.PresetCoding, nil)
	res := call(&asks{}, elicitTool, `{}`)
	if !strings.Contains(res.Text, "declined") {
		t.Fatalf("result = %+v", res)
	}
}

func TestElicitationEverythingApproveAllWithoutDefaults(t *testing.T) {
	// --approve all: allowed, but nobody filled the form; "name" is required and has
	// no default, so the form is declined.
	call := everythingRun(t, nil, workspace.PresetCoding, nil)
	res := call(&asks{answer: allowAll}, elicitTool, `{}`)
	if !strings.Contains(res.Text, "declined") {
		t.Fatalf("result = %+v", res)
	}
}

func TestElicitationEverythingCancelled(t *testing.T) {
	call := everythingRun(t, nil, workspace.PresetCoding, nil)
	res := call(&asks{answer: func(*event.Approval) tool.Decision { return tool.Decision{Message: elicit.CancelMessage} }}, elicitTool, `{}`)
	if !strings.Contains(res.Text, "cancelled") {
		t.Fatalf("result = %+v", res)
	}
}

var _ plugin.Plugin = (*view)(nil)

// A URL elicitation shows the URL (never opened); only an explicit "I opened it"
// accepts, an allow without a person (--approve all) declines.
func TestURLElicitationEverything(t *testing.T) {
	call := everythingRun(t, nil, workspace.PresetCoding, nil)
	const args = `{"url":"https://example.com/authorize","message":"Sign in, please."}`
	a := &asks{answer: func(ap *event.Approval) tool.Decision {
		return tool.Decision{Allow: true, Message: elicit.AcceptMessage}
	}}
	res := call(a, "everything__trigger-url-elicitation", args)
	if res.IsError || !strings.Contains(res.Text, "User completed the URL elicitation flow") {
		t.Fatalf("result = %+v", res)
	}
	got := a.asked()
	if len(got) != 1 || got[0].Kind != elicit.URLKind || got[0].URL != "https://example.com/authorize" || !strings.Contains(got[0].Summary, "Sign in, please.") {
		t.Fatalf("approvals = %+v", got)
	}
	if res := call(&asks{answer: allowAll}, "everything__trigger-url-elicitation", args); !strings.Contains(res.Text, "User declined to open the URL") {
		t.Fatalf("--approve all: %+v", res)
	}
}

func TestSamplingEntriesConvertMessages(t *testing.T) {
	png := []byte("\x89PNG fake")
	entries, size, err := samplingEntries([]*sdk.SamplingMessage{
		{Role: "user", Content: &sdk.TextContent{Text: "look at this"}},
		{Role: "user", Content: &sdk.ImageContent{MIMEType: "image/png", Data: png}},
		{Role: "assistant", Content: &sdk.TextContent{Text: "a cat"}},
		{Role: "user", Content: &sdk.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 4 || entries[0].Text != "look at this" || len(entries[1].Attachments) != 1 || entries[1].Attachments[0].MIME != "image/png" ||
		entries[2].Text != "a cat" || entries[2].Role != "" || !strings.Contains(entries[3].Text, "audio/wav") {
		t.Fatalf("entries = %+v", entries)
	}
	if size != len("look at this")+len("a cat")+len(entries[3].Text) {
		t.Fatalf("size = %d", size)
	}
	if _, _, err := samplingEntries([]*sdk.SamplingMessage{{Role: "system", Content: &sdk.TextContent{Text: "x"}}}); err == nil {
		t.Fatal("unknown role accepted")
	}
}
