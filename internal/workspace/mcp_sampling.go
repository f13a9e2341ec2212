package workspace

import (
	"fmt"
	"path"
	"strings"

	"github.com/lovia-dev/lovia/internal/event"
)

// A sampling request (sampling/createMessage) makes lovia call the user's model for an
// MCP server: it spends the user's money and its reply goes to code outside the
// policy's reach, so it is decided like a tool call, by mcp_rules entries of the form
// {sampling: SERVER-GLOB, decision: ...} and otherwise by the preset's default
// (readonly denies, coding and trusted ask). A rule for a server's tools
// ({server: NAME}) says nothing about its sampling.

// SamplingApprovalKind is the approval kind of a sampling request.
const SamplingApprovalKind = "sampling"

// samplingGrant is the "allow for this session" rule of a server's sampling.
const samplingGrant = "mcp-sampling:"

// DecideSampling returns the decision for a sampling request of server and why.
func (p *MCPPolicy) DecideSampling(server string) (Decision, string) {
	return p.decide(true, func(pattern string) bool {
		ok, _ := path.Match(pattern, server)
		return ok
	}, "the "+p.preset+" policy's default for MCP sampling", "mcp_rules sampling", samplingGrant+server)
}

// SamplingApproval decides a sampling request: nil to answer it, an error to refuse
// it, or the approval to ask for. summary describes the request (what the server
// sends, the model that answers); "allow for this session" allows this server's
// sampling until lovia exits (Grant).
func (p *MCPPolicy) SamplingApproval(server, summary string) (*event.Approval, error) {
	d, why := p.DecideSampling(server)
	switch d {
	case Allow:
		return nil, nil
	case Deny:
		hint := "An mcp_rules entry {sampling: " + server + ", decision: allow} in the user's config allows it."
		if p.def == Deny && !strings.HasPrefix(why, "mcp_rules") {
			hint = "The " + p.preset + " policy answers no sampling requests unless an mcp_rules entry {sampling: " + server + ", decision: allow} allows them."
		}
		return nil, fmt.Errorf("sampling request of MCP server %s is not allowed (%s). %s", server, why, hint)
	}
	return &event.Approval{Kind: SamplingApprovalKind, Summary: summary, Rules: []string{samplingGrant + server}}, nil
}
