package cmd

import (
	"fmt"

	"github.com/lovia-dev/lovia/internal/app"
	"github.com/lovia-dev/lovia/internal/runtime"
	"github.com/lovia-dev/lovia/internal/termtext"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// runImages reads the images of --image and of the prompt's @image mentions,
// printing a note for each mention that could not be read.
func runImages(f *Factory, a *app.App, prompt string, images []string) ([]transcript.Attachment, error) {
	atts, notes, err := a.PromptImages(prompt, images)
	if err != nil {
		return nil, err
	}
	for _, n := range notes {
		fmt.Fprintln(f.IO.ErrOut, "lovia: "+termtext.String(n))
	}
	return atts, nil
}

// runInput is the run's first message: the prompt and its images.
func runInput(prompt string, atts []transcript.Attachment) []transcript.Entry {
	if len(atts) == 0 {
		return runtime.Text(prompt)
	}
	return app.ImageInput(prompt, atts)
}
