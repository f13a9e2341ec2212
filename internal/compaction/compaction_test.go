package compaction

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/transcript"
)

// A 20k window with 4k reserved: usable 16,000, compact_at 13,600, compact_to 9,600,
// protected tail 3,200 tokens.
const testWindow = 20_000

var testCfg = Config{ReserveOutputTokens: 4_000}

func req(body []transcript.Entry, state json.RawMessage) Request {
	return Request{RunID: "r1", SessionID: "s1", Body: body, ContextWindow: testWindow, State: state,
		ToolNames: []string{"shell", RecallToolName}}
}

func TestNothingBelowCompactAt(t *testing.T) {
	c := New(testCfg)
	cv := &conv{}
	cv.user("hi")
	var state json.RawMessage
	var prev []transcript.Entry
	for turn := range 20 {
		cv.tool("shell", big("out", 2000), turn%3 == 0) // 20 x 500 tokens stays under 13,600
		res := mustCompact(t, c, req(cv.body, state))
		if res.Compacted || res.Info != nil {
			t.Fatalf("turn %d: compacted below the watermark: %+v", turn, res.Info)
		}
		if !reflect.DeepEqual(res.View, cv.body) {
			t.Fatalf("turn %d: view differs from the body below the watermark", turn)
		}
		if res.StablePrefix != len(prev) {
			t.Fatalf("turn %d: StablePrefix %d, want %d", turn, res.StablePrefix, len(prev))
		}
		prev, state = res.View, res.State
	}
}

func TestOffloadStage(t *testing.T) {
	dir := t.TempDir()
	c := New(testCfg, WithStore(NewDirStore(dir)))
	cv := &conv{}
	cv.user("Build it.")
	small := cv.tool("shell", big("small", 3999), false) // under the 4,000-char threshold
	var ids []string
	for i := range 6 {
		ids = append(ids, cv.tool("shell", big("huge"+string(rune('a'+i)), 8000), false))
	}
	res := mustCompact(t, c, req(cv.body, nil))
	if res.Compacted {
		t.Fatalf("under the watermark (%v)", res.Info)
	}
	ids = append(ids, cv.tool("shell", big("last", 8000), false))
	res = mustCompact(t, c, req(cv.body, res.State))
	if !res.Compacted || res.Info == nil {
		t.Fatal("over the watermark: want a burst")
	}
	if got := res.Info.Stages; !reflect.DeepEqual(got, []string{StageOffload}) {
		t.Errorf("stages %v, want only offload (it got under compact_to)", got)
	}
	if res.Info.Offloaded != 5 || res.Info.TokensAfter >= res.Info.TokensBefore || res.Info.TokensAfter > 9_600 {
		t.Errorf("info %+v: want 5 offloaded and under 9,600 tokens", res.Info)
	}
	st, _ := ParseState(res.State)
	for i, id := range ids {
		want := i < 5 // the last 2 results are kept
		if st.IsOffloaded(id) != want {
			t.Errorf("%s offloaded=%v, want %v", id, st.IsOffloaded(id), want)
		}
	}
	if st.IsOffloaded(small) {
		t.Error("a result under the threshold was offloaded")
	}
	// The full output is archived where the marker says.
	store := NewDirStore(dir)
	for _, e := range cv.body {
		if e.Type != transcript.TypeToolResult || !st.IsOffloaded(e.CallID) {
			continue
		}
		path := store.Path("s1", e.CallID)
		if st.Offloaded[e.CallID] != path {
			t.Errorf("%s archived at %q, want %q", e.CallID, st.Offloaded[e.CallID], path)
		}
		b, err := os.ReadFile(path)
		if err != nil || string(b) != e.Text {
			t.Errorf("%s: archive holds %d bytes (%v), want the full %d", e.CallID, len(b), err, len(e.Text))
		}
		if fi, err := os.Stat(path); err == nil && fi.Mode().Perm() != 0o600 {
			t.Errorf("archive mode %v, want 0600", fi.Mode().Perm())
		}
	}
	checkPairs(t, res.View)
	// The next call with nothing new keeps the view byte-stable.
	again := mustCompact(t, c, req(cv.body, res.State))
	if again.Compacted || again.StablePrefix != len(res.View) || !reflect.DeepEqual(again.View, res.View) {
		t.Errorf("second call changed the view (compacted=%v stable=%d/%d)", again.Compacted, again.StablePrefix, len(res.View))
	}
}

func TestClearStage(t *testing.T) {
	cfg := testCfg
	cfg.KeepRecentTokens = 100 // isolate keep_last from the protected tail
	c := New(cfg)
	cv := &conv{}
	cv.user("Check every file.")
	var ids []string
	var res Result
	for i := 0; ; i++ {
		ids = append(ids, cv.tool("read_file", big("file", 3000), i%4 == 0)) // 750 tokens, never offloaded
		res = mustCompact(t, c, req(cv.body, res.State))
		if res.Compacted {
			break
		}
		if i > 40 {
			t.Fatal("no burst")
		}
	}
	if !slices.Contains(res.Info.Stages, StageClear) || slices.Contains(res.Info.Stages, StageOffload) {
		t.Errorf("stages %v, want clear without offload", res.Info.Stages)
	}
	st, _ := ParseState(res.State)
	n := len(ids)
	for i, id := range ids {
		if st.IsCleared(id) != (i < n-3) {
			t.Errorf("%s cleared=%v, want %v (the last 3 are kept)", id, st.IsCleared(id), i < n-3)
		}
	}
	for i, e := range res.View {
		if e.Type == transcript.TypeToolResult && st.IsCleared(e.CallID) {
			orig := cv.body[i]
			if e.CallID != orig.CallID || e.IsError != orig.IsError || !strings.Contains(e.Text, RecallToolName) {
				t.Errorf("marker %d: %+v (from %s is_error=%v)", i, e, orig.CallID, orig.IsError)
			}
		}
	}
	if res.Info.Cleared != n-3 || res.Info.TokensAfter > 9_600 {
		t.Errorf("info %+v", res.Info)
	}
}

// textBody: n chat exchanges (a short question, an answer of ~600 tokens).
func textBody(n int) []transcript.Entry {
	cv := &conv{}
	for i := range n {
		cv.user("Next section, please.")
		cv.say(big("para"+string(rune('A'+i%26)), 2400))
	}
	return cv.body
}

func TestSummarizeStage(t *testing.T) {
	tests := []struct {
		name      string
		maxTokens int
		wantCall  bool
	}{
		{"summarized", 9_000, true},
		// Covering ~11k tokens with a summary of up to 10.5k saves under 10%: skipped.
		{"skipped under the minimum saving", 10_500, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sum := &fakeSummarizer{}
			cfg := testCfg
			cfg.Summary.MaxTokens = tt.maxTokens
			c := New(cfg, WithSummarizer(sum))
			body := textBody(24)
			res := mustCompact(t, c, req(body, nil))
			if got := sum.count() > 0; got != tt.wantCall {
				t.Fatalf("summarizer called=%v, want %v", got, tt.wantCall)
			}
			if !tt.wantCall {
				if res.Compacted {
					t.Error("nothing was decided, Compacted must be false")
				}
				return
			}
			st, _ := ParseState(res.State)
			k := st.Summary.Covered
			if k <= 1 || k >= len(body) {
				t.Fatalf("covered %d of %d", k, len(body))
			}
			if len(sum.calls[0].Entries) != k || sum.calls[0].Previous != "" {
				t.Errorf("first summary got %d entries (prev %q), want %d", len(sum.calls[0].Entries), sum.calls[0].Previous, k)
			}
			if !res.View[0].Synthetic || !strings.Contains(res.View[0].Text, "## Goal") || len(res.View) != len(body)-k+1 {
				t.Errorf("view does not start with the summary: %+v", res.View[0])
			}
			if res.Info.Summarized != k || !slices.Contains(res.Info.Stages, StageSummarize) {
				t.Errorf("info %+v", res.Info)
			}
			// Incremental: more text, a second burst folds only the new entries into
			// the previous summary.
			body = append(body, textBody(20)...)
			res2 := mustCompact(t, c, req(body, res.State))
			if !res2.Compacted || sum.count() != 2 {
				t.Fatalf("second burst: compacted=%v calls=%d", res2.Compacted, sum.count())
			}
			second := sum.calls[1]
			st2, _ := ParseState(res2.State)
			if second.Previous != st.Summary.Text || len(second.Entries) != st2.Summary.Covered-k {
				t.Errorf("incremental summary: previous=%q entries=%d, want %d", second.Previous, len(second.Entries), st2.Summary.Covered-k)
			}
		})
	}
}

func TestSummaryCircuitBreaker(t *testing.T) {
	sum := &fakeSummarizer{fail: 100}
	c := New(testCfg, WithSummarizer(sum))
	body := textBody(24)
	var state json.RawMessage
	for range 6 {
		res := mustCompact(t, c, req(body, state))
		if res.Compacted {
			t.Fatal("a failed summary is not a decision")
		}
		checkPairs(t, res.View)
		state = res.State
	}
	if sum.count() != 3 {
		t.Errorf("summarizer called %d times, want 3 (breaker opens after 3 failures)", sum.count())
	}
	// A new run of the session gets a fresh breaker.
	r := req(body, state)
	r.RunID = "r2"
	mustCompact(t, c, r)
	if sum.count() != 4 {
		t.Errorf("new run: summarizer called %d times, want 4", sum.count())
	}
}

func TestProtectedTail(t *testing.T) {
	mk := func(anchor bool, build func(cv *conv)) *planner {
		cv := &conv{}
		build(cv)
		var cnt counter
		raw, _ := cnt.count(cv.body)
		p := &planner{st: &State{}, r: newRenderer(RenderOptions{}), body: cv.body, raw: raw, keepRecent: 1000, anchor: anchor}
		p.crossing = crossings(p.body)
		return p
	}
	// Each tool turn: a call (~9 tokens) and a 2,000-character result (~507 tokens).
	t.Run("budgeted when the user message is too far back", func(t *testing.T) {
		p := mk(true, func(cv *conv) {
			cv.user("long task")
			for range 10 {
				cv.tool("shell", big("x", 2000), false)
			}
		})
		if got := p.tailStart(); got != 19 {
			t.Errorf("tail starts at %d, want 19 (the last call and result)", got)
		}
	})
	t.Run("anchored on the latest user message when affordable", func(t *testing.T) {
		p := mk(true, func(cv *conv) {
			cv.user("long task")
			for range 8 {
				cv.tool("shell", big("x", 2000), false)
			}
			cv.user("now do this") // index 17
			cv.tool("shell", big("y", 2000), false)
			cv.tool("shell", big("y", 2000), false)
		})
		if got := p.tailStart(); got != 17 {
			t.Errorf("tail starts at %d, want 17 (the user message)", got)
		}
	})
	t.Run("expanded over a call and its result and the whole message", func(t *testing.T) {
		p := mk(false, func(cv *conv) {
			cv.user("go")
			cv.say("thinking")                                                                                             // 1
			cv.body = append(cv.body, transcript.ToolCall("c1", "write_file", []byte(`{"content":"`+big("z", 4000)+`"}`))) // 2: ~1,000 tokens
			cv.body = append(cv.body, transcript.ToolResult("c1", "write_file", "ok", false))                              // 3
			cv.say(big("y", 1200))                                                                                         // 4
		})
		// The budget alone would cut between the call and its result (at 3); the tail
		// takes the call and the text of the same assistant message.
		if got := p.tailStart(); got != 1 {
			t.Errorf("tail starts at %d, want 1", got)
		}
		for k, want := range map[int]bool{1: true, 2: false, 3: false, 4: true} {
			if p.safeCut(k) != want {
				t.Errorf("safeCut(%d) = %v, want %v", k, !want, want)
			}
		}
	})
}

func TestOverflowAggressive(t *testing.T) {
	c := New(testCfg)
	cv := &conv{}
	cv.user("Dump the logs.")
	id := cv.tool("shell", big("log", 80_000), false) // 20k tokens: over the whole window
	res := mustCompact(t, c, req(cv.body, nil))
	if res.Compacted {
		t.Fatal("the latest result is protected on the normal path")
	}
	r := req(cv.body, res.State)
	r.Overflow = true
	res = mustCompact(t, c, r)
	if !res.Compacted || res.Info == nil || !res.Info.Overflow {
		t.Fatalf("overflow path: compacted=%v info=%+v", res.Compacted, res.Info)
	}
	st, _ := ParseState(res.State)
	if !st.IsOffloaded(id) {
		t.Error("an oversized single result must lose its immunity on the aggressive path")
	}
	if res.Info.TokensAfter > 4_000 {
		t.Errorf("aggressive target is 25%% of usable (4,000), got %d", res.Info.TokensAfter)
	}
	// Nothing new to decide: the loop must not retry again.
	r.State = res.State
	if again := mustCompact(t, c, r); again.Compacted {
		t.Error("second overflow pass made no decision but reported Compacted")
	}
}

func TestForce(t *testing.T) {
	sum := &fakeSummarizer{}
	c := New(testCfg, WithSummarizer(sum))
	cv := &conv{}
	cv.user("Refactor.")
	for i := range 8 {
		cv.tool("shell", big("out", 5000), false)
		cv.say("step " + string(rune('0'+i)))
	}
	res := mustCompact(t, c, req(cv.body, nil))
	if res.Compacted {
		t.Fatal("under the watermark")
	}
	r := req(cv.body, res.State)
	r.Force = true
	res = mustCompact(t, c, r)
	if !res.Compacted || res.Info == nil || !res.Info.Forced {
		t.Fatalf("force: compacted=%v info=%+v", res.Compacted, res.Info)
	}
	if !slices.Contains(res.Info.Stages, StageOffload) {
		t.Errorf("force ran %v, want offload at least", res.Info.Stages)
	}
	checkPairs(t, res.View)
	// Forcing again with nothing left reports the pass without decisions.
	r.State = res.State
	again := mustCompact(t, c, r)
	if again.Info == nil || !again.Info.Forced {
		t.Errorf("a forced pass always reports: %+v", again.Info)
	}
}

func TestCompactNext(t *testing.T) {
	c := New(testCfg)
	cv := &conv{}
	cv.user("Refactor.")
	for range 8 {
		cv.tool("shell", big("out", 5000), false)
	}
	res := mustCompact(t, c, req(cv.body, nil))
	if res.Compacted {
		t.Fatal("under the watermark")
	}
	c.CompactNext("s1")
	res = mustCompact(t, c, req(cv.body, res.State))
	if !res.Compacted || res.Info == nil || !res.Info.Forced {
		t.Fatalf("CompactNext did not force the next pass: %+v", res.Info)
	}
	if again := mustCompact(t, c, req(cv.body, res.State)); again.Info != nil {
		t.Error("CompactNext must force only one pass")
	}
}

func TestStateSurvivesResume(t *testing.T) {
	sum := &fakeSummarizer{}
	a := New(testCfg, WithSummarizer(sum))
	cv := &conv{}
	cv.user("Long task.")
	var res Result
	for i := range 40 {
		cv.tool("shell", big("out", 1500+i*200), i%5 == 0)
		res = mustCompact(t, a, req(cv.body, res.State))
	}
	st, _ := ParseState(res.State)
	if len(st.Cleared)+len(st.Offloaded) == 0 {
		t.Fatal("the scenario should have made decisions")
	}
	// A new process (no in-memory cache) resumes from the checkpointed state.
	b := New(testCfg, WithSummarizer(sum))
	resumed := mustCompact(t, b, req(cv.body, res.State))
	if resumed.Compacted || !reflect.DeepEqual(resumed.View, res.View) {
		t.Errorf("resumed view differs (compacted=%v)", resumed.Compacted)
	}
	// The first call of the new process knows the previous view was the same.
	if resumed.StablePrefix != len(res.View) {
		t.Errorf("StablePrefix after resume %d, want %d", resumed.StablePrefix, len(res.View))
	}
}

func TestStateCarriedAcrossRuns(t *testing.T) {
	sum := &fakeSummarizer{}
	c := New(testCfg, WithSummarizer(sum))
	cv := &conv{body: textBody(24)}
	cv.tool("shell", big("x", 5000), false)
	for range 6 {
		cv.tool("shell", "ok", false)
	}
	res := mustCompact(t, c, req(cv.body, nil))
	st, _ := ParseState(res.State)
	if st.Summary == nil {
		t.Fatal("scenario should summarize")
	}
	// Run 2 of the session: the loop has no state for it, the policy carries it.
	cv.user("Next request.")
	r := req(cv.body, nil)
	r.RunID = "r2"
	res2 := mustCompact(t, c, r)
	if res2.Compacted || !res2.View[0].Synthetic || !reflect.DeepEqual(res2.View[:len(res.View)], res.View) {
		t.Errorf("run 2 did not carry the decisions (compacted=%v)", res2.Compacted)
	}
	// Run 3: the history was trimmed (the covered prefix changed): the summary is
	// reset, call_id decisions stay.
	r = req(cv.body[2:], nil)
	r.RunID = "r3"
	c.summarizer = nil // no new summary, so the reset is visible
	res3 := mustCompact(t, c, r)
	st3, _ := ParseState(res3.State)
	if st3.Summary != nil || res3.View[0].Synthetic {
		t.Error("a changed prefix must reset the summary")
	}
	if len(st3.Offloaded)+len(st3.Cleared) != len(st.Offloaded)+len(st.Cleared) {
		t.Error("call_id decisions must survive a summary reset")
	}
}

// TestStateCarriedAcrossProcesses: each `lovia run -c` is a new process whose run
// starts without state; the decisions come back from the store's saved state.
func TestStateCarriedAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	sum := &fakeSummarizer{}
	a := New(testCfg, WithSummarizer(sum), WithStore(NewDirStore(dir)))
	cv := &conv{body: textBody(24)}
	cv.tool("shell", big("x", 5000), false)
	res := mustCompact(t, a, req(cv.body, nil))
	if !res.Compacted {
		t.Fatal("scenario should compact")
	}
	cv.user("Next request.")
	b := New(testCfg, WithSummarizer(sum), WithStore(NewDirStore(dir)))
	r := req(cv.body, nil)
	r.RunID = "r2"
	res2 := mustCompact(t, b, r)
	if res2.Compacted || sum.count() != 1 || !reflect.DeepEqual(res2.View[:len(res.View)], res.View) {
		t.Errorf("the new process re-planned (compacted=%v, summaries=%d)", res2.Compacted, sum.count())
	}
	if res2.StablePrefix != len(res.View) {
		t.Errorf("StablePrefix %d, want %d", res2.StablePrefix, len(res.View))
	}
	// Another session of the same store starts fresh (and so plans its own view).
	r.SessionID = "other"
	if res3 := mustCompact(t, b, r); !res3.Compacted || sum.count() != 2 {
		t.Errorf("a session without saved state must plan from scratch (compacted=%v)", res3.Compacted)
	}
}

func TestSessionCacheIsBounded(t *testing.T) {
	c := New(testCfg, WithCacheSize(2))
	body := textBody(2)
	for _, s := range []string{"a", "b", "c", "a"} {
		r := req(body, nil)
		r.SessionID = s
		mustCompact(t, c, r)
	}
	if len(c.sessions) != 2 {
		t.Errorf("%d sessions cached, want 2", len(c.sessions))
	}
	if _, ok := c.sessions["b"]; ok {
		t.Error("the least recently used session should have been evicted")
	}
}

func TestCalibrationTracksProvider(t *testing.T) {
	c := New(testCfg)
	body := textBody(10)
	res := mustCompact(t, c, req(body, nil))
	st, _ := ParseState(res.State)
	for range 30 {
		r := req(body, res.State)
		r.LastInputTokens = st.LastRaw * 2 // the provider's tokenizer counts double
		res = mustCompact(t, c, r)
		st, _ = ParseState(res.State)
		body = append(body, transcript.AssistantText("more"))
	}
	if st.Ratio < 1.95 || st.Ratio > 2.0 {
		t.Errorf("ratio %v, want ~2", st.Ratio)
	}
}

func TestCompactConcurrentSessions(t *testing.T) {
	c := New(testCfg, WithSummarizer(&fakeSummarizer{}))
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			cv := &conv{}
			cv.user("go")
			var state json.RawMessage
			for i := range 30 {
				cv.tool("shell", big("o", 1000+i*300), false)
				r := req(cv.body, state)
				r.SessionID = string(rune('a' + g))
				res, err := c.Compact(context.Background(), r)
				if err != nil {
					t.Error(err)
					return
				}
				state = res.State
			}
		}()
	}
	for range 4 {
		<-done
	}
}
