package openai

import (
	"fmt"
	"strings"

	oa "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/lovia-dev/lovia/internal/imagefit"
	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// images turns attachments into the image parts of one adapter: fitted to its
// provider's limits and base64-encoded once per image (imagefit.Encoder), or, for a
// model known to take no images, a note saying the image was not shown.
type images struct {
	enc    *imagefit.Encoder
	vision provider.Vision
	model  string
}

func newImages(cfg Config, model string) *images {
	return &images{enc: imagefit.NewEncoder(imagefit.ForProvider(cfg.Provider)), vision: cfg.Vision, model: model}
}

func isImage(a transcript.Attachment) bool {
	return strings.HasPrefix(a.MIME, "image/") && (len(a.Data) > 0 || a.URI != "")
}

// url is the image's data URL (or its remote URL when it has no bytes); "" and a
// note to put in its place when it cannot be sent.
func (im *images) url(a transcript.Attachment) (string, string) {
	if im == nil {
		im = &images{}
	}
	if im.vision == provider.VisionNo {
		return "", provider.ImageNotShown(a, "model "+im.model+" does not accept images")
	}
	if len(a.Data) == 0 {
		return a.URI, ""
	}
	enc := im.enc
	if enc == nil { // a zero images (tests): fitted, not cached
		enc = imagefit.NewEncoder(imagefit.ForProvider(""))
	}
	mime, b64, err := enc.Base64(a.Data, a.SHA256)
	if err != nil {
		return "", provider.ImageNotShown(a, err.Error())
	}
	return "data:" + mime + ";base64," + b64, ""
}

// chatUserParts are the content parts of a user input with attachments.
func (im *images) chatUserParts(e transcript.Entry) []oa.ChatCompletionContentPartUnionParam {
	parts := []oa.ChatCompletionContentPartUnionParam{}
	if e.Text != "" {
		parts = append(parts, oa.TextContentPart(e.Text))
	}
	for _, a := range e.Attachments {
		if !isImage(a) {
			parts = append(parts, oa.TextContentPart(fmt.Sprintf("[attachment %s (%s) not shown]", a.Name, a.MIME)))
			continue
		}
		if u, note := im.url(a); u != "" {
			parts = append(parts, oa.ImageContentPart(oa.ChatCompletionContentPartImageImageURLParam{URL: u}))
		} else {
			parts = append(parts, oa.TextContentPart(note))
		}
	}
	return parts
}

// resultText is a tool result as the text of a Chat tool message or a Responses
// function_call_output. Images are said to follow (shown says they are sent) or not
// to be shown; other attachments are named.
func (im *images) resultText(e transcript.Entry, shown bool) string {
	s := e.Text
	if e.IsError && !strings.HasPrefix(s, "error") && !strings.HasPrefix(s, "Error") {
		s = "error: " + s
	}
	for _, a := range e.Attachments {
		switch {
		case isImage(a) && shown && (im == nil || im.vision != provider.VisionNo):
			s += fmt.Sprintf("\n[image (%s, %d bytes) attached: shown in the message that follows the tool results]", a.MIME, len(a.Data))
		case isImage(a) && im != nil && im.vision == provider.VisionNo:
			s += "\n" + provider.ImageNotShown(a, "model "+im.model+" does not accept images")
		default:
			s += fmt.Sprintf("\n[attachment %s (%s) not shown]", a.Name, a.MIME)
		}
	}
	return s
}

// resultHasImages reports whether e is a tool result whose images can be shown.
func (im *images) resultHasImages(e *transcript.Entry) bool {
	if e.Type != transcript.TypeToolResult || (im != nil && im.vision == provider.VisionNo) {
		return false
	}
	for _, a := range e.Attachments {
		if isImage(a) {
			return true
		}
	}
	return false
}

// toolImagesMessage is the user message that carries the images of the tool results
// view[start:end] (a run of consecutive results): Chat tool messages carry text
// only, so the images follow all of them, each introduced by the call it belongs to.
func (im *images) toolImagesMessage(view []transcript.Entry) (oa.ChatCompletionMessageParamUnion, bool) {
	var parts []oa.ChatCompletionContentPartUnionParam
	for i := range view {
		e := &view[i]
		if !im.resultHasImages(e) {
			continue
		}
		parts = append(parts, oa.TextContentPart(fmt.Sprintf("Images returned by tool %s (call %s):", e.Name, e.CallID)))
		for _, a := range e.Attachments {
			if !isImage(a) {
				continue
			}
			if u, note := im.url(a); u != "" {
				parts = append(parts, oa.ImageContentPart(oa.ChatCompletionContentPartImageImageURLParam{URL: u}))
			} else {
				parts = append(parts, oa.TextContentPart(note))
			}
		}
	}
	if len(parts) == 0 {
		return oa.ChatCompletionMessageParamUnion{}, false
	}
	return oa.UserMessage(parts), true
}

// toolRun returns the start of the run of consecutive tool results that view[i]
// ends, and whether view[i] ends one (the next entry is no tool result).
func toolRun(view []transcript.Entry, i int) (int, bool) {
	if view[i].Type != transcript.TypeToolResult || (i+1 < len(view) && view[i+1].Type == transcript.TypeToolResult) {
		return 0, false
	}
	j := i
	for j > 0 && view[j-1].Type == transcript.TypeToolResult {
		j--
	}
	return j, true
}

// responsesOutput is a tool result's function_call_output: its text, and its
// images as input_image items when there are any to show (the Responses API takes
// an array output).
func (im *images) responsesOutput(e transcript.Entry) responses.ResponseInputItemFunctionCallOutputOutputUnionParam {
	if !im.resultHasImages(&e) {
		return responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: oa.String(im.resultText(e, false))}
	}
	text := e.Text
	if e.IsError && !strings.HasPrefix(text, "error") && !strings.HasPrefix(text, "Error") {
		text = "error: " + text
	}
	var items responses.ResponseFunctionCallOutputItemListParam
	if text != "" {
		items = append(items, responses.ResponseFunctionCallOutputItemUnionParam{OfInputText: &responses.ResponseInputTextContentParam{Text: text}})
	}
	for _, a := range e.Attachments {
		u, note := "", fmt.Sprintf("[attachment %s (%s) not shown]", a.Name, a.MIME)
		if isImage(a) {
			u, note = im.url(a)
		}
		if u != "" {
			items = append(items, responses.ResponseFunctionCallOutputItemUnionParam{OfInputImage: &responses.ResponseInputImageContentParam{
				ImageURL: oa.String(u), Detail: responses.ResponseInputImageContentDetailAuto}})
		} else {
			items = append(items, responses.ResponseFunctionCallOutputItemUnionParam{OfInputText: &responses.ResponseInputTextContentParam{Text: note}})
		}
	}
	return responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfResponseFunctionCallOutputItemArray: items}
}

// responsesInput is the content of a user input with attachments.
func (im *images) responsesInput(e transcript.Entry) responses.EasyInputMessageContentUnionParam {
	var parts responses.ResponseInputMessageContentListParam
	if e.Text != "" {
		parts = append(parts, responses.ResponseInputContentParamOfInputText(e.Text))
	}
	for _, a := range e.Attachments {
		u, note := "", "[attachment "+a.Name+" ("+a.MIME+") not shown]"
		if isImage(a) {
			u, note = im.url(a)
		}
		if u != "" {
			parts = append(parts, responses.ResponseInputContentUnionParam{OfInputImage: &responses.ResponseInputImageParam{
				ImageURL: oa.String(u), Detail: responses.ResponseInputImageDetailAuto}})
			continue
		}
		parts = append(parts, responses.ResponseInputContentParamOfInputText(note))
	}
	return responses.EasyInputMessageContentUnionParam{OfInputItemContentList: parts}
}
