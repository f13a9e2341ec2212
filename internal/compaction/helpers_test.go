package compaction

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/lovia-dev/lovia/internal/transcript"
)

// conv builds transcripts turn by turn.
type conv struct {
	body []transcript.Entry
	n    int
}

func (c *conv) user(text string) *conv {
	c.body = append(c.body, transcript.UserInput(text))
	return c
}

func (c *conv) say(text string) *conv {
	c.body = append(c.body, transcript.AssistantText(text))
	return c
}

// tool appends one assistant tool call and its result, returning the call id.
func (c *conv) tool(name, output string, isErr bool) string {
	c.n++
	id := fmt.Sprintf("call_%d", c.n)
	c.body = append(c.body, transcript.ToolCall(id, name, json.RawMessage(fmt.Sprintf(`{"n":%d}`, c.n))))
	c.body = append(c.body, transcript.ToolResult(id, name, output, isErr))
	return id
}

// big returns n characters of recognisable text.
func big(tag string, n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%s line %d: some tool output\n", tag, i)
	}
	return b.String()[:n]
}

// fakeSummarizer records calls and returns a deterministic summary.
type fakeSummarizer struct {
	mu    sync.Mutex
	calls []SummaryRequest
	fail  int // fail this many calls first
	err   error
}

func (f *fakeSummarizer) Summarize(_ context.Context, req SummaryRequest) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, req)
	if f.fail > 0 {
		f.fail--
		if f.err != nil {
			return "", f.err
		}
		return "", fmt.Errorf("summarizer down")
	}
	ids := []string{}
	for _, e := range req.Entries {
		if e.Type == transcript.TypeToolCall {
			ids = append(ids, e.CallID)
		}
	}
	return fmt.Sprintf("## Goal\nkeep going\n## Progress\n%d entries folded (previous %d chars); calls %s",
		len(req.Entries), len(req.Previous), strings.Join(ids, ",")), nil
}

func (f *fakeSummarizer) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// checkPairs fails when view holds a result without its call or a call without its
// result.
func checkPairs(t testing.TB, view []transcript.Entry) {
	t.Helper()
	calls, results := map[string]int{}, map[string]int{}
	for i, e := range view {
		switch e.Type {
		case transcript.TypeToolCall:
			calls[e.CallID] = i
		case transcript.TypeToolResult:
			c, ok := calls[e.CallID]
			if !ok {
				t.Fatalf("view[%d]: result %s without an earlier call", i, e.CallID)
			}
			if c > i {
				t.Fatalf("view[%d]: result %s before its call", i, e.CallID)
			}
			results[e.CallID] = i
		}
	}
	for id := range calls {
		if _, ok := results[id]; !ok {
			t.Fatalf("call %s without its result", id)
		}
	}
}

func mustCompact(t testing.TB, c *Compaction, req Request) Result {
	t.Helper()
	res, err := c.Compact(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// viewJSON serializes a view the way a provider request carries it (for byte-level
// prefix measurements).
func viewJSON(t testing.TB, system string, view []transcript.Entry) []byte {
	t.Helper()
	b, err := json.Marshal(struct {
		System  string             `json:"system"`
		Entries []transcript.Entry `json:"entries"`
	}{system, view})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func commonBytes(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
