package anthropic

import (
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/lovia-dev/lovia/internal/imagefit"
	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// images turns attachments into image blocks fitted to the API's limits and
// base64-encoded once per image (imagefit.Encoder); for a model known to take no
// images, a text block saying the image was not shown.
type images struct {
	enc    *imagefit.Encoder
	vision provider.Vision
	model  string
}

func newImages(cfg Config, model string) *images {
	return &images{enc: imagefit.NewEncoder(imagefit.ForProvider(Prefix)), vision: cfg.Vision, model: model}
}

func (im *images) attachment(a transcript.Attachment) sdk.ContentBlockParamUnion {
	if !strings.HasPrefix(a.MIME, "image/") || (len(a.Data) == 0 && a.URI == "") {
		return sdk.NewTextBlock(fmt.Sprintf("[attachment %s (%s) not shown]", a.Name, a.MIME))
	}
	if im == nil {
		im = &images{}
	}
	if im.vision == provider.VisionNo {
		return sdk.NewTextBlock(provider.ImageNotShown(a, "model "+im.model+" does not accept images"))
	}
	if len(a.Data) == 0 {
		return sdk.NewImageBlock(sdk.URLImageSourceParam{URL: a.URI})
	}
	enc := im.enc
	if enc == nil { // a zero images (tests): fitted, not cached
		enc = imagefit.NewEncoder(imagefit.ForProvider(Prefix))
	}
	mime, b64, err := enc.Base64(a.Data, a.SHA256)
	if err != nil {
		return sdk.NewTextBlock(provider.ImageNotShown(a, err.Error()))
	}
	return sdk.NewImageBlockBase64(mime, b64)
}
