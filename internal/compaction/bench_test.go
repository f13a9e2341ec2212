package compaction

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/transcript"
)

// benchBody builds a coding session: user turns every 25 tool calls, results from a
// few hundred bytes to 30 KB.
func benchBody(entries int) []transcript.Entry {
	cv := &conv{}
	cv.user("Fix the failing tests in the storage package.")
	for i := 0; len(cv.body) < entries; i++ {
		if i%25 == 24 {
			cv.user(fmt.Sprintf("Now continue with step %d.", i/25))
			continue
		}
		cv.say(fmt.Sprintf("Step %d: checking.", i))
		size := 300 + (i*7919)%2500
		if i%9 == 0 {
			size = 30_000
		}
		cv.tool("shell", big(fmt.Sprintf("o%d", i), size), i%13 == 0)
	}
	return cv.body
}

// BenchmarkCompactTurn measures one turn's planning + render at ~2,000 entries in
// steady state: each iteration the body grows by a tool call and its result, as in a
// live run (the policy's state carried from the previous call).
func BenchmarkCompactTurn(b *testing.B) {
	const base, extra = 2000, 512
	body := benchBody(base + 2*extra)
	tools := []json.RawMessage{json.RawMessage(`{"name":"shell","parameters":{"type":"object"}}`)}
	c := New(Config{}, WithSummarizer(&fakeSummarizer{}))
	ctx := context.Background()
	system := strings.Repeat("system prompt ", 200)
	var state json.RawMessage
	// Warm up: the state a 2,000-entry run would have reached.
	for n := 200; n <= base; n += 200 {
		res, _ := c.Compact(ctx, Request{RunID: "r", SessionID: "s", Body: body[:n], System: system, Tools: tools,
			ContextWindow: 200_000, State: state})
		state = res.State
	}
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		n := base + 2*(i%extra)
		i++
		res, err := c.Compact(ctx, Request{RunID: "r", SessionID: "s", Body: body[:n], System: system, Tools: tools,
			ToolNames: []string{RecallToolName}, ContextWindow: 200_000, LastInputTokens: 90_000, State: state})
		if err != nil {
			b.Fatal(err)
		}
		state = res.State
	}
}

// BenchmarkCompactForce measures a full planning pass (every stage scanning 2,000
// entries) plus render, with nothing left to decide — the cost of a burst minus its
// I/O and summarizer call.
func BenchmarkCompactForce(b *testing.B) {
	body := benchBody(2000)
	c := New(Config{})
	ctx := context.Background()
	res, _ := c.Compact(ctx, Request{RunID: "r", SessionID: "s", Body: body, ContextWindow: 200_000, Force: true})
	state := res.State
	b.ReportAllocs()
	for b.Loop() {
		res, err := c.Compact(ctx, Request{RunID: "r", SessionID: "s", Body: body, ContextWindow: 200_000, Force: true, State: state})
		if err != nil {
			b.Fatal(err)
		}
		state = res.State
	}
}

// BenchmarkRenderCold is the pure Render with no marker cache (what a caller without
// the policy pays).
func BenchmarkRenderCold(b *testing.B) {
	body := benchBody(2000)
	c := New(Config{})
	res, _ := c.Compact(context.Background(), Request{RunID: "r", SessionID: "s", Body: body, ContextWindow: 200_000, Force: true})
	st, _ := ParseState(res.State)
	b.ReportAllocs()
	for b.Loop() {
		Render(body, st, RenderOptions{RecallTool: true})
	}
}
