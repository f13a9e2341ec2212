package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/app"
	"github.com/lovia-dev/lovia/internal/config"
	"github.com/lovia-dev/lovia/internal/event"
)

// TestOpenAPIMatchesRoutes: docs/serve.openapi.json documents exactly the routes the
// server registers.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "serve.openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("serve.openapi.json: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi version %q", doc.OpenAPI)
	}
	var documented, registered []string
	for path, ops := range doc.Paths {
		for method, op := range ops {
			if method == "parameters" {
				continue
			}
			var o struct {
				Responses map[string]json.RawMessage `json:"responses"`
			}
			if err := json.Unmarshal(op, &o); err != nil || len(o.Responses) == 0 {
				t.Errorf("%s %s: no responses documented", method, path)
			}
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	for _, r := range Routes() {
		registered = append(registered, r.Method+" "+r.Path)
	}
	slices.Sort(documented)
	slices.Sort(registered)
	for _, r := range registered {
		if !slices.Contains(documented, r) {
			t.Errorf("route %s is not in docs/serve.openapi.json", r)
		}
	}
	for _, d := range documented {
		if !slices.Contains(registered, d) {
			t.Errorf("docs/serve.openapi.json documents %s, which the server does not register", d)
		}
	}
}

const testScript = `turns:
  - text: "Let me create it."
    tool_calls:
      - name: shell
        args: {command: "touch x.txt"}
  - text: "Done."
`

type testServer struct {
	t    *testing.T
	srv  *Server
	base string
	stop func()
}

func newTestServer(t *testing.T, opts Options) *testServer {
	t.Helper()
	base := t.TempDir()
	dir, home := filepath.Join(base, "repo"), filepath.Join(base, "home")
	for _, d := range []string{filepath.Join(dir, ".git"), home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(testScript), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "LOVIA_HOME": filepath.Join(home, "data"), "LOVIA_SANDBOX": "off"}
	a, err := app.New(context.Background(), app.Options{Cwd: dir, Getenv: func(k string) string { return env[k] }, LogWriter: io.Discard,
		Flags: []config.Override{{Key: "model", Value: "script:" + filepath.Join(dir, "script.yaml"), Flag: "--model"}}})
	if err != nil {
		t.Fatal(err)
	}
	if opts.Listen == "" {
		opts.Listen = "127.0.0.1:0"
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := New(ctx, a, opts)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	ts := &testServer{t: t, srv: srv, base: "http://" + srv.Addr()}
	var once bool
	ts.stop = func() {
		if once {
			return
		}
		once = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		a.Close()
	}
	t.Cleanup(ts.stop)
	return ts
}

func (ts *testServer) req(method, path, body string, hdr ...string) *http.Response {
	ts.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, ts.base+path, rd)
	req.Header.Set("Authorization", "Bearer "+ts.srv.Token())
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
		} else if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	ts.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestSecurityChecks(t *testing.T) {
	ts := newTestServer(t, Options{})
	port := ts.srv.Addr()[strings.LastIndex(ts.srv.Addr(), ":"):]
	cases := []struct {
		name string
		hdr  []string
		want int
	}{
		{"token", nil, 200},
		{"no token", []string{"Authorization", ""}, 401},
		{"wrong token", []string{"Authorization", "Bearer x" + ts.srv.Token()[1:]}, 401},
		{"basic auth", []string{"Authorization", "Basic " + ts.srv.Token()}, 401},
		{"foreign origin", []string{"Origin", "http://evil.example"}, 403},
		{"origin with another port", []string{"Origin", "http://127.0.0.1:1"}, 403},
		{"https origin", []string{"Origin", "https://127.0.0.1" + port}, 403},
		{"own origin", []string{"Origin", "http://127.0.0.1" + port}, 200},
		{"localhost origin", []string{"Origin", "http://localhost" + port}, 200},
		{"rebinding host", []string{"Host", "evil.example" + port}, 403},
		{"localhost host", []string{"Host", "localhost" + port}, 200},
	}
	for _, c := range cases {
		resp := ts.req("GET", "/api/health", "", c.hdr...)
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d, want %d", c.name, resp.StatusCode, c.want)
		}
		if resp.Header.Get("Content-Security-Policy") == "" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: security headers missing: %v", c.name, resp.Header)
		}
	}
	// A form post (not JSON) never reaches a handler.
	if resp := ts.req("POST", "/api/runs", "prompt=x", "Content-Type", "application/x-www-form-urlencoded"); resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("form post: %d", resp.StatusCode)
	}
	if resp := ts.req("POST", "/api/runs", `{"prompt":"x","policy":"yolo"}`); resp.StatusCode != 400 {
		t.Errorf("bad policy: %d", resp.StatusCode)
	}
	if resp := ts.req("POST", "/api/runs", `{"prompt":"x","session_id":"../etc"}`); resp.StatusCode != 400 {
		t.Errorf("bad session id: %d", resp.StatusCode)
	}
	if resp := ts.req("GET", "/etc/passwd", ""); resp.StatusCode != 404 {
		t.Errorf("unknown path: %d", resp.StatusCode)
	}
	if resp := ts.req("GET", "/", ""); resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Errorf("the page: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp := ts.req("GET", "/static/index.html", ""); resp.StatusCode != 404 {
		t.Errorf("static index: %d", resp.StatusCode)
	}
}

func readEvents(t *testing.T, resp *http.Response) []event.Event {
	t.Helper()
	var out []event.Event
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var ev event.Event
			if err := json.Unmarshal([]byte(d), &ev); err != nil {
				t.Fatal(err)
			}
			out = append(out, ev)
		}
	}
	return out
}

// TestReplayBoundAndTasks: events past the per-run bound are gone (410), the rest
// replay; subagent children are listed under their parent.
func TestReplayBoundAndTasks(t *testing.T) {
	ts := newTestServer(t, Options{MaxEvents: 3, ApprovalTimeout: 1})
	resp := ts.req("POST", "/api/runs", `{"prompt":"go"}`)
	var st RunStarted
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || resp.StatusCode != 201 {
		t.Fatalf("start: %d %v", resp.StatusCode, err)
	}
	run := ts.srv.sup.get(st.RunID)
	// The approval timeout (1ns) denies at once; wait for the end through the API.
	for {
		_, ended, _, wait := run.since(0)
		if ended {
			break
		}
		<-wait
	}
	if r := ts.req("GET", "/api/runs/"+st.RunID+"/events?from=0", ""); r.StatusCode != http.StatusGone {
		t.Fatalf("evicted events: %d, want 410", r.StatusCode)
	}
	info := ts.srv.sup.info(run)
	evs := readEvents(t, ts.req("GET", "/api/runs/"+st.RunID+"/events?from="+strconv.FormatInt(info.Events-3, 10), ""))
	if len(evs) != 3 || evs[2].Type != event.RunCompleted || evs[2].Seq != info.Events {
		t.Fatalf("the kept events: %+v", evs)
	}

	ts.srv.sup.childEvent(st.RunID+".sub1", event.Event{Type: event.RunStarted, Seq: 1, RunID: st.RunID + ".sub1"})
	var runs []Info
	if err := json.NewDecoder(ts.req("GET", "/api/runs", "").Body).Decode(&runs); err != nil {
		t.Fatal(err)
	}
	var parent, child *Info
	for i := range runs {
		switch runs[i].RunID {
		case st.RunID:
			parent = &runs[i]
		case st.RunID + ".sub1":
			child = &runs[i]
		}
	}
	if parent == nil || child == nil || child.ParentID != st.RunID || !slices.Contains(parent.Children, child.RunID) || child.SessionID != st.SessionID {
		t.Fatalf("tasks: %+v", runs)
	}
}

// TestFramesEscapeTerminalControls: like stream-json, C1 controls and bidi overrides
// in event text reach clients as \u escapes (the same JSON value).
func TestFramesEscapeTerminalControls(t *testing.T) {
	r := &Run{ID: "run_x"}
	r.append(event.Event{Type: event.TextDelta, Seq: 1, RunID: "run_x", Text: "a\u009b31mb\u202ec"}, 10)
	evs, _, _, _ := r.since(0)
	if len(evs) != 1 {
		t.Fatal(len(evs))
	}
	data := string(evs[0].data)
	if strings.ContainsRune(data, '\u009b') || strings.ContainsRune(data, '\u202e') || !strings.Contains(data, `\u009b`) || !strings.Contains(data, `\u202e`) {
		t.Fatalf("frame: %s", data)
	}
	var ev event.Event
	if err := json.Unmarshal(evs[0].data, &ev); err != nil || ev.Text != "a\u009b31mb\u202ec" {
		t.Fatalf("decoded: %q %v", ev.Text, err)
	}
}

// waitFor blocks until run has an event of type typ (the run's own notification, no
// polling).
func waitFor(run *Run, typ event.Type) {
	for {
		evs, _, _, wait := run.since(0)
		for _, f := range evs {
			var ev event.Event
			if json.Unmarshal(f.data, &ev) == nil && ev.Type == typ {
				return
			}
		}
		<-wait
	}
}

// firstID opens the run's stream with Last-Event-ID and returns the first event's id.
func (ts *testServer) firstID(runID, lastID string) string {
	ts.t.Helper()
	resp := ts.req("GET", "/api/runs/"+runID+"/events", "", "Last-Event-ID", lastID)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
			return id
		}
	}
	ts.t.Fatalf("no event after %q (%d)", lastID, resp.StatusCode)
	return ""
}

// TestResumeAttemptIDs: a run resumed in the same server is a new attempt whose ids
// are "2.N"; an id of the first attempt gets the new attempt from its start.
func TestResumeAttemptIDs(t *testing.T) {
	ts := newTestServer(t, Options{})
	resp := ts.req("POST", "/api/runs", `{"prompt":"go"}`)
	var st RunStarted
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	run := ts.srv.sup.get(st.RunID)
	waitFor(run, event.ApprovalRequired)
	if id := ts.firstID(st.RunID, "2"); id != "3" {
		t.Fatalf("first attempt after 2: %s", id)
	}
	if r := ts.req("POST", "/api/runs/"+st.RunID+"/cancel", ""); r.StatusCode != http.StatusAccepted {
		t.Fatalf("cancel: %d", r.StatusCode)
	}
	waitFor(run, event.RunFailed)
	if r := ts.req("POST", "/api/runs/"+st.RunID+"/resume", ""); r.StatusCode != http.StatusAccepted {
		b, _ := io.ReadAll(r.Body)
		t.Fatalf("resume: %d %s", r.StatusCode, b)
	}
	waitFor(run, event.ApprovalRequired)
	if id := ts.firstID(st.RunID, "5"); id != "2.1" {
		t.Fatalf("an id of the first attempt: got %s, want 2.1", id)
	}
	if id := ts.firstID(st.RunID, "2.1"); id != "2.2" {
		t.Fatalf("after 2.1: %s", id)
	}
}
