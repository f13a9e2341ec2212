// Package usage holds token accounting shared by providers, the run loop and stores,
// and the pricing table that turns it into USD (price.go).
package usage

import (
	"encoding/json"
	"math"
)

// Usage counts tokens for one model call or, summed, for a run.
type Usage struct {
	// InputTokens is the whole prompt, cached tokens included (CachedInputTokens is
	// the part of it served from a provider cache).
	InputTokens       int `json:"input_tokens"`
	OutputTokens      int `json:"output_tokens"`
	CachedInputTokens int `json:"cached_input_tokens"`
	// CacheWriteTokens counts tokens written to a provider prompt cache (Anthropic);
	// they are part of InputTokens too.
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
	ReasoningTokens  int `json:"reasoning_tokens,omitempty"`
	Requests         int `json:"requests,omitempty"`

	// CostUSD is what these tokens cost, priced per model call at the prices in
	// force then (Prices.Apply). It means something only when Priced.
	CostUSD float64 `json:"-"`
	// Priced reports that CostUSD covers every token counted here. A sum with one
	// unpriced call (a model without a known price, usage recorded before lovia
	// priced it) is unpriced: its cost is unknown, never a smaller number.
	Priced bool `json:"-"`
}

// Add returns u + o.
func (u Usage) Add(o Usage) Usage {
	switch {
	case o.empty():
	case u.empty():
		u.Priced = o.Priced
	default:
		u.Priced = u.Priced && o.Priced
	}
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.CachedInputTokens += o.CachedInputTokens
	u.CacheWriteTokens += o.CacheWriteTokens
	u.ReasoningTokens += o.ReasoningTokens
	u.Requests += o.Requests
	// Kept at whole nano-dollars (as Price.Of prices a call), so a sum prints as the
	// short decimal it is (0.01008, not 0.010079999999999999).
	u.CostUSD = math.Round((u.CostUSD+o.CostUSD)*1e9) / 1e9
	return u
}

// empty reports a usage that neither counts tokens nor says anything about cost: the
// neutral element of Add.
func (u Usage) empty() bool {
	return u.InputTokens == 0 && u.OutputTokens == 0 && u.CachedInputTokens == 0 && u.CacheWriteTokens == 0 &&
		u.ReasoningTokens == 0 && u.CostUSD == 0 && !u.Priced
}

// Total is input + output tokens, the figure budgets are measured in.
func (u Usage) Total() int { return u.InputTokens + u.OutputTokens }

// Cost is the USD cost of u; false when it is unknown (some tokens were used by a
// model without a known price). Nothing used costs nothing.
func (u Usage) Cost() (float64, bool) {
	if u.Priced {
		return u.CostUSD, true
	}
	return 0, u.empty()
}

// CostPtr is Cost as a JSON-ready value: nil (null, or left out) when unknown.
func (u Usage) CostPtr() *float64 {
	c, ok := u.Cost()
	if !ok {
		return nil
	}
	return &c
}

// plain is Usage without its methods, for the JSON encoding below.
type plain Usage

// wire is Usage's JSON form: cost_usd is present exactly when the cost is known
// (0 for a free model), so a reader never mistakes an unknown cost for zero.
type wire struct {
	plain
	CostUSD *float64 `json:"cost_usd,omitempty"`
}

// MarshalJSON writes cost_usd only when the cost is known.
func (u Usage) MarshalJSON() ([]byte, error) {
	w := wire{plain: plain(u)}
	if u.Priced {
		c := u.CostUSD
		w.CostUSD = &c
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads what MarshalJSON writes; usage stored before costs were
// recorded reads back unpriced.
func (u *Usage) UnmarshalJSON(b []byte) error {
	var w wire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*u = Usage(w.plain)
	u.CostUSD, u.Priced = 0, false
	if w.CostUSD != nil {
		u.CostUSD, u.Priced = *w.CostUSD, true
	}
	return nil
}
