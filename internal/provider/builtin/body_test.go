package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/lovia-dev/lovia/internal/provider"
	pt "github.com/lovia-dev/lovia/internal/provider/providertest"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// topLevel decodes a JSON object's members, failing on a repeated key.
func topLevel(t *testing.T, body []byte) map[string]json.RawMessage {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("body is not an object: %s", body)
	}
	m := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		k := tok.(string)
		if _, dup := m[k]; dup {
			t.Fatalf("key %q twice in %s", k, body)
		}
		m[k] = v
	}
	return m
}

// Each adapter sends its cached-piece bodies as the client would: JSON, stream
// set once, and every turn's history in order, request after request.
func TestWireBodiesGrowingConversation(t *testing.T) {
	const turns = 4
	script := func() []pt.Turn {
		var ts []pt.Turn
		for i := 0; i < turns; i++ {
			ts = append(ts, pt.Turn{Calls: []pt.Call{{ID: fmt.Sprintf("call_%d", i), Name: "noop", Args: `{}`}}})
		}
		return append(ts, pt.Turn{Text: "done"})
	}
	servers := map[string]*pt.Server{
		"openai:gpt-4.1":              pt.NewOpenAIServer(t, script()...),
		"openai-responses:o4-mini":    pt.NewResponsesServer(t, script()...),
		"anthropic:claude-sonnet-4-5": pt.NewAnthropicServer(t, script()...),
	}
	for spec, srv := range servers {
		t.Run(spec, func(t *testing.T) {
			r := provider.NewRegistry(srv.Env())
			Register(r)
			p, err := r.Resolve(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			req := provider.Request{System: "SYS", Entries: []transcript.Entry{transcript.UserInput("go")},
				Tools: []provider.ToolDef{{Name: "noop", Schema: json.RawMessage(`{"type":"object","properties":{}}`)}}}
			for i := 0; i <= turns; i++ {
				res := pt.Collect(context.Background(), p, req)
				if res.Err != nil {
					t.Fatalf("turn %d: %v", i, res.Err)
				}
				req.Entries = append(req.Entries, res.Entries...)
				for _, e := range res.Entries {
					if e.Type == transcript.TypeToolCall {
						req.Entries = append(req.Entries, transcript.ToolResult(e.CallID, e.Name, fmt.Sprintf("out %d", i), false))
					}
				}
				req.StablePrefix = len(req.Entries) - 2
			}
			reqs := srv.Requests()
			if len(reqs) != turns+1 {
				t.Fatalf("%d requests", len(reqs))
			}
			for i, rq := range reqs {
				if ct := rq.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("request %d content type %q", i, ct)
				}
				m := topLevel(t, rq.Body)
				if string(m["stream"]) != "true" {
					t.Errorf("request %d stream %s", i, m["stream"])
				}
				for j := 0; j < i; j++ {
					want := fmt.Sprintf(`"call_%d"`, j)
					out := fmt.Sprintf(`out %d`, j)
					if c, o := bytes.Index(rq.Body, []byte(want)), bytes.Index(rq.Body, []byte(out)); c < 0 || o < c {
						t.Errorf("request %d: call %d and its result not in order: %s", i, j, rq.Body)
					}
				}
			}
		})
	}
}
