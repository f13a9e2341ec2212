package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// tinyPNG is a 1×1 PNG.
var tinyPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82")

// bodyConversation is a sequence of requests as a run makes them: views that
// extend one another, a new user input (which stops this adapter's reasoning from
// being replayed for the turns before it), a rewritten prefix (compaction), an
// entry changed in place, attachments and a dangling call.
func bodyConversation() []provider.Request {
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"a <file> & more"}},"required":["path"]}`)
	tools := []provider.ToolDef{{Name: "read_file", Description: "Read a file", Schema: schema}}
	base := []transcript.Entry{
		transcript.UserInput("list and read <b>&</b> \u2028"),
		{Type: transcript.TypeReasoning, Text: "claude thought", Signature: "sig", Provider: "anthropic"},
		{Type: transcript.TypeReasoning, Text: "my thought", Provider: "openai", ProviderID: "reasoning"},
		transcript.AssistantText("Reading both."),
		transcript.ToolCall("c1", "read_file", json.RawMessage(`{"path":"a.go"}`)),
		transcript.ToolCall("c2", "read_file", json.RawMessage(`"not json"`)),
		transcript.ToolResult("c2", "read_file", "package b", false),
		transcript.ToolResult("c1", "read_file", "no such file", true),
	}
	var reqs []provider.Request
	add := func(entries []transcript.Entry, mut func(*provider.Request)) {
		r := provider.Request{System: "SYS <x>", Entries: append([]transcript.Entry(nil), entries...), Tools: tools, MaxOutputTokens: 1000}
		if mut != nil {
			mut(&r)
		}
		reqs = append(reqs, r)
	}
	for i := 1; i <= len(base); i++ {
		add(base[:i], nil)
	}
	view := append([]transcript.Entry(nil), base...)
	for i := 0; i < 3; i++ {
		view = append(view, transcript.ToolCall(fmt.Sprintf("d%d", i), "shell", nil),
			transcript.ToolResult(fmt.Sprintf("d%d", i), "shell", "ok", false))
		add(view, nil)
	}
	view = append(view, transcript.UserInput("now summarise"),
		transcript.Entry{Type: transcript.TypeInput, Role: transcript.RoleSystem, Text: "reminder"},
		transcript.Entry{Type: transcript.TypeInput, Role: transcript.RoleUser, Text: "look",
			Attachments: []transcript.Attachment{{MIME: "image/png", Name: "a.png", Data: []byte{1, 2, 3}}, {MIME: "text/plain", Name: "n.txt"}}},
		transcript.ToolCall("e1", "shell", nil)) // dangling: a synthetic result
	add(view, nil)
	add(view, func(r *provider.Request) { r.System = ""; r.Tools = nil; r.MaxOutputTokens = 0 })
	// Compaction rewrote the prefix.
	compacted := append([]transcript.Entry{transcript.UserInput("[summary]")}, view[5:]...)
	add(compacted, nil)
	// An entry changed in place (same length, same position).
	changed := append([]transcript.Entry(nil), compacted...)
	changed[1].Text = "Reading bath."
	add(changed, nil)
	add(nil, nil)
	// A call first seen without its result (answered by a synthetic one), then
	// answered; results out of call order; an orphan result; a call id used again
	// after its first result.
	loop := []transcript.Entry{transcript.UserInput("go")}
	step := func(es ...transcript.Entry) {
		loop = append(loop, es...)
		add(loop, nil)
	}
	step(transcript.ToolCall("f1", "shell", nil), transcript.ToolCall("f2", "shell", nil))
	step(transcript.ToolResult("f2", "shell", "two", false))
	step(transcript.ToolResult("f1", "shell", "one", false))
	step(transcript.ToolResult("zz", "shell", "orphan", false))
	step(transcript.AssistantText("again"), transcript.ToolCall("f1", "shell", nil))
	step(transcript.ToolResult("f1", "shell", "one again", false))
	step(transcript.ToolCall("g1", "shell", nil), transcript.ToolResult("g1", "shell", "g", false))
	step(transcript.ToolResult("g1", "shell", "g twice", false), transcript.ToolCall("g2", "shell", nil))
	step(transcript.ToolResult("g2", "shell", "g2", false), transcript.UserInput("more"))
	step(transcript.ToolCall("h1", "shell", nil), transcript.ToolResult("h1", "shell", "h", false))
	// Tool results with images, arriving one by one: the run of results grows, so
	// the message carrying the images moves after the last one.
	img := func(id string) transcript.Entry {
		e := transcript.ToolResult(id, "shot", "screenshot "+id, false)
		e.Attachments = []transcript.Attachment{{MIME: "image/png", Data: tinyPNG}, {MIME: "application/pdf", Name: "x.pdf"}}
		return e
	}
	step(transcript.ToolCall("i1", "shot", nil), transcript.ToolCall("i2", "shot", nil), img("i2"))
	step(img("i1"))
	step(transcript.AssistantText("seen"), transcript.UserInput("thanks"))
	return reqs
}

// The body built from cached pieces is, byte for byte, what the client encodes
// from the full parameters ("stream" put first), on every request of a
// conversation.
func TestChatBodyMatchesClient(t *testing.T) {
	c := NewChat("gpt-4.1", Config{Provider: "openai", BaseURL: "http://127.0.0.1:1/v1"})
	for i, req := range bodyConversation() {
		p := c.params(req)
		p.Messages = chatMessages(c.cfg.Provider, req.System, req.Entries, c.imgs)
		want, err := p.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		want = append([]byte(`{"stream":true,`), want[1:]...)
		for pass := 0; pass < 2; pass++ { // the second pass is all cache hits
			got, err := c.body(req)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("request %d pass %d:\n got %s\nwant %s", i, pass, got, want)
			}
		}
	}
}

// BenchmarkChatBody is one request of a 1,000-turn tool loop whose history is
// already encoded (the steady state of a long run).
func BenchmarkChatBody(b *testing.B) {
	entries := []transcript.Entry{transcript.UserInput("go")}
	for i := 0; i < 1000; i++ {
		id := fmt.Sprintf("call_%d", i)
		entries = append(entries, transcript.ToolCall(id, "noop", json.RawMessage(`{}`)), transcript.ToolResult(id, "noop", "ok", false))
	}
	c := NewChat("gpt-4.1", Config{Provider: "openai", BaseURL: "http://127.0.0.1:1/v1"})
	req := provider.Request{System: "SYS", Entries: entries}
	if _, err := c.body(req); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.body(req); err != nil {
			b.Fatal(err)
		}
	}
}

// The same for the Responses adapter (a reasoning model: reasoning items are
// replayed).
func TestResponsesBodyMatchesClient(t *testing.T) {
	r := NewResponses("o4-mini", Config{Provider: "openai-responses", BaseURL: "http://127.0.0.1:1/v1"})
	for i, req := range bodyConversation() {
		for j := range req.Entries {
			if e := &req.Entries[j]; e.Type == transcript.TypeReasoning && e.Provider == "openai" {
				e.Provider, e.ProviderID, e.Encrypted = "openai-responses", "rs_1", "enc"
			}
		}
		p := r.params(req)
		p.Input.OfInputItemList = responseItems(r.cfg.Provider, req.Entries, r.imgs)
		want, err := p.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		want = append([]byte(`{"stream":true,`), want[1:]...)
		for pass := 0; pass < 2; pass++ {
			got, err := r.body(req)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("request %d pass %d:\n got %s\nwant %s", i, pass, got, want)
			}
		}
	}
}

// Requests in flight at once (agents sharing one adapter) each get their own
// correct body.
func TestChatBodyConcurrent(t *testing.T) {
	c := NewChat("gpt-4.1", Config{Provider: "openai", BaseURL: "http://127.0.0.1:1/v1"})
	reqs := bodyConversation()
	errc := make(chan error, 6)
	for g := 0; g < 6; g++ {
		go func() {
			for i, req := range reqs[g%3:] {
				p := c.params(req)
				p.Messages = chatMessages(c.cfg.Provider, req.System, req.Entries, c.imgs)
				want, err := p.MarshalJSON()
				if err != nil {
					errc <- err
					return
				}
				want = append([]byte(`{"stream":true,`), want[1:]...)
				got, err := c.body(req)
				if err != nil {
					errc <- err
					return
				}
				if !bytes.Equal(got, want) {
					errc <- fmt.Errorf("goroutine %d request %d: body differs", g, i)
					return
				}
			}
			errc <- nil
		}()
	}
	for g := 0; g < 6; g++ {
		if err := <-errc; err != nil {
			t.Error(err)
		}
	}
}
