package imagefit

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"strings"
	"testing"
)

func pngOf(t testing.TB, w, h int, alpha bool) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(r.UintN(256)) // noise: does not compress, so the file is large
	}
	if !alpha {
		for i := 3; i < len(img.Pix); i += 4 {
			img.Pix[i] = 0xff
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestSniff(t *testing.T) {
	var j, g bytes.Buffer
	small := image.NewRGBA(image.Rect(0, 0, 2, 2))
	_ = jpeg.Encode(&j, small, nil)
	_ = gif.Encode(&g, small, nil)
	webp := []byte("RIFF\x00\x00\x00\x00WEBPVP8 ")
	for _, c := range []struct {
		data []byte
		want string
	}{
		{pngOf(t, 2, 2, false), PNG}, {j.Bytes(), JPEG}, {g.Bytes(), GIF}, {webp, WebP},
		{[]byte("hello.png"), ""}, {nil, ""}, {[]byte("RIFF\x00\x00\x00\x00WAVE"), ""},
	} {
		if got := Sniff(c.data); got != c.want {
			t.Errorf("Sniff(%q…) = %q, want %q", c.data[:min(len(c.data), 8)], got, c.want)
		}
	}
}

// bombPNG is a PNG whose header claims w×h pixels; its data is a few bytes.
func bombPNG(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 6 // 8-bit RGBA
	chunk := func(typ string, data []byte) {
		_ = binary.Write(&b, binary.BigEndian, uint32(len(data)))
		b.WriteString(typ)
		b.Write(data)
		_ = binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	}
	chunk("IHDR", ihdr)
	chunk("IDAT", []byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01})
	chunk("IEND", nil)
	return b.Bytes()
}

// A header stating 100000×100000 pixels is refused before any pixel is decoded
// (decoding would allocate 40 GB), by Check and by Fit.
func TestDecompressionBombRefused(t *testing.T) {
	for _, data := range [][]byte{bombPNG(100000, 100000), bombPNG(20000, 20000), bombPNG(40000, 10)} {
		if _, err := Check(data); err == nil || !strings.Contains(err.Error(), "pixels") {
			t.Errorf("Check: %v, want a refusal naming the pixel limit", err)
		}
		if _, _, err := Fit(data, ForProvider("anthropic")); err == nil {
			t.Errorf("Fit accepted a bomb")
		}
	}
	if _, err := Check([]byte("not an image at all")); err != ErrNotImage {
		t.Errorf("Check(text) = %v, want ErrNotImage", err)
	}
}

// An image within the limits is sent as it is; a large one is scaled to the long
// side and recompressed under the byte limit, keeping its aspect ratio.
func TestFitResizesLargeImage(t *testing.T) {
	small := pngOf(t, 40, 20, false)
	out, mime, err := Fit(small, ForProvider("anthropic"))
	if err != nil || mime != PNG || !bytes.Equal(out, small) {
		t.Fatalf("small image changed: %s %d bytes %v", mime, len(out), err)
	}
	big := pngOf(t, 2100, 1050, false)
	for _, c := range []struct {
		prefix string
		side   int
	}{{"anthropic", 1568}, {"openai", 2048}, {"ollama", 1568}} {
		lim := ForProvider(c.prefix)
		out, mime, err := Fit(big, lim)
		if err != nil {
			t.Fatalf("%s: %v", c.prefix, err)
		}
		in, err := Check(out)
		if err != nil {
			t.Fatal(err)
		}
		if in.MIME != mime || in.Width != c.side || in.Height != c.side/2 || len(out) > lim.MaxBytes {
			t.Errorf("%s: %s %d×%d %d bytes, want %d×%d within %d bytes", c.prefix, in.MIME, in.Width, in.Height, len(out), c.side, c.side/2, lim.MaxBytes)
		}
	}
	// Over the byte limit only: recompressed, then scaled down until it fits.
	noisy := pngOf(t, 300, 300, false)
	out, mime, err = Fit(noisy, Limits{MaxBytes: 20_000, MaxSide: 4000, Types: []string{PNG, JPEG}})
	if err != nil || len(out) > 20_000 || mime != JPEG {
		t.Fatalf("byte limit: %s %d bytes %v", mime, len(out), err)
	}
	// Transparency survives as PNG when the PNG fits.
	tr := pngOf(t, 1200, 60, true)
	out, mime, err = Fit(tr, Limits{MaxBytes: 5 << 20, MaxSide: 1000, Types: []string{PNG}})
	if err != nil || mime != PNG {
		t.Fatalf("transparent: %s %v", mime, err)
	}
	if in, _ := Check(out); in.Width != 1000 || in.Height != 50 {
		t.Errorf("transparent: %d×%d", in.Width, in.Height)
	}
}

// A type the provider does not take is converted; GIF to Ollama becomes PNG/JPEG.
func TestFitConvertsType(t *testing.T) {
	var g bytes.Buffer
	img := image.NewPaletted(image.Rect(0, 0, 10, 10), color.Palette{color.Black, color.White})
	_ = gif.Encode(&g, img, nil)
	_, mime, err := Fit(g.Bytes(), ForProvider("ollama"))
	if err != nil || (mime != PNG && mime != JPEG) {
		t.Fatalf("gif for ollama: %s %v", mime, err)
	}
}

// The encoder fits and encodes an image once, however often it is asked.
func TestEncoderCaches(t *testing.T) {
	e := NewEncoder(ForProvider("anthropic"))
	big := pngOf(t, 1600, 400, false)
	m1, b1, err := e.Base64(big, "")
	if err != nil || m1 != JPEG {
		t.Fatalf("%s %v", m1, err)
	}
	allocs := testing.AllocsPerRun(5, func() {
		if _, b2, _ := e.Base64(big, ""); len(b2) != len(b1) {
			t.Fatal("different encoding")
		}
	})
	if allocs > 2 {
		t.Errorf("a cached image cost %v allocations: encoded again?", allocs)
	}
}
