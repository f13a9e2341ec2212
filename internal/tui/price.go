package tui

import (
	"fmt"

	"github.com/lovia-dev/lovia/internal/usage"
)

// runCost is the cost the runs priced (the same figure as `lovia runs`, stream-json
// and --output json: each model call priced by the run, summed). Usage that carries
// no cost (a session's runs recorded before lovia priced calls) is priced at the
// built-in list prices of model. false: unknown.
func runCost(model string, u usage.Usage) (float64, bool) {
	var builtin *usage.Prices
	return builtin.Fill(model, u).Cost()
}

// costLabel is the /cost figure: "$0.0123", "" when unknown.
func costLabel(model string, u usage.Usage) string {
	c, ok := runCost(model, u)
	if !ok {
		return ""
	}
	return "$" + usage.FormatUSD(c)
}

// fmtTokens shows a token count compactly (1234 → 1.2k).
func fmtTokens(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 100_000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	case n < 1_000_000:
		return fmt.Sprintf("%dk", n/1000)
	default:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	}
}
