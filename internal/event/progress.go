package event

import (
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Progress is a running tool call's report of how far it is (tool_call_progress).
// Progress increases as the call proceeds; Total is 0 when unknown.
type Progress struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
}

// MaxProgressMessage caps a progress message (in runes); a tool's server may send
// anything.
const MaxProgressMessage = 200

// Clean returns p safe to encode and show: finite non-negative numbers, and a
// message on one line without control characters, capped at MaxProgressMessage.
func (p Progress) Clean() Progress {
	finite := func(f float64) float64 {
		if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
			return 0
		}
		return f
	}
	p.Progress, p.Total = finite(p.Progress), finite(p.Total)
	msg := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError || unicode.Is(unicode.Bidi_Control, r) {
			return ' '
		}
		return r
	}, p.Message)
	msg = strings.Join(strings.Fields(msg), " ")
	if utf8.RuneCountInString(msg) > MaxProgressMessage {
		r := []rune(msg)
		msg = string(r[:MaxProgressMessage-1]) + "…"
	}
	p.Message = msg
	return p
}

// String renders p for people: "3/5 · Step 3 of 5", or "3" when the total is
// unknown and there is no message.
func (p Progress) String() string {
	num := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	s := num(p.Progress)
	if p.Total > 0 {
		s += "/" + num(p.Total)
	}
	if p.Message != "" {
		s += " · " + p.Message
	}
	return s
}
