package provider

import (
	"encoding/json"
	"strings"
)

// ToolArgs returns streamed tool-call arguments as storable JSON: "{}" when empty,
// the text itself when it is valid JSON, else a JSON string holding it (argument
// validation then reports the problem to the model). Every wire decoder uses it.
func ToolArgs(s string) json.RawMessage {
	s = strings.TrimSpace(s)
	if s == "" {
		return json.RawMessage(`{}`)
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}
