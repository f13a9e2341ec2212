package cmd

import (
	"fmt"

	"github.com/lovia-dev/lovia/internal/app"
	"github.com/lovia-dev/lovia/internal/runtime"
	"github.com/lovia-dev/lovia/internal/termtext"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// runInput is the run's first input: the prompt, with the images of --image and of
// the prompt's @image mentions attached.
func runInput(f *Factory, a *app.App, prompt string, images []string) ([]transcript.Entry, error) {
	atts, notes, err := a.PromptImages(prompt, images)
	if err != nil {
		return nil, err
	}
	for _, n := range notes {
		fmt.Fprintln(f.IO.ErrOut, "lovia: "+termtext.String(n))
	}
	if len(atts) == 0 {
		return runtime.Text(prompt), nil
	}
	return app.ImageInput(prompt, atts), nil
}
