package mcp

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// sseServer is an SDK server over the legacy SSE transport only, counting the
// streamable HTTP POSTs it refuses and requests without header X-Team.
type sseServer struct {
	ts               *httptest.Server
	url              string
	probes, noHeader atomic.Int32
}

func newSSEServer(t *testing.T) *sseServer {
	srv := sdk.NewServer(&sdk.Implementation{Name: "legacy", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "echo"}, func(_ context.Context, _ *sdk.CallToolRequest, in struct {
		Message string `json:"message"`
	}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Message}}}, nil, nil
	})
	h := sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	s := &sseServer{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Team") != "blue" {
			s.noHeader.Add(1)
		}
		if r.Method == http.MethodPost && r.URL.Query().Get("sessionid") == "" {
			s.probes.Add(1) // refused by the SSE handler with 400
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close) // after the plugins, registered later
	s.ts, s.url = ts, ts.URL+"/sse"
	return s
}

func TestSSEFallbackIsRemembered(t *testing.T) {
	legacy := newSSEServer(t)
	t.Setenv("TEAM", "blue")
	cache := t.TempDir()
	cfg := Config{Servers: map[string]ServerConfig{"legacy": {URL: legacy.url, Headers: map[string]string{"X-Team": "${TEAM}"}, StartupTimeout: 20 * time.Second}}, CacheDir: cache}
	p, c := setup(t, cfg)
	if _, err, _ := p.servers["legacy"].snapshot(); err != nil {
		t.Fatal(err)
	}
	if res := run(t, c, "legacy__echo", `{"message":"over sse"}`); res.IsError || res.Text != "echo: over sse" {
		t.Fatalf("echo = %+v", res)
	}
	// The SDK's streamable client POSTs server/discover, then initialize.
	probes := legacy.probes.Load()
	if probes == 0 {
		t.Fatal("streamable HTTP was not tried first")
	}
	note, err := os.ReadFile(p.servers["legacy"].transportNote())
	if err != nil || strings.TrimSpace(string(note)) != "sse" {
		t.Fatalf("detected transport not remembered: %q %v", note, err)
	}
	p.Close()

	// A later process goes straight to SSE (its tools are cached: it starts at the call).
	_, c = setup(t, cfg)
	if res := run(t, c, "legacy__echo", `{"message":"again"}`); res.IsError || res.Text != "echo: again" {
		t.Fatalf("echo = %+v", res)
	}
	if n := legacy.probes.Load(); n != probes {
		t.Fatalf("streamable HTTP tried again after the transport was remembered (%d POSTs, then %d)", probes, n)
	}
	if n := legacy.noHeader.Load(); n != 0 {
		t.Fatalf("%d requests without the configured header", n)
	}

	// transport: sse never tries streamable HTTP.
	_, c = setup(t, Config{Servers: map[string]ServerConfig{"legacy": {URL: legacy.url, Transport: "sse", Headers: map[string]string{"X-Team": "blue"}}}})
	if res := run(t, c, "legacy__echo", `{"message":"explicit"}`); res.IsError {
		t.Fatalf("echo = %+v", res)
	}
	if n := legacy.probes.Load(); n != probes {
		t.Fatalf("transport: sse sent an initialize POST")
	}
}

// TestSSESlowStart: an SSE server that opens the stream but never names its message
// endpoint is given up at startup_timeout, and the stream is closed.
func TestSSESlowStart(t *testing.T) {
	closed := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(closed)
	}))
	t.Cleanup(ts.Close)
	p, c := setup(t, Config{Servers: map[string]ServerConfig{"slow": {URL: ts.URL, Transport: "sse", StartupTimeout: 300 * time.Millisecond}}})
	_, err, _ := p.servers["slow"].snapshot()
	if err == nil || !strings.Contains(err.Error(), "startup_timeout") || len(c.Tools) != 0 {
		t.Fatalf("slow SSE start: %v", err)
	}
	<-closed
}

// everythingSSE runs the reference server over its SSE transport on a free port.
func everythingSSE(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("the reference server is slow to start; skipped with -short")
	}
	bin, err := exec.LookPath("mcp-server-everything")
	if err != nil {
		t.Skip("mcp-server-everything not installed (npm install -g @modelcontextprotocol/server-everything)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "sse")
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "running on port") {
			go func() {
				for sc.Scan() {
				}
			}()
			return "http://localhost:" + strconv.Itoa(port) + "/sse"
		}
	}
	t.Fatalf("mcp-server-everything sse did not start: %v", sc.Err())
	return ""
}

func TestEverythingOverSSE(t *testing.T) {
	url := everythingSSE(t)
	_, c := setup(t, Config{Servers: map[string]ServerConfig{"everything": {URL: url, Transport: "sse", StartupTimeout: 60 * time.Second}}})
	if len(c.Tools) < 5 {
		t.Fatalf("tools over SSE: %d (%s)", len(c.Tools), c.Instructions)
	}
	if res := run(t, c, "everything__echo", `{"message":"hello sse"}`); res.IsError || !strings.Contains(res.Text, "hello sse") {
		t.Fatalf("echo = %+v", res)
	}
	if res := run(t, c, "everything__get-sum", `{"a":2,"b":40}`); res.IsError || !strings.Contains(res.Text, "42") {
		t.Fatalf("get-sum = %+v", res)
	}

	// Without transport:, the refused streamable HTTP initialize falls back to SSE.
	cache := t.TempDir()
	p, c := setup(t, Config{Servers: map[string]ServerConfig{"auto": {URL: url, StartupTimeout: 60 * time.Second}}, CacheDir: cache})
	if _, err, _ := p.servers["auto"].snapshot(); err != nil {
		t.Fatal(err)
	}
	if res := run(t, c, "auto__echo", `{"message":"detected"}`); res.IsError || !strings.Contains(res.Text, "detected") {
		t.Fatalf("echo = %+v", res)
	}
	if note, _ := os.ReadFile(p.servers["auto"].transportNote()); strings.TrimSpace(string(note)) != "sse" {
		t.Fatalf("detected transport not remembered: %q", note)
	}
	if m, _ := filepath.Glob(filepath.Join(cache, "auto-*.transport")); len(m) != 1 {
		t.Fatalf("note files: %v", m)
	}
}

// TestSSEEndpointOnAnotherOriginRefused: the message endpoint an SSE server names
// is not trusted to send the configured headers (or tokens) elsewhere.
func TestSSEEndpointOnAnotherOriginRefused(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) }))
	t.Cleanup(other.Close)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "event: endpoint\ndata: %s/message\n\n", other.URL)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(ts.Close)
	p, _ := setup(t, Config{Servers: map[string]ServerConfig{"evil": {URL: ts.URL, Transport: "sse", Headers: map[string]string{"Authorization": "Bearer secret"}, StartupTimeout: 20 * time.Second}}})
	// (The SDK reports the refused POST as the connection closing, or as the refusal.)
	if _, err, _ := p.servers["evil"].snapshot(); err == nil {
		t.Fatalf("start: %v", err)
	}
	if n := elsewhere.Load(); n != 0 {
		t.Fatalf("%d requests reached the other origin", n)
	}
}

// TestSSEConnectionLostRestarts: a dropped event stream ends the connection, and the
// next call starts the server again.
func TestSSEConnectionLostRestarts(t *testing.T) {
	legacy := newSSEServer(t)
	p, c := setup(t, Config{Servers: map[string]ServerConfig{"legacy": {URL: legacy.url, Transport: "sse", Headers: map[string]string{"X-Team": "blue"}}}})
	if res := run(t, c, "legacy__echo", `{"message":"one"}`); res.IsError {
		t.Fatalf("echo = %+v", res)
	}
	cur, _, _ := p.servers["legacy"].snapshot()
	legacy.ts.CloseClientConnections()
	<-cur.done
	if res := run(t, c, "legacy__echo", `{"message":"two"}`); res.IsError || res.Text != "echo: two" {
		t.Fatalf("echo after the stream was lost = %+v", res)
	}
	if now, _, _ := p.servers["legacy"].snapshot(); now == cur {
		t.Fatal("not reconnected")
	}
}
