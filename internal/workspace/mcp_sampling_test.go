package workspace

import (
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/event"
)

func TestMCPSamplingDecisions(t *testing.T) {
	rules := []MCPRule{
		{Server: "everything", Decision: "allow"}, // tools only: says nothing about sampling
		{Sampling: "docs*", Decision: "allow"},
		{Sampling: "docs-private", Decision: "deny"},
		{Tool: "*", Decision: "allow"},
	}
	cases := []struct {
		preset, server string
		want           Decision
	}{
		{PresetCoding, "everything", Ask},
		{PresetTrusted, "everything", Ask},
		{PresetReadonly, "everything", Deny},
		{PresetCoding, "docs", Allow},
		{PresetReadonly, "docs-public", Allow},
		{PresetCoding, "docs-private", Deny},
	}
	for _, c := range cases {
		p, err := NewMCPPolicy(c.preset, rules)
		if err != nil {
			t.Fatal(err)
		}
		if got, why := p.DecideSampling(c.server); got != c.want {
			t.Errorf("%s/%s: %v (%s), want %v", c.preset, c.server, got, why, c.want)
		}
	}
	// Sampling rules decide no tool and start no server.
	p, _ := NewMCPPolicy(PresetReadonly, []MCPRule{{Sampling: "gh", Decision: "allow"}})
	if d, _ := p.Decide("gh", "read", "gh__read"); d != Deny {
		t.Errorf("a sampling rule allowed a tool: %v", d)
	}
	if !p.DeniesServer("gh") {
		t.Error("a sampling rule started a server whose tools are all denied")
	}
}

func TestMCPSamplingApprovalAndGrant(t *testing.T) {
	p, _ := NewMCPPolicy(PresetCoding, nil)
	a, err := p.SamplingApproval("everything", "MCP server everything asks your model")
	if err != nil || a == nil || a.Kind != SamplingApprovalKind || len(a.Rules) != 1 || a.Rules[0] != "mcp-sampling:everything" {
		t.Fatalf("approval = %+v, %v", a, err)
	}
	p.Grant(a)
	if a, err := p.SamplingApproval("everything", ""); a != nil || err != nil {
		t.Fatalf("after the session grant: %+v, %v", a, err)
	}
	if a, _ := p.SamplingApproval("other", ""); a == nil {
		t.Fatal("the grant covered another server")
	}
	// A grant is not a tool grant, and no tool grant allows sampling.
	if d, _ := p.Decide("everything", "x", "everything__x"); d != Ask {
		t.Fatalf("sampling grant allowed a tool: %v", d)
	}
	p.Grant(&event.Approval{Rules: []string{"mcp:other__x"}})
	if d, _ := p.DecideSampling("other"); d != Ask {
		t.Fatalf("a tool grant allowed sampling: %v", d)
	}
	ro, _ := NewMCPPolicy(PresetReadonly, nil)
	if _, err := ro.SamplingApproval("everything", ""); err == nil || !strings.Contains(err.Error(), "{sampling: everything, decision: allow}") {
		t.Fatalf("readonly refusal = %v", err)
	}
}

func TestMCPSamplingRulesValidate(t *testing.T) {
	for _, bad := range [][]MCPRule{
		{{Sampling: "x", Server: "x", Decision: "allow"}},
		{{Sampling: "x", Tool: "x__*", Decision: "allow"}},
		{{Sampling: "[", Decision: "allow"}},
		{{Sampling: "x", Decision: "maybe"}},
	} {
		if err := ValidateMCPRules(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if err := ValidateMCPRules([]MCPRule{{Sampling: "*", Decision: "ask"}}); err != nil {
		t.Fatal(err)
	}
}
