package mcp

import sdk "github.com/modelcontextprotocol/go-sdk/mcp"

// clientOptions are the capabilities and handlers lovia offers a server. Each client
// feature (resources, prompts, roots, sampling, elicitation, progress, list_changed)
// adds its handlers with one call here, from a file of its own.
func (s *server) clientOptions() *sdk.ClientOptions {
	o := &sdk.ClientOptions{
		Logger:       s.logger,
		Capabilities: &sdk.ClientCapabilities{},
	}
	s.askOptions(o)
	s.notifyOptions(o)
	s.listOptions(o) // lists.go: roots, list_changed
	return o
}
