package tui

import (
	"fmt"

	"github.com/lovia-dev/lovia/internal/usage"
)

// estimateCost is the status line's cost estimate (the table is in package usage).
func estimateCost(model string, u usage.Usage) (float64, bool) { return usage.EstimateCost(model, u) }

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
