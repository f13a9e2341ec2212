package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/tool"
)

func toolByName(t *testing.T, p *Plugin, name string) tool.Tool {
	t.Helper()
	for _, tl := range p.Tools() {
		if tl.Spec().Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

func invoke(t *testing.T, p *Plugin, name, args string) tool.Result {
	t.Helper()
	tl := toolByName(t, p, name)
	if err := tl.Spec().Validate(json.RawMessage(args)); err != nil {
		t.Fatalf("%s %s: %v", name, args, err)
	}
	res, err := tl.Invoke(context.Background(), &tool.RunContext{}, json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func site(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/api", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		body, _ := io.ReadAll(r.Body)
		json.NewEncoder(w).Encode(map[string]string{"method": r.Method, "body": string(body), "auth": r.Header.Get("Authorization")})
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "nope", http.StatusNotFound) })
	mux.HandleFunc("/bin", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write([]byte{0, 1, 2, 3})
	})
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/docs/page", http.StatusFound) })
	mux.HandleFunc("/docs/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<html><head><title>Docs</title></head><body><nav>menu</nav><h2>Install</h2><p>Run <a href="setup">setup</a>.</p></body></html>`)
	})
	mux.HandleFunc("/plain.txt", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "just text") })
	// Never answers: it waits for the client to give up.
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestHTTPRequest(t *testing.T) {
	srv := site(t)
	p := New(Config{Client: &http.Client{Timeout: 500 * time.Millisecond}}, nil)
	res := invoke(t, p, "http_request", `{"url":"`+srv.URL+`/api","method":"POST","body":"{\"a\":1}","headers":{"Authorization":"Bearer x"}}`)
	if res.IsError || !strings.HasPrefix(res.Text, "HTTP 200 OK\nContent-Length: 55\nContent-Type: application/json\n\n") || !strings.Contains(res.Text, `"body":"{\"a\":1}"`) || !strings.Contains(res.Text, `"auth":"Bearer x"`) || !strings.Contains(res.Text, `"method":"POST"`) {
		t.Fatalf("post = %+v", res)
	}
	if res := invoke(t, p, "http_request", `{"url":"`+srv.URL+`/missing"}`); !res.IsError || !strings.Contains(res.Text, "HTTP 404") {
		t.Fatalf("404 = %+v", res)
	}
	if res := invoke(t, p, "http_request", `{"url":"`+srv.URL+`/bin"}`); !strings.Contains(res.Text, "[binary body: application/octet-stream, 4 bytes") {
		t.Fatalf("binary = %+v", res)
	}
	if res := invoke(t, p, "http_request", `{"url":"`+srv.URL+`/slow"}`); !res.IsError || !strings.Contains(res.Text, "timed out") {
		t.Fatalf("slow = %+v", res)
	}
	if res := invoke(t, p, "http_request", `{"url":"file:///etc/passwd"}`); !res.IsError || !strings.Contains(res.Text, "must start with http") {
		t.Fatalf("file url = %+v", res)
	}
}

func TestReadPage(t *testing.T) {
	srv := site(t)
	p := New(Config{}, nil)
	res := invoke(t, p, "read_page", `{"url":"`+srv.URL+`/old"}`)
	want := "Title: Docs\nURL: " + srv.URL + "/docs/page\n\n## Install\n\nRun [setup](" + srv.URL + "/docs/setup)."
	if res.IsError || res.Text != want {
		t.Fatalf("read_page = %q\nwant %q", res.Text, want)
	}
	if res := invoke(t, p, "read_page", `{"url":"`+srv.URL+`/plain.txt"}`); res.Text != "just text" {
		t.Fatalf("plain = %+v", res)
	}
	if res := invoke(t, p, "read_page", `{"url":"`+srv.URL+`/missing"}`); !res.IsError || !strings.Contains(res.Text, "404") {
		t.Fatalf("missing = %+v", res)
	}
}

func TestSearch(t *testing.T) {
	page, _ := os.ReadFile("testdata/ddg.html")
	ddg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		if r.Method != http.MethodPost || r.Form.Get("q") != "go testing" {
			http.Error(w, "bad request", 400)
			return
		}
		w.Write(page)
	}))
	defer ddg.Close()
	tav := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tvly-key" {
			http.Error(w, "unauthorized", 401)
			return
		}
		var in map[string]any
		json.NewDecoder(r.Body).Decode(&in)
		json.NewEncoder(w).Encode(map[string]any{"results": []map[string]any{{"title": "T " + in["query"].(string), "url": "https://example.com", "content": "snippet\ntext"}}})
	}))
	defer tav.Close()

	p := New(Config{DuckDuckGoURL: ddg.URL}, nil)
	res := invoke(t, p, "web_search", `{"query":"go testing"}`)
	want := "1. testing package - testing - Go Packages\n   https://pkg.go.dev/testing\n   Package testing provides support for automated testing of Go packages.\n" +
		"2. Add a test - The Go Programming Language\n   https://go.dev/doc/tutorial/add-a-test\n   In this section, you'll add a test for the Hello function."
	if res.IsError || res.Text != want {
		t.Fatalf("ddg = %q", res.Text)
	}
	p = New(Config{TavilyURL: tav.URL, TavilyAPIKey: "tvly-key"}, nil)
	if res := invoke(t, p, "web_search", `{"query":"lovia"}`); res.Text != "1. T lovia\n   https://example.com\n   snippet text" {
		t.Fatalf("tavily = %q", res.Text)
	}
	p = New(Config{TavilyURL: tav.URL, TavilyAPIKey: "wrong"}, nil)
	if res := invoke(t, p, "web_search", `{"query":"lovia"}`); !res.IsError || !strings.Contains(res.Text, "TAVILY_API_KEY") {
		t.Fatalf("bad key = %+v", res)
	}
}

func TestNetworkApproval(t *testing.T) {
	ask := func(p *Plugin, name, args string) (*event.Approval, error) {
		return toolByName(t, p, name).Spec().Approval(context.Background(), &tool.RunContext{}, json.RawMessage(args))
	}
	p := New(Config{AllowHosts: []string{".golang.org"}}, nil)
	a, err := ask(p, "read_page", `{"url":"https://example.com/x?token=1"}`)
	if err != nil || a == nil || a.Kind != "network" || a.Summary != "GET https://example.com/x?token=1" || a.Rules[0] != "network:example.com" {
		t.Fatalf("approval = %+v, %v", a, err)
	}
	// "Allow for this session" remembers the host, for every web tool.
	toolByName(t, p, "read_page").Spec().Grant(a)
	if a, _ := ask(p, "http_request", `{"url":"https://EXAMPLE.com/api","method":"DELETE"}`); a != nil {
		t.Fatalf("granted host asked again: %+v", a)
	}
	if a, _ := ask(p, "http_request", `{"url":"https://pkg.golang.org/"}`); a != nil {
		t.Fatalf("allow_hosts subdomain asked: %+v", a)
	}
	if a, _ := ask(p, "web_search", `{"query":"x"}`); a == nil || !strings.Contains(a.Summary, `web search "x" via html.duckduckgo.com`) {
		t.Fatalf("search approval = %+v", a)
	}
	if _, err := ask(New(Config{Policy: PolicyDeny}, nil), "read_page", `{"url":"https://example.com"}`); err == nil || !strings.Contains(err.Error(), "denied") {
		t.Fatalf("deny policy: %v", err)
	}
	if a, err := ask(New(Config{Policy: PolicyAllow}, nil), "read_page", `{"url":"https://example.com"}`); a != nil || err != nil {
		t.Fatalf("allow policy: %+v %v", a, err)
	}
}

func TestNow(t *testing.T) {
	loc := time.FixedZone("CET", 3600)
	p := New(Config{Now: func() time.Time { return time.Date(2026, 11, 30, 1, 2, 3, 0, loc) }}, nil)
	if res := invoke(t, p, "now", `{}`); res.Text != "Monday, 30 November 2026 01:02:03 CET (2026-11-30T01:02:03+01:00)\nUTC: 2026-11-30T00:02:03Z" {
		t.Fatalf("now = %q", res.Text)
	}
}

func TestRedirectToOtherHostNeedsApproval(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "other host") }))
	defer other.Close()
	// Same server, but reached as "localhost" so the host differs from 127.0.0.1.
	otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, otherURL+"/x", http.StatusFound)
	}))
	defer srv.Close()
	p := New(Config{}, nil)
	res := invoke(t, p, "http_request", `{"url":"`+srv.URL+`/go"}`)
	if !res.IsError || !strings.Contains(res.Text, "redirects to another host ("+otherURL+"/x)") {
		t.Fatalf("redirect = %+v", res)
	}
	// Once that host is allowed, the redirect is followed.
	p = New(Config{AllowHosts: []string{"localhost"}}, nil)
	if res := invoke(t, p, "http_request", `{"url":"`+srv.URL+`/go"}`); res.IsError || !strings.Contains(res.Text, "other host") {
		t.Fatalf("allowed redirect = %+v", res)
	}
}
