package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// bodyConversation is a sequence of requests as a run makes them (see the
// openai package's): views extending one another with the stable prefix
// following them, thinking, another provider's reasoning, empty text, a rewritten
// prefix, an entry changed in place, attachments and a dangling call.
func bodyConversation() []provider.Request {
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"a <file> & more"}},"required":["path"]}`)
	tools := []provider.ToolDef{{Name: "read_file", Description: "Read a file", Schema: schema}}
	var reqs []provider.Request
	prev := 0
	add := func(entries []transcript.Entry, stable int) {
		reqs = append(reqs, provider.Request{System: "SYS <x>", Entries: append([]transcript.Entry(nil), entries...),
			Tools: tools, MaxOutputTokens: 1000, StablePrefix: stable})
	}
	grow := func(entries []transcript.Entry) {
		add(entries, prev)
		prev = len(entries)
	}
	view := []transcript.Entry{transcript.UserInput("list and read <b>&</b>")}
	grow(view)
	view = append(view,
		transcript.Entry{Type: transcript.TypeReasoning, Text: "thought", Signature: "sig", Provider: Prefix},
		transcript.Entry{Type: transcript.TypeReasoning, Text: "other", Provider: "openai"},
		transcript.AssistantText("  "),
		transcript.AssistantText("Reading both."),
		transcript.ToolCall("c1", "read_file", json.RawMessage(`{"path":"a.go"}`)),
		transcript.ToolCall("c2", "read_file", json.RawMessage(`"not json"`)))
	grow(view)
	view = append(view, transcript.ToolResult("c2", "read_file", "package b", false),
		transcript.ToolResult("c1", "read_file", "no such file", true))
	grow(view)
	for i := 0; i < 4; i++ {
		id := fmt.Sprintf("d%d", i)
		view = append(view, transcript.Entry{Type: transcript.TypeReasoning, Encrypted: "red", Provider: Prefix},
			transcript.ToolCall(id, "shell", nil), transcript.ToolResult(id, "shell", "ok", false))
		grow(view)
	}
	view = append(view, transcript.UserInput("now summarise"),
		transcript.Entry{Type: transcript.TypeInput, Role: transcript.RoleSystem, Text: ""},
		transcript.Entry{Type: transcript.TypeInput, Role: transcript.RoleUser, Text: "look",
			Attachments: []transcript.Attachment{{MIME: "image/png", Name: "a.png", Data: []byte{1, 2, 3}}, {MIME: "text/plain", Name: "n.txt"}}},
		transcript.ToolCall("e1", "shell", nil))
	grow(view)
	add(view, 0)
	add(view, len(view))
	compacted := append([]transcript.Entry{transcript.UserInput("[summary]")}, view[5:]...)
	add(compacted, 1)
	add(compacted, 3)
	changed := append([]transcript.Entry(nil), compacted...)
	changed[2].Text = "Reading bath."
	add(changed, 3)
	add(nil, 0)
	return reqs
}

// The body built from cached pieces is, byte for byte, what the client encodes
// from the full parameters ("stream" put first), on every request of a
// conversation.
func TestBodyMatchesClient(t *testing.T) {
	for _, thinking := range []string{"", "2048"} {
		p := New("claude-sonnet-4-5", Config{BaseURL: "http://127.0.0.1:1", APIKey: "k", Thinking: thinking})
		for i, req := range bodyConversation() {
			params := p.params(req)
			full := params
			full.Messages = messages(req.Entries, req.StablePrefix, p.imgs)
			want, err := full.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			want = append([]byte(`{"stream":true,`), want[1:]...)
			for pass := 0; pass < 2; pass++ {
				got, err := p.body(params, req)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("thinking %q request %d pass %d:\n got %s\nwant %s", thinking, i, pass, got, want)
				}
			}
		}
	}
}

// BenchmarkBody is one request of a 1,000-turn tool loop whose history is
// already encoded (the steady state of a long run).
func BenchmarkBody(b *testing.B) {
	entries := []transcript.Entry{transcript.UserInput("go")}
	for i := 0; i < 1000; i++ {
		id := fmt.Sprintf("call_%d", i)
		entries = append(entries, transcript.ToolCall(id, "noop", json.RawMessage(`{}`)), transcript.ToolResult(id, "noop", "ok", false))
	}
	p := New("claude-sonnet-4-5", Config{BaseURL: "http://127.0.0.1:1", APIKey: "k"})
	req := provider.Request{System: "SYS", Entries: entries, StablePrefix: len(entries) - 2}
	params := p.params(req)
	if _, err := p.body(params, req); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.body(params, req); err != nil {
			b.Fatal(err)
		}
	}
}
