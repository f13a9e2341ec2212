package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/workspace"
)

// Plugin exposes the tools of the configured MCP servers. One Plugin owns the server
// connections for the life of the process: build it once, use it for every run, and
// Close it at exit. Every call is decided by a workspace.MCPPolicy (For); the Plugin
// itself uses the coding defaults (every call asks).
type Plugin struct {
	logger  *slog.Logger
	names   []string
	servers map[string]*server
	policy  *workspace.MCPPolicy
	scrub   func(string) string
}

// New validates cfg and returns the plugin. No server starts until the first Setup.
// logger may be nil.
func New(cfg Config, logger *slog.Logger) (*Plugin, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	pol, err := workspace.NewMCPPolicy(workspace.PresetCoding, nil)
	if err != nil {
		return nil, err
	}
	scrub := cfg.Scrub
	if scrub == nil {
		scrub = func(s string) string { return s }
	}
	p := &Plugin{logger: logger, servers: map[string]*server{}, policy: pol, scrub: scrub}
	for _, name := range cfg.names() {
		sc := cfg.Servers[name]
		if sc.Disabled {
			continue
		}
		p.names = append(p.names, name)
		p.servers[name] = newServer(name, sc, cfg.CacheDir, logger)
		p.servers[name].resolve, p.servers[name].samplingMax, p.servers[name].scrub = cfg.Resolve, cfg.SamplingMaxTokens, scrub
		p.servers[name].notify.scrub = scrub
		p.servers[name].auth = newOAuthClient(name, sc, cfg.AuthDir)
		p.servers[name].lists.root = cfg.Root
	}
	return p, nil
}

// Name implements plugin.Plugin.
func (*Plugin) Name() string { return "mcp" }

// For returns the plugin with its calls decided by pol (the run's workspace policy
// and the user's mcp_rules). The views share the server connections.
func (p *Plugin) For(pol *workspace.MCPPolicy) plugin.Plugin {
	return &view{p: p, policy: pol}
}

type view struct {
	p      *Plugin
	policy *workspace.MCPPolicy
	// model ("provider:model") answers the servers' sampling requests.
	model string
}

func (v *view) Name() string { return "mcp" }

func (v *view) Setup(ctx context.Context, rc *tool.RunContext) (*plugin.Contribution, error) {
	return v.p.setup(ctx, v)
}

// Close stops every server.
func (p *Plugin) Close() error {
	var errs []error
	for _, name := range p.names {
		if err := p.servers[name].close(); err != nil {
			errs = append(errs, fmt.Errorf("mcp server %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// startAll starts the named servers concurrently (each bounded by its startup timeout).
func (p *Plugin) startAll(ctx context.Context, names []string) map[string]error {
	var mu sync.Mutex
	failed := map[string]error{}
	var wg sync.WaitGroup
	for _, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := p.servers[name].ensure(ctx); err != nil {
				mu.Lock()
				failed[name] = err
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return failed
}

// Setup implements plugin.Plugin with the coding defaults (see For).
func (p *Plugin) Setup(ctx context.Context, _ *tool.RunContext) (*plugin.Contribution, error) {
	return p.setup(ctx, &view{p: p, policy: p.policy})
}

// setup contributes the servers' tools. A server whose every tool the policy denies
// is not started at all; one whose tool list is cached (from an earlier start in this
// or an earlier process) starts at its first call; the others start now to list their
// tools. A server that fails is left out, reported in the instructions and logged;
// the run goes on.
func (p *Plugin) setup(ctx context.Context, v *view) (*plugin.Contribution, error) {
	pol := v.policy
	if len(p.names) == 0 {
		return &plugin.Contribution{}, nil
	}
	toolsOf := map[string][]*sdk.Tool{}
	var toStart, denied []string
	deniedSet := map[string]bool{}
	for _, name := range p.names {
		if pol.DeniesServer(name) {
			denied = append(denied, name)
			deniedSet[name] = true
			continue
		}
		srv := p.servers[name]
		if cur, _, _ := srv.snapshot(); cur != nil && cur.alive() {
			toolsOf[name] = cur.toolList()
			continue
		}
		if cached := srv.cachedTools(); cached != nil && srv.listsCached() {
			toolsOf[name] = cached
			continue
		}
		toStart = append(toStart, name)
	}
	failed := p.startAll(ctx, toStart)
	c := &plugin.Contribution{}
	deathsAtSetup := map[string]int{}
	used := map[string]bool{}
	var offered []string // servers whose tools are offered
	for _, name := range p.names {
		srv := p.servers[name]
		if deniedSet[name] {
			continue // even when another run's policy started it
		}
		if err := failed[name]; err != nil {
			p.logger.Warn("mcp server unavailable", "server", name, "err", p.scrub(err.Error()))
			continue
		}
		tools, ok := toolsOf[name]
		if !ok {
			cur, _, _ := srv.snapshot()
			if cur == nil {
				continue
			}
			tools = cur.toolList()
		}
		_, _, deaths := srv.snapshot()
		deathsAtSetup[name] = deaths
		offered = append(offered, name)
		for _, t := range tools {
			c.Tools = append(c.Tools, newTool(srv, t, used, v))
		}
	}
	c.Tools = append(c.Tools, p.resourceTools(pol, offered)...) // resources.go
	if len(failed) > 0 || len(denied) > 0 {
		var b strings.Builder
		b.WriteString("## Unavailable MCP servers")
		if len(denied) > 0 {
			fmt.Fprintf(&b, "\nThe MCP servers %s are configured, but the %s policy allows none of their tools, so they are not started; tell the user if a task needs them.", strings.Join(denied, ", "), pol.Preset())
		}
		if len(failed) > 0 {
			b.WriteString("\nThese configured MCP servers failed to start, so their tools are missing this run; tell the user if a task needs them:")
			for _, name := range p.names {
				if err := failed[name]; err != nil {
					fmt.Fprintf(&b, "\n- %s: %v", name, err)
				}
			}
		}
		c.Instructions = p.scrub(b.String())
	}
	c.ViewInjectors = []plugin.ViewInjector{func(context.Context, *tool.RunContext) ([]transcript.Entry, error) {
		var lost []string
		for _, name := range p.names {
			if _, ok := deathsAtSetup[name]; !ok {
				continue
			}
			srv := p.servers[name]
			cur, _, deaths := srv.snapshot()
			if deaths > deathsAtSetup[name] && (cur == nil || !cur.alive()) {
				lost = append(lost, name)
			}
		}
		if len(lost) == 0 {
			return nil, nil
		}
		e := transcript.UserInput("<system-reminder>\nMCP server(s) stopped during this run: " + strings.Join(lost, ", ") + ". Their tools return errors until the server restarts (it is retried at the next call).\n</system-reminder>")
		e.Synthetic = true
		return []transcript.Entry{e}, nil
	}}
	c.ViewInjectors = append(c.ViewInjectors, p.toolsChanged(offered)) // lists.go
	return c, nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// maxToolName is the strictest provider limit (OpenAI: 64).
const maxToolName = 64

// toolName returns <server>__<tool>, made safe for every provider and unique in used.
func toolName(server, name string, used map[string]bool) string {
	n := server + "__" + unsafeName.ReplaceAllString(name, "_")
	if len(n) > maxToolName || used[n] {
		sum := sha256.Sum256([]byte(server + "\x00" + name))
		suffix := "_" + hex.EncodeToString(sum[:])[:8]
		if len(n) > maxToolName-len(suffix) {
			n = n[:maxToolName-len(suffix)]
		}
		n += suffix
	}
	used[n] = true
	return n
}

func newTool(srv *server, t *sdk.Tool, used map[string]bool, v *view) tool.Tool {
	pol := v.policy
	name := toolName(srv.name, t.Name, used)
	schema := inputSchema(t.InputSchema)
	validate, err := tool.CompileSchema(schema)
	if err != nil {
		// A schema our validator cannot compile is still passed through to the model;
		// the server validates the arguments itself.
		srv.logger.Debug("mcp tool schema not compilable; skipping local validation", "tool", t.Name, "err", err)
		validate = requireObject
	}
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	if desc == "" {
		desc = "Tool " + t.Name + " of the MCP server " + srv.name + "."
	}
	original := t.Name
	readOnly := t.Annotations != nil && t.Annotations.ReadOnlyHint
	spec := tool.Spec{
		Name:        name,
		Description: desc,
		Schema:      schema,
		Parallel:    true,
		Validate:    validate,
		// Every call passes the workspace decision; the server's own annotations are
		// shown to the person but grant nothing.
		Approval: func(_ context.Context, _ *tool.RunContext, args json.RawMessage) (*event.Approval, error) {
			return pol.Approval(workspace.MCPCall{Server: srv.name, Tool: original, Name: name, Args: args, ReadOnlyHint: readOnly})
		},
		Grant: pol.Grant,
	}
	return &tool.FuncTool{S: spec, Fn: func(ctx context.Context, rc *tool.RunContext, args json.RawMessage) (tool.Result, error) {
		return call(withCaller(ctx, v, rc), srv, original, args), nil
	}}
}

func requireObject(args json.RawMessage) error {
	var m map[string]any
	if len(bytes.TrimSpace(args)) == 0 {
		return nil
	}
	if err := json.Unmarshal(args, &m); err != nil {
		return fmt.Errorf("arguments must be a JSON object: %v", err)
	}
	return nil
}

// inputSchema renders the server's schema as a JSON object schema providers accept.
func inputSchema(s any) json.RawMessage {
	var m map[string]any
	if b, err := json.Marshal(s); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	if m == nil {
		m = map[string]any{}
	}
	delete(m, "$schema")
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
	}
	if _, ok := m["properties"]; !ok {
		m["properties"] = map[string]any{}
	}
	b, _ := json.Marshal(m)
	return b
}

func errResult(format string, args ...any) tool.Result {
	return tool.Result{Text: fmt.Sprintf(format, args...), IsError: true}
}

// call runs one tool call; every failure becomes an error result the model can read.
func call(ctx context.Context, srv *server, name string, args json.RawMessage) tool.Result {
	defer srv.ask.enter(ctx)()
	c, err := srv.ensure(ctx)
	if err != nil {
		return errResult("%v. The tool %s is unavailable; do not retry it unless the user fixes the server.", err, name)
	}
	if c.tasks.requires(name) {
		// Offered from a tool list cached before the server marked it.
		return errResult("the tool %s of MCP server %s %s; it cannot be called", name, srv.name, taskRequiredReason)
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	timeout := srv.cfg.callTimeout()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type reply struct {
		res *sdk.CallToolResult
		err error
	}
	done := make(chan reply, 1)
	params := &sdk.CallToolParams{Name: name, Arguments: args}
	// Progress notifications for this call reach the run's events (see notify.go);
	// cancelling cctx makes the SDK send notifications/cancelled and return at once.
	token, release := srv.trackProgress(ctx)
	defer release()
	params.SetProgressToken(token)
	// Protocol 2026-07-28 sets the log level per request (older ones: setLogLevel).
	params.GetMeta()[sdk.MetaKeyLogLevel] = logLevelWanted
	go func() {
		res, err := c.session.CallTool(cctx, params)
		done <- reply{res, err}
	}()
	var r reply
	// Select on the connection too: a server that dies mid-call must not leave the
	// call waiting for a reply that will never come.
	select {
	case r = <-done:
	case <-c.done:
		select {
		case r = <-done:
		default:
			r.err = sdk.ErrConnectionClosed
		}
	}
	if r.err != nil {
		switch {
		case ctx.Err() != nil:
			return errResult("call to %s on MCP server %s was cancelled", name, srv.name)
		case errors.Is(cctx.Err(), context.DeadlineExceeded):
			return errResult("MCP server %s did not answer %s within %s (call_timeout)", srv.name, name, timeout)
		}
		var werr *jsonrpc.Error
		// Codes -32003..-32005 are the SDK's transport failures (closing, rejected by
		// the transport, e.g. an HTTP server that went away), not answers.
		if errors.As(r.err, &werr) && (werr.Code > -32003 || werr.Code < -32005) {
			// A protocol-level error (unknown tool, invalid params): the server is fine.
			return errResult("MCP server %s rejected the call to %s: %s", srv.name, name, werr.Message)
		}
		closed := srv.drop(c)
		if c.proc != nil {
			// The stderr tail is complete only once the dead process is reaped (Close
			// waits for it); a live but broken server gets a short grace.
			select {
			case <-closed:
			case <-time.After(2 * time.Second):
			}
		}
		msg := fmt.Sprintf("MCP server %s stopped while running %s: %v", srv.name, name, r.err)
		if tail := srv.stderr.String(); tail != "" {
			msg += "; its stderr: " + lastLines(tail, 5)
		}
		return errResult("%s. It will be restarted at the next call; the call may or may not have taken effect.", msg)
	}
	srv.settle(ctx) // settle.go: lists the call changed are listed again first
	return convert(r.res)
}

// Bounds of one MCP result: a server is outside lovia's control and may answer with
// anything, so what reaches the model and the database is capped.
const (
	// MaxResultText caps a result's text (the parts joined); the rest is cut with a note.
	MaxResultText = 100_000
	// MaxImageBytes caps one attached image; larger ones are described, not attached.
	MaxImageBytes = 5 << 20
	// MaxAttachmentBytes caps all attachments of one result together.
	MaxAttachmentBytes = 10 << 20
)

// convert maps an MCP result to a tool result: text as text, images as attachments,
// resources inline (text) or described (binary), within the bounds above.
func convert(res *sdk.CallToolResult) tool.Result {
	var out tool.Result
	out.IsError = res.IsError
	var parts []string
	attached := 0
	attach := func(mime, uri string, data []byte, what string) {
		switch {
		case len(data) > MaxImageBytes:
			parts = append(parts, fmt.Sprintf("[%s, %d bytes, not shown: larger than the %d-byte limit for one image]", what, len(data), MaxImageBytes))
		case attached+len(data) > MaxAttachmentBytes:
			parts = append(parts, fmt.Sprintf("[%s, %d bytes, not shown: the result's attachments would exceed %d bytes]", what, len(data), MaxAttachmentBytes))
		default:
			attached += len(data)
			out.Attachments = append(out.Attachments, transcript.Attachment{MIME: mime, Data: data, URI: uri})
			parts = append(parts, fmt.Sprintf("[%s, %d bytes, attached]", what, len(data)))
		}
	}
	for _, c := range res.Content {
		switch v := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, v.Text)
		case *sdk.ImageContent:
			attach(v.MIMEType, "", v.Data, "image "+v.MIMEType)
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes, not shown]", v.MIMEType, len(v.Data)))
		case *sdk.ResourceLink:
			s := "[resource link: " + v.URI
			if v.Name != "" {
				s += " (" + v.Name + ")"
			}
			if v.MIMEType != "" {
				s += " " + v.MIMEType
			}
			if v.Description != "" {
				s += " — " + v.Description
			}
			parts = append(parts, s+"]")
		case *sdk.EmbeddedResource:
			r := v.Resource
			if r == nil {
				continue
			}
			switch {
			case r.Text != "":
				parts = append(parts, fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text))
			case strings.HasPrefix(r.MIMEType, "image/"):
				attach(r.MIMEType, r.URI, r.Blob, "image resource "+r.URI)
			default:
				parts = append(parts, fmt.Sprintf("[binary resource %s, %s, %d bytes, not shown]", r.URI, r.MIMEType, len(r.Blob)))
			}
		default:
			b, _ := json.Marshal(c)
			parts = append(parts, string(b))
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		parts = append(parts, string(b))
	}
	out.Text = capText(strings.Join(parts, "\n"), MaxResultText)
	if out.Text == "" && out.IsError {
		out.Text = "the tool reported an error without details"
	}
	return out
}

// capText keeps the first max bytes of s (on a rune boundary) and says what was cut.
func capText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[MCP result truncated: showing the first %d of %d bytes]", cut, len(s))
}

// ToolInfo is one tool of a server, for `lovia mcp list`.
type ToolInfo struct {
	// Name is the namespaced name the model sees; Original the server's own.
	Name        string `json:"name"`
	Original    string `json:"original"`
	Description string `json:"description,omitempty"`
	// Decision is what a call gets under the effective policy and mcp_rules (allow,
	// ask or deny), filled in by `lovia mcp list`.
	Decision string `json:"decision,omitempty"`
}

// ServerStatus is the state of one configured server.
type ServerStatus struct {
	Name      string     `json:"name"`
	Transport string     `json:"transport"` // stdio | http | sse
	Target    string     `json:"target"`    // command line or URL
	Status    string     `json:"status"`    // ok | failed | disabled
	Error     string     `json:"error,omitempty"`
	Tools     []ToolInfo `json:"tools,omitempty"`
	// Skipped are the server's tools lovia does not offer, with the reason.
	Skipped []SkippedTool `json:"skipped,omitempty"`
	// Auth is the OAuth state of a url: server (see AuthStatus).
	Auth string `json:"auth,omitempty"`
}

// ListServers starts every configured server (concurrently, each bounded by its
// startup timeout), lists its tools and stops it again; for `lovia mcp list`.
func ListServers(ctx context.Context, cfg Config, logger *slog.Logger) ([]ServerStatus, error) {
	p, err := New(cfg, logger)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	failed := p.startAll(ctx, p.names)
	var out []ServerStatus
	for _, name := range cfg.names() {
		sc := cfg.Servers[name]
		st := ServerStatus{Name: name, Transport: sc.transport(), Target: sc.String(), Status: "ok", Auth: AuthStatus(name, sc, cfg.AuthDir)}
		switch {
		case sc.Disabled:
			st.Status = "disabled"
		case failed[name] != nil:
			st.Status, st.Error = "failed", failed[name].Error()
		default:
			cur, _, _ := p.servers[name].snapshot()
			used := map[string]bool{}
			if cur != nil {
				for _, sk := range cur.skippedList() {
					sk.Name = toolName(name, sk.Original, map[string]bool{})
					st.Skipped = append(st.Skipped, sk)
				}
				for _, t := range cur.toolList() {
					st.Tools = append(st.Tools, ToolInfo{Name: toolName(name, t.Name, used), Original: t.Name, Description: t.Description})
				}
			}
			sort.Slice(st.Tools, func(i, j int) bool { return st.Tools[i].Name < st.Tools[j].Name })
		}
		out = append(out, st)
	}
	return out, nil
}
