package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/tool"
)

// progressRecorder collects a call's progress reports.
type progressRecorder struct {
	mu  sync.Mutex
	got []event.Progress
}

func (r *progressRecorder) report(p event.Progress) {
	r.mu.Lock()
	r.got = append(r.got, p)
	r.mu.Unlock()
}

func (r *progressRecorder) reports() []event.Progress {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event.Progress(nil), r.got...)
}

func TestProgressNotificationsReachTheCall(t *testing.T) {
	_, c := setup(t, Config{Servers: map[string]ServerConfig{"ts": stdioCfg()}})
	rec := &progressRecorder{}
	third := make(chan struct{})
	ctx := tool.WithProgress(context.Background(), func(p event.Progress) {
		rec.report(p)
		if p.Progress == 3 {
			close(third)
		}
	})
	type reply struct {
		res tool.Result
		err error
	}
	done := make(chan reply, 1)
	go func() {
		res, err := find(t, c, "ts__progress").Invoke(ctx, &tool.RunContext{}, json.RawMessage(`{"steps":3,"hold":true}`))
		done <- reply{res, err}
	}()
	// The call holds its answer until every notification has arrived.
	select {
	case <-third:
	case r := <-done:
		t.Fatalf("the call ended before its third progress report: %+v; got %+v", r, rec.reports())
	}
	if res := run(t, c, "ts__release", `{}`); res.Text != "released" {
		t.Fatalf("release = %+v", res)
	}
	r := <-done
	if r.err != nil || r.res.IsError || r.res.Text != "progress done (token string)" {
		t.Fatalf("progress = %+v, %v", r.res, r.err)
	}
	got := rec.reports()
	if len(got) != 3 {
		t.Fatalf("reports %+v", got)
	}
	for i, p := range got {
		if p.Progress != float64(i+1) || p.Total != 3 || !strings.HasPrefix(p.Message, "Step ") {
			t.Fatalf("reports %+v", got)
		}
	}
}

// Cancelling a running call sends notifications/cancelled: the server's handler is
// cancelled, the call returns a cancelled result, and the connection goes on.
func TestCancelledCallNotifiesTheServer(t *testing.T) {
	p, c := setup(t, Config{Servers: map[string]ServerConfig{"ts": stdioCfg()}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The server reports progress once it is blocked: cancel then.
	ctx = tool.WithProgress(ctx, func(event.Progress) { cancel() })
	res, err := find(t, c, "ts__block").Invoke(ctx, &tool.RunContext{}, json.RawMessage(`{}`))
	if err != nil || !res.IsError || !strings.Contains(res.Text, "was cancelled") {
		t.Fatalf("block = %+v, %v", res, err)
	}
	if res := run(t, c, "ts__cancelled", `{}`); res.Text != "cancelled: 1" {
		t.Fatalf("cancelled = %+v", res)
	}
	if _, _, deaths := p.servers["ts"].snapshot(); deaths != 0 {
		t.Fatalf("the connection was lost (%d deaths)", deaths)
	}
}

func TestTaskRequiredToolsAreNotOffered(t *testing.T) {
	_, c := setup(t, Config{Servers: map[string]ServerConfig{"ts": stdioCfg()}})
	for _, tl := range c.Tools {
		if tl.Spec().Name == "ts__task_only" {
			t.Fatal("a tool that requires task support was offered")
		}
	}
	if res := run(t, c, "ts__task_optional", `{}`); res.IsError || res.Text != "task_optional ran" {
		t.Fatalf("task_optional = %+v", res)
	}
	sts, err := ListServers(context.Background(), Config{Servers: map[string]ServerConfig{"ts": stdioCfg()}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sk := sts[0].Skipped; len(sk) != 1 || sk[0].Original != "task_only" || sk[0].Name != "ts__task_only" || !strings.Contains(sk[0].Reason, "taskSupport: required") {
		t.Fatalf("skipped = %+v", sk)
	}
	for _, tl := range sts[0].Tools {
		if tl.Original == "task_only" {
			t.Fatalf("task_only listed as offered: %+v", sts[0].Tools)
		}
	}
}

// Streamable HTTP bodies are observed as they are read: a JSON body and the data of
// server-sent events.
func TestObserveHTTPBodies(t *testing.T) {
	list := `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","inputSchema":{}},{"name":"b","inputSchema":{},"execution":{"taskSupport":"required"}},{"name":"c","execution":{"taskSupport":"optional"}}]}}`
	for name, tc := range map[string]struct{ ct, body string }{
		"json": {"application/json", list},
		"sse":  {"text/event-stream", "event: message\r\nid: 1\r\ndata: " + list + "\r\n\r\n"},
	} {
		t.Run(name, func(t *testing.T) {
			tt := &taskTools{}
			b := tt.observeBody(io.NopCloser(&slowReader{s: tc.body}), tc.ct)
			if got, err := io.ReadAll(b); err != nil || string(got) != tc.body {
				t.Fatalf("body changed: %q, %v", got, err)
			}
			if tt.requires("a") || !tt.requires("b") || tt.requires("c") {
				t.Fatalf("required = %v", tt.required)
			}
		})
	}
}

// slowReader returns a few bytes per Read, as a network body may.
type slowReader struct{ s string }

func (r *slowReader) Read(p []byte) (int, error) {
	if r.s == "" {
		return 0, io.EOF
	}
	n := min(len(p), 7, len(r.s))
	copy(p, r.s[:n])
	r.s = r.s[n:]
	return n, nil
}

// chanHandler sends every record to a channel.
type chanHandler struct{ ch chan slog.Record }

func (h chanHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h chanHandler) Handle(_ context.Context, r slog.Record) error {
	select {
	case h.ch <- r:
	default:
	}
	return nil
}
func (h chanHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h chanHandler) WithGroup(string) slog.Handler      { return h }

// A server's notifications/message land in lovia's log, scrubbed, never in the result.
func TestServerLogMessagesGoToTheLog(t *testing.T) {
	ch := make(chan slog.Record, 256)
	p, err := New(Config{
		Servers: map[string]ServerConfig{"ts": stdioCfg()},
		Scrub:   func(s string) string { return strings.ReplaceAll(s, "sekrit", "[redacted]") },
	}, slog.New(chanHandler{ch}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	c, err := p.Setup(context.Background(), &tool.RunContext{})
	if err != nil {
		t.Fatal(err)
	}
	// The level is set just after the server starts (off the start path): call until
	// a message arrives.
	deadline := time.After(20 * time.Second)
	for {
		res := run(t, c, "ts__log", `{"text":"disk almost full: sekrit"}`)
		if res.IsError || res.Text != "logged" {
			t.Fatalf("log = %+v", res)
		}
		wait := time.After(200 * time.Millisecond)
	drain:
		for {
			select {
			case r := <-ch:
				if r.Message != "mcp server log" {
					continue
				}
				attrs := map[string]string{}
				r.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value.String(); return true })
				if r.Level != slog.LevelWarn || attrs["data"] != "disk almost full: [redacted]" || attrs["logger"] != "testserver" {
					t.Fatalf("log record %v %v %+v", r.Level, r.Message, attrs)
				}
				return
			case <-wait:
				break drain
			case <-deadline:
				t.Fatal("no server log message reached the log")
			}
		}
	}
}

// A call past its call_timeout is cancelled on the server too (notifications/cancelled),
// and the connection goes on.
func TestCallTimeoutCancelsOnTheServer(t *testing.T) {
	cfg := stdioCfg()
	cfg.CallTimeout = 300 * time.Millisecond
	p, c := setup(t, Config{Servers: map[string]ServerConfig{"ts": cfg}})
	if res := run(t, c, "ts__block", `{}`); !res.IsError || !strings.Contains(res.Text, "did not answer block within") {
		t.Fatalf("block = %+v", res)
	}
	if res := run(t, c, "ts__cancelled", `{}`); res.Text != "cancelled: 1" {
		t.Fatalf("cancelled = %+v", res)
	}
	if _, _, deaths := p.servers["ts"].snapshot(); deaths != 0 {
		t.Fatalf("the connection was lost (%d deaths)", deaths)
	}
}

// Over streamable HTTP the tool lists are observed in the response bodies: a proxy
// marks task_only as requiring tasks (the test server marks it on stdio only).
func TestTaskRequiredToolsOverHTTP(t *testing.T) {
	url, _ := startHTTP(t)
	target, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(&neturl.URL{Scheme: target.Scheme, Host: target.Host})
	proxy.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Method != http.MethodPost {
			return nil // the long-lived GET stream is passed through
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		body = bytes.ReplaceAll(body, []byte(`"name":"task_only"`), []byte(`"name":"task_only","execution":{"taskSupport":"required"}`))
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
		return nil
	}
	ts := httptest.NewServer(proxy)
	t.Cleanup(ts.Close)
	_, c := setup(t, Config{Servers: map[string]ServerConfig{"ts": {URL: ts.URL + target.Path, StartupTimeout: 20 * time.Second}}})
	for _, tl := range c.Tools {
		if tl.Spec().Name == "ts__task_only" {
			t.Fatal("a tool that requires task support was offered over HTTP")
		}
	}
	if res := run(t, c, "ts__task_optional", `{}`); res.IsError || res.Text != "task_optional ran" {
		t.Fatalf("task_optional = %+v", res)
	}
}
