// Package web is the built-in web plugin: http_request, read_page (HTML converted to
// Markdown), web_search (DuckDuckGo's keyless HTML endpoint by default, Tavily when
// an API key is set) and now. Network access is a policy decision: by default every
// request asks (approval kind "network"), and "allow for this session" remembers the
// host.
package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/tool"
)

// Network policies.
const (
	PolicyAsk   = "ask"
	PolicyAllow = "allow"
	PolicyDeny  = "deny"
)

// Defaults.
const (
	DefaultTimeout   = 30 * time.Second
	DefaultMaxChars  = 50_000
	maxBodyBytes     = 5 << 20
	DuckDuckGoURL    = "https://html.duckduckgo.com/html/"
	TavilyURL        = "https://api.tavily.com/search"
	defaultUserAgent = "lovia/1 (+https://github.com/lovia-dev/lovia)"
)

// Config configures the plugin.
type Config struct {
	// Policy is "ask" (default), "allow" or "deny" for network access.
	Policy string `yaml:"policy"`
	// AllowHosts never ask (exact host names, or ".example.com" for subdomains).
	AllowHosts []string `yaml:"allow_hosts"`
	// TavilyAPIKey switches web_search to Tavily (the app reads TAVILY_API_KEY).
	TavilyAPIKey string `yaml:"-"`
	// Base URLs of the search endpoints ("" = the public ones); tests point them at
	// httptest servers.
	DuckDuckGoURL string `yaml:"-"`
	TavilyURL     string `yaml:"-"`
	// Client is the HTTP client (nil: one with DefaultTimeout).
	Client    *http.Client `yaml:"-"`
	UserAgent string       `yaml:"-"`
	// Now is the clock of the now tool (nil: time.Now).
	Now func() time.Time `yaml:"-"`
}

// Plugin is the web plugin. Hosts allowed "for this session" live on it, so build one
// per interactive session.
type Plugin struct {
	cfg    Config
	logger *slog.Logger

	mu      sync.Mutex
	granted map[string]bool
}

// New returns the web plugin. logger may be nil.
func New(cfg Config, logger *slog.Logger) *Plugin {
	if cfg.Policy == "" {
		cfg.Policy = PolicyAsk
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: DefaultTimeout}
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = defaultUserAgent
	}
	if cfg.DuckDuckGoURL == "" {
		cfg.DuckDuckGoURL = DuckDuckGoURL
	}
	if cfg.TavilyURL == "" {
		cfg.TavilyURL = TavilyURL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Plugin{cfg: cfg, logger: logger, granted: map[string]bool{}}
}

// Name implements plugin.Plugin.
func (*Plugin) Name() string { return "web" }

// Setup implements plugin.Plugin.
func (p *Plugin) Setup(context.Context, *tool.RunContext) (*plugin.Contribution, error) {
	return &plugin.Contribution{Tools: p.Tools()}, nil
}

// Tools returns http_request, read_page, web_search and now.
func (p *Plugin) Tools() []tool.Tool {
	return []tool.Tool{p.httpTool(), p.readPageTool(), p.searchTool(), p.nowTool()}
}

func (p *Plugin) hostAllowed(host string) bool {
	host = strings.ToLower(host)
	for _, h := range p.cfg.AllowHosts {
		h = strings.ToLower(h)
		if host == h || strings.HasPrefix(h, ".") && (strings.HasSuffix(host, h) || host == h[1:]) {
			return true
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.granted[host]
}

const rulePrefix = "network:"

// approval returns an ApprovalFunc for a tool whose target URL (or host) target
// extracts from the arguments.
func (p *Plugin) approval(target func(args json.RawMessage) (method string, u *url.URL, err error)) tool.ApprovalFunc {
	return func(_ context.Context, _ *tool.RunContext, args json.RawMessage) (*event.Approval, error) {
		method, u, err := target(args)
		if err != nil {
			return nil, err
		}
		switch p.cfg.Policy {
		case PolicyAllow:
			return nil, nil
		case PolicyDeny:
			return nil, fmt.Errorf("network access is denied by the workspace policy (%s %s)", method, u.Host)
		}
		if p.hostAllowed(u.Hostname()) {
			return nil, nil
		}
		return &event.Approval{Kind: "network", Summary: method + " " + u.Redacted(), Rules: []string{rulePrefix + u.Hostname()}}, nil
	}
}

func (p *Plugin) grant(a *event.Approval) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range a.Rules {
		if h, ok := strings.CutPrefix(r, rulePrefix); ok {
			p.granted[strings.ToLower(h)] = true
		}
	}
}

func parseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("invalid URL %q: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("URL %q must start with http:// or https://", raw)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("URL %q has no host", raw)
	}
	return u, nil
}

type httpArgs struct {
	URL      string            `json:"url" jsonschema:"description=Absolute http(s) URL"`
	Method   string            `json:"method,omitempty" jsonschema:"enum=GET,enum=HEAD,enum=POST,enum=PUT,enum=PATCH,enum=DELETE,description=HTTP method (default GET)"`
	Headers  map[string]string `json:"headers,omitempty" jsonschema:"description=Request headers"`
	Body     string            `json:"body,omitempty" jsonschema:"description=Request body (for POST/PUT/PATCH)"`
	MaxChars int               `json:"max_chars,omitempty" jsonschema:"description=Cap on the returned body (default 50000)"`
}

func (p *Plugin) httpTool() tool.Tool {
	return tool.NewResult("http_request", "Make an HTTP request (APIs, raw files) and return the status, key headers and the body as text. Use read_page to read an HTML page.",
		func(ctx context.Context, _ *tool.RunContext, a httpArgs) (tool.Result, error) {
			u, err := parseURL(a.URL)
			if err != nil {
				return tool.Result{Text: err.Error(), IsError: true}, nil
			}
			method := strings.ToUpper(a.Method)
			if method == "" {
				method = http.MethodGet
			}
			var body io.Reader
			if a.Body != "" {
				body = strings.NewReader(a.Body)
			}
			req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
			if err != nil {
				return tool.Result{Text: err.Error(), IsError: true}, nil
			}
			req.Header.Set("User-Agent", p.cfg.UserAgent)
			for k, v := range a.Headers {
				req.Header.Set(k, v)
			}
			resp, data, err := p.do(req)
			if err != nil {
				return tool.Result{Text: err.Error(), IsError: true}, nil
			}
			var b strings.Builder
			fmt.Fprintf(&b, "HTTP %s\n", resp.Status)
			keys := make([]string, 0, len(resp.Header))
			for k := range resp.Header {
				switch k {
				case "Content-Type", "Content-Length", "Location", "Last-Modified", "Etag", "Retry-After", "Link":
					keys = append(keys, k)
				}
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(&b, "%s: %s\n", k, resp.Header.Get(k))
			}
			b.WriteString("\n")
			b.WriteString(bodyText(resp.Header.Get("Content-Type"), data, capChars(a.MaxChars)))
			return tool.Result{Text: b.String(), IsError: resp.StatusCode >= 400}, nil
		},
		tool.ApprovalWhen(p.approval(func(args json.RawMessage) (string, *url.URL, error) {
			var a httpArgs
			_ = json.Unmarshal(args, &a)
			u, err := parseURL(a.URL)
			m := strings.ToUpper(a.Method)
			if m == "" {
				m = http.MethodGet
			}
			return m, u, err
		})),
		tool.OnGrant(p.grant))
}

func capChars(n int) int {
	if n <= 0 {
		return DefaultMaxChars
	}
	return min(n, 200_000)
}

// errRedirectElsewhere stops a redirect to a host the person has not allowed.
var errRedirectElsewhere = errors.New("redirect to another host")

// do sends req and reads at most maxBodyBytes of the response. Under the ask policy a
// redirect to a host that was neither approved nor allowed is not followed: the
// model is told where it leads, and calling again with that URL asks first.
func (p *Plugin) do(req *http.Request) (*http.Response, []byte, error) {
	client := *p.cfg.Client
	origin := req.URL.Hostname()
	client.CheckRedirect = func(r *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if h := r.URL.Hostname(); p.cfg.Policy == PolicyAsk && !strings.EqualFold(h, origin) && !p.hostAllowed(h) {
			return fmt.Errorf("%w: %s", errRedirectElsewhere, r.URL.Redacted())
		}
		if p.cfg.Client.CheckRedirect != nil {
			return p.cfg.Client.CheckRedirect(r, via)
		}
		return nil
	}
	resp, err := client.Do(req)
	if errors.Is(err, errRedirectElsewhere) {
		var ue *url.Error
		target := ""
		if errors.As(err, &ue) {
			target = strings.TrimPrefix(ue.Err.Error(), errRedirectElsewhere.Error()+": ")
		}
		return nil, nil, fmt.Errorf("%s redirects to another host (%s), which needs its own approval: call again with that URL", req.URL.Redacted(), target)
	}
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) && ue.Timeout() {
			return nil, nil, fmt.Errorf("%s %s timed out", req.Method, req.URL.Redacted())
		}
		return nil, nil, fmt.Errorf("%s %s failed: %v", req.Method, req.URL.Redacted(), err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes))
	if err != nil {
		return nil, nil, fmt.Errorf("reading the response of %s: %v", req.URL.Redacted(), err)
	}
	return resp, data, nil
}

// bodyText renders a response body for the model: text as is (capped), binary
// described.
func bodyText(contentType string, data []byte, maxChars int) string {
	mt, _, _ := mime.ParseMediaType(contentType)
	textual := strings.HasPrefix(mt, "text/") || strings.Contains(mt, "json") || strings.Contains(mt, "xml") ||
		strings.Contains(mt, "javascript") || strings.Contains(mt, "yaml") || mt == ""
	if !textual || !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return fmt.Sprintf("[binary body: %s, %d bytes, not shown]", mt, len(data))
	}
	s, _ := tool.Truncate(string(data), maxChars)
	return s
}

type pageArgs struct {
	URL      string `json:"url" jsonschema:"description=Absolute http(s) URL of the page"`
	MaxChars int    `json:"max_chars,omitempty" jsonschema:"description=Cap on the returned text (default 50000)"`
}

func (p *Plugin) readPageTool() tool.Tool {
	return tool.NewResult("read_page", "Fetch a web page and return its main content as Markdown (scripts, navigation and forms removed).",
		func(ctx context.Context, _ *tool.RunContext, a pageArgs) (tool.Result, error) {
			u, err := parseURL(a.URL)
			if err != nil {
				return tool.Result{Text: err.Error(), IsError: true}, nil
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
			if err != nil {
				return tool.Result{Text: err.Error(), IsError: true}, nil
			}
			req.Header.Set("User-Agent", p.cfg.UserAgent)
			req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5")
			resp, data, err := p.do(req)
			if err != nil {
				return tool.Result{Text: err.Error(), IsError: true}, nil
			}
			if resp.StatusCode >= 400 {
				return tool.Result{Text: fmt.Sprintf("GET %s: HTTP %s\n\n%s", u.Redacted(), resp.Status, bodyText(resp.Header.Get("Content-Type"), data, 2000)), IsError: true}, nil
			}
			ct := resp.Header.Get("Content-Type")
			mt, _, _ := mime.ParseMediaType(ct)
			if mt != "text/html" && mt != "application/xhtml+xml" && !(mt == "" && bytes.Contains(bytes.ToLower(data[:min(len(data), 512)]), []byte("<html"))) {
				return tool.Result{Text: bodyText(ct, data, capChars(a.MaxChars))}, nil
			}
			page, err := HTMLToMarkdown(bytes.NewReader(data), resp.Request.URL)
			if err != nil {
				return tool.Result{Text: err.Error(), IsError: true}, nil
			}
			text := page.Markdown
			if page.Title != "" {
				text = "Title: " + page.Title + "\nURL: " + resp.Request.URL.String() + "\n\n" + text
			}
			text, _ = tool.Truncate(text, capChars(a.MaxChars))
			return tool.Result{Text: text}, nil
		},
		tool.ApprovalWhen(p.approval(func(args json.RawMessage) (string, *url.URL, error) {
			var a pageArgs
			_ = json.Unmarshal(args, &a)
			u, err := parseURL(a.URL)
			return http.MethodGet, u, err
		})),
		tool.OnGrant(p.grant))
}

type nowArgs struct{}

func (p *Plugin) nowTool() tool.Tool {
	return tool.New("now", "The current date and time (local and UTC).", func(context.Context, *tool.RunContext, nowArgs) (string, error) {
		t := p.cfg.Now()
		return fmt.Sprintf("%s (%s)\nUTC: %s", t.Format("Monday, 2 January 2006 15:04:05 MST"), t.Format(time.RFC3339), t.UTC().Format(time.RFC3339)), nil
	})
}
