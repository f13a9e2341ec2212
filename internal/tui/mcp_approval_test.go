package tui

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/event"
)

// An MCP approval names the server, the tool and the arguments, and answer 2 allows that
// tool for the rest of the session.
func TestMCPApproval(t *testing.T) {
	h := newHarness(t, 100, 30)
	h.typeText("write it")
	h.enter()
	args := `{"path":"/tmp/x","content":"hi"}`
	a := ev(event.ApprovalRequired)
	a.CallID, a.Name, a.Args = "c1", "fs__write_file", json.RawMessage(args)
	a.Approval = &event.Approval{Kind: "mcp", Summary: "MCP server fs, tool write_file, arguments " + args, Rules: []string{"mcp:fs__write_file"}}
	h.events(toolStarted("c1", "fs__write_file", args), a)
	v := h.view()
	for _, want := range []string{"Allow the MCP tool fs__write_file?", "MCP server fs, tool write_file", `"path":"/tmp/x"`, "2. allow this tool for the session"} {
		if !strings.Contains(v, want) {
			t.Errorf("approval view lacks %q:\n%s", want, v)
		}
	}
	h.choose(2)
	if d := h.run().decisions["c1"]; !d.Allow || !d.Session {
		t.Fatalf("decision = %+v", d)
	}
}
