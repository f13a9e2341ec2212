package anthropic

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/transcript"
)

var onePixel = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82")

// A tool's image goes inside its tool_result; for a model known to take no images
// a note says it was not shown, and no image block is sent.
func TestToolImageBlocks(t *testing.T) {
	res := transcript.ToolResult("c1", "shot", "here", false)
	res.Attachments = []transcript.Attachment{{MIME: "image/png", Data: onePixel}}
	entries := []transcript.Entry{transcript.UserInput("go"), transcript.ToolCall("c1", "shot", nil), res}
	for _, v := range []provider.Vision{provider.VisionYes, provider.VisionNo} {
		p := New("claude-x", Config{BaseURL: "http://127.0.0.1:1", APIKey: "k", Vision: v})
		b, err := json.Marshal(messages(entries, 0, p.imgs))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		img := strings.Contains(s, `"type":"image"`)
		note := strings.Contains(s, "not shown: model claude-x does not accept images")
		if img != (v == provider.VisionYes) || note != (v == provider.VisionNo) {
			t.Errorf("vision %v: image block %v, note %v\n%s", v, img, note, s)
		}
	}
}
