package sqlite

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/lovia-dev/lovia/internal/transcript"
)

// TestSessionCost: a session's cost is the sum of its runs' recorded costs, and
// unknown (never a smaller number) when one of them recorded none: a run of an
// unpriced model, or one stored before lovia priced calls (an old database).
func TestSessionCost(t *testing.T) {
	ctx := context.Background()
	ss := openTest(t).Sessions()
	add := func(sid, run, meta string) {
		t.Helper()
		if err := ss.Append(ctx, sid, run, []transcript.Entry{transcript.UserInput("hi")}, json.RawMessage(meta)); err != nil {
			t.Fatal(err)
		}
	}
	add("s1", "r1", `{"usage":{"input_tokens":10,"output_tokens":1,"cached_input_tokens":0,"cost_usd":0.5}}`)
	add("s1", "r2", `{"usage":{"input_tokens":10,"output_tokens":1,"cached_input_tokens":0,"cost_usd":0.25}}`)
	add("s2", "r3", `{"usage":{"input_tokens":10,"output_tokens":1,"cached_input_tokens":0,"cost_usd":0.5}}`)
	add("s2", "r4", `{"usage":{"input_tokens":10,"output_tokens":1,"cached_input_tokens":0}}`)
	add("s3", "r5", `{"usage":{"input_tokens":0,"output_tokens":0,"cached_input_tokens":0}}`)

	for _, tt := range []struct {
		sid  string
		cost float64
		ok   bool
	}{{"s1", 0.75, true}, {"s2", 0, false}, {"s3", 0, true}} {
		si, err := ss.GetSession(ctx, tt.sid)
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := si.Usage.Cost(); ok != tt.ok || c != tt.cost {
			t.Errorf("%s: cost %v %v, want %v %v", tt.sid, c, ok, tt.cost, tt.ok)
		}
	}
	runs, err := ss.SessionRuns(ctx, "s2")
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := runs[0].Usage.Cost(); !ok || c != 0.5 {
		t.Errorf("r3 cost %v %v", c, ok)
	}
	if _, ok := runs[1].Usage.Cost(); ok {
		t.Error("r4 recorded no cost, yet has one")
	}
}
