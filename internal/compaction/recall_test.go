package compaction

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

func recallFrom(t *testing.T, c *Compaction) tool.Tool {
	t.Helper()
	tools := c.Tools()
	if len(tools) != 1 || tools[0].Spec().Name != RecallToolName {
		t.Fatalf("Tools() = %v, want only %s", tools, RecallToolName)
	}
	return tools[0]
}

func invoke(t *testing.T, tl tool.Tool, rc *tool.RunContext, args string) (string, error) {
	t.Helper()
	if err := tl.Spec().Validate(json.RawMessage(args)); err != nil {
		return "", err
	}
	res, err := tl.Invoke(context.Background(), rc, json.RawMessage(args))
	return res.Text, err
}

func TestRecallTool(t *testing.T) {
	dir := t.TempDir()
	c := New(testCfg, WithStore(NewDirStore(dir)))
	cv := &conv{}
	cv.user("go")
	var ids []string
	for i := range 8 {
		ids = append(ids, cv.tool("shell", big("out"+string(rune('a'+i)), 8000), false))
	}
	res := mustCompact(t, c, req(cv.body, nil))
	st, _ := ParseState(res.State)
	if !st.IsOffloaded(ids[0]) {
		t.Fatal("scenario should offload the first result")
	}
	// The loop's transcript holds the system head and the full results.
	entries := append([]transcript.Entry{transcript.SystemInput("sys")}, cv.body...)
	rc := &tool.RunContext{RunID: "r1", SessionID: "s1", Entries: func() []transcript.Entry { return entries }}
	rt := recallFrom(t, c)

	t.Run("from the archive", func(t *testing.T) {
		// Prove the archive is read: change the archived copy.
		path := NewDirStore(dir).Path("s1", ids[0])
		if err := os.WriteFile(path, []byte("archived copy"), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := invoke(t, rt, rc, `{"call_id":"`+ids[0]+`"}`)
		if err != nil || got != "archived copy" {
			t.Errorf("recall = %q, %v", got, err)
		}
	})
	t.Run("from the transcript when not archived", func(t *testing.T) {
		got, err := invoke(t, rt, rc, `{"call_id":"`+ids[7]+`"}`)
		if err != nil || got != cv.body[len(cv.body)-1].Text {
			t.Errorf("recall = %d chars, %v", len(got), err)
		}
	})
	t.Run("paged", func(t *testing.T) {
		got, err := invoke(t, rt, rc, `{"call_id":"`+ids[7]+`","offset":100,"limit":50}`)
		want := cv.body[len(cv.body)-1].Text[100:150]
		if err != nil || !strings.HasPrefix(got, want) || !strings.Contains(got, "offset 150") {
			t.Errorf("paged recall = %q, %v", got, err)
		}
	})
	t.Run("unknown call id", func(t *testing.T) {
		_, err := invoke(t, rt, rc, `{"call_id":"nope"}`)
		if err == nil || !strings.Contains(err.Error(), `"nope"`) {
			t.Errorf("want a clear error naming the id, got %v", err)
		}
	})
	t.Run("missing call id is rejected by the schema", func(t *testing.T) {
		if _, err := invoke(t, rt, rc, `{}`); err == nil {
			t.Error("want a validation error")
		}
	})
	t.Run("markers are not recalled as results", func(t *testing.T) {
		marker := res.View[3]
		entries2 := []transcript.Entry{marker}
		rc2 := &tool.RunContext{RunID: "other", Entries: func() []transcript.Entry { return entries2 }}
		if _, err := invoke(t, rt, rc2, `{"call_id":"`+marker.CallID+`"}`); err == nil {
			t.Error("a synthetic marker must not be returned as the result")
		}
	})
}

func TestDirStore(t *testing.T) {
	ctx := context.Background()
	d := NewDirStore(filepath.Join(t.TempDir(), "results"))
	ref, err := d.Put(ctx, "sess/../../etc", "../../passwd", "secret output")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(filepath.Dir(ref)) != d.Dir || filepath.Clean(ref) != ref {
		t.Fatalf("path escapes the store: %s", ref)
	}
	got, err := d.Get(ctx, "sess/../../etc", "../../passwd")
	if err != nil || got != "secret output" {
		t.Fatalf("Get = %q, %v", got, err)
	}
	// Put is idempotent: the first archived copy stays.
	if _, err := d.Put(ctx, "sess/../../etc", "../../passwd", "other"); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.Get(ctx, "sess/../../etc", "../../passwd"); got != "secret output" {
		t.Errorf("second Put replaced the archive: %q", got)
	}
	if _, err := d.Get(ctx, "s", "missing"); !errors.Is(err, ErrNotArchived) {
		t.Errorf("missing: %v, want ErrNotArchived", err)
	}
	// Distinct ids that sanitize alike stay distinct.
	if d.Path("s", "a/b") == d.Path("s", "a_b") {
		t.Error("sanitized names collide")
	}
	fi, err := os.Stat(filepath.Dir(ref))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("scope dir mode %v (%v), want 0700", fi.Mode().Perm(), err)
	}
	// An unwritable store is an error, and the policy still offloads (recall falls
	// back to the transcript).
	bad := NewDirStore("/proc/definitely/not/writable")
	if _, err := bad.Put(ctx, "s", "c", "x"); err == nil {
		t.Error("want an error from an unwritable store")
	}
	c := New(testCfg, WithStore(bad))
	cv := &conv{}
	cv.user("go")
	for range 8 {
		cv.tool("shell", big("o", 8000), false)
	}
	res := mustCompact(t, c, req(cv.body, nil))
	st, _ := ParseState(res.State)
	if !st.IsOffloaded("call_1") || st.Offloaded["call_1"] != "" {
		t.Errorf("offload without an archive: %+v", st.Offloaded)
	}
	if strings.Contains(res.View[2].Text, "saved at") {
		t.Errorf("marker must not point at a file that was not written: %q", res.View[2].Text)
	}
}

// scriptedProvider replays deltas and records requests.
type scriptedProvider struct {
	deltas []provider.Delta
	err    error
	reqs   []provider.Request
	window int
}

func (p *scriptedProvider) Info() provider.Info {
	return provider.Info{Provider: "fake", Model: "m", ContextWindow: p.window}
}

func (p *scriptedProvider) Stream(_ context.Context, req provider.Request) iter.Seq2[provider.Delta, error] {
	p.reqs = append(p.reqs, req)
	return func(yield func(provider.Delta, error) bool) {
		for _, d := range p.deltas {
			if !yield(d, nil) {
				return
			}
		}
		if p.err != nil {
			yield(provider.Delta{}, p.err)
		}
	}
}

func TestLLMSummarizer(t *testing.T) {
	entry := func(text string) provider.Delta {
		e := transcript.AssistantText(text)
		return provider.Delta{Kind: provider.DeltaEntry, Entry: &e}
	}
	cv := &conv{}
	cv.user("Port the parser to Go.")
	cv.tool("read_file", big("parser.py", 9000), false)
	cv.say("The parser uses a Pratt loop.")
	tests := []struct {
		name    string
		deltas  []provider.Delta
		err     error
		want    string
		wantErr string
	}{
		{"entry text", []provider.Delta{{Kind: provider.DeltaText, Text: "## Go"}, entry("## Goal\nport"), {Kind: provider.DeltaUsage, Usage: &usage.Usage{}}, {Kind: provider.DeltaFinish, FinishReason: "stop"}}, nil, "## Goal\nport", ""},
		{"text deltas only", []provider.Delta{{Kind: provider.DeltaText, Text: "## Goal\n"}, {Kind: provider.DeltaText, Text: "port "}}, nil, "## Goal\nport", ""},
		{"discard drops the partial output", []provider.Delta{{Kind: provider.DeltaText, Text: "garbage"}, {Kind: provider.DeltaDiscard}, entry("## Goal\nclean")}, nil, "## Goal\nclean", ""},
		{"provider error", []provider.Delta{{Kind: provider.DeltaText, Text: "part"}}, &provider.HTTPError{Provider: "fake", Status: 500}, "", "HTTP 500"},
		{"empty", nil, nil, "", "empty summary"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &scriptedProvider{deltas: tt.deltas, err: tt.err}
			s := NewLLMSummarizer(p, "fake-model")
			got, err := s.Summarize(context.Background(), SummaryRequest{Previous: "## Goal\nold", Entries: cv.body, MaxTokens: 500})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Summarize = %q, %v; want %q", got, err, tt.want)
			}
			r := p.reqs[0]
			for _, sec := range SummarySections {
				if !strings.Contains(r.System, sec) {
					t.Errorf("system prompt lacks section %q", sec)
				}
			}
			msg := r.Entries[0].Text
			for _, want := range []string{"<previous_summary>\n## Goal\nold", "USER:\nPort the parser", "TOOL CALL read_file [call_id call_1]",
				"TOOL RESULT read_file [call_id call_1]", "characters omitted", "ASSISTANT:\nThe parser uses"} {
				if !strings.Contains(msg, want) {
					t.Errorf("summary request lacks %q", want)
				}
			}
			if r.Model != "fake-model" || r.MaxOutputTokens < 500 || r.ToolChoice != "none" || len(r.Tools) != 0 {
				t.Errorf("request %+v", r)
			}
		})
	}
}

func TestFormatEntriesBoundsTotal(t *testing.T) {
	cv := &conv{}
	for range 50 {
		cv.tool("shell", big("o", 3000), false)
	}
	out := FormatEntries(cv.body, 4000, 20_000)
	if len(out) > 25_000 {
		t.Errorf("formatted %d bytes, want about 20,000", len(out))
	}
	// The newest entries are kept whole; the oldest are shortened first.
	if !strings.Contains(out, cv.body[len(cv.body)-1].Text) {
		t.Error("the newest entry was shortened")
	}
	// Far over: the oldest entries are dropped, and the text says so.
	out = FormatEntries(cv.body, 4000, 3_000)
	if len(out) > 4_000 || !strings.Contains(out, "older entries omitted") {
		t.Errorf("formatted %d bytes: %.80q", len(out), out)
	}
}

func TestLLMSummarizerResolvesLazily(t *testing.T) {
	e := transcript.AssistantText("## Goal\nok")
	p := &scriptedProvider{deltas: []provider.Delta{{Kind: provider.DeltaEntry, Entry: &e}}}
	calls := 0
	s := &LLMSummarizer{Model: "openai:small", Resolve: func(_ context.Context, model string) (provider.Provider, error) {
		calls++
		if calls == 1 {
			return nil, errors.New("no key")
		}
		if model != "openai:small" {
			t.Errorf("resolved %q", model)
		}
		return p, nil
	}}
	if _, err := s.Summarize(context.Background(), SummaryRequest{}); err == nil || !strings.Contains(err.Error(), "no key") {
		t.Fatalf("want the resolution error, got %v", err)
	}
	for range 2 {
		if got, err := s.Summarize(context.Background(), SummaryRequest{}); err != nil || got != "## Goal\nok" {
			t.Fatalf("Summarize = %q, %v", got, err)
		}
	}
	if calls != 2 {
		t.Errorf("resolved %d times, want 2 (a failure is retried, a success cached)", calls)
	}
	if _, err := (&LLMSummarizer{}).Summarize(context.Background(), SummaryRequest{}); err == nil {
		t.Error("want an error without a provider")
	}
}

func TestCancelledSummaryIsNotAFailure(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	sum := SummarizerFunc(func(ctx context.Context, _ SummaryRequest) (string, error) {
		cancel()
		return "", ctx.Err()
	})
	c := New(testCfg, WithSummarizer(sum))
	res, err := c.Compact(ctx, req(textBody(24), nil))
	if err != nil {
		t.Fatal(err)
	}
	st, _ := ParseState(res.State)
	if st.SummaryFailures != 0 {
		t.Errorf("a cancelled run counted a summary failure")
	}
}

func TestLLMSummarizerFitsTheModelWindow(t *testing.T) {
	e := transcript.AssistantText("## Goal\nok")
	p := &scriptedProvider{deltas: []provider.Delta{{Kind: provider.DeltaEntry, Entry: &e}}, window: 16_000}
	cv := &conv{}
	for range 100 {
		cv.tool("shell", big("o", 3000), false)
	}
	if _, err := NewLLMSummarizer(p, "m").Summarize(context.Background(), SummaryRequest{Entries: cv.body, MaxTokens: 2000}); err != nil {
		t.Fatal(err)
	}
	r := p.reqs[0]
	if tokens := (len(r.System) + len(r.Entries[0].Text)) / 3; tokens+r.MaxOutputTokens > 16_000 {
		t.Errorf("summary request of ~%d tokens + %d output does not fit a 16k window", tokens, r.MaxOutputTokens)
	}
}
