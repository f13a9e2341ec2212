package compaction

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/transcript"
)

// randomSession grows a transcript the way runs do: user messages, assistant replies
// with optional reasoning and text and 0-3 tool calls, results in random completion
// order, sizes from tiny to huge.
type randomSession struct {
	rng  *rand.Rand
	body []transcript.Entry
	n    int
}

func (s *randomSession) text(max int) string {
	n := 1 + s.rng.IntN(max)
	if s.rng.IntN(4) == 0 {
		return strings.Repeat("ü漢", n/5+1) // multi-byte text
	}
	return big(fmt.Sprintf("t%d", s.rng.IntN(1000)), n)
}

func (s *randomSession) step() {
	if s.rng.IntN(5) == 0 || len(s.body) == 0 {
		s.body = append(s.body, transcript.UserInput(s.text(800)))
		return
	}
	if s.rng.IntN(3) == 0 {
		e := transcript.Reasoning(s.text(600))
		e.Signature = "sig"
		s.body = append(s.body, e)
	}
	if s.rng.IntN(2) == 0 {
		s.body = append(s.body, transcript.AssistantText(s.text(600)))
	}
	calls := s.rng.IntN(4)
	var ids []string
	for range calls {
		s.n++
		id := fmt.Sprintf("c%d", s.n)
		ids = append(ids, id)
		s.body = append(s.body, transcript.ToolCall(id, "shell", json.RawMessage(fmt.Sprintf(`{"i":%d}`, s.n))))
	}
	s.rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	sizes := []int{30, 800, 2500, 4500, 12000, 40000}
	for _, id := range ids {
		s.body = append(s.body, transcript.ToolResult(id, "shell", s.text(sizes[s.rng.IntN(len(sizes))]), s.rng.IntN(6) == 0))
	}
}

// TestPropertyViews: for random transcripts, across many seeds and every call:
// the view never holds an orphan result or call; decisions are monotonic; a call that
// made no new decision renders a view that extends the previous one byte for byte
// (StablePrefix = the whole previous view); and the policy's cached render equals the
// pure Render of the same state.
func TestPropertyViews(t *testing.T) {
	seeds := 120
	if testing.Short() || raceEnabled {
		seeds = 25
	}
	for seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 7))
			windows := []int{12_000, 20_000, 40_000}
			window := windows[rng.IntN(len(windows))]
			sum := SummarizerFunc(func(ctx context.Context, r SummaryRequest) (string, error) {
				if rng.IntN(4) == 0 {
					return "", fmt.Errorf("flaky summarizer")
				}
				return fmt.Sprintf("## Goal\nsummary of %d entries after %d chars", len(r.Entries), len(r.Previous)), nil
			})
			dir := t.TempDir()
			newPolicy := func() *Compaction {
				return New(Config{ReserveOutputTokens: 2_000}, WithSummarizer(sum), WithStore(NewDirStore(dir)))
			}
			c := newPolicy()
			run := 1
			s := &randomSession{rng: rng}
			recall := rng.IntN(2) == 0
			names := []string{"shell"}
			if recall {
				names = append(names, RecallToolName)
			}
			var state json.RawMessage
			prevState := &State{}
			var prevView []transcript.Entry
			for step := range 60 {
				s.step()
				switch rng.IntN(30) {
				case 0: // the next run of the session: the loop has no state, the policy carries it
					run++
					state = nil
				case 1: // resume in a new process: only the checkpointed state survives
					c = newPolicy()
				}
				r := Request{RunID: fmt.Sprint("r", run), SessionID: "s", Body: s.body, ContextWindow: window, State: state, ToolNames: names,
					LastInputTokens: rng.IntN(window), Force: rng.IntN(25) == 0}
				res := mustCompact(t, c, r)
				if rng.IntN(15) == 0 { // an overflow retry of the same call
					r.Overflow, r.Force, r.State = true, false, res.State
					res2 := mustCompact(t, c, r)
					// The retry's view counts as the next view.
					checkStep(t, step, s.body, prevState, prevView, res, recall)
					prevState, _ = ParseState(res.State)
					prevView = res.View
					res = res2
				}
				checkStep(t, step, s.body, prevState, prevView, res, recall)
				state = res.State
				prevState, _ = ParseState(res.State)
				prevView = res.View
			}
		})
	}
}

func checkStep(t *testing.T, step int, body []transcript.Entry, prev *State, prevView []transcript.Entry, res Result, recall bool) {
	t.Helper()
	checkPairs(t, res.View)
	st, err := ParseState(res.State)
	if err != nil {
		t.Fatalf("step %d: state: %v", step, err)
	}
	for id, ref := range prev.Offloaded {
		if got, ok := st.Offloaded[id]; !ok || got != ref {
			t.Fatalf("step %d: offload of %s undone", step, id)
		}
	}
	for id := range prev.Cleared {
		if !st.Cleared[id] {
			t.Fatalf("step %d: clear of %s undone", step, id)
		}
	}
	if prev.Summary != nil && (st.Summary == nil || st.Summary.Covered < prev.Summary.Covered) {
		t.Fatalf("step %d: summary coverage went back", step)
	}
	stable := 0
	for stable < min(len(prevView), len(res.View)) && reflect.DeepEqual(prevView[stable], res.View[stable]) {
		stable++
	}
	if res.StablePrefix != stable {
		t.Fatalf("step %d: StablePrefix %d, but %d leading entries are unchanged", step, res.StablePrefix, stable)
	}
	if !res.Compacted {
		if len(res.View) < len(prevView) || stable != len(prevView) {
			t.Fatalf("step %d: no new decision but the view does not extend the previous one (stable %d of %d)",
				step, res.StablePrefix, len(prevView))
		}
		for i := range prevView {
			if !reflect.DeepEqual(prevView[i], res.View[i]) {
				t.Fatalf("step %d: entry %d changed without a decision", step, i)
			}
		}
	}
	if want := Render(body, st, RenderOptions{RecallTool: recall}); !reflect.DeepEqual(want, res.View) {
		t.Fatalf("step %d: the policy's view differs from the pure Render of its state", step)
	}
	for _, e := range res.View {
		if e.IsSystem() {
			t.Fatalf("step %d: system entry in the view", step)
		}
	}
}
