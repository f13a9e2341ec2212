package compaction

import (
	"context"
	"encoding/json"
	"testing"
)

// FuzzCompactState feeds arbitrary checkpointed state (a corrupted or foreign head)
// to the policy: it must never panic and must still render a valid view.
func FuzzCompactState(f *testing.F) {
	body, st := renderFixture()
	st.Summary = &Summary{Text: "s", Covered: 3, Fingerprint: Fingerprint(body[:3])}
	f.Add([]byte(st.Marshal()))
	f.Add([]byte(`{"v":1,"summary":{"text":"x","covered":999,"fingerprint":"0"}}`))
	f.Add([]byte(`{"v":1,"summary":{"text":"x","covered":-4}}`))
	f.Add([]byte(`{"v":1,"offloaded":{"call_1":"/etc/passwd"},"cleared":{"nope":true},"ratio":-3}`))
	f.Add([]byte(`{"v":2}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		c := New(Config{ReserveOutputTokens: 1000}, WithSummarizer(&fakeSummarizer{}))
		for _, force := range []bool{false, true} {
			res, err := c.Compact(context.Background(), Request{RunID: "r", SessionID: "s", Body: body,
				ContextWindow: 3000, State: json.RawMessage(raw), Force: force, LastInputTokens: 5000})
			if err != nil {
				t.Fatal(err)
			}
			checkPairs(t, res.View)
			if _, err := ParseState(res.State); err != nil {
				t.Fatalf("the policy wrote unreadable state: %v", err)
			}
		}
	})
}
