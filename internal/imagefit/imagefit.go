// Package imagefit checks and shrinks images before they reach a model: it tells
// an image from other bytes by content (not by name), refuses a decompression bomb
// from its header before decoding a pixel, and scales and recompresses an image
// to a provider's limits. Input comes from the repository, the clipboard or a
// tool, none of them trusted.
package imagefit

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"

	xdraw "golang.org/x/image/draw"
	"golang.org/x/image/webp"
)

// MIME types lovia sends as images.
const (
	PNG  = "image/png"
	JPEG = "image/jpeg"
	GIF  = "image/gif"
	WebP = "image/webp"
)

const (
	// MaxFileBytes bounds what is read of one image file or clipboard image.
	MaxFileBytes = 32 << 20
	// MaxPixels bounds width×height as the header states it; a decoder would
	// allocate 4 bytes per pixel, so this caps decoding at about 200 MB.
	MaxPixels = 50_000_000
	// MaxSide bounds either side as the header states it.
	MaxSide = 30_000
)

// ErrNotImage reports bytes that are none of the image types lovia sends.
var ErrNotImage = errors.New("not a PNG, JPEG, GIF or WebP image")

// Sniff returns the image type of data from its first bytes ("" when it is none of
// PNG, JPEG, GIF, WebP). A name's extension is never trusted.
func Sniff(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return PNG
	case bytes.HasPrefix(data, []byte{0xff, 0xd8, 0xff}):
		return JPEG
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return GIF
	case len(data) >= 12 && bytes.Equal(data[:4], []byte("RIFF")) && bytes.Equal(data[8:12], []byte("WEBP")):
		return WebP
	}
	return ""
}

// Info is what an image's header says.
type Info struct {
	MIME          string
	Width, Height int
}

// Check sniffs data and reads its header only, refusing an image whose stated
// size would make decoding it allocate too much (a decompression bomb).
func Check(data []byte) (Info, error) {
	mime := Sniff(data)
	if mime == "" {
		return Info{}, ErrNotImage
	}
	cfg, err := decodeConfig(mime, data)
	if err != nil {
		return Info{}, fmt.Errorf("unreadable %s header: %w", mime, err)
	}
	in := Info{MIME: mime, Width: cfg.Width, Height: cfg.Height}
	if in.Width <= 0 || in.Height <= 0 {
		return in, fmt.Errorf("%s states an empty size (%d×%d)", mime, in.Width, in.Height)
	}
	if in.Width > MaxSide || in.Height > MaxSide || int64(in.Width)*int64(in.Height) > MaxPixels {
		return in, fmt.Errorf("%s is %d×%d pixels; at most %d pixels (%d per side) are decoded", mime, in.Width, in.Height, MaxPixels, MaxSide)
	}
	return in, nil
}

func decodeConfig(mime string, data []byte) (image.Config, error) {
	r := bytes.NewReader(data)
	switch mime {
	case PNG:
		return png.DecodeConfig(r)
	case JPEG:
		return jpeg.DecodeConfig(r)
	case GIF:
		return gif.DecodeConfig(r)
	case WebP:
		return webp.DecodeConfig(r)
	}
	return image.Config{}, ErrNotImage
}

func decode(mime string, data []byte) (image.Image, error) {
	r := bytes.NewReader(data)
	switch mime {
	case PNG:
		return png.Decode(r)
	case JPEG:
		return jpeg.Decode(r)
	case GIF:
		return gif.Decode(r) // the first frame
	case WebP:
		return webp.Decode(r)
	}
	return nil, ErrNotImage
}

// Limits are what one provider accepts per image.
type Limits struct {
	// MaxBytes bounds the image's bytes (before base64).
	MaxBytes int
	// MaxSide bounds the longer side in pixels.
	MaxSide int
	// Types the provider accepts as they are; others are converted.
	Types []string
}

func (l Limits) accepts(mime string) bool {
	if len(l.Types) == 0 {
		return true
	}
	for _, t := range l.Types {
		if t == mime {
			return true
		}
	}
	return false
}

var allTypes = []string{PNG, JPEG, GIF, WebP}

// ForProvider returns the limits of a provider prefix ("anthropic", "openai",
// "openai-responses", "ollama"; others get conservative ones).
//   - Anthropic: 5 MB per image as base64 (so 3.75 MB of bytes); a long side over
//     1568 px is scaled down by the server anyway, only costing upload time.
//   - OpenAI: 20 MB per image; "high" detail scales to fit 2048×2048.
//   - Ollama: no documented cap; vision models see a few hundred pixels a side, so
//     a large image is only slow to send. PNG and JPEG are what every model's
//     projector decodes.
func ForProvider(prefix string) Limits {
	switch prefix {
	case "anthropic", "claude":
		return Limits{MaxBytes: 5 << 20 * 3 / 4, MaxSide: 1568, Types: allTypes}
	case "openai", "oai", "openai-chat", "openai-responses":
		return Limits{MaxBytes: 20 << 20, MaxSide: 2048, Types: allTypes}
	case "ollama":
		return Limits{MaxBytes: 8 << 20, MaxSide: 1568, Types: []string{PNG, JPEG}}
	}
	return Limits{MaxBytes: 5 << 20, MaxSide: 1568, Types: []string{PNG, JPEG}}
}

// Fit returns data (unchanged when it already fits) as an image within lim, and its
// MIME type. A larger image is scaled so its long side is at most lim.MaxSide and
// recompressed (PNG when it has transparency and fits, JPEG otherwise) until it is
// at most lim.MaxBytes.
func Fit(data []byte, lim Limits) ([]byte, string, error) {
	in, err := Check(data)
	if err != nil {
		return nil, "", err
	}
	side := max(in.Width, in.Height)
	if (lim.MaxBytes <= 0 || len(data) <= lim.MaxBytes) && (lim.MaxSide <= 0 || side <= lim.MaxSide) && lim.accepts(in.MIME) {
		return data, in.MIME, nil
	}
	src, err := decode(in.MIME, data)
	if err != nil {
		return nil, "", fmt.Errorf("decode %s: %w", in.MIME, err)
	}
	target := side
	if lim.MaxSide > 0 && target > lim.MaxSide {
		target = lim.MaxSide
	}
	alpha := hasAlpha(src)
	for range 8 {
		img := scale(src, target)
		out, mime, err := encode(img, alpha, lim)
		if err != nil {
			return nil, "", err
		}
		if lim.MaxBytes <= 0 || len(out) <= lim.MaxBytes {
			return out, mime, nil
		}
		target = target * 3 / 4
		if target < 16 {
			break
		}
	}
	return nil, "", fmt.Errorf("%s (%d×%d) cannot be made smaller than %d bytes", in.MIME, in.Width, in.Height, lim.MaxBytes)
}

// scale returns src with its long side at most side pixels.
func scale(src image.Image, side int) image.Image {
	b := src.Bounds()
	w, h := b.Dx(), b.Dy()
	if max(w, h) <= side {
		return src
	}
	if w >= h {
		h, w = max(1, h*side/w), side
	} else {
		w, h = max(1, w*side/h), side
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	xdraw.CatmullRom.Scale(dst, dst.Bounds(), src, b, draw.Src, nil)
	return dst
}

// encode writes img as PNG (when it has transparency and the PNG fits) or JPEG.
func encode(img image.Image, alpha bool, lim Limits) ([]byte, string, error) {
	var buf bytes.Buffer
	if alpha && lim.accepts(PNG) {
		if err := png.Encode(&buf, img); err != nil {
			return nil, "", fmt.Errorf("encode png: %w", err)
		}
		if lim.MaxBytes <= 0 || buf.Len() <= lim.MaxBytes {
			return buf.Bytes(), PNG, nil
		}
		buf.Reset()
	}
	if alpha {
		img = onWhite(img) // JPEG has no transparency; black would hide dark content
	}
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 85}); err != nil {
		return nil, "", fmt.Errorf("encode jpeg: %w", err)
	}
	return buf.Bytes(), JPEG, nil
}

func onWhite(img image.Image) image.Image {
	b := img.Bounds()
	dst := image.NewRGBA(b)
	draw.Draw(dst, b, image.NewUniform(color.White), image.Point{}, draw.Src)
	draw.Draw(dst, b, img, b.Min, draw.Over)
	return dst
}

func hasAlpha(img image.Image) bool {
	switch m := img.(type) {
	case *image.YCbCr, *image.Gray, *image.Gray16, *image.CMYK:
		return false
	case *image.RGBA:
		return !m.Opaque()
	case *image.NRGBA:
		return !m.Opaque()
	case *image.Paletted:
		return !m.Opaque()
	}
	if o, ok := img.(interface{ Opaque() bool }); ok {
		return !o.Opaque()
	}
	return true
}
