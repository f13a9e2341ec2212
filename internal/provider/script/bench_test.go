package script

import (
	"context"
	"fmt"
	"testing"

	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// BenchmarkStream measures one scripted reply at the turn a view of n prior turns
// selects (the reply-counting scan is linear in the view).
func BenchmarkStream(b *testing.B) {
	for _, turns := range []int{10, 1000} {
		b.Run(fmt.Sprintf("turn%d", turns), func(b *testing.B) {
			s := &Script{ContextWindow: DefaultContextWindow}
			for range turns + 1 {
				s.Turns = append(s.Turns, Turn{Text: "working on it", ToolCalls: []Call{{Name: "noop", Args: map[string]any{"i": 1}}}})
			}
			p := New("bench.yaml", s)
			p.SetRecording(false)
			view := []transcript.Entry{{Type: transcript.TypeInput, Role: "user", Text: "go", RunID: "r"}}
			for i := range turns {
				id := fmt.Sprint(i)
				view = append(view, transcript.AssistantText("working on it"), transcript.ToolCall(id, "noop", nil), transcript.ToolResult(id, "noop", "ok", false))
			}
			req := provider.Request{Entries: view}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				for _, err := range p.Stream(context.Background(), req) {
					if err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
