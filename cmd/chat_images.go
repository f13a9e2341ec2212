package cmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/lovia-dev/lovia/internal/app"
	"github.com/lovia-dev/lovia/internal/clipboard"
	"github.com/lovia-dev/lovia/internal/runtime"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/tui"
	"github.com/lovia-dev/lovia/internal/workspace"
)

var (
	_ tui.ImageAttacher   = (*chatBackend)(nil)
	_ tui.ClipboardImager = (*chatBackend)(nil)
)

// AttachImage reads an image the user named in the chat (@shot.png, a pasted
// path) through the workspace of the runs' policy, as AttachFile reads text.
func (b *chatBackend) AttachImage(_ context.Context, path string) (transcript.Attachment, error) {
	att, err := b.app.AttachImage(path)
	if errors.Is(err, workspace.ErrNotImage) {
		return att, fmt.Errorf("%w: %w", tui.ErrNotImage, err)
	}
	return att, err
}

// ClipboardImage reads the image on the system clipboard (Ctrl-V).
func (b *chatBackend) ClipboardImage(ctx context.Context) (transcript.Attachment, error) {
	data, mime, err := clipboard.New().ReadImage(ctx)
	if err != nil {
		return transcript.Attachment{}, err
	}
	return transcript.Attachment{MIME: mime, Name: "clipboard", Data: data}, nil
}

// chatInput is a chat run's first input: the prompt and its images, refused
// before any request when the model takes text only.
func (b *chatBackend) chatInput(ctx context.Context, model, prompt string, images []transcript.Attachment) ([]transcript.Entry, error) {
	if len(images) == 0 {
		return runtime.Text(prompt), nil
	}
	if len(images) > app.MaxImages {
		return nil, fmt.Errorf("%d images; at most %d are attached to one message", len(images), app.MaxImages)
	}
	in := app.ImageInput(prompt, images)
	if err := b.app.CheckImages(ctx, model, in); err != nil {
		return nil, err
	}
	return in, nil
}
