package transcript

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func sample() []Entry {
	r := Reasoning("thinking")
	r.Signature, r.Provider = "sig", "anthropic"
	res := ToolResult("c1", "read_file", "hello", false)
	res.Truncated = true
	in := UserInput("look at this")
	in.Attachments = []Attachment{{MIME: "image/png", Name: "a.png", Data: []byte{0, 1, 2}}}
	return []Entry{SystemInput("be brief"), in, r, AssistantText("sure"),
		ToolCall("c1", "read_file", json.RawMessage(`{"path":"a"}`)), res,
		ToolCall("c2", "shell", nil), ToolResult("c2", "shell", "boom", true)}
}

func TestJSONRoundTrip(t *testing.T) {
	for _, e := range sample() {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var back Entry
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(e, back) {
			t.Fatalf("round trip changed %s:\n%+v\n%+v", b, e, back)
		}
		if !strings.HasPrefix(string(b), `{"type":"`+string(e.Type)+`"`) {
			t.Fatalf("type discriminator not first: %s", b)
		}
	}
}

func TestJSONStableShape(t *testing.T) {
	cases := []struct {
		e    Entry
		want string
	}{
		{UserInput("hi"), `{"type":"input","role":"user","text":"hi"}`},
		{ToolCall("c1", "x", nil), `{"type":"tool_call","call_id":"c1","name":"x","args":{}}`},
		{ToolResult("c1", "x", "no", true), `{"type":"tool_result","text":"no","call_id":"c1","name":"x","is_error":true}`},
	}
	for _, c := range cases {
		b, _ := json.Marshal(c.e)
		if string(b) != c.want {
			t.Errorf("got %s want %s", b, c.want)
		}
	}
}

func FuzzEntryJSON(f *testing.F) {
	for _, e := range sample() {
		b, _ := json.Marshal(e)
		f.Add(b)
	}
	f.Add([]byte(`{"type":"tool_call","args":[1,2]}`))
	f.Add([]byte(`{"type":"input","attachments":[{"data":"!!"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var e Entry
		if err := json.Unmarshal(data, &e); err != nil {
			return
		}
		// Whatever decodes must re-encode and decode to the same value.
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatalf("re-encode %q: %v", data, err)
		}
		var back Entry
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("decode of own encoding %s: %v", b, err)
		}
		b2, _ := json.Marshal(back)
		if string(b) != string(b2) {
			t.Fatalf("unstable encoding:\n%s\n%s", b, b2)
		}
		_ = ToMessages([]Entry{e})
		_ = RepairDangling([]Entry{e})
	})
}

func TestToMessages(t *testing.T) {
	got := ToMessages(sample())
	roles := []string{}
	for _, m := range got {
		roles = append(roles, m.Role)
	}
	if want := "system user assistant tool assistant tool"; strings.Join(roles, " ") != want {
		t.Fatalf("roles %v, want %s", roles, want)
	}
	a := got[2]
	if a.Content != "sure" || a.Reasoning != "thinking" || len(a.ToolCalls) != 1 || a.ToolCalls[0].ID != "c1" {
		t.Fatalf("assistant message %+v", a)
	}
	if got[3].ToolCallID != "c1" || got[3].Content != "hello" || got[5].IsError != true {
		t.Fatalf("tool messages %+v %+v", got[3], got[5])
	}
	if len(got[1].Attachments) != 1 {
		t.Fatal("attachments dropped from user message")
	}
}

// pairedWindow reports whether every result in w has its call in w.
func pairedWindow(w []Entry) bool {
	calls := map[string]bool{}
	for _, e := range w {
		switch e.Type {
		case TypeToolCall:
			calls[e.CallID] = true
		case TypeToolResult:
			if !calls[e.CallID] {
				return false
			}
		}
	}
	return true
}

func TestSafeWindowStartTable(t *testing.T) {
	es := []Entry{
		UserInput("q"),                  // 0
		ToolCall("a", "t", nil),         // 1
		ToolCall("b", "t", nil),         // 2
		ToolResult("b", "t", "", false), // 3
		ToolResult("a", "t", "", false), // 4
		AssistantText("x"),              // 5
		ToolCall("c", "t", nil),         // 6
		ToolResult("c", "t", "", false), // 7
	}
	cases := []struct{ start, want int }{
		{-3, 0}, {0, 0}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 5}, {6, 6}, {7, 6}, {8, 8}, {99, 8},
	}
	for _, c := range cases {
		if got := SafeWindowStart(es, c.start); got != c.want {
			t.Errorf("SafeWindowStart(%d) = %d, want %d", c.start, got, c.want)
		}
	}
}

func TestSafeWindowStartTransitive(t *testing.T) {
	// The cut at 4 keeps result "b" whose call is at 1; moving to 1 brings in result
	// "a" (index 2) whose call is at 0.
	es := []Entry{
		ToolCall("a", "t", nil),         // 0
		ToolCall("b", "t", nil),         // 1
		ToolResult("a", "t", "", false), // 2
		UserInput("x"),                  // 3
		ToolResult("b", "t", "", false), // 4
	}
	if got := SafeWindowStart(es, 4); got != 0 {
		t.Fatalf("got %d, want 0", got)
	}
}

func randomTranscript(r *rand.Rand, n int) []Entry {
	var es []Entry
	var open []string
	id := 0
	for len(es) < n {
		switch k := r.IntN(5); {
		case k == 0:
			es = append(es, UserInput("u"))
		case k == 1:
			es = append(es, AssistantText("a"))
		case k == 2:
			id++
			c := string(rune('a'+id%26)) + strings.Repeat("x", id/26)
			open = append(open, c)
			es = append(es, ToolCall(c, "t", nil))
		default:
			if len(open) > 0 {
				i := r.IntN(len(open))
				es = append(es, ToolResult(open[i], "t", "r", false))
				open = append(open[:i], open[i+1:]...)
			}
		}
	}
	return es
}

func TestSafeWindowStartProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 500; iter++ {
		es := randomTranscript(r, 1+r.IntN(40))
		start := r.IntN(len(es) + 1)
		got := SafeWindowStart(es, start)
		if got > start {
			t.Fatalf("moved forward: %d > %d", got, start)
		}
		if !pairedWindow(es[got:]) {
			t.Fatalf("window from %d (asked %d) separates a result from its call", got, start)
		}
		// Minimal: no later safe cut between got and start exists that is safe and
		// keeps es[start:] intact... at least got itself must be needed: got == start
		// when es[start:] is already paired.
		if pairedWindow(es[start:]) && got != start {
			t.Fatalf("moved an already safe cut %d to %d", start, got)
		}
	}
}

func TestPendingAndRepair(t *testing.T) {
	es := []Entry{
		UserInput("q"),
		ToolCall("a", "t", nil),
		ToolCall("b", "u", nil),
		ToolResult("b", "u", "ok", false),
		UserInput("steer"),
		ToolCall("c", "t", nil),
	}
	p := Pending(es)
	if len(p) != 2 || p[0].CallID != "a" || p[1].CallID != "c" {
		t.Fatalf("pending %+v", p)
	}
	rep := RepairDangling(es)
	var types []string
	for _, e := range rep {
		types = append(types, string(e.Type)+":"+e.CallID)
	}
	want := "input: tool_call:a tool_call:b tool_result:b tool_result:a input: tool_call:c tool_result:c"
	if strings.Join(types, " ") != want {
		t.Fatalf("repaired %v\nwant %s", types, want)
	}
	if !rep[4].Synthetic || !rep[4].IsError || rep[4].Name != "t" {
		t.Fatalf("synthetic result %+v", rep[4])
	}
	if len(Pending(rep)) != 0 {
		t.Fatal("repair left dangling calls")
	}
	if len(es) != 6 {
		t.Fatal("repair mutated its input")
	}
	clean := es[:4:4]
	clean = append(clean, ToolResult("a", "t", "", false))
	if got := RepairDangling(clean); &got[0] != &clean[0] {
		t.Fatal("no dangling: expected the same slice back")
	}
}

func TestRepairPropertyAlwaysPaired(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 300; iter++ {
		es := randomTranscript(r, 1+r.IntN(30))
		rep := RepairDangling(es)
		if len(Pending(rep)) != 0 || !pairedWindow(rep) {
			t.Fatalf("repair left the view unpaired")
		}
	}
}
