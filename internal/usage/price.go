package usage

import (
	"math"
	"sort"
	"strconv"
	"strings"
)

// Price is what a model charges, in USD per million tokens.
type Price struct {
	Input float64 `json:"input"`
	// CachedInput is the price of a prompt token served from the provider's cache
	// (a cache read).
	CachedInput float64 `json:"cached_input"`
	// CacheWrite is the price of a prompt token written to the cache (Anthropic).
	CacheWrite float64 `json:"cache_write"`
	Output     float64 `json:"output"`
}

// Of prices one call's (or a sum of calls') tokens in USD. Cached and cache-write
// tokens are part of InputTokens and are billed at their own rates instead of the
// input rate.
func (p Price) Of(u Usage) float64 {
	fresh := max(u.InputTokens-u.CachedInputTokens-u.CacheWriteTokens, 0)
	c := (float64(fresh)*p.Input + float64(u.CachedInputTokens)*p.CachedInput +
		float64(u.CacheWriteTokens)*p.CacheWrite + float64(u.OutputTokens)*p.Output) / 1e6
	// Nano-dollars: sums of many calls then agree wherever they are added up (a
	// run's events, its checkpoint, the session's total).
	return math.Round(c*1e9) / 1e9
}

// builtin are the list prices (USD per million tokens) of the hosted models lovia
// knows, per provider, keyed by the exact model id; dated snapshots
// ("gpt-4o-2024-08-06", "claude-sonnet-4-5-20250929") and "-latest" aliases are
// priced like their base id (see lookupBuiltin). Prices change: config `pricing:`
// overrides any of them (docs/cost.md).
var builtin = map[string]map[string]Price{
	"openai": {
		"gpt-5":              {1.25, 0.125, 0, 10},
		"gpt-5-codex":        {1.25, 0.125, 0, 10},
		"gpt-5-chat":         {1.25, 0.125, 0, 10},
		"gpt-5-mini":         {0.25, 0.025, 0, 2},
		"gpt-5-nano":         {0.05, 0.005, 0, 0.4},
		"gpt-5-pro":          {15, 15, 0, 120},
		"gpt-5.1":            {1.25, 0.125, 0, 10},
		"gpt-5.1-codex":      {1.25, 0.125, 0, 10},
		"gpt-5.1-codex-mini": {0.25, 0.025, 0, 2},
		"gpt-5.1-chat":       {1.25, 0.125, 0, 10},
		"gpt-4.1":            {2, 0.5, 0, 8},
		"gpt-4.1-mini":       {0.4, 0.1, 0, 1.6},
		"gpt-4.1-nano":       {0.1, 0.025, 0, 0.4},
		"gpt-4o":             {2.5, 1.25, 0, 10},
		"gpt-4o-mini":        {0.15, 0.075, 0, 0.6},
		"o1":                 {15, 7.5, 0, 60},
		"o3":                 {2, 0.5, 0, 8},
		"o3-mini":            {1.1, 0.55, 0, 4.4},
		"o3-pro":             {20, 20, 0, 80},
		"o4-mini":            {1.1, 0.275, 0, 4.4},
		"codex-mini":         {1.5, 0.375, 0, 6},
	},
	// Anthropic: a cache read costs 0.1× input, a (5-minute) cache write 1.25×.
	"anthropic": {
		"claude-opus-4-5":   {5, 0.5, 6.25, 25},
		"claude-opus-4-1":   {15, 1.5, 18.75, 75},
		"claude-opus-4":     {15, 1.5, 18.75, 75},
		"claude-sonnet-4-5": {3, 0.3, 3.75, 15},
		"claude-sonnet-4":   {3, 0.3, 3.75, 15},
		"claude-haiku-4-5":  {1, 0.1, 1.25, 5},
		"claude-3-7-sonnet": {3, 0.3, 3.75, 15},
		"claude-3-5-sonnet": {3, 0.3, 3.75, 15},
		"claude-3-5-haiku":  {0.8, 0.08, 1, 4},
		"claude-3-opus":     {15, 1.5, 18.75, 75},
		"claude-3-haiku":    {0.25, 0.03, 0.3, 1.25},
	},
}

// free are the providers whose models cost nothing per token: local models and
// scripted replies.
var free = map[string]bool{"ollama": true, "script": true}

// vendor maps a provider prefix (and its aliases) to the table it is priced from.
func vendor(provider string) string {
	switch provider {
	case "openai", "oai", "openai-chat", "openai-responses":
		return "openai"
	case "anthropic", "claude":
		return "anthropic"
	}
	return provider
}

// Prices is the pricing table: the built-in list prices and the user's overrides
// (config `pricing:`). A nil *Prices has the built-in prices only. It is read-only
// once built, so runs share it freely.
type Prices struct {
	exact    map[string]Price // "provider:model" or "model"
	prefixes []prefixPrice    // keys ending in "*", longest first
}

type prefixPrice struct {
	prefix string
	p      Price
}

// NewPrices builds the table with overrides keyed "provider:model", "model", or
// either ending in "*" (a prefix: "openai:ft:gpt-4o-mini:acme:*").
func NewPrices(overrides map[string]Price) *Prices {
	ps := &Prices{exact: map[string]Price{}}
	for k, p := range overrides {
		if pre, ok := strings.CutSuffix(k, "*"); ok {
			ps.prefixes = append(ps.prefixes, prefixPrice{pre, p})
			continue
		}
		ps.exact[k] = p
	}
	sort.Slice(ps.prefixes, func(i, j int) bool {
		a, b := ps.prefixes[i].prefix, ps.prefixes[j].prefix
		return len(a) > len(b) || len(a) == len(b) && a < b
	})
	return ps
}

// Lookup finds the price of model as served by provider (a registry prefix or
// alias): an override for "provider:model", then for the canonical provider, then
// for "model", then the longest matching override prefix, then the built-in table
// (exact id, then the id without a date or "-latest" suffix). Local and scripted
// models are free. false: no price is known.
func (ps *Prices) Lookup(provider, model string) (Price, bool) {
	if ps != nil {
		canon := vendor(provider)
		// A price keyed by a base id covers its dated snapshots too.
		base := snapshotBase(model)
		for _, k := range []string{provider + ":" + model, canon + ":" + model, model, provider + ":" + base, canon + ":" + base, base} {
			if p, ok := ps.exact[k]; ok {
				return p, true
			}
		}
		for _, e := range ps.prefixes {
			if strings.HasPrefix(provider+":"+model, e.prefix) || strings.HasPrefix(canon+":"+model, e.prefix) || strings.HasPrefix(model, e.prefix) {
				return e.p, true
			}
		}
	}
	if free[provider] {
		return Price{}, true
	}
	return lookupBuiltin(vendor(provider), model)
}

// Known reports whether spec ("provider:model") has a price.
func (ps *Prices) Known(spec string) bool {
	prov, model, _ := strings.Cut(spec, ":")
	_, ok := ps.Lookup(prov, model)
	return ok
}

func lookupBuiltin(vendor, model string) (Price, bool) {
	table := builtin[vendor]
	if p, ok := table[model]; ok {
		return p, true
	}
	if base := snapshotBase(model); base != model {
		p, ok := table[base]
		return p, ok
	}
	return Price{}, false
}

// snapshotBase strips a snapshot suffix: "-2024-08-06", "-20250929" or "-latest".
func snapshotBase(model string) string {
	if b, ok := strings.CutSuffix(model, "-latest"); ok {
		return b
	}
	i := strings.LastIndexByte(model, '-')
	if i < 0 {
		return model
	}
	tail := model[i+1:]
	if len(tail) == 8 && digits(tail) {
		return model[:i] // -YYYYMMDD
	}
	// -YYYY-MM-DD: three dash-separated numeric groups of 4, 2, 2 digits.
	if len(model) > 11 && model[len(model)-11] == '-' {
		d := model[len(model)-10:]
		if digits(d[:4]) && d[4] == '-' && digits(d[5:7]) && d[7] == '-' && digits(d[8:]) {
			return model[:len(model)-11]
		}
	}
	return model
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// Apply returns u (one model call of provider:model) with its cost filled in, or
// marked unpriced when the model has no known price.
func (ps *Prices) Apply(provider, model string, u Usage) Usage {
	p, ok := ps.Lookup(provider, model)
	u.CostUSD, u.Priced = 0, ok
	if ok {
		u.CostUSD = p.Of(u)
	}
	return u
}

// Fill prices u with spec's price when u carries no cost of its own (usage
// recorded before lovia priced calls, by a model the run recorded as spec).
func (ps *Prices) Fill(spec string, u Usage) Usage {
	if u.Priced || u.empty() || spec == "" {
		return u
	}
	prov, model, _ := strings.Cut(spec, ":")
	return ps.Apply(prov, model, u)
}

// FormatUSD writes a dollar amount as every front end shows it (without "$"):
// cents from a dollar up, else up to six decimals (a small run costs a fraction of a
// cent).
func FormatUSD(c float64) string {
	if c >= 1 {
		return strconv.FormatFloat(c, 'f', 2, 64)
	}
	s := strings.TrimRight(strconv.FormatFloat(c, 'f', 6, 64), "0")
	s = strings.TrimSuffix(s, ".")
	if s == "" || s == "-" {
		return "0"
	}
	return s
}
