package provider

import (
	"fmt"
	"strings"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// Vision says whether a model accepts images.
type Vision uint8

const (
	// VisionUnknown: not in the table; images are sent and a refusal by the
	// server is reported as it comes.
	VisionUnknown Vision = iota
	VisionYes
	VisionNo
)

// visionModels maps a normalized model-name prefix (see normModel) to whether the
// model takes image input; the longest matching prefix wins, so "llama32vision"
// beats "llama32".
var visionModels = map[string]bool{
	// OpenAI
	"gpt4o": true, "gpt41": true, "gpt4turbo": true, "gpt4": false, "gpt35turbo": false,
	"gpt5": true, "gptoss": false, "o1": true, "o1mini": false, "o3": true, "o3mini": false, "o4mini": true,
	// Anthropic: every Claude 3 and later model
	"claude3": true, "claude35": true, "claude37": true, "claudesonnet4": true, "claudeopus4": true, "claudehaiku4": true,
	// Google
	"gemini": true, "gemma3": true,
	// open-weight vision models as served by Ollama and others
	"llava": true, "bakllava": true, "llavallama3": true, "llavaphi3": true, "moondream": true, "minicpmv": true,
	"llama32vision": true, "llama4": true, "qwen2vl": true, "qwen25vl": true, "qwen3vl": true, "granite32vision": true,
	"mistralsmall31": true, "mistralsmall32": true, "phi4multimodal": true,
	// open-weight text-only families
	"llama2": false, "llama3": false, "llama31": false, "llama32": false, "llama33": false,
	"qwen2": false, "qwen25": false, "qwen25coder": false, "qwen3": false, "qwen3coder": false,
	"deepseekr1": false, "deepseekv3": false, "deepseekchat": false, "deepseekreasoner": false, "deepseekcoder": false,
	"codestral": false, "devstral": false, "phi3": false, "phi4": false, "kimik2": false, "codellama": false,
	"starcoder": false,
}

// ModelVision returns whether model (as served under prefix) takes images: a config
// override (keyed "prefix:model" or "model") first, then the built-in table.
func ModelVision(prefix, model string, overrides map[string]bool) Vision {
	for _, k := range []string{prefix + ":" + model, model} {
		if v, ok := overrides[k]; ok {
			if v {
				return VisionYes
			}
			return VisionNo
		}
	}
	n := normModel(model)
	best, bestLen := VisionUnknown, 0
	for k, v := range visionModels {
		if len(k) > bestLen && strings.HasPrefix(n, k) {
			best, bestLen = VisionNo, len(k)
			if v {
				best = VisionYes
			}
		}
	}
	return best
}

// HasImages reports whether any entry carries an image attachment.
func HasImages(entries []transcript.Entry) bool {
	for i := range entries {
		for _, a := range entries[i].Attachments {
			if strings.HasPrefix(a.MIME, "image/") {
				return true
			}
		}
	}
	return false
}

// CheckVision refuses, before any request, to send the user's images to a model
// known to take text only (errs.KindConfig: exit 2).
func CheckVision(info Info, entries []transcript.Entry) error {
	if info.Vision != VisionNo || !HasImages(entries) {
		return nil
	}
	return errs.Newf(errs.KindConfig,
		fmt.Sprintf("use a model that accepts images (e.g. openai:gpt-4.1, anthropic:claude-sonnet-4-5, ollama:llava), or set models.%q.vision: true in config if this one does", info.Provider+":"+info.Model),
		"model %s:%s does not accept images; the prompt has image attachments", info.Provider, info.Model)
}

// ImageNotShown is the text a text-only model sees in place of an image.
func ImageNotShown(a transcript.Attachment, why string) string {
	name := a.Name
	if name != "" {
		name = " " + name
	}
	return fmt.Sprintf("[image%s (%s, %d bytes) not shown: %s]", name, a.MIME, len(a.Data), why)
}
