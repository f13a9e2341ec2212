package transcript

import "encoding/json"

// Message is one chat-shaped message: the derived, lossy view some providers and front
// ends want. Consecutive assistant entries (text, reasoning, tool calls) fold into one
// assistant message; each tool result becomes one "tool" message.
type Message struct {
	// Role is "system", "user", "assistant" or "tool".
	Role      string `json:"role"`
	Content   string `json:"content,omitempty"`
	Reasoning string `json:"reasoning,omitempty"`
	// ToolCalls are the assistant's calls, in reply order.
	ToolCalls []MessageToolCall `json:"tool_calls,omitempty"`
	// ToolCallID and Name identify the call a "tool" message answers.
	ToolCallID  string       `json:"tool_call_id,omitempty"`
	Name        string       `json:"name,omitempty"`
	IsError     bool         `json:"is_error,omitempty"`
	Attachments []Attachment `json:"attachments,omitempty"`
}

// MessageToolCall is one call inside an assistant message.
type MessageToolCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// Message roles.
const (
	MessageSystem    = "system"
	MessageUser      = "user"
	MessageAssistant = "assistant"
	MessageTool      = "tool"
)

// ToMessages derives the chat view of entries. It is lossy: opaque reasoning data, run
// ids and agent names are dropped.
func ToMessages(entries []Entry) []Message {
	out := make([]Message, 0, len(entries))
	// open is the index in out of the assistant message being built, or -1.
	open := -1
	for _, e := range entries {
		switch e.Type {
		case TypeInput:
			open = -1
			role := MessageUser
			if e.Role == RoleSystem {
				role = MessageSystem
			}
			out = append(out, Message{Role: role, Content: e.Text, Attachments: e.Attachments})
		case TypeAssistantText, TypeReasoning, TypeToolCall:
			if open < 0 {
				out = append(out, Message{Role: MessageAssistant})
				open = len(out) - 1
			}
			m := &out[open]
			switch e.Type {
			case TypeAssistantText:
				m.Content += e.Text
			case TypeReasoning:
				m.Reasoning += e.Text
			case TypeToolCall:
				m.ToolCalls = append(m.ToolCalls, MessageToolCall{ID: e.CallID, Name: e.Name, Args: e.Args})
			}
		case TypeToolResult:
			// Results close the assistant message: text after them starts a new one.
			open = -1
			out = append(out, Message{Role: MessageTool, Content: e.Text, ToolCallID: e.CallID, Name: e.Name,
				IsError: e.IsError, Attachments: e.Attachments})
		}
	}
	return out
}
