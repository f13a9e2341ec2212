package openai

import (
	"encoding/json"
	"testing"

	"github.com/lovia-dev/lovia/internal/transcript"
)

// The hand encoder writes exactly the bytes the client would, for every shape it
// takes and every kind of text.
func TestFastMessageMatchesClient(t *testing.T) {
	texts := []string{"", "plain", `quote " back \ slash /`, "html <a href='x'>&amp;</a>", "ctl \x00\x01\b\f\n\r\t\x1f\x7f",
		"utf8 é ü 日本 🙂", "bad \xff\xfe utf8 \xc3", "sep \u2028 \u2029", "\u00e9", "split \xe6\x97", "\xa5 rest"}
	args := []json.RawMessage{nil, json.RawMessage(`{}`), json.RawMessage(`{"path":"a<b>","n":1}`), json.RawMessage(`"not json {"`)}
	var views [][]transcript.Entry
	for i, s := range texts {
		u := texts[(i+3)%len(texts)]
		call := transcript.ToolCall("call_"+s, "tool "+u, args[i%len(args)])
		res := transcript.ToolResult(call.CallID, call.Name, s, i%2 == 0)
		reason := transcript.Reasoning("think " + s)
		reason.Provider = "openai"
		views = append(views,
			[]transcript.Entry{transcript.UserInput(s), transcript.AssistantText(u), call, res},
			[]transcript.Entry{transcript.UserInput(u), call, res, transcript.AssistantText(s), transcript.AssistantText(u)},
			[]transcript.Entry{transcript.UserInput(s), reason, transcript.AssistantText(u)},
			[]transcript.Entry{transcript.SystemInput(s), transcript.AssistantText("a"), transcript.AssistantText("\x97 b"), call, call, res},
		)
	}
	views = append(views, []transcript.Entry{transcript.UserInput("x"), transcript.AssistantText("split \xe6"), transcript.AssistantText("\x97\xa5 rune")})
	n := 0
	for _, view := range views {
		for sp := range chatSpans(view) {
			fast, ok := fastMessage("openai", view, sp, nil)
			m, mok := chatMessage("openai", view, sp, nil)
			if !ok {
				continue
			}
			if !mok {
				t.Fatalf("fast path made a message the client path does not: %s", fast)
			}
			want, err := m.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if string(fast) != string(want) {
				t.Errorf("span %+v of %q:\nfast   %s\nclient %s", sp, view[sp.start].Text, fast, want)
			}
			n++
		}
	}
	if n < 100 {
		t.Fatalf("only %d spans compared", n)
	}
}

// Any text, in any field, encodes as the client encodes it.
func FuzzFastMessage(f *testing.F) {
	for _, s := range []string{"", "a\"b\\c", "<&>", "\x00\x1f\x7f", "\xff\xe6\x97", "\u2028\u2029", "日本🙂"} {
		f.Add(s, s+"x", "\xe6")
	}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		call := transcript.ToolCall(a, b, json.RawMessage(c))
		view := []transcript.Entry{transcript.UserInput(a), transcript.AssistantText(b), transcript.AssistantText(c), call,
			transcript.ToolResult(a, b, c, len(a)%2 == 0)}
		for sp := range chatSpans(view) {
			fast, ok := fastMessage("openai", view, sp, nil)
			if !ok {
				continue
			}
			m, _ := chatMessage("openai", view, sp, nil)
			want, err := m.MarshalJSON()
			if err != nil {
				t.Skip()
			}
			if string(fast) != string(want) {
				t.Fatalf("fast   %s\nclient %s", fast, want)
			}
		}
	})
}
