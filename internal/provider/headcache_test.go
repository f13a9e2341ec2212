package provider

import (
	"encoding/json"
	"fmt"
	"testing"
)

// The head is encoded once per request shape; any change of an input it depends
// on (a tool's schema edited in the caller's own buffer included) encodes it anew.
func TestHeadCacheEncodesOncePerShape(t *testing.T) {
	var h HeadCache
	calls := 0
	head := func(req Request) string {
		t.Helper()
		js, err := h.Head(req, func() ([]byte, error) {
			calls++
			b, err := json.Marshal(struct {
				Model, System string
				Tools         []ToolDef
				Max           int
			}{req.Model, req.System, req.Tools, req.MaxOutputTokens})
			return b, err
		})
		if err != nil {
			t.Fatal(err)
		}
		return string(js)
	}
	schema := []byte(`{"type":"object"}`)
	req := Request{Model: "m", System: "sys", Tools: []ToolDef{{Name: "read", Description: "reads", Schema: schema}}}
	first := head(req)
	req.Entries = append(req.Entries, req.Entries...) // the conversation is not part of the head
	req.StablePrefix = 3
	if got := head(req); got != first || calls != 1 {
		t.Fatalf("same shape: %d encodings, head %s (want %s)", calls, got, first)
	}
	copy(schema, `{"type":"string"}`) // the caller reuses its buffer
	if got := head(req); got == first || calls != 2 {
		t.Fatalf("edited schema: %d encodings, head %s", calls, got)
	}
	for i, change := range []func(r *Request){
		func(r *Request) { r.Model = "other" },
		func(r *Request) { r.System = "sys2" },
		func(r *Request) { r.MaxOutputTokens = 9 },
		func(r *Request) { r.ToolChoice = "none" },
		func(r *Request) { r.OutputSchema = json.RawMessage(`{}`) },
		func(r *Request) { r.OutputName = "x" },
		func(r *Request) { r.Tools = append(r.Tools[:1:1], ToolDef{Name: "b"}) },
		func(r *Request) { r.Tools = []ToolDef{{Name: "read", Description: "other", Schema: r.Tools[0].Schema}} },
	} {
		r := req
		change(&r)
		before := calls
		head(r)
		if calls != before+1 {
			t.Fatalf("change %d reused a head made from other inputs", i)
		}
	}
	// Several shapes alternate (agents and the summarizer share an adapter).
	a, b := Request{Model: "a"}, Request{Model: "b"}
	head(a)
	head(b)
	before := calls
	for range 3 {
		head(a)
		head(b)
	}
	if calls != before {
		t.Fatalf("alternating shapes: %d more encodings", calls-before)
	}
	if fmt.Sprint(head(a)) == fmt.Sprint(head(b)) {
		t.Fatal("two shapes share a head")
	}
}
