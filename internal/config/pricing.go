package config

import (
	"math"
	"slices"
	"strings"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/usage"
)

const pricingExample = `pricing: {"openai:gpt-5": {input: 1.25, cached_input: 0.125, output: 10}}`

// checkPricing validates the pricing: section: every price a finite number >= 0, input
// and output given, keys naming a model.
func checkPricing(m map[string]ModelPrice) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		p := m[k]
		name := "pricing." + quoteKey(k)
		if strings.TrimSpace(strings.TrimSuffix(k, "*")) == "" || strings.HasSuffix(k, ":") {
			return errs.Newf(errs.KindConfig, "key each price by PROVIDER:MODEL or the model name, e.g. "+pricingExample,
				"%s does not name a model", name)
		}
		for _, f := range []struct {
			key string
			v   *float64
		}{{"input", p.Input}, {"cached_input", p.CachedInput}, {"cache_write", p.CacheWrite}, {"output", p.Output}} {
			if f.v == nil {
				if f.key == "input" || f.key == "output" {
					return errs.Newf(errs.KindConfig, "give both input and output in USD per million tokens, e.g. "+pricingExample,
						"%s.%s is missing", name, f.key)
				}
				continue
			}
			if *f.v < 0 || math.IsNaN(*f.v) || math.IsInf(*f.v, 0) {
				return errs.Newf(errs.KindConfig, "use a price >= 0 in USD per million tokens, e.g. "+pricingExample,
					"%s.%s must be a number >= 0, not %v", name, f.key, *f.v)
			}
		}
	}
	return nil
}

func quoteKey(k string) string {
	if strings.ContainsAny(k, ":.*/ ") {
		return `"` + k + `"`
	}
	return k
}

// Prices is the pricing table: the built-in prices with the pricing: section over
// them.
func (c *Config) Prices() *usage.Prices {
	over := make(map[string]usage.Price, len(c.Pricing))
	for k, p := range c.Pricing {
		if p.Input == nil || p.Output == nil {
			continue // check refused it
		}
		pr := usage.Price{Input: *p.Input, Output: *p.Output, CachedInput: *p.Input, CacheWrite: *p.Input}
		if p.CachedInput != nil {
			pr.CachedInput = *p.CachedInput
		}
		if p.CacheWrite != nil {
			pr.CacheWrite = *p.CacheWrite
		}
		over[k] = pr
	}
	return usage.NewPrices(over)
}
