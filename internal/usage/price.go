package usage

import "strings"

// price is USD per million tokens.
type price struct {
	In, Out, CachedIn float64
}

// prices is a small table for the cost estimates of the front ends; keys match the
// model name by prefix (after "provider:"), longest first. Unknown models show no
// cost rather than a wrong one.
var prices = []struct {
	prefix string
	p      price
}{
	{"claude-opus-4", price{15, 75, 1.5}},
	{"claude-sonnet-4", price{3, 15, 0.3}},
	{"claude-3-7-sonnet", price{3, 15, 0.3}},
	{"claude-3-5-sonnet", price{3, 15, 0.3}},
	{"claude-haiku-4", price{1, 5, 0.1}},
	{"claude-3-5-haiku", price{0.8, 4, 0.08}},
	{"gpt-5-mini", price{0.25, 2, 0.025}},
	{"gpt-5-nano", price{0.05, 0.4, 0.005}},
	{"gpt-5", price{1.25, 10, 0.125}},
	{"gpt-4.1-mini", price{0.4, 1.6, 0.1}},
	{"gpt-4.1-nano", price{0.1, 0.4, 0.025}},
	{"gpt-4.1", price{2, 8, 0.5}},
	{"gpt-4o-mini", price{0.15, 0.6, 0.075}},
	{"gpt-4o", price{2.5, 10, 1.25}},
	{"o4-mini", price{1.1, 4.4, 0.275}},
	{"o3", price{2, 8, 0.5}},
}

// priceOf finds the price of "provider:model"; local and scripted models are free.
func priceOf(model string) (price, bool) {
	prov, name, ok := strings.Cut(model, ":")
	if !ok {
		name = prov
	}
	switch prov {
	case "script", "ollama":
		return price{}, true
	}
	for _, e := range prices {
		if strings.HasPrefix(name, e.prefix) {
			return e.p, true
		}
	}
	return price{}, false
}

// EstimateCost prices u in USD for "provider:model"; false for a model whose price is
// unknown (shown as no cost rather than a wrong one). Input tokens are taken to include cached ones (cached tokens
// are billed at the cached rate instead of the full one).
func EstimateCost(model string, u Usage) (float64, bool) {
	p, ok := priceOf(model)
	if !ok {
		return 0, false
	}
	fresh := max(u.InputTokens-u.CachedInputTokens, 0)
	return (float64(fresh)*p.In + float64(u.CachedInputTokens)*p.CachedIn + float64(u.OutputTokens)*p.Out) / 1e6, true
}
