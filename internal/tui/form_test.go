package tui

import (
	"encoding/json"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/lovia-dev/lovia/internal/elicit"
	"github.com/lovia-dev/lovia/internal/event"
)

const formSchema = `{"type":"object","properties":{
  "size":{"type":"string","title":"Size","enum":["s","m","l"],"enumNames":["Small","Medium","Large"],"default":"m"},
  "gift":{"type":"boolean","title":"Gift wrap"},
  "qty":{"type":"integer","title":"Quantity","minimum":1,"maximum":5},
  "name":{"type":"string","title":"Name"}},"required":["name"]}`

func formApproval(h *harness) {
	h.typeText("order")
	h.enter()
	a := ev(event.ApprovalRequired)
	a.CallID, a.Name = "c1", "shop__order"
	a.Approval = &event.Approval{Kind: elicit.Kind, Summary: "MCP server shop asks: your order?", Form: json.RawMessage(formSchema)}
	h.events(toolStarted("c1", "shop__order", `{}`), a)
}

// The form lists every field (required first, with its mark and the defaults),
// refuses an incomplete or invalid answer with the reason, and sends the values.
func TestElicitationForm(t *testing.T) {
	h := newHarness(t, 100, 40)
	formApproval(h)
	v := h.view()
	for _, want := range []string{"An MCP server asks you to fill in a form", "your order?", "Name*: (empty)", "Size: Medium", "1 Small · 2 Medium · 3 Large", "Gift wrap: (empty)", "accept (send the form)", "decline", "cancel"} {
		if !strings.Contains(v, want) {
			t.Errorf("form lacks %q:\n%s", want, v)
		}
	}
	if strings.Index(v, "Name*") > strings.Index(v, "Size") {
		t.Errorf("the required field is not first:\n%s", v)
	}
	h.advance(approvalGuard)
	down := func(n int) {
		for range n {
			h.key(tea.KeyDown)
		}
	}
	// accept at once: Name is required.
	down(4)
	h.enter()
	if v := h.view(); !strings.Contains(v, "required: Name") {
		t.Fatalf("incomplete form not refused:\n%s", v)
	}
	if _, answered := h.run().decisions["c1"]; answered {
		t.Fatal("an incomplete form was sent")
	}
	// Fill the name, pick Large by its number, toggle the gift, type a bad quantity.
	for range 4 {
		h.key(tea.KeyUp)
	}
	h.enter()
	h.typeText("Ada")
	h.enter()
	down(1)
	h.enter()
	for range len("Medium") {
		h.key(tea.KeyBackspace)
	}
	h.typeText("3") // the choice's number
	h.enter()
	down(1)
	h.enter() // gift: toggles
	down(1)
	h.enter()
	h.typeText("9")
	h.enter()
	v = h.view()
	for _, want := range []string{"Name*: Ada", "Size: Large", "Gift wrap: yes", "Quantity: 9"} {
		if !strings.Contains(v, want) {
			t.Fatalf("form lacks %q:\n%s", want, v)
		}
	}
	down(1)
	h.enter()
	if v := h.view(); !strings.Contains(v, "qty") {
		t.Fatalf("out-of-range quantity not refused:\n%s", v)
	}
	h.key(tea.KeyUp)
	h.enter()
	h.key(tea.KeyBackspace)
	h.typeText("2")
	h.enter()
	down(1)
	h.enter()
	d := h.run().decisions["c1"]
	var got map[string]any
	if err := json.Unmarshal([]byte(d.Message), &got); err != nil || !d.Allow {
		t.Fatalf("decision = %+v (%v)", d, err)
	}
	if got["name"] != "Ada" || got["size"] != "l" || got["gift"] != true || got["qty"] != float64(2) {
		t.Fatalf("values = %v", got)
	}
}

func TestElicitationFormEscCancelsAndDeclineDeclines(t *testing.T) {
	h := newHarness(t, 100, 40)
	formApproval(h)
	h.esc()
	if d := h.run().decisions["c1"]; d.Allow || d.Message != elicit.CancelMessage {
		t.Fatalf("esc = %+v", d)
	}
	h2 := newHarness(t, 100, 40)
	formApproval(h2)
	h2.advance(approvalGuard)
	for range 5 {
		h2.key(tea.KeyDown)
	}
	h2.enter()
	if d, ok := h2.run().decisions["c1"]; !ok || d.Allow || d.Message != "" {
		t.Fatalf("decline = %+v", d)
	}
}
