// Package transcript holds the canonical, append-only record of a conversation: a
// discriminated union of five entry kinds. Chat-shaped messages are a derived, lossy
// view (see messages.go). Everything pairs by id (call_id, run_id), never by position.
package transcript

import "encoding/json"

// Type discriminates entries; it is the "type" field of the JSON form.
type Type string

const (
	TypeInput         Type = "input"
	TypeAssistantText Type = "assistant_text"
	TypeReasoning     Type = "reasoning"
	TypeToolCall      Type = "tool_call"
	TypeToolResult    Type = "tool_result"
)

// Roles of input entries.
const (
	RoleUser   = "user"
	RoleSystem = "system"
)

// Entry is one transcript record. It is a flat struct discriminated by Type rather than
// an interface union: it copies cheaply, has one stable JSON shape (empty fields are
// omitted), and every store and provider handles one concrete type.
//
// Field use by type:
//   - input:          Role ("user" or "system"), Text, Attachments
//   - assistant_text: Text
//   - reasoning:      Text, Signature / Encrypted / ProviderID (opaque provider data
//     replayed verbatim on later turns, e.g. Anthropic thinking signatures or
//     Responses reasoning items)
//   - tool_call:      CallID, Name, Args (raw JSON object)
//   - tool_result:    CallID, Name, Text (output as the model sees it), IsError,
//     Truncated, Attachments
type Entry struct {
	Type  Type   `json:"type"`
	RunID string `json:"run_id,omitempty"`
	// Agent is the agent that produced an assistant/tool entry.
	Agent string `json:"agent,omitempty"`

	Role string `json:"role,omitempty"`
	Text string `json:"text,omitempty"`

	Signature  string `json:"signature,omitempty"`
	Encrypted  string `json:"encrypted,omitempty"`
	ProviderID string `json:"provider_id,omitempty"`
	// Provider names the adapter that produced opaque reasoning data; other providers
	// skip such entries when replaying.
	Provider string `json:"provider,omitempty"`

	CallID    string          `json:"call_id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Args      json.RawMessage `json:"args,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	Truncated bool            `json:"truncated,omitempty"`

	Attachments []Attachment `json:"attachments,omitempty"`

	// Synthetic marks entries a view renderer made up (compaction markers, repaired
	// dangling-call results, injected reminders). They are never persisted.
	Synthetic bool `json:"synthetic,omitempty"`
}

// Attachment is binary content (an image, a file) carried by an input or tool result.
type Attachment struct {
	MIME string `json:"mime"`
	Name string `json:"name,omitempty"`
	Data []byte `json:"data,omitempty"` // base64 in JSON
	URI  string `json:"uri,omitempty"`
	// SHA256 (hex) and Size name Data where it is stored apart, once per content
	// (the SQLite store's blobs table), or where a view shows a placeholder.
	SHA256 string `json:"sha256,omitempty"`
	Size   int    `json:"size,omitempty"`
}

// UserInput returns a user input entry.
func UserInput(text string) Entry { return Entry{Type: TypeInput, Role: RoleUser, Text: text} }

// SystemInput returns a system input entry (the system head).
func SystemInput(text string) Entry { return Entry{Type: TypeInput, Role: RoleSystem, Text: text} }

// AssistantText returns an assistant text entry.
func AssistantText(text string) Entry { return Entry{Type: TypeAssistantText, Text: text} }

// Reasoning returns a reasoning entry.
func Reasoning(text string) Entry { return Entry{Type: TypeReasoning, Text: text} }

// ToolCall returns a tool call entry; args must be a JSON object (nil means {}).
func ToolCall(callID, name string, args json.RawMessage) Entry {
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	return Entry{Type: TypeToolCall, CallID: callID, Name: name, Args: args}
}

// ToolResult returns a tool result entry.
func ToolResult(callID, name, output string, isError bool) Entry {
	return Entry{Type: TypeToolResult, CallID: callID, Name: name, Text: output, IsError: isError}
}

// IsUser reports whether e is a user input.
func (e Entry) IsUser() bool { return e.Type == TypeInput && e.Role != RoleSystem }

// IsSystem reports whether e is a system input.
func (e Entry) IsSystem() bool { return e.Type == TypeInput && e.Role == RoleSystem }

// Clone returns a deep copy (Args and Attachments are not shared).
func (e Entry) Clone() Entry {
	if e.Args != nil {
		e.Args = append(json.RawMessage(nil), e.Args...)
	}
	if e.Attachments != nil {
		a := make([]Attachment, len(e.Attachments))
		copy(a, e.Attachments)
		e.Attachments = a
	}
	return e
}
