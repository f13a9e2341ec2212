package event

import (
	"strings"

	"github.com/lovia-dev/lovia/internal/transcript"
)

// Image is an attached image as events show it: what and how big, never the bytes.
type Image struct {
	MIME  string `json:"mime"`
	Name  string `json:"name,omitempty"`
	Bytes int    `json:"bytes"`
}

// ImagesOf lists the image attachments of entries (nil when there are none).
func ImagesOf(entries []transcript.Entry) []Image {
	var out []Image
	for _, e := range entries {
		for _, a := range e.Attachments {
			if strings.HasPrefix(a.MIME, "image/") {
				n := len(a.Data)
				if n == 0 {
					n = a.Size
				}
				out = append(out, Image{MIME: a.MIME, Name: a.Name, Bytes: n})
			}
		}
	}
	return out
}
