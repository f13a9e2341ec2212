package openai

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/transcript"
)

func imgConversation() []transcript.Entry {
	res := func(id string, img bool) transcript.Entry {
		e := transcript.ToolResult(id, "shot", "result "+id, false)
		if img {
			e.Attachments = []transcript.Attachment{{MIME: "image/png", Data: tinyPNG}}
		}
		return e
	}
	return []transcript.Entry{
		transcript.UserInput("take two screenshots"),
		transcript.ToolCall("a", "shot", nil), transcript.ToolCall("b", "shot", nil),
		res("a", true), res("b", false),
		transcript.AssistantText("done"),
	}
}

// Chat: tool messages carry text only, so the images of a turn's results follow
// all its tool messages in one user message that names the call; a text-only model
// is told the image was not shown, and no image is sent.
func TestChatToolImages(t *testing.T) {
	for _, v := range []provider.Vision{provider.VisionUnknown, provider.VisionNo} {
		c := NewChat("m", Config{Provider: "openai", BaseURL: "http://127.0.0.1:1", Vision: v})
		body, err := c.body(provider.Request{Entries: imgConversation()})
		if err != nil {
			t.Fatal(err)
		}
		var req struct {
			Messages []struct {
				Role       string          `json:"role"`
				Content    json.RawMessage `json:"content"`
				ToolCallID string          `json:"tool_call_id"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			t.Fatal(err)
		}
		var roles []string
		for _, m := range req.Messages {
			roles = append(roles, m.Role)
		}
		got := strings.Join(roles, ",")
		if v == provider.VisionNo {
			if got != "user,assistant,tool,tool,assistant" || strings.Contains(string(body), "image_url") ||
				!strings.Contains(string(req.Messages[2].Content), "not shown: model m does not accept images") {
				t.Fatalf("text-only: %s\n%s", got, body)
			}
			continue
		}
		if got != "user,assistant,tool,tool,user,assistant" {
			t.Fatalf("roles %s\n%s", got, body)
		}
		imgMsg := string(req.Messages[4].Content)
		if !strings.Contains(imgMsg, `"image_url"`) || !strings.Contains(imgMsg, "call a") || strings.Contains(imgMsg, "call b") {
			t.Errorf("image message: %s", imgMsg)
		}
		if s := string(req.Messages[2].Content); !strings.Contains(s, "shown in the message that follows") {
			t.Errorf("tool message: %s", s)
		}
	}
}

// Responses: the image goes in the function_call_output's array output.
func TestResponsesToolImages(t *testing.T) {
	r := NewResponses("m", Config{Provider: "openai-responses", BaseURL: "http://127.0.0.1:1"})
	body, err := r.body(provider.Request{Entries: imgConversation()})
	if err != nil {
		t.Fatal(err)
	}
	var req struct {
		Input []struct {
			Type   string          `json:"type"`
			CallID string          `json:"call_id"`
			Output json.RawMessage `json:"output"`
		} `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, it := range req.Input {
		if it.Type != "function_call_output" {
			continue
		}
		n++
		img := strings.Contains(string(it.Output), `"type":"input_image"`)
		if img != (it.CallID == "a") || (it.CallID == "b" && it.Output[0] != '"') {
			t.Errorf("output of %s: %s", it.CallID, it.Output)
		}
	}
	if n != 2 {
		t.Fatalf("%d outputs\n%s", n, body)
	}
}
