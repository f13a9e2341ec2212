package provider

import (
	"testing"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/transcript"
)

func TestModelVision(t *testing.T) {
	for _, c := range []struct {
		prefix, model string
		want          Vision
	}{
		{"openai", "gpt-4.1-mini", VisionYes}, {"openai", "gpt-4o", VisionYes}, {"openai", "gpt-3.5-turbo", VisionNo},
		{"openai", "gpt-4", VisionNo}, {"anthropic", "claude-sonnet-4-5", VisionYes}, {"ollama", "llava:13b", VisionYes},
		{"ollama", "llama3.2-vision", VisionYes}, {"ollama", "llama3.2:3b", VisionNo}, {"ollama", "qwen2.5vl:7b", VisionYes},
		{"ollama", "qwen2.5-coder:7b", VisionNo}, {"ollama", "some-new-model", VisionUnknown},
	} {
		if got := ModelVision(c.prefix, c.model, nil); got != c.want {
			t.Errorf("%s:%s = %v, want %v", c.prefix, c.model, got, c.want)
		}
	}
	if ModelVision("ollama", "llama3.2:3b", map[string]bool{"ollama:llama3.2:3b": true}) != VisionYes ||
		ModelVision("openai", "gpt-4o", map[string]bool{"gpt-4o": false}) != VisionNo {
		t.Error("config override ignored")
	}
}

func TestCheckVision(t *testing.T) {
	in := transcript.UserInput("look")
	in.Attachments = []transcript.Attachment{{MIME: "image/png", Data: []byte{1}}}
	err := CheckVision(Info{Provider: "openai", Model: "gpt-3.5-turbo", Vision: VisionNo}, []transcript.Entry{in})
	if errs.KindOf(err) != errs.KindConfig {
		t.Fatalf("text-only model: %v", err)
	}
	if CheckVision(Info{Vision: VisionUnknown}, []transcript.Entry{in}) != nil ||
		CheckVision(Info{Vision: VisionNo}, []transcript.Entry{transcript.UserInput("x")}) != nil {
		t.Error("refused without cause")
	}
}
