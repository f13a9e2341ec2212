package acp

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/lovia-dev/lovia/internal/elicit"
	"github.com/lovia-dev/lovia/internal/event"
)

// An MCP elicitation (a form or a URL) is declined in ACP, not put to the client as a
// permission request; a sampling request is an ordinary permission request.
func TestElicitationIsNotAPermissionRequest(t *testing.T) {
	tr := newTranslator(&recorder{}, "ses_1", t.TempDir(), nil)
	for _, kind := range []string{elicit.Kind, elicit.URLKind} {
		ap := tr.event(context.Background(), event.Event{Type: event.ApprovalRequired, CallID: "e_" + kind, Name: "everything__trigger-elicitation-request",
			Approval: &event.Approval{Kind: kind, Summary: "MCP server everything asks: name?", Form: json.RawMessage(`{"type":"object"}`)}})
		if ap == nil || !ap.elicitation {
			t.Fatalf("%s: %+v", kind, ap)
		}
	}
	ap := tr.event(context.Background(), event.Event{Type: event.ApprovalRequired, CallID: "s1", Name: "everything__trigger-sampling-request",
		Approval: &event.Approval{Kind: "sampling", Summary: "MCP server everything asks your model", Rules: []string{"mcp-sampling:everything"}}})
	if ap == nil || ap.elicitation || len(permissionOptions(*ap)) != 3 {
		t.Fatalf("sampling: %+v", ap)
	}
}
