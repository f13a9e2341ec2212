package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/provider"
	pt "github.com/lovia-dev/lovia/internal/provider/providertest"
)

// checkStream runs the decoder over body and checks the stream contract: no
// panic, at most one error and nothing after it, otherwise exactly one Finish,
// last; every tool_call entry carries valid JSON args.
func checkStream(t *testing.T, p *Provider, body []byte) {
	t.Helper()
	var failed, finished bool
	p.decodeBody(context.Background(), bytes.NewReader(body), func(d provider.Delta, err error) bool {
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

func FuzzStream(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "providers", "anthropic", "*.sse"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(pt.AnthropicStream(pt.Turn{Reasoning: "r", Text: "héllo", Calls: []pt.Call{{ID: "a", Name: "f", Args: `{"x":1}`}}}, 1))
	f.Add([]byte("data: {\"type\":\"content_block_delta\",\"index\":7}\n\n"))
	p := New("m", Config{BaseURL: "http://x"})
	f.Fuzz(func(t *testing.T, body []byte) { checkStream(t, p, body) })
}

func TestStreamContract(t *testing.T) {
	p := New("m", Config{BaseURL: "http://x"})
	checkStream(t, p, pt.AnthropicStream(pt.Turn{Reasoning: strings.Repeat("é", 30), Text: "x", Chunk: 3,
		Calls: []pt.Call{{ID: "a", Name: "f", Args: `{"k":"v"}`}, {ID: "b", Name: "g"}}}, 1))
	checkStream(t, p, nil)
	checkStream(t, p, []byte("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"))
}

const benchReply = 1 << 20

// BenchmarkStream: a 1 MiB reply in 6-byte deltas through the adapter.
func BenchmarkStream(b *testing.B) {
	p := New("m", Config{BaseURL: "http://x"})
	body := pt.AnthropicStream(pt.Turn{Text: strings.Repeat("lovia ", benchReply/6+1)[:benchReply], Chunk: 6}, 1)
	b.SetBytes(benchReply) // MB/s of reply text, not of wire bytes
	b.ReportAllocs()
	cpu := pt.CPUTime()
	defer func() {
		pt.ReportCPU(b, cpu)
		b.ReportMetric(float64(len(body))/benchReply, "wire-bytes/reply-byte")
	}()
	for b.Loop() {
		var text int
		p.decodeBody(context.Background(), bytes.NewReader(body), func(d provider.Delta, err error) bool {
			if err != nil {
				b.Fatal(err)
			}
			if d.Kind == provider.DeltaEntry {
				text += len(d.Entry.Text)
			}
			return true
		})
		if text != benchReply {
			b.Fatalf("reply %d bytes", text)
		}
	}
}
