package sqlite

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

func TestSessionAppendLoadIdempotent(t *testing.T) {
	ctx := ctxT(t)
	db := openTest(t)
	ss := db.Sessions()
	if got, err := ss.Load(ctx, "new"); got != nil || err != nil {
		t.Errorf("Load of a new session = %v, %v; want nil, nil", got, err)
	}
	seg1 := []transcript.Entry{transcript.UserInput("first"), transcript.AssistantText("one")}
	seg2 := append([]transcript.Entry{transcript.UserInput("second")}, toolPair("c1", "out")...)
	seg2 = append(seg2, transcript.Entry{Type: transcript.TypeToolResult, Text: "marker", Synthetic: true})
	steps := []struct {
		run     string
		entries []transcript.Entry
	}{
		{"r1", seg1},
		{"r2", seg2},
		{"r1", []transcript.Entry{transcript.UserInput("DIFFERENT")}}, // re-issued run: ignored
		{"r2", seg2},
	}
	for _, s := range steps {
		if err := ss.Append(ctx, "s", s.run, s.entries, nil); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ss.Load(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	want := "input:first|assistant_text:one|input:second|tool_call:|tool_result:out"
	if g := strings.Join(texts(got), "|"); g != want {
		t.Errorf("Load = %s, want %s", g, want)
	}
	runs, err := ss.SessionRuns(ctx, "s")
	if err != nil || len(runs) != 2 || runs[0].RunID != "r1" || runs[1].RunID != "r2" || runs[1].Entries != 3 {
		t.Errorf("SessionRuns = %+v, %v", runs, err)
	}
	// The same run id in another session is another segment.
	if err := ss.Append(ctx, "other", "r1", seg1, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := ss.Load(ctx, "other"); len(got) != 2 {
		t.Errorf("other session: %v", texts(got))
	}
	// An empty run is still a segment (a run that produced nothing is still recorded).
	if err := ss.Append(ctx, "s", "r3", nil, nil); err != nil {
		t.Fatal(err)
	}
	if info, _ := ss.GetSession(ctx, "s"); info.Runs != 3 || info.Entries != 5 {
		t.Errorf("info = %+v", info)
	}
}

func TestSessionMetadataAndListing(t *testing.T) {
	ctx := ctxT(t)
	db := openTest(t)
	ss, cp := db.Sessions(), db.Checkpoints()
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	db.now = func() time.Time { clock = clock.Add(time.Minute); return clock }

	long := "please   refactor\nthe whole " + strings.Repeat("very ", 40) + "long module"
	meta := func(cwd, repo string, u *usage.Usage) json.RawMessage {
		b, _ := json.Marshal(SessionMeta{Cwd: cwd, Repo: repo, Usage: u})
		return b
	}
	// s-a: two runs in repo /p, usage from meta and from the run's checkpoint head.
	if err := ss.Append(ctx, "s-a", "a1", []transcript.Entry{transcript.SystemInput("sys"), transcript.UserInput(long)},
		meta("/p/sub", "/p", &usage.Usage{InputTokens: 10, OutputTokens: 5, CachedInputTokens: 2, Requests: 1})); err != nil {
		t.Fatal(err)
	}
	h := store.Head{Status: store.StatusCompleted, Agent: "a", SessionID: "s-a", Usage: usage.Usage{InputTokens: 100, OutputTokens: 50, Requests: 2}}
	if err := cp.Append(ctx, "a2", nil, h); err != nil {
		t.Fatal(err)
	}
	if err := ss.Append(ctx, "s-a", "a2", []transcript.Entry{transcript.UserInput("next")}, meta("/p/sub", "/p", nil)); err != nil {
		t.Fatal(err)
	}
	// s-b: EnsureSession first (chat started), run later; other repo.
	if err := ss.EnsureSession(ctx, "s-b", SessionMeta{Cwd: "/q", Repo: "/q"}); err != nil {
		t.Fatal(err)
	}
	// s-c: same repo as s-a, updated last, explicit title.
	if err := ss.Append(ctx, "s-c", "c1", []transcript.Entry{transcript.UserInput("hello")},
		json.RawMessage(`{"cwd":"/p","repo":"/p","title":"My title"}`)); err != nil {
		t.Fatal(err)
	}

	list := func(f SessionFilter) string {
		t.Helper()
		all, err := ss.ListSessions(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var order []string
		for _, s := range all {
			order = append(order, s.ID)
		}
		return strings.Join(order, ",")
	}
	if got := list(SessionFilter{IncludeEmpty: true}); got != "s-c,s-b,s-a" {
		t.Errorf("order = %v", got)
	}
	// s-b was never used by a run: listings skip it unless asked.
	if got := list(SessionFilter{}); got != "s-c,s-a" {
		t.Errorf("order without empty sessions = %v", got)
	}
	a, _ := ss.GetSession(ctx, "s-a")
	wantTitle := truncateRunes("please refactor the whole "+strings.Repeat("very ", 40)+"long module", titleRunes)
	if a.Title != wantTitle || !strings.HasSuffix(a.Title, "…") || len([]rune(a.Title)) > titleRunes {
		t.Errorf("title = %q", a.Title)
	}
	wantU := usage.Usage{InputTokens: 110, OutputTokens: 55, CachedInputTokens: 2, Requests: 3}
	if a.Usage != wantU || a.Runs != 2 || a.Cwd != "/p/sub" || a.Repo != "/p" {
		t.Errorf("s-a = %+v", a)
	}
	if a.CreatedAt.IsZero() || !a.UpdatedAt.After(a.CreatedAt) {
		t.Errorf("times: %v %v", a.CreatedAt, a.UpdatedAt)
	}
	b, _ := ss.GetSession(ctx, "s-b")
	if b.Runs != 0 || b.Repo != "/q" || b.Title != "" {
		t.Errorf("s-b = %+v", b)
	}
	if c, _ := ss.GetSession(ctx, "s-c"); c.Title != "My title" {
		t.Errorf("s-c title %q", c.Title)
	}

	filters := []struct {
		f    SessionFilter
		want string
	}{
		{SessionFilter{Repo: "/p"}, "s-c,s-a"},
		{SessionFilter{Cwd: "/p/sub"}, "s-a"},
		{SessionFilter{Repo: "/p", Limit: 1}, "s-c"},
		{SessionFilter{Repo: "/nowhere"}, ""},
	}
	for _, tt := range filters {
		got, err := ss.ListSessions(ctx, tt.f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, s := range got {
			ids = append(ids, s.ID)
		}
		if strings.Join(ids, ",") != tt.want {
			t.Errorf("ListSessions(%+v) = %v, want %s", tt.f, ids, tt.want)
		}
	}

	latest, err := ss.LatestSession(ctx, "/p")
	if err != nil || latest.ID != "s-c" {
		t.Errorf("LatestSession(/p) = %v, %v", latest.ID, err)
	}
	// A new run in s-a makes it the latest.
	if err := ss.Append(ctx, "s-a", "a3", []transcript.Entry{transcript.UserInput("again")}, nil); err != nil {
		t.Fatal(err)
	}
	if latest, _ := ss.LatestSession(ctx, "/p"); latest.ID != "s-a" {
		t.Errorf("after append, latest = %s", latest.ID)
	}
	if latest, _ := ss.LatestSession(ctx, ""); latest.ID != "s-a" {
		t.Errorf("latest overall = %s", latest.ID)
	}
	_, err = ss.LatestSession(ctx, "/nowhere")
	if !errors.Is(err, store.ErrNotFound) || errs.KindOf(err) != errs.KindNotFound || errs.HintOf(err) == "" {
		t.Errorf("LatestSession(/nowhere) = %v", err)
	}
	if _, err := ss.GetSession(ctx, "zz"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetSession(zz) = %v", err)
	}
	if _, err := ss.SessionRuns(ctx, "zz"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SessionRuns(zz) = %v", err)
	}
}

func TestDeleteSession(t *testing.T) {
	ctx := ctxT(t)
	db := openTest(t)
	ss, cp := db.Sessions(), db.Checkpoints()
	for _, sid := range []string{"keep", "drop"} {
		h := store.Head{Status: store.StatusCompleted, Agent: "a", SessionID: sid}
		if err := cp.Append(ctx, sid+"-r", []transcript.Entry{transcript.UserInput(sid)}, h); err != nil {
			t.Fatal(err)
		}
		if err := ss.Append(ctx, sid, sid+"-r", []transcript.Entry{transcript.UserInput(sid)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := ss.DeleteSession(ctx, "drop"); err != nil {
		t.Fatal(err)
	}
	if got, _ := ss.Load(ctx, "drop"); got != nil {
		t.Errorf("deleted session loads %v", texts(got))
	}
	if _, err := cp.Load(ctx, "drop-r"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("checkpoint of a deleted session's run: %v", err)
	}
	if got, _ := ss.Load(ctx, "keep"); len(got) != 1 {
		t.Errorf("other session damaged: %v", texts(got))
	}
	if _, err := cp.Load(ctx, "keep-r"); err != nil {
		t.Errorf("other session's run: %v", err)
	}
	if err := ss.DeleteSession(ctx, "drop"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	if err := db.Check(ctx); err != nil {
		t.Error(err)
	}
}

func TestRewind(t *testing.T) {
	ctx := ctxT(t)
	tests := []struct {
		n        int
		wantGone int
		want     string
	}{
		{0, 0, "u0|u1|u2|u3"},
		{1, 1, "u0|u1|u2"},
		{3, 3, "u0"},
		{10, 4, ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.n), func(t *testing.T) {
			db := openTest(t)
			ss := db.Sessions()
			for i := 0; i < 4; i++ {
				if err := ss.Append(ctx, "s", fmt.Sprintf("r%d", i), []transcript.Entry{transcript.UserInput(fmt.Sprintf("u%d", i))}, nil); err != nil {
					t.Fatal(err)
				}
			}
			n, err := ss.Rewind(ctx, "s", tt.n)
			if err != nil || n != tt.wantGone {
				t.Fatalf("Rewind = %d, %v; want %d", n, err, tt.wantGone)
			}
			got, _ := ss.Load(ctx, "s")
			var s []string
			for _, e := range got {
				s = append(s, e.Text)
			}
			if strings.Join(s, "|") != tt.want {
				t.Errorf("after rewind %d: %v", tt.n, s)
			}
			// A rewound run may be appended again (it is a new segment at the end).
			if tt.n > 0 {
				if err := ss.Append(ctx, "s", "r3", []transcript.Entry{transcript.UserInput("u3")}, nil); err != nil {
					t.Fatal(err)
				}
				if got, _ := ss.Load(ctx, "s"); got[len(got)-1].Text != "u3" {
					t.Errorf("re-append after rewind: %v", texts(got))
				}
			}
		})
	}
}

func TestTrimToolOutputs(t *testing.T) {
	ctx := ctxT(t)
	big := func(i int) string { return fmt.Sprintf("<%d>", i) + strings.Repeat("é", 500) + "END" }
	tests := []struct {
		name        string
		keep, max   int
		wantTrimmed int
		wantIntact  []int // result indexes (0..5) left unchanged
	}{
		{"keep last two", 2, 200, 3, []int{4, 5, 1}},
		{"keep none", 0, 200, 5, []int{1}},
		{"keep all", 10, 200, 0, []int{0, 1, 2, 3, 4, 5}},
		{"limit above sizes", 0, 10000, 0, []int{0, 1, 2, 3, 4, 5}},
		{"tiny limit floors at 100", 0, 1, 5, []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openTest(t)
			ss := db.Sessions()
			// Six tool results over three runs; result 1 is short.
			for r := 0; r < 3; r++ {
				var seg []transcript.Entry
				for k := 0; k < 2; k++ {
					i := r*2 + k
					out := big(i)
					if i == 1 {
						out = "short"
					}
					seg = append(seg, toolPair(fmt.Sprintf("c%d", i), out)...)
				}
				seg = append(seg, transcript.AssistantText(strings.Repeat("a", 1000)))
				if err := ss.Append(ctx, "s", fmt.Sprintf("r%d", r), seg, nil); err != nil {
					t.Fatal(err)
				}
			}
			n, err := ss.TrimToolOutputs(ctx, "s", tt.keep, tt.max)
			if err != nil || n != tt.wantTrimmed {
				t.Fatalf("TrimToolOutputs = %d, %v; want %d", n, err, tt.wantTrimmed)
			}
			got, _ := ss.Load(ctx, "s")
			intact := map[int]bool{}
			for _, i := range tt.wantIntact {
				intact[i] = true
			}
			i := 0
			for _, e := range got {
				switch e.Type {
				case transcript.TypeAssistantText:
					if len(e.Text) != 1000 {
						t.Errorf("assistant text changed")
					}
				case transcript.TypeToolResult:
					orig := big(i)
					if i == 1 {
						orig = "short"
					}
					if intact[i] {
						if e.Text != orig || e.Truncated {
							t.Errorf("result %d changed", i)
						}
					} else {
						limit := max(tt.max, minTrimChars)
						if e.Text == orig || !e.Truncated || len([]rune(e.Text)) > limit ||
							!strings.HasPrefix(e.Text, fmt.Sprintf("<%d>", i)) || !strings.HasSuffix(e.Text, "END") ||
							!strings.Contains(e.Text, "characters trimmed") {
							t.Errorf("result %d not trimmed right (%d chars): %.80q", i, len([]rune(e.Text)), e.Text)
						}
					}
					if e.CallID != fmt.Sprintf("c%d", i) {
						t.Errorf("result %d lost its call id", i)
					}
					i++
				}
			}
			// Idempotent.
			if n, err := ss.TrimToolOutputs(ctx, "s", tt.keep, tt.max); err != nil || n != 0 {
				t.Errorf("second trim = %d, %v", n, err)
			}
		})
	}
}

func TestSessionDamagedSegment(t *testing.T) {
	ctx := ctxT(t)
	db := openTest(t)
	if err := db.Sessions().Append(ctx, "s", "r", []transcript.Entry{transcript.UserInput("x")}, nil); err != nil {
		t.Fatal(err)
	}
	db.sql.ExecContext(ctx, `UPDATE session_runs SET entries = '[{"type":' `)
	_, err := db.Sessions().Load(ctx, "s")
	if errs.KindOf(err) != errs.KindStore || !strings.Contains(err.Error(), "session s") {
		t.Errorf("Load of a damaged segment: %v", err)
	}
	if _, err := db.Sessions().TrimToolOutputs(ctx, "s", 0, 100); errs.KindOf(err) != errs.KindStore {
		t.Errorf("Trim of a damaged segment: %v", err)
	}
}

func TestSessionMetaFromRunHead(t *testing.T) {
	ctx := ctxT(t)
	db := openTest(t)
	h := store.Head{Status: store.StatusCompleted, Agent: "a", SessionID: "s",
		Usage:    usage.Usage{InputTokens: 40, OutputTokens: 4},
		Settings: json.RawMessage(`{"model":"openai:gpt-4.1","cwd":"/w/app/sub","repo":"/w/app"}`)}
	if err := db.Checkpoints().Append(ctx, "r", []transcript.Entry{transcript.UserInput("go")}, h); err != nil {
		t.Fatal(err)
	}
	// The runtime's own meta carries agent/turns/usage but no cwd or repo.
	if err := db.Sessions().Append(ctx, "s", "r", []transcript.Entry{transcript.UserInput("go")},
		json.RawMessage(`{"agent":"a","turns":1,"usage":{"input_tokens":50,"output_tokens":5,"cached_input_tokens":0}}`)); err != nil {
		t.Fatal(err)
	}
	info, err := db.Sessions().LatestSession(ctx, "/w/app")
	if err != nil {
		t.Fatal(err)
	}
	if info.ID != "s" || info.Cwd != "/w/app/sub" || info.Usage.InputTokens != 50 || info.Title != "go" {
		t.Errorf("info = %+v", info)
	}
}

func TestRewindToEntry(t *testing.T) {
	ctx := ctxT(t)
	call := func(id string) transcript.Entry {
		return transcript.Entry{Type: transcript.TypeToolCall, CallID: id, Name: "read_file", Args: []byte(`{}`)}
	}
	res := func(id string) transcript.Entry {
		return transcript.Entry{Type: transcript.TypeToolResult, CallID: id, Name: "read_file", Text: "out " + id}
	}
	tests := []struct {
		keep, wantGone int
		want           string
	}{
		{6, 0, "u0|c1|out c1|a0|u1|a1"},
		{5, 1, "u0|c1|out c1|a0|u1"},
		{4, 2, "u0|c1|out c1|a0"},
		{2, 5, "u0"}, // the call's result is cut: the call goes too
		{0, 6, ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.keep), func(t *testing.T) {
			db := openTest(t)
			ss := db.Sessions()
			seg0 := []transcript.Entry{transcript.UserInput("u0"), call("c1"), res("c1"), {Type: transcript.TypeAssistantText, Text: "a0"}}
			seg1 := []transcript.Entry{transcript.UserInput("u1"), {Type: transcript.TypeAssistantText, Text: "a1"}}
			if err := ss.Append(ctx, "s", "r0", seg0, nil); err != nil {
				t.Fatal(err)
			}
			if err := ss.Append(ctx, "s", "r1", seg1, nil); err != nil {
				t.Fatal(err)
			}
			n, err := ss.RewindToEntry(ctx, "s", tt.keep)
			if err != nil || n != tt.wantGone {
				t.Fatalf("RewindToEntry = %d, %v; want %d", n, err, tt.wantGone)
			}
			got, _ := ss.Load(ctx, "s")
			var s []string
			for _, e := range got {
				if e.Type == transcript.TypeToolCall {
					s = append(s, e.CallID)
				} else {
					s = append(s, e.Text)
				}
			}
			if strings.Join(s, "|") != tt.want {
				t.Errorf("after cut at %d: %v", tt.keep, s)
			}
		})
	}
	if _, err := openTest(t).Sessions().RewindToEntry(ctx, "nope", 0); errs.KindOf(err) != errs.KindNotFound {
		t.Errorf("unknown session: %v", err)
	}
}
