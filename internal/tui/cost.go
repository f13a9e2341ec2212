package tui

import "github.com/lovia-dev/lovia/internal/usage"

// EstimateCost is the status line's cost estimate in USD for "provider:model", for
// the other front ends (lovia serve); false for a model whose price is unknown.
func EstimateCost(model string, u usage.Usage) (float64, bool) { return estimateCost(model, u) }
