package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/tool"
)

// SearchResult is one web search hit.
type SearchResult struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet,omitempty"`
}

type searchArgs struct {
	Query      string `json:"query" jsonschema:"description=What to search for"`
	MaxResults int    `json:"max_results,omitempty" jsonschema:"description=How many results (default 8),minimum=1,maximum=20"`
}

func (p *Plugin) engine() (name, endpoint string) {
	if p.cfg.TavilyAPIKey != "" {
		return "tavily", p.cfg.TavilyURL
	}
	return "duckduckgo", p.cfg.DuckDuckGoURL
}

func (p *Plugin) searchTool() tool.Tool {
	return tool.NewResult("web_search", "Search the web; returns titles, URLs and snippets. Read a result with read_page.",
		func(ctx context.Context, _ *tool.RunContext, a searchArgs) (tool.Result, error) {
			q := strings.TrimSpace(a.Query)
			if q == "" {
				return tool.Result{Text: "query is empty", IsError: true}, nil
			}
			n := a.MaxResults
			if n <= 0 {
				n = 8
			}
			n = min(n, 20)
			var results []SearchResult
			var err error
			name, _ := p.engine()
			if name == "tavily" {
				results, err = p.tavily(ctx, q, n)
			} else {
				results, err = p.duckduckgo(ctx, q, n)
			}
			if err != nil {
				return tool.Result{Text: fmt.Sprintf("web search (%s) failed: %v", name, err), IsError: true}, nil
			}
			if len(results) == 0 {
				return tool.Result{Text: fmt.Sprintf("No results for %q.", q)}, nil
			}
			var b strings.Builder
			for i, r := range results {
				fmt.Fprintf(&b, "%d. %s\n   %s\n", i+1, r.Title, r.URL)
				if r.Snippet != "" {
					fmt.Fprintf(&b, "   %s\n", r.Snippet)
				}
			}
			return tool.Result{Text: strings.TrimRight(b.String(), "\n")}, nil
		},
		tool.ApprovalWhen(func(ctx context.Context, rc *tool.RunContext, args json.RawMessage) (*event.Approval, error) {
			var a searchArgs
			_ = json.Unmarshal(args, &a)
			_, endpoint := p.engine()
			ap, err := p.approval(func(json.RawMessage) (string, *url.URL, error) {
				u, err := parseURL(endpoint)
				return "search", u, err
			})(ctx, rc, args)
			if ap != nil {
				ap.Summary = fmt.Sprintf("web search %q via %s", a.Query, ap.Rules[0][len(rulePrefix):])
			}
			return ap, err
		}),
		tool.OnGrant(p.grant))
}

func (p *Plugin) duckduckgo(ctx context.Context, q string, n int) ([]SearchResult, error) {
	form := url.Values{"q": {q}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.cfg.DuckDuckGoURL, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", p.cfg.UserAgent)
	resp, data, err := p.do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	return ParseDuckDuckGo(bytes.NewReader(data), n)
}

func hasClass(n *html.Node, class string) bool {
	for _, c := range strings.Fields(attr(n, "class")) {
		if c == class {
			return true
		}
	}
	return false
}

// ParseDuckDuckGo extracts organic results (ads skipped) from DuckDuckGo's HTML
// endpoint page, unwrapping its /l/?uddg= redirect links.
func ParseDuckDuckGo(r io.Reader, max int) ([]SearchResult, error) {
	doc, err := html.Parse(r)
	if err != nil {
		return nil, err
	}
	var out []SearchResult
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if len(out) >= max {
			return
		}
		if n.Type == html.ElementNode && hasClass(n, "result") && !hasClass(n, "result--ad") {
			var res SearchResult
			var inner func(*html.Node)
			inner = func(m *html.Node) {
				if m.Type == html.ElementNode && m.DataAtom == atom.A {
					switch {
					case hasClass(m, "result__a") && res.URL == "":
						res.Title = collapse(textOf(m))
						res.URL = unwrapDDG(attr(m, "href"))
					case hasClass(m, "result__snippet"):
						res.Snippet = collapse(textOf(m))
					}
				}
				if m.Type == html.ElementNode && hasClass(m, "result__snippet") && res.Snippet == "" {
					res.Snippet = collapse(textOf(m))
				}
				for c := m.FirstChild; c != nil; c = c.NextSibling {
					inner(c)
				}
			}
			inner(n)
			if res.URL != "" {
				out = append(out, res)
			}
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return out, nil
}

func unwrapDDG(href string) string {
	if strings.HasPrefix(href, "//") {
		href = "https:" + href
	}
	u, err := url.Parse(href)
	if err != nil {
		return href
	}
	if target := u.Query().Get("uddg"); target != "" && strings.HasSuffix(u.Path, "/l/") {
		return target
	}
	return href
}

func (p *Plugin) tavily(ctx context.Context, q string, n int) ([]SearchResult, error) {
	body, _ := json.Marshal(map[string]any{"query": q, "max_results": n, "search_depth": "basic"})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.cfg.TavilyURL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+p.cfg.TavilyAPIKey)
	req.Header.Set("User-Agent", p.cfg.UserAgent)
	resp, data, err := p.do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return nil, fmt.Errorf("Tavily refused the API key (HTTP %d); check TAVILY_API_KEY", resp.StatusCode)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %s: %s", resp.Status, bodyText(resp.Header.Get("Content-Type"), data, 500))
	}
	var parsed struct {
		Results []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Content string `json:"content"`
		} `json:"results"`
	}
	if err := json.Unmarshal(data, &parsed); err != nil {
		return nil, fmt.Errorf("unexpected Tavily response: %v", err)
	}
	var out []SearchResult
	for _, r := range parsed.Results {
		out = append(out, SearchResult{Title: r.Title, URL: r.URL, Snippet: collapse(r.Content)})
	}
	if len(out) > n {
		out = out[:n]
	}
	return out, nil
}
