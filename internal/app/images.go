package app

import (
	"context"

	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// CheckImages refuses, before any request, a prompt with images for a model known
// to take text only (errs.KindConfig, exit 2). A model lovia does not know is let
// through: the server's refusal, if any, is reported as it comes.
func (a *App) CheckImages(ctx context.Context, model string, input []transcript.Entry) error {
	if !provider.HasImages(input) {
		return nil
	}
	p, err := a.Resolve(ctx, model)
	if err != nil {
		return err
	}
	return provider.CheckVision(p.Info(), input)
}
