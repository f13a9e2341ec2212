// Package usage holds token accounting shared by providers, the run loop and stores.
package usage

// Usage counts tokens for one model call or, summed, for a run.
type Usage struct {
	// InputTokens is the whole prompt, cached tokens included (CachedInputTokens is
	// the part of it served from a provider cache).
	InputTokens       int `json:"input_tokens"`
	OutputTokens      int `json:"output_tokens"`
	CachedInputTokens int `json:"cached_input_tokens"`
	// CacheWriteTokens counts tokens written to a provider prompt cache (Anthropic).
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
	ReasoningTokens  int `json:"reasoning_tokens,omitempty"`
	Requests         int `json:"requests,omitempty"`
}

// Add returns u + o.
func (u Usage) Add(o Usage) Usage {
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.CachedInputTokens += o.CachedInputTokens
	u.CacheWriteTokens += o.CacheWriteTokens
	u.ReasoningTokens += o.ReasoningTokens
	u.Requests += o.Requests
	return u
}

// Total is input + output tokens, the figure budgets are measured in.
func (u Usage) Total() int { return u.InputTokens + u.OutputTokens }
