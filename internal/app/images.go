package app

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/textutil"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/workspace"
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

// MaxImages bounds the images one prompt attaches.
const MaxImages = 20

// AttachImage reads one image the user named, through the workspace of the runs'
// policy (judged like read_file, opened the safe way: a symlink to a denied file
// attaches nothing). workspace.ErrNotImage and fs.ErrNotExist come back wrapped.
func (a *App) AttachImage(path string) (transcript.Attachment, error) {
	w, err := a.Workspace(a.CeilingPolicy())
	if err != nil {
		return transcript.Attachment{}, err
	}
	data, mime, err := w.AttachImage(path)
	if err != nil {
		return transcript.Attachment{}, err
	}
	return transcript.Attachment{MIME: mime, Name: filepath.Base(path), Data: data}, nil
}

// PromptImages reads the images of a headless prompt: each of files (run --image;
// any failure is a usage error) and each @mention in prompt that names an image
// (one that names no file, or a file that is no image, stays a word; one that
// cannot be read is reported in notes).
func (a *App) PromptImages(prompt string, files []string) ([]transcript.Attachment, []string, error) {
	var atts []transcript.Attachment
	var notes []string
	for _, f := range files {
		att, err := a.AttachImage(f)
		if err != nil {
			hint := "name a PNG, JPEG, GIF or WebP file the run's policy lets the agent read"
			if errors.Is(err, workspace.ErrNotImage) {
				return nil, nil, errs.Newf(errs.KindUsage, hint, "--image %s: not a PNG, JPEG, GIF or WebP image", f)
			}
			return nil, nil, errs.Wrap(errs.KindUsage, err, "--image "+f, hint)
		}
		atts = append(atts, att)
	}
	for _, p := range textutil.Mentions(prompt) {
		att, err := a.AttachImage(p)
		switch {
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, workspace.ErrNotImage):
			continue
		case err != nil:
			notes = append(notes, fmt.Sprintf("@%s not attached: %v", p, err))
			continue
		}
		atts = append(atts, att)
	}
	atts = dedupe(atts)
	if len(atts) > MaxImages {
		return nil, nil, errs.Newf(errs.KindUsage, "attach fewer images", "%d images; at most %d are attached to one prompt", len(atts), MaxImages)
	}
	return atts, notes, nil
}

// ImageInput is the user input of a prompt with images.
func ImageInput(prompt string, atts []transcript.Attachment) []transcript.Entry {
	e := transcript.UserInput(prompt)
	e.Attachments = atts
	return []transcript.Entry{e}
}

// dedupe drops an image attached twice (--image x.png and @x.png).
func dedupe(atts []transcript.Attachment) []transcript.Attachment {
	out := atts[:0]
	seen := map[[32]byte]bool{}
	for _, a := range atts {
		k := sha256.Sum256(a.Data)
		if !seen[k] {
			seen[k] = true
			out = append(out, a)
		}
	}
	return out
}
