package mcp

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// remoteTransports is how start connects to a url: server: first, and, when the
// transport is detected (no transport: set), the legacy SSE transport to try when
// the server refuses the streamable HTTP initialize POST (the backwards
// compatibility rule of the 2025-03-26 specification).
type remoteTransports struct {
	first    sdk.Transport
	firstSSE bool
	probe    *initProbe
	fallback sdk.Transport
}

// remote builds the transports of a url: server. Every request goes through
// headerTransport (configured headers, the connection's lifetime) and, for OAuth,
// the server's token transport.
// tasks observes the tool lists in the responses (see tasks.go).
func (s *server) remote(life context.Context, tasks *taskTools) remoteTransports {
	probe := &initProbe{base: http.DefaultTransport}
	var base http.RoundTripper = probe
	if s.auth != nil {
		s.auth.need.Store(nil)
		base = &authTransport{auth: s.auth, base: probe}
	}
	endpoint := os.ExpandEnv(s.cfg.URL)
	hc := &http.Client{Transport: originGuard{origin: originOf(endpoint), base: headerTransport{headers: expandAll(s.cfg.Headers), base: base, life: life, tasks: tasks}}}
	streamable := &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: 2}
	sse := &sseTransport{inner: &sdk.SSEClientTransport{Endpoint: endpoint, HTTPClient: hc}}
	switch s.cfg.Transport {
	case "sse":
		return remoteTransports{first: sse, firstSSE: true, probe: probe}
	case "http", "streamable-http":
		return remoteTransports{first: streamable, probe: probe}
	}
	if s.detectedTransport() == "sse" {
		return remoteTransports{first: sse, firstSSE: true, probe: probe}
	}
	return remoteTransports{first: streamable, probe: probe, fallback: sse}
}

// connectRemote connects with rt.first and, when the server refused the streamable
// HTTP initialize with 400, 404 or 405, with the SSE transport; what worked is
// remembered so later starts go straight to it.
func (s *server) connectRemote(ctx context.Context, client *sdk.Client, rt remoteTransports) (*sdk.ClientSession, error) {
	session, err := client.Connect(ctx, rt.first, nil)
	if err == nil {
		if rt.firstSSE && s.cfg.Transport == "" {
			s.rememberTransport("sse")
		}
		return session, nil
	}
	if rt.firstSSE && s.cfg.Transport == "" {
		// The remembered SSE transport failed: detect afresh at the next start.
		s.rememberTransport("")
		return nil, err
	}
	if rt.fallback == nil || !rt.probe.refused() || ctx.Err() != nil {
		return nil, err
	}
	s.logger.Debug("mcp server refused streamable HTTP; trying the legacy SSE transport", "status", rt.probe.status.Load())
	session, err2 := client.Connect(ctx, rt.fallback, nil)
	if err2 != nil {
		return nil, &fallbackError{http: err, sse: err2}
	}
	s.rememberTransport("sse")
	return session, nil
}

type fallbackError struct{ http, sse error }

func (e *fallbackError) Error() string {
	return "streamable HTTP: " + e.http.Error() + "; legacy SSE: " + e.sse.Error()
}

func (e *fallbackError) Unwrap() []error { return []error{e.http, e.sse} }

// detectedTransport is what an earlier start found for a server without transport:
// ("sse", or "" for streamable HTTP), kept in memory and next to the tool cache.
func (s *server) detectedTransport() string {
	if s.detected != "" {
		return s.detected
	}
	if f := s.transportNote(); f != "" {
		if data, err := os.ReadFile(f); err == nil && strings.TrimSpace(string(data)) == "sse" {
			s.detected = "sse"
		}
	}
	return s.detected
}

func (s *server) rememberTransport(t string) {
	if s.detected == t && t == "" {
		return
	}
	s.detected = t
	f := s.transportNote()
	if f == "" {
		return
	}
	if t == "" {
		_ = os.Remove(f)
		return
	}
	if err := os.MkdirAll(dirOf(f), 0o700); err == nil {
		_ = os.WriteFile(f, []byte(t+"\n"), 0o600)
	}
}

// transportNote is the file remembering the detected transport ("" = none), named
// after the tool cache (and so after the whole configuration).
func (s *server) transportNote() string {
	if s.cacheFile == "" {
		return ""
	}
	return strings.TrimSuffix(s.cacheFile, ".json") + ".transport"
}

func dirOf(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[:i]
	}
	return "."
}

// initProbe records the status of the latest POST's response: while connecting, the
// initialize request of the streamable HTTP transport (the SDK may send a
// server/discover POST before it).
type initProbe struct {
	base   http.RoundTripper
	status atomic.Int32
}

func (p *initProbe) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := p.base.RoundTrip(r)
	if err == nil && r.Method == http.MethodPost {
		p.status.Store(int32(resp.StatusCode))
	}
	return resp, err
}

// refused reports whether the server answered the initialize POST as a server that
// speaks only the legacy transport does.
func (p *initProbe) refused() bool {
	switch p.status.Load() {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
		return true
	}
	return false
}

// sseTransport keeps the SSE stream (a GET the SDK sends with Connect's context)
// open after the start: the startup context bounds connecting, not the connection,
// whose lifetime headerTransport ties every request to.
type sseTransport struct {
	inner *sdk.SSEClientTransport
}

func (t *sseTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	c, err := t.inner.Connect(cctx)
	if !stop() {
		// The start was abandoned while connecting.
		if err == nil {
			_ = c.Close()
		}
		cancel()
		return nil, ctx.Err()
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return &sseConn{Connection: c, cancel: cancel}, nil
}

type sseConn struct {
	sdk.Connection
	cancel context.CancelFunc
}

func (c *sseConn) Close() error {
	err := c.Connection.Close()
	c.cancel()
	return err
}

// originGuard refuses requests to any origin but the configured URL's: an SSE server
// names the endpoint messages are POSTed to, and a redirect names a URL too, and
// neither may carry the configured headers or the OAuth token elsewhere.
type originGuard struct {
	origin string
	base   http.RoundTripper
}

func (g originGuard) RoundTrip(r *http.Request) (*http.Response, error) {
	if o := originOf(r.URL.String()); o != g.origin {
		if r.Body != nil {
			_ = r.Body.Close()
		}
		return nil, fmt.Errorf("refusing a request to %s: the MCP server is at %s", o, g.origin)
	}
	return g.base.RoundTrip(r)
}

// originOf is scheme://host[:port] of u, lower-cased ("" when u does not parse).
func originOf(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return strings.ToLower(p.Scheme + "://" + p.Host)
}
