package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/lovia-dev/lovia/internal/textutil"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/workspace"
)

// Reading a resource and getting a prompt are server interactions like a tool call,
// so the workspace's MCP policy decides them, as calls of pseudo-tools no server can
// name (a server's tool names are made of letters, digits, '_' and '-'):
// <server>__:resources (reading resources) and <server>__:prompts (getting prompts).
// A rule for the whole server (server: NAME) covers them. The model's reads pass
// the decision (asked, allowed or denied like a tool call); the user's own mentions
// and slash prompts count as the user's approval, but a denial still refuses them.
const (
	ResourcesTool = ":resources"
	PromptsTool   = ":prompts"
)

// PseudoName is the rule target of kind (ResourcesTool or PromptsTool) on server.
func PseudoName(server, kind string) string { return server + "__" + kind }

// Servers are the enabled servers' names, in order.
func (p *Plugin) Servers() []string { return slices.Clone(p.names) }

// Offers returns what server lists (the live connection's lists, else the disk
// cache's; empty when the server never ran). It starts nothing.
func (p *Plugin) Offers(server string) (Lists, bool) {
	srv, ok := p.servers[server]
	if !ok {
		return Lists{}, false
	}
	return srv.offers(), true
}

// Changes returns a channel closed at the next change of server's tools, prompts or
// resources (list_changed), nil for an unknown server.
func (p *Plugin) Changes(server string) <-chan struct{} {
	srv, ok := p.servers[server]
	if !ok {
		return nil
	}
	return srv.lists.changes()
}

// Start starts server if it is not running and returns its lists.
func (p *Plugin) Start(ctx context.Context, server string) (Lists, error) {
	srv, err := p.server(server)
	if err != nil {
		return Lists{}, err
	}
	if _, err := srv.ensure(ctx); err != nil {
		return Lists{}, err
	}
	return srv.offers(), nil
}

// server returns the named server; the error names the configured ones and the fix.
func (p *Plugin) server(name string) (*server, error) {
	if srv, ok := p.servers[name]; ok {
		return srv, nil
	}
	have := "none is configured"
	if len(p.names) > 0 {
		have = "configured: " + strings.Join(p.names, ", ")
	}
	return nil, errs.Newf(errs.KindUsage, "add it with lovia mcp add "+name+" -- COMMAND, or enable it in the config; lovia mcp list shows the servers",
		"no MCP server %q (%s)", name, have)
}

// userAllowed refuses what the user asked for (a mention, a slash prompt) when the
// policy denies kind on server; "ask" passes, the user's asking being the approval.
func userAllowed(pol *workspace.MCPPolicy, server, kind, what string) error {
	name := PseudoName(server, kind)
	d, why := pol.Decide(server, "", name)
	if d != workspace.Deny {
		return nil
	}
	hint := fmt.Sprintf(`add an mcp_rules entry {tool: "%s", decision: allow} (or server: %s) to the config`, name, server)
	if pol.Preset() == workspace.PresetReadonly {
		hint += ", or use --policy coding"
	}
	return errs.Newf(errs.KindConfig, hint, "%s of MCP server %s is not allowed (%s)", what, server, why)
}

// ReadResource reads uri from server for the user (an @server:uri mention). It
// starts the server if needed; pol decides (see userAllowed).
func (p *Plugin) ReadResource(ctx context.Context, pol *workspace.MCPPolicy, server, uri string) (*sdk.ReadResourceResult, error) {
	srv, err := p.server(server)
	if err != nil {
		return nil, err
	}
	if err := userAllowed(pol, server, ResourcesTool, "reading resources"); err != nil {
		return nil, err
	}
	return readResource(ctx, srv, uri)
}

func readResource(ctx context.Context, srv *server, uri string) (*sdk.ReadResourceResult, error) {
	c, err := srv.ensure(ctx)
	if err != nil {
		return nil, err
	}
	if !srv.offers().HasResources {
		return nil, errs.Newf(errs.KindUsage, "lovia mcp resources lists the servers that have resources", "MCP server %s offers no resources", srv.name)
	}
	cctx, cancel := context.WithTimeout(ctx, srv.cfg.callTimeout())
	defer cancel()
	res, err := c.session.ReadResource(cctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		var werr *jsonrpc.Error
		if errors.As(err, &werr) {
			err = errors.New(werr.Message)
		}
		return nil, errs.Wrap(errs.KindUsage, err, fmt.Sprintf("MCP server %s could not read %s", srv.name, uri),
			"check the URI: lovia mcp resources "+srv.name+" lists its resources and templates")
	}
	return res, nil
}

// ResourceText renders a resource for a prompt: text contents as text (capped at
// max bytes together), binary ones described. It returns the text and whether it
// was cut.
func ResourceText(res *sdk.ReadResourceResult, max int) (string, bool) {
	var parts []string
	for _, c := range res.Contents {
		if c == nil {
			continue
		}
		switch {
		case c.Text != "" || len(c.Blob) == 0:
			parts = append(parts, c.Text)
		default:
			mime := c.MIMEType
			if mime == "" {
				mime = "binary"
			}
			parts = append(parts, fmt.Sprintf("[%s content of %s, %d bytes, not included as text; mcp_read_resource reads it (images are attached)]", mime, c.URI, len(c.Blob)))
		}
	}
	s := strings.Join(parts, "\n")
	out := capText(s, max)
	return out, len(out) != len(s)
}

// resourceResult maps a read for the model: text capped as tool results are, images
// attached as convert does, other binaries described.
func resourceResult(res *sdk.ReadResourceResult) tool.Result {
	cr := &sdk.CallToolResult{}
	for _, c := range res.Contents {
		if c == nil {
			continue
		}
		if c.Text != "" || len(c.Blob) == 0 {
			cr.Content = append(cr.Content, &sdk.TextContent{Text: fmt.Sprintf("[resource %s]\n%s", c.URI, c.Text)})
			continue
		}
		cr.Content = append(cr.Content, &sdk.EmbeddedResource{Resource: c})
	}
	out := convert(cr)
	if out.Text == "" {
		out.Text = "the resource is empty"
	}
	return out
}

// resourceTools are mcp_list_resources and mcp_read_resource, offered when one of
// servers (those of the run, not denied) advertises resources and the policy does
// not deny reading them.
func (p *Plugin) resourceTools(pol *workspace.MCPPolicy, servers []string) []tool.Tool {
	var with []string
	for _, name := range servers {
		if d, _ := pol.Decide(name, "", PseudoName(name, ResourcesTool)); d == workspace.Deny {
			continue
		}
		if p.servers[name].offers().HasResources {
			with = append(with, name)
		}
	}
	if len(with) == 0 {
		return nil
	}
	serverProp := map[string]any{"type": "string", "enum": with, "description": "the MCP server"}
	listSchema, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{"server": serverProp}})
	readSchema, _ := json.Marshal(map[string]any{"type": "object", "required": []string{"server", "uri"}, "properties": map[string]any{
		"server": serverProp,
		"uri":    map[string]any{"type": "string", "description": "the resource's URI, or a template's URI with its {placeholders} filled in"},
	}})
	type readArgs struct {
		Server string `json:"server"`
		URI    string `json:"uri"`
	}
	parse := func(args json.RawMessage) (readArgs, *server, error) {
		var a readArgs
		if err := json.Unmarshal(args, &a); err != nil {
			return a, nil, fmt.Errorf("arguments: %w", err)
		}
		if !slices.Contains(with, a.Server) {
			return a, nil, fmt.Errorf("no MCP server %q with resources here; use one of %s", a.Server, strings.Join(with, ", "))
		}
		return a, p.servers[a.Server], nil
	}
	list := &tool.FuncTool{S: tool.Spec{
		Name:        "mcp_list_resources",
		Description: "List the resources and resource templates of the MCP servers (" + strings.Join(with, ", ") + "). Read one with mcp_read_resource; fill a template's {placeholders} to get a URI.",
		Schema:      listSchema,
		Parallel:    true,
		Validate:    mustValidator(listSchema),
	}, Fn: func(ctx context.Context, _ *tool.RunContext, args json.RawMessage) (tool.Result, error) {
		var a struct {
			Server string `json:"server"`
		}
		_ = json.Unmarshal(args, &a)
		var b strings.Builder
		for _, name := range with {
			if a.Server != "" && a.Server != name {
				continue
			}
			l, err := p.Start(ctx, name)
			if err != nil {
				fmt.Fprintf(&b, "## %s\nunavailable: %v\n", name, err)
				continue
			}
			b.WriteString(FormatResources(name, l))
		}
		if b.Len() == 0 {
			return errResult("no MCP server %q with resources here; use one of %s", a.Server, strings.Join(with, ", ")), nil
		}
		return tool.Result{Text: capText(b.String(), MaxResultText)}, nil
	}}
	read := &tool.FuncTool{S: tool.Spec{
		Name:        "mcp_read_resource",
		Description: "Read a resource of an MCP server by URI (see mcp_list_resources).",
		Schema:      readSchema,
		Parallel:    true,
		Validate:    mustValidator(readSchema),
		Approval: func(_ context.Context, _ *tool.RunContext, args json.RawMessage) (*event.Approval, error) {
			a, _, err := parse(args)
			if err != nil {
				return nil, nil // the call itself reports it
			}
			return resourceApproval(pol, a.Server, a.URI)
		},
		Grant: pol.Grant,
	}, Fn: func(ctx context.Context, _ *tool.RunContext, args json.RawMessage) (tool.Result, error) {
		a, srv, err := parse(args)
		if err != nil {
			return errResult("%v", err), nil
		}
		res, err := readResource(ctx, srv, a.URI)
		if err != nil {
			msg := err.Error()
			if h := errs.HintOf(err); h != "" {
				msg += " (" + h + ")"
			}
			return errResult("%s", msg), nil
		}
		return resourceResult(res), nil
	}}
	return []tool.Tool{list, read}
}

// mustValidator compiles a schema of lovia's own (a failure is a bug: no validation
// beyond an object is then done).
func mustValidator(schema json.RawMessage) func(json.RawMessage) error {
	v, err := tool.CompileSchema(schema)
	if err != nil {
		return requireObject
	}
	return v
}

// resourceApproval decides a model's read of uri on server (<server>__:resources).
func resourceApproval(pol *workspace.MCPPolicy, server, uri string) (*event.Approval, error) {
	name := PseudoName(server, ResourcesTool)
	d, why := pol.Decide(server, "", name)
	switch d {
	case workspace.Allow:
		return nil, nil
	case workspace.Deny:
		return nil, fmt.Errorf("reading resources of MCP server %s is not allowed (%s); an mcp_rules entry for %q decides this", server, why, name)
	}
	return &event.Approval{Kind: "mcp", Summary: fmt.Sprintf("MCP server %s, read resource %s", server, uri), Rules: []string{"mcp:" + name}}, nil
}

// FormatResources renders a server's resources and templates as a Markdown list.
func FormatResources(server string, l Lists) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n", server)
	if !l.HasResources {
		b.WriteString("no resources\n")
		return b.String()
	}
	for _, r := range l.Resources {
		fmt.Fprintf(&b, "- %s", r.URI)
		if r.Name != "" && r.Name != r.URI {
			fmt.Fprintf(&b, " (%s)", r.Name)
		}
		if r.MIMEType != "" {
			fmt.Fprintf(&b, " %s", r.MIMEType)
		}
		if r.Description != "" {
			fmt.Fprintf(&b, " — %s", textutil.Clip(r.Description, 200))
		}
		b.WriteByte('\n')
	}
	for _, t := range l.Templates {
		fmt.Fprintf(&b, "- template %s", t.URITemplate)
		if t.Name != "" {
			fmt.Fprintf(&b, " (%s)", t.Name)
		}
		if t.Description != "" {
			fmt.Fprintf(&b, " — %s", textutil.Clip(t.Description, 200))
		}
		b.WriteByte('\n')
	}
	if len(l.Resources) == 0 && len(l.Templates) == 0 {
		b.WriteString("no resources listed\n")
	}
	return b.String()
}

// ServerOffers is what one server lists beyond tools, for `lovia mcp resources` and
// `lovia mcp prompts`.
type ServerOffers struct {
	Name   string `json:"name"`
	Status string `json:"status"` // ok | failed
	Error  string `json:"error,omitempty"`
	Lists
}

// ListOffers starts the named servers (all enabled ones when names is empty), lists
// their resources, templates and prompts, and stops them again.
func ListOffers(ctx context.Context, cfg Config, logger *slog.Logger, names []string) ([]ServerOffers, error) {
	p, err := New(cfg, logger)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	if len(names) == 0 {
		names = p.names
	}
	for _, n := range names {
		if _, err := p.server(n); err != nil {
			return nil, err
		}
	}
	failed := p.startAll(ctx, names)
	var out []ServerOffers
	for _, n := range names {
		o := ServerOffers{Name: n, Status: "ok"}
		if err := failed[n]; err != nil {
			o.Status, o.Error = "failed", err.Error()
		} else {
			o.Lists = p.servers[n].offers()
		}
		out = append(out, o)
	}
	return out, nil
}
