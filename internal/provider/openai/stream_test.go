package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	oa "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/lovia-dev/lovia/internal/provider"
	pt "github.com/lovia-dev/lovia/internal/provider/providertest"
)

// checkStream runs decode over body and checks the stream contract: no panic, at
// most one error and nothing after it, otherwise exactly one Finish, last; every
// tool_call entry carries valid JSON args.
func checkStream(t *testing.T, decode func(context.Context, io.Reader, func(provider.Delta, error) bool), body []byte) {
	t.Helper()
	var failed, finished bool
	decode(context.Background(), bytes.NewReader(body), func(d provider.Delta, err error) bool {
		if failed || finished {
			t.Fatalf("delta after the end: %+v %v", d, err)
		}
		if err != nil {
			failed = true
			return false
		}
		switch d.Kind {
		case provider.DeltaFinish:
			finished = true
		case provider.DeltaEntry:
			if d.Entry == nil || (len(d.Entry.Args) > 0 && !json.Valid(d.Entry.Args)) {
				t.Fatalf("bad entry %+v", d.Entry)
			}
		}
		return true
	})
	if !failed && !finished {
		t.Fatal("stream ended with neither an error nor a finish")
	}
}

func seeds(f *testing.F, dir string) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "providers", dir, "*.sse"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("data: [DONE]\n\n"))
	f.Add([]byte("data: {}\n\ndata: [1,2]\n\n"))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0},{\"index\":-1,\"id\":\"x\"}]}}]}\n\n"))
}

func FuzzChatStream(f *testing.F) {
	seeds(f, "openai")
	f.Add(pt.OpenAIStream(pt.Turn{Reasoning: "r", Text: "héllo wörld", Calls: []pt.Call{{ID: "a", Name: "f", Args: `{"x":1}`}}}, 1))
	c := NewChat("m", Config{Provider: "openai", BaseURL: "http://x"})
	f.Fuzz(func(t *testing.T, body []byte) { checkStream(t, c.decodeBody, body) })
}

func FuzzResponsesStream(f *testing.F) {
	seeds(f, "openai-responses")
	f.Add(pt.ResponsesStream(pt.Turn{Reasoning: "r", Text: "héllo", Calls: []pt.Call{{ID: "a", Name: "f", Args: `{"x":1}`}}}, 1))
	r := NewResponses("m", Config{Provider: "openai-responses", BaseURL: "http://x"})
	f.Fuzz(func(t *testing.T, body []byte) { checkStream(t, r.decodeBody, body) })
}

// The generated streams and the fixtures always satisfy the contract.
func TestStreamContract(t *testing.T) {
	c := NewChat("m", Config{Provider: "openai", BaseURL: "http://x"})
	r := NewResponses("m", Config{Provider: "openai-responses", BaseURL: "http://x"})
	turn := pt.Turn{Reasoning: strings.Repeat("ré", 50), Text: strings.Repeat("ü", 99), Chunk: 5,
		Calls: []pt.Call{{ID: "a", Name: "f", Args: `{"x":"` + strings.Repeat("y", 40) + `"}`}, {ID: "b", Name: "g"}}}
	checkStream(t, c.decodeBody, pt.OpenAIStream(turn, 1))
	checkStream(t, r.decodeBody, pt.ResponsesStream(turn, 1))
	checkStream(t, c.decodeBody, nil)
	checkStream(t, r.decodeBody, []byte("event: x\ndata: not json\n\n"))
}

const benchReply = 1 << 20

func benchTurn() pt.Turn {
	return pt.Turn{Text: strings.Repeat("lovia ", benchReply/6+1)[:benchReply], Chunk: 6}
}

func benchDecode(b *testing.B, body []byte, decode func(context.Context, io.Reader, func(provider.Delta, error) bool)) {
	b.SetBytes(benchReply) // MB/s of reply text, not of wire bytes
	b.ReportAllocs()
	cpu := pt.CPUTime()
	defer func() {
		pt.ReportCPU(b, cpu)
		b.ReportMetric(float64(len(body))/benchReply, "wire-bytes/reply-byte")
	}()
	for b.Loop() {
		var text int
		decode(context.Background(), bytes.NewReader(body), func(d provider.Delta, err error) bool {
			if err != nil {
				b.Fatal(err)
			}
			if d.Kind == provider.DeltaEntry {
				text += len(d.Entry.Text)
			}
			return true
		})
		if text != benchReply {
			b.Fatalf("reply %d bytes, want %d", text, benchReply)
		}
	}
}

// BenchmarkChatStream: a 1 MiB reply in 6-byte deltas through the Chat adapter.
func BenchmarkChatStream(b *testing.B) {
	c := NewChat("m", Config{Provider: "openai", BaseURL: "http://x"})
	benchDecode(b, pt.OpenAIStream(benchTurn(), 1), c.decodeBody)
}

// BenchmarkResponsesStream: the same through the Responses adapter.
func BenchmarkResponsesStream(b *testing.B) {
	r := NewResponses("m", Config{Provider: "openai-responses", BaseURL: "http://x"})
	benchDecode(b, pt.ResponsesStream(benchTurn(), 1), r.decodeBody)
}

// BenchmarkChatStreamSDK decodes the same body with the client's typed stream,
// the alternative this package's decoder replaces (for comparison only).
func BenchmarkChatStreamSDK(b *testing.B) {
	body := pt.OpenAIStream(benchTurn(), 1)
	b.SetBytes(benchReply)
	b.ReportAllocs()
	cpu := pt.CPUTime()
	defer func() { pt.ReportCPU(b, cpu) }()
	for b.Loop() {
		resp := &http.Response{Body: io.NopCloser(bytes.NewReader(body)), Header: http.Header{"Content-Type": {"text/event-stream"}}}
		s := ssestream.NewStream[oa.ChatCompletionChunk](ssestream.NewDecoder(resp), nil)
		var text strings.Builder
		for s.Next() {
			if c := s.Current(); len(c.Choices) > 0 {
				text.WriteString(c.Choices[0].Delta.Content)
			}
		}
		if s.Err() != nil || text.Len() != benchReply {
			b.Fatal(s.Err(), text.Len())
		}
	}
}
