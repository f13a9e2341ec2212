package compaction

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/transcript"
)

func TestBudgetFor(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		window int
		want   Budget
	}{
		{"defaults on a 64k window", Config{}, 64_000,
			Budget{Window: 64_000, Usable: 47_616, CompactAt: 40_473, CompactTo: 28_569, KeepRecent: 9_523}},
		{"unknown window uses the default", Config{}, 0,
			Budget{Window: 128_000, Usable: 111_616, CompactAt: 94_873, CompactTo: 66_969, KeepRecent: 22_323}},
		{"absolute token counts", Config{CompactAt: 30_000, CompactTo: 20_000, KeepRecentTokens: 5_000}, 64_000,
			Budget{Window: 64_000, Usable: 47_616, CompactAt: 30_000, CompactTo: 20_000, KeepRecent: 5_000}},
		{"a small window scales the reserve down", Config{}, 8_000,
			Budget{Window: 8_000, Usable: 6_000, CompactAt: 5_100, CompactTo: 3_600, KeepRecent: 1_200}},
		{"custom reserve", Config{ReserveOutputTokens: 4_000, CompactAt: 0.5, CompactTo: 0.25}, 100_000,
			Budget{Window: 100_000, Usable: 96_000, CompactAt: 48_000, CompactTo: 24_000, KeepRecent: 19_200}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.cfg.BudgetFor(tt.window); got != tt.want {
				t.Errorf("BudgetFor(%d) = %+v, want %+v", tt.window, got, tt.want)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"defaults", Config{}, ""},
		{"fractions", Config{CompactAt: 0.9, CompactTo: 0.5}, ""},
		{"tokens", Config{CompactAt: 90_000, CompactTo: 50_000}, ""},
		{"mixed kinds are checked against the window later", Config{CompactAt: 0.9, CompactTo: 50_000}, ""},
		{"negative", Config{CompactAt: -0.5}, "compaction.compact_at: must not be negative"},
		{"to above at", Config{CompactAt: 0.5, CompactTo: 0.7}, "compaction.compact_to: must be below compact_at"},
		{"fractional tokens", Config{CompactTo: 1.5}, "compaction.compact_to: must be a whole number of tokens"},
		{"bad min saving", Config{Summary: SummaryConfig{MinSaving: 1.5}}, "compaction.summary.min_saving"},
		{"negative reserve", Config{ReserveOutputTokens: -1}, "compaction.reserve_output_tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want error %q, got nil", tt.wantErr)
			}
			msg := err.Error() + " " + errs.HintOf(err)
			if !strings.Contains(msg, tt.wantErr) {
				t.Errorf("error %q does not mention %q", msg, tt.wantErr)
			}
			var e *errs.Error
			if !errors.As(err, &e) || e.Kind != errs.KindConfig || e.Hint == "" {
				t.Errorf("want a config error with a hint, got %#v", err)
			}
		})
	}
}

func TestEstimateEntry(t *testing.T) {
	tests := []struct {
		name string
		e    transcript.Entry
		want int
	}{
		{"ascii", transcript.AssistantText(strings.Repeat("a", 400)), 104},
		// 3 bytes per CJK character: ~0.75 tokens each rather than a 4x undercount.
		{"cjk", transcript.AssistantText(strings.Repeat("漢", 200)), 154},
		{"tool call counts id, name and args", transcript.ToolCall("c1", "shell", []byte(`{"command":"ls -la"}`)), (2+5+20)/4 + 4},
		{"image is a flat cost", transcript.Entry{Type: transcript.TypeInput, Role: "user", Text: "see",
			Attachments: []transcript.Attachment{{MIME: "image/png", Data: make([]byte, 1<<20)}}}, 4 + ImageTokens},
		{"file is a flat cost", transcript.Entry{Type: transcript.TypeToolResult, CallID: "c", Text: "",
			Attachments: []transcript.Attachment{{MIME: "application/pdf", Data: make([]byte, 1<<20)}}}, 4 + FileTokens},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EstimateEntry(tt.e); got != tt.want {
				t.Errorf("EstimateEntry = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestEstimateToolsOnWireShape(t *testing.T) {
	schema := []byte(`{"name":"read_file","description":"Read a file","parameters":{"type":"object"}}`)
	if got, want := EstimateTools([]json.RawMessage{schema, schema}), 2*(len(schema)/4+4); got != want {
		t.Errorf("EstimateTools = %d, want %d", got, want)
	}
}

func TestCounterMemo(t *testing.T) {
	cv := &conv{}
	cv.user("hello")
	cv.tool("shell", strings.Repeat("x", 4000), false)
	var c counter
	got, miss := c.count(cv.body)
	if miss != 0 {
		t.Errorf("first count: firstMiss %d, want 0", miss)
	}
	for i, e := range cv.body {
		if got[i] != EstimateEntry(e) {
			t.Fatalf("entry %d: %d, want %d", i, got[i], EstimateEntry(e))
		}
	}
	// A different entry at the same index with the same length must be recounted,
	// not served from the memo.
	other := append([]transcript.Entry(nil), cv.body...)
	other[2] = transcript.ToolResult("call_1", "shell", strings.Repeat("漢", 1000)+strings.Repeat("y", 1000), false)
	other[2].Attachments = []transcript.Attachment{{MIME: "image/png"}}
	got, miss = c.count(other)
	if miss != 2 {
		t.Errorf("firstMiss %d, want 2", miss)
	}
	if got[2] != EstimateEntry(other[2]) {
		t.Errorf("changed entry served stale: %d, want %d", got[2], EstimateEntry(other[2]))
	}
	// A shorter body (another conversation) is counted correctly too.
	got, _ = c.count(cv.body[:1])
	if len(got) != 1 || got[0] != EstimateEntry(cv.body[0]) {
		t.Errorf("shorter body: %v", got)
	}
}

func TestCalibration(t *testing.T) {
	st := &State{}
	if st.scaled(1000) != 1000 {
		t.Fatalf("uncalibrated state must scale by 1")
	}
	// The view was estimated at 1000 raw tokens plus 200 tokens of tool schemas; the
	// provider reported 1700, so the body ratio observed is 1.5 (schemas excluded).
	st.LastRaw, st.LastTools = 1000, 200
	st.calibrate(1700)
	if want := 0.8*1 + 0.2*1.5; !near(st.Ratio, want) {
		t.Fatalf("ratio %v, want %v", st.Ratio, want)
	}
	// The same report again (an overflow retry, a repeated call) is not counted twice.
	r := st.Ratio
	st.LastRaw = 1000
	st.calibrate(1700)
	if st.Ratio != r {
		t.Errorf("repeated report changed the ratio: %v -> %v", r, st.Ratio)
	}
	// Absurd observations are clamped to [0.5, 2.5] before and after the EMA.
	for range 50 {
		st.LastRaw, st.LastTools = 100, 0
		st.LastReported = 0
		st.calibrate(1_000_000)
	}
	if st.Ratio > maxRatio || maxRatio-st.Ratio > 1e-3 {
		t.Errorf("ratio %v, want clamped to %v", st.Ratio, maxRatio)
	}
	for range 50 {
		st.LastRaw, st.LastReported = 10_000, 0
		st.calibrate(1)
	}
	if st.Ratio < minRatio || st.Ratio-minRatio > 1e-3 {
		t.Errorf("ratio %v, want clamped to %v", st.Ratio, minRatio)
	}
	// Nothing to calibrate against: no change.
	r = st.Ratio
	st.LastRaw, st.LastReported = 0, 0
	st.calibrate(5000)
	if st.Ratio != r {
		t.Errorf("calibrated without an estimate")
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func TestConfigYAML(t *testing.T) {
	src := "reserve_output_tokens: 8192\ncompact_at: 50000\ncompact_to: 0.5\nkeep_recent_tokens: 4000\n" +
		"offload:\n  min_chars: 8000\n  keep_last: -1\nclear:\n  disabled: true\nsummary:\n  max_failures: 5\n  model: openai:gpt-4.1-mini\n"
	var c Config
	if err := yaml.Unmarshal([]byte(src), &c); err != nil {
		t.Fatal(err)
	}
	want := Config{ReserveOutputTokens: 8192, CompactAt: 50000, CompactTo: 0.5, KeepRecentTokens: 4000,
		Offload: OffloadConfig{MinChars: 8000, KeepLast: -1}, Clear: ClearConfig{Disabled: true},
		Summary: SummaryConfig{MaxFailures: 5, Model: "openai:gpt-4.1-mini"}}
	if c != want {
		t.Errorf("decoded %+v\nwant    %+v", c, want)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("valid config rejected: %v", err)
	}
	b := c.BudgetFor(100_000)
	if b.CompactAt != 50_000 || b.CompactTo != 45_904 || keepLast(c.WithDefaults().Offload.KeepLast) != 0 {
		t.Errorf("budget %+v", b)
	}
}

func TestStateMarshalRoundTrip(t *testing.T) {
	st := &State{Version: stateVersion, RunID: "r", Ratio: 1.25, LastRaw: 10, Bursts: 2,
		Summary: &Summary{Text: "s", Covered: 3, Fingerprint: "f"}}
	check := func() {
		t.Helper()
		b := st.Marshal()
		var plain map[string]any
		if err := json.Unmarshal(b, &plain); err != nil {
			t.Fatalf("invalid JSON %s: %v", b, err)
		}
		back, err := ParseState(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back.Offloaded, st.Offloaded) || !reflect.DeepEqual(back.Cleared, st.Cleared) ||
			back.Ratio != st.Ratio || *back.Summary != *st.Summary || back.RunID != "r" {
			t.Errorf("round trip lost data: %s", b)
		}
		// The same bytes as the plain encoder (stable across versions of this code).
		want, _ := json.Marshal(struct {
			*State
			Offloaded map[string]string `json:"offloaded,omitempty"`
			Cleared   map[string]bool   `json:"cleared,omitempty"`
		}{st, st.Offloaded, st.Cleared})
		var a, w map[string]any
		json.Unmarshal(b, &a)
		json.Unmarshal(want, &w)
		if !reflect.DeepEqual(a, w) {
			t.Errorf("Marshal = %s\nwant       %s", b, want)
		}
	}
	check()
	st.offload("c1", "/p")
	check()
	st.clear("c2")
	check()
	st.offload("c3", "")
	st.clear("c1")
	check()
}
