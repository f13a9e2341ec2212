package mcp

import (
	"context"
	"fmt"
	"strings"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/workspace"
)

// An @server:uri word in the user's prompt attaches the resource uri of the MCP
// server, as @path attaches a file. A word is a mention when its part before the
// first ':' names a configured server, or when it looks like one (@NAME:SCHEME://…)
// but names no server: then it is an error, not a word, so a typo is not sent to
// the model silently.

// MaxMentions bounds the resources one prompt attaches.
const MaxMentions = 10

// Mention is one @server:uri of a prompt.
type Mention struct {
	Server, URI string
}

// Mentions lists the distinct @server:uri words of text; unknown lists the words
// that look like mentions of servers that are not configured.
func (p *Plugin) Mentions(text string) (found []Mention, unknown []string) {
	seen := map[Mention]bool{}
	for _, w := range strings.Fields(text) {
		m, ok, looks := ParseMention(w)
		if !ok {
			continue
		}
		if _, known := p.servers[m.Server]; !known {
			if looks {
				unknown = append(unknown, w)
			}
			continue
		}
		if !seen[m] {
			seen[m] = true
			found = append(found, m)
		}
	}
	return found, unknown
}

// ParseMention splits "@server:uri" (trailing punctuation dropped). looks reports
// the uri has a scheme ("x://"), so the word is meant as a mention.
func ParseMention(w string) (m Mention, ok, looks bool) {
	rest, ok := strings.CutPrefix(w, "@")
	if !ok {
		return m, false, false
	}
	rest = strings.TrimRight(rest, ",.;!?)]}'\"")
	server, uri, ok := strings.Cut(rest, ":")
	if !ok || server == "" || uri == "" || !serverNameRE.MatchString(server) {
		return m, false, false
	}
	return Mention{Server: server, URI: uri}, true, strings.Contains(uri, "://")
}

// ExpandMentions appends the resource of each @server:uri mention of typed (what the
// user typed; never text of a file, a command or a server, which must not make
// lovia read anything) to prompt (text, capped at limit bytes each), and returns
// notes for the user. An unknown server, a denied read or a resource the server
// cannot read is an error naming the cause and the fix; the prompt is returned
// unchanged with it.
func (p *Plugin) ExpandMentions(ctx context.Context, pol *workspace.MCPPolicy, typed, prompt string, limit int) (string, []string, error) {
	found, unknown := p.Mentions(typed)
	if len(unknown) > 0 {
		m, _, _ := ParseMention(unknown[0])
		_, err := p.server(m.Server)
		return prompt, nil, errs.Wrap(errs.KindUsage, err, unknown[0]+" names no configured MCP server", errs.HintOf(err))
	}
	if len(found) == 0 {
		return prompt, nil, nil
	}
	var sb strings.Builder
	sb.WriteString(prompt)
	var notes []string
	for i, m := range found {
		if i == MaxMentions {
			notes = append(notes, fmt.Sprintf("only the first %d mentioned MCP resources are attached", MaxMentions))
			break
		}
		res, err := p.ReadResource(ctx, pol, m.Server, m.URI)
		if err != nil {
			return prompt, nil, err
		}
		text, cut := ResourceText(res, limit)
		fmt.Fprintf(&sb, "\n\n<mcp_resource server=%q uri=%q>\n%s", m.Server, m.URI, text)
		if !strings.HasSuffix(text, "\n") {
			sb.WriteByte('\n')
		}
		sb.WriteString("</mcp_resource>")
		note := fmt.Sprintf("attached %s:%s (%d bytes)", m.Server, m.URI, len(text))
		if cut {
			note = fmt.Sprintf("attached %s:%s, truncated to its first %d bytes", m.Server, m.URI, limit)
		}
		notes = append(notes, note)
	}
	return sb.String(), notes, nil
}
