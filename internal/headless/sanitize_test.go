package headless

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/event"
)

// TestTextOutputIsSanitized: the answer and every progress line reach the terminal
// without the control sequences the model or a tool put in them.
func TestTextOutputIsSanitized(t *testing.T) {
	const evil = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b]0;title\x07\x1b[2J\x1b]8;;https://x\x1b\\link\x1b]8;;\x1b\\\u009b1m\u202e"
	var out, errb bytes.Buffer
	w := New(Text, &out, &errb, Options{Progress: true, Verbose: true})
	for _, ev := range []event.Event{
		{Type: event.TurnStarted, Turn: 1, Agent: "coder" + evil},
		{Type: event.ToolCallStarted, Name: "read_file", Args: []byte(`{"path":"a` + "\u009b2J" + `.txt"}`)},
		{Type: event.ToolCallCompleted, Name: "read_file", Output: "file says " + evil},
		{Type: event.ToolCallFailed, Name: "shell" + evil, Output: "failed " + evil},
		{Type: event.ToolCallFailed, Name: "shell", CallID: "c1", Approval: &event.Approval{Summary: "run " + evil, Decision: "denied_by_default"}},
		{Type: event.UserMessageInjected, Text: "steer " + evil},
		{Type: event.RunCompleted, Status: "completed", FinalOutput: "answer " + evil + "\rcover"},
	} {
		w.Event(ev)
	}
	if err := w.Finish(nil, nil); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]string{"stdout": out.String(), "stderr": errb.String()} {
		if strings.ContainsAny(s, "\x1b\x07\r\u009b\u202e") {
			t.Errorf("%s carries control sequences:\n%q", name, s)
		}
	}
	if got := out.String(); got != "answer link\\u202e\ncover\n" {
		t.Errorf("answer = %q", got)
	}
	for _, want := range []string{"file says link", "denied: run link", "steer link"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, errb.String())
		}
	}
}
