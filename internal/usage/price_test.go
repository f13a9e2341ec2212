package usage

import (
	"encoding/json"
	"testing"
)

func TestLookupSnapshotsAndOverrides(t *testing.T) {
	var builtin *Prices
	for _, tt := range []struct {
		prov, model string
		want        float64 // input price
		ok          bool
	}{
		{"openai", "gpt-4o", 2.5, true},
		{"openai", "gpt-4o-2024-08-06", 2.5, true},
		{"openai-responses", "gpt-5-2025-08-07", 1.25, true},
		{"oai", "gpt-5-mini", 0.25, true},
		{"openai", "gpt-5-chat-latest", 1.25, true},
		{"anthropic", "claude-sonnet-4-5-20250929", 3, true},
		{"claude", "claude-3-7-sonnet-latest", 3, true},
		{"anthropic", "claude-opus-4-1-20250805", 15, true},
		{"openai", "gpt-4o-mini-search", 0, false}, // no prefix guessing
		{"openai", "claude-sonnet-4-5", 0, false},  // prices belong to a provider
		{"openai", "acme-7b", 0, false},
		{"ollama", "llama3.1:8b", 0, true},
		{"script", "demo.yaml", 0, true},
	} {
		p, ok := builtin.Lookup(tt.prov, tt.model)
		if ok != tt.ok || p.Input != tt.want {
			t.Errorf("Lookup(%s, %s) = %v %v, want input %v %v", tt.prov, tt.model, p, ok, tt.want, tt.ok)
		}
	}

	ps := NewPrices(map[string]Price{
		"openai:gpt-4o":     {Input: 1, Output: 1},
		"acme-7b":           {Input: 2, Output: 2},
		"openai:ft:gpt-4o*": {Input: 3, Output: 3},
		"openai:ft:*":       {Input: 4, Output: 4},
		"ollama:big":        {Input: 5, Output: 5},
	})
	for _, tt := range []struct {
		prov, model string
		want        float64
	}{
		{"openai", "gpt-4o-2024-08-06", 1}, // a base-id key covers its snapshots
		{"oai", "gpt-4o", 1},               // aliases use the canonical key
		{"openai", "acme-7b", 2},           // a bare model name, any provider
		{"openai", "ft:gpt-4o:acme:x1", 3}, // the longest prefix wins
		{"openai", "ft:gpt-3.5:acme", 4},
		{"ollama", "big", 5},     // a local model the user pays for
		{"openai", "gpt-4.1", 2}, // untouched built-ins stay
	} {
		p, ok := ps.Lookup(tt.prov, tt.model)
		if tt.model == "gpt-4.1" {
			if !ok || p.Input != 2 {
				t.Errorf("built-in gpt-4.1 lost: %v %v", p, ok)
			}
			continue
		}
		if !ok || p.Input != tt.want {
			t.Errorf("override Lookup(%s, %s) = %v %v, want input %v", tt.prov, tt.model, p, ok, tt.want)
		}
	}
}

func TestCostSumsAndUnknown(t *testing.T) {
	var ps *Prices
	// 10k prompt of which 6k cache reads and 2k cache writes, 500 out, at Sonnet 4.5:
	// 2000*3 + 6000*0.3 + 2000*3.75 + 500*15 = 22800 µ$.
	a := ps.Apply("anthropic", "claude-sonnet-4-5", Usage{InputTokens: 10_000, CachedInputTokens: 6_000, CacheWriteTokens: 2_000, OutputTokens: 500})
	if c, ok := a.Cost(); !ok || c != 0.0228 {
		t.Fatalf("cost = %v %v, want 0.0228", c, ok)
	}
	var run Usage
	if c, ok := run.Cost(); !ok || c != 0 {
		t.Fatal("nothing used should cost a known 0")
	}
	run = run.Add(a).Add(a)
	if c, ok := run.Cost(); !ok || c != 0.0456 {
		t.Fatalf("sum = %v %v", c, ok)
	}
	unknown := ps.Apply("openai", "acme-7b", Usage{InputTokens: 5})
	if _, ok := run.Add(unknown).Cost(); ok {
		t.Fatal("a sum with an unpriced call must be unknown, not a smaller number")
	}
	if _, ok := unknown.Add(run).Cost(); ok {
		t.Fatal("order must not matter")
	}
	// Unpriced usage (recorded before costs were) is unknown, and Fill prices it.
	old := Usage{InputTokens: 1_000_000}
	if _, ok := old.Cost(); ok {
		t.Fatal("unpriced usage reported a cost")
	}
	if c, ok := ps.Fill("openai:gpt-4.1", old).Cost(); !ok || c != 2 {
		t.Fatalf("Fill = %v %v", c, ok)
	}
}

func TestUsageJSON(t *testing.T) {
	var ps *Prices
	for _, u := range []Usage{
		ps.Apply("openai", "gpt-4.1", Usage{InputTokens: 1000, OutputTokens: 100, Requests: 1}),
		ps.Apply("script", "x", Usage{InputTokens: 10}),        // known 0: cost_usd present
		ps.Apply("openai", "acme", Usage{InputTokens: 10}),     // unknown: absent
		{InputTokens: 3, OutputTokens: 4, CacheWriteTokens: 1}, // never priced
	} {
		b, err := json.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		_, has := m["cost_usd"]
		if has != u.Priced {
			t.Errorf("%s: cost_usd present %v, priced %v", b, has, u.Priced)
		}
		var back Usage
		if err := json.Unmarshal(b, &back); err != nil || back != u {
			t.Errorf("round trip %s: %+v, want %+v (%v)", b, back, u, err)
		}
	}
	var old Usage
	if err := json.Unmarshal([]byte(`{"input_tokens":5,"output_tokens":1,"cached_input_tokens":0}`), &old); err != nil || old.Priced {
		t.Fatalf("stored usage without cost_usd must read back unpriced: %+v %v", old, err)
	}
}

func TestFormatUSD(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 0.0228: "0.0228", 0.0000004: "0", 0.1234567: "0.123457", 1: "1.00", 12.345: "12.35"} {
		if got := FormatUSD(in); got != want {
			t.Errorf("FormatUSD(%v) = %q, want %q", in, got, want)
		}
	}
}
