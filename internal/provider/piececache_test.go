package provider

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/lovia-dev/lovia/internal/transcript"
)

// The cache's view is PairedView's, request after request, whatever the
// conversation does: calls answered late, out of order, never, twice; ids used
// again; orphan results; the prefix rewritten or changed in place.
func TestPieceCacheView(t *testing.T) {
	for seed := uint64(0); seed < 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		var c PieceCache
		var entries []transcript.Entry
		pending := []string{}
		for step := 0; step < 40; step++ {
			switch n := r.IntN(10); {
			case n < 3:
				id := fmt.Sprintf("c%d", r.IntN(30))
				entries = append(entries, transcript.ToolCall(id, "t", nil))
				pending = append(pending, id)
			case n < 6 && len(pending) > 0:
				i := r.IntN(len(pending))
				entries = append(entries, transcript.ToolResult(pending[i], "t", "ok", false))
				pending = append(pending[:i], pending[i+1:]...)
			case n < 7:
				entries = append(entries, transcript.ToolResult(fmt.Sprintf("c%d", r.IntN(30)), "t", "stray", false))
			case n < 8:
				entries = append(entries, transcript.AssistantText("a"))
			case n < 9:
				entries = append(entries, transcript.UserInput("u"))
			default:
				if len(entries) > 0 && r.IntN(2) == 0 {
					entries = append([]transcript.Entry(nil), entries...)
					entries[r.IntN(len(entries))].Text += "!"
				} else if len(entries) > 2 {
					entries = append([]transcript.Entry{transcript.UserInput("summary")}, entries[len(entries)/2:]...)
				}
			}
			b, got, gotOrig := c.BeginOrig(entries)
			want, wantOrig := PairedView(entries)
			if !reflect.DeepEqual(append([]int{}, gotOrig...), append([]int{}, wantOrig...)) {
				b.Done()
				t.Fatalf("seed %d step %d: orig %v, want %v", seed, step, gotOrig, wantOrig)
			}
			if !reflect.DeepEqual(append([]transcript.Entry{}, got...), append([]transcript.Entry{}, want...)) {
				b.Done()
				t.Fatalf("seed %d step %d:\n got %s\nwant %s\nentries %s", seed, step, brief(got), brief(want), brief(entries))
			}
			b.OK()
			b.Done()
		}
	}
}

func brief(es []transcript.Entry) string {
	s := ""
	for _, e := range es {
		s += fmt.Sprintf(" %s:%s:%s", string(e.Type)[:4], e.CallID, e.Text)
	}
	return s
}

// Conversations sharing one cache (agents on the same model, a summarizer) each
// keep their pieces: alternating requests still reuse the unchanged prefix.
func TestPieceCacheConversations(t *testing.T) {
	var c PieceCache
	convs := make([][]transcript.Entry, pieceSlots)
	for i := range convs {
		convs[i] = []transcript.Entry{transcript.UserInput(fmt.Sprintf("task %d", i))}
	}
	for round := 0; round < 5; round++ {
		for i := range convs {
			id := fmt.Sprintf("c%d_%d", i, round)
			convs[i] = append(convs[i], transcript.ToolCall(id, "t", nil), transcript.ToolResult(id, "t", "ok", false))
			b, view := c.Begin(convs[i])
			want, _ := PairedView(convs[i])
			if !reflect.DeepEqual(view, want) {
				t.Fatalf("round %d conversation %d: view differs", round, i)
			}
			if round > 0 && b.common != len(view)-2 {
				t.Errorf("round %d conversation %d: %d of %d view entries kept, want all but the new 2", round, i, b.common, len(view))
			}
			b.Put(0, len(view), 0, []byte("x"))
			b.OK()
			b.Done()
		}
	}
	// Two builders at once (concurrent requests) get different slots.
	b1, _ := c.Begin(convs[0])
	b2, _ := c.Begin(convs[0])
	if b1.s == b2.s {
		t.Fatal("two requests in flight share a slot")
	}
	b1.OK()
	b1.Done()
	b2.OK()
	b2.Done()
	if len(c.slots) > pieceSlots {
		t.Errorf("%d slots kept, want at most %d", len(c.slots), pieceSlots)
	}
}
