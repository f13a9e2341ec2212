package openai

import (
	"unicode/utf8"

	"github.com/lovia-dev/lovia/internal/transcript"
)

// fastMessage is the JSON of the span's message when it has one of the common
// shapes (a tool result, a plain user text, an assistant message without replayed
// reasoning), byte for byte as the client encodes it (TestFastMessageMatchesClient);
// false for any other span. The client's reflective encoding cost about 30,000
// instructions a message, the largest part of building a request's new pieces.
func fastMessage(prefix string, view []transcript.Entry, sp chatSpan, im *images) ([]byte, bool) {
	e := &view[sp.start]
	switch e.Type {
	case transcript.TypeToolResult:
		text := im.resultText(*e, true)
		js := make([]byte, 0, len(text)+len(e.CallID)+48)
		js = append(js, `{"content":`...)
		js = appendJSONString(js, text)
		js = append(js, `,"tool_call_id":`...)
		js = appendJSONString(js, e.CallID)
		return append(js, `,"role":"tool"}`...), true
	case transcript.TypeInput:
		if e.Role == transcript.RoleSystem || len(e.Attachments) > 0 {
			return nil, false
		}
		js := make([]byte, 0, len(e.Text)+32)
		js = append(js, `{"content":`...)
		js = appendJSONString(js, e.Text)
		return append(js, `,"role":"user"}`...), true
	}
	if !isAssistantSide(e.Type) {
		return nil, false
	}
	size, calls := 64, 0
	for i := sp.start; i < sp.end; i++ {
		x := &view[i]
		switch x.Type {
		case transcript.TypeReasoning:
			if x.Provider == prefix && sp.replayReasoning && x.Text != "" {
				return nil, false // replayed in an extra field: the client encodes it
			}
		case transcript.TypeAssistantText:
			size += len(x.Text)
		case transcript.TypeToolCall:
			calls++
			size += len(x.CallID) + len(x.Name) + len(x.Args) + 80
		}
	}
	// The texts are joined before escaping, as the client does: a rune may be
	// split between two of them.
	var text string
	for i := sp.start; i < sp.end; i++ {
		if x := &view[i]; x.Type == transcript.TypeAssistantText && x.Text != "" {
			text += x.Text
		}
	}
	if text == "" && calls == 0 {
		return nil, false // no message: the client path says so
	}
	js := make([]byte, 0, size)
	js = append(js, '{')
	if text != "" {
		js = append(js, `"content":`...)
		js = appendJSONString(js, text)
	}
	if calls > 0 {
		if text != "" {
			js = append(js, ',')
		}
		js = append(js, `"tool_calls":[`...)
		first := true
		for i := sp.start; i < sp.end; i++ {
			x := &view[i]
			if x.Type != transcript.TypeToolCall {
				continue
			}
			if !first {
				js = append(js, ',')
			}
			first = false
			js = append(js, `{"id":`...)
			js = appendJSONString(js, x.CallID)
			js = append(js, `,"function":{"arguments":`...)
			js = appendJSONString(js, argsText(x.Args))
			js = append(js, `,"name":`...)
			js = appendJSONString(js, x.Name)
			js = append(js, `},"type":"function"}`...)
		}
		js = append(js, ']')
	}
	return append(js, `,"role":"assistant"}`...), true
}

// appendJSONString appends s as a JSON string the way the client's encoder does
// (HTML characters kept, invalid UTF-8 as U+FFFD, U+2028 and U+2029 escaped).
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
