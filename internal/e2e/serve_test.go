package e2e

import (
	"bufio"
	"bytes"

	"encoding/json"

	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// serveScript: the model runs a command (which needs approval), then answers.
const serveScript = `turns:
  - text: "Let me create it."
    tool_calls:
      - name: shell
        args: {command: "touch x.txt"}
  - text: "Made **x.txt**."
`

// serveProc is a running `lovia serve`.
type serveProc struct {
	t     *testing.T
	cmd   *exec.Cmd
	base  string // http://127.0.0.1:PORT
	url   string // with ?token=
	token string
	exit  chan error
	errb  *syncBuf
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServe starts `lovia serve` in e's workspace on a free port and waits for the
// line that prints its URL.
func startServe(t *testing.T, e *env, args ...string) *serveProc {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Dir = e.dir
	cmd.Env = e.vars
	pr, pw := io.Pipe()
	sp := &serveProc{t: t, cmd: cmd, exit: make(chan error, 1), errb: &syncBuf{}}
	cmd.Stderr = io.MultiWriter(pw, sp.errb)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { err := cmd.Wait(); pw.Close(); sp.exit <- err }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	})
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "lovia serve: open "); ok {
				urlc <- u
			}
		}
		close(urlc)
		_, _ = io.Copy(io.Discard, pr)
	}()
	select {
	case u, ok := <-urlc:
		if !ok {
			t.Fatalf("lovia serve exited:\n%s", sp.errb.String())
		}
		sp.url = u
	case <-time.After(30 * time.Second):
		t.Fatalf("lovia serve printed no URL:\n%s", sp.errb.String())
	}
	i := strings.Index(sp.url, "/?token=")
	sp.base, sp.token = sp.url[:i], sp.url[i+len("/?token="):]
	return sp
}

// stop sends sig and waits for the process to exit.
func (sp *serveProc) stop(sig syscall.Signal) {
	sp.t.Helper()
	_ = sp.cmd.Process.Signal(sig)
	select {
	case err := <-sp.exit:
		if err != nil {
			sp.t.Fatalf("lovia serve exited with %v after %v:\n%s", err, sig, sp.errb.String())
		}
	case <-time.After(60 * time.Second):
		sp.t.Fatalf("lovia serve did not stop on %v:\n%s", sig, sp.errb.String())
	}
}

// do sends a request with the token and returns the status and body.
func (sp *serveProc) do(method, path string, body any, hdr ...string) (int, []byte) {
	sp.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, sp.base+path, rd)
	if err != nil {
		sp.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+sp.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		sp.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

// must sends a request and fails unless it answered want; it decodes the answer into out.
func (sp *serveProc) must(want int, method, path string, body, out any) {
	sp.t.Helper()
	code, data := sp.do(method, path, body)
	if code != want {
		sp.t.Fatalf("%s %s: got %d, want %d: %s", method, path, code, want, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			sp.t.Fatalf("%s %s: %v: %s", method, path, err, data)
		}
	}
}

type started struct {
	RunID     string `json:"run_id"`
	SessionID string `json:"session_id"`
}

func (sp *serveProc) start(prompt, session string) started {
	sp.t.Helper()
	var st started
	body := map[string]any{"prompt": prompt}
	if session != "" {
		body["session_id"] = session
	}
	sp.must(http.StatusCreated, "POST", "/api/runs", body, &st)
	if st.RunID == "" || st.SessionID == "" {
		sp.t.Fatalf("start: %+v", st)
	}
	return st
}

// sseEvent is one received event: its SSE id and its stream-json object.
type sseEvent struct {
	id  string
	raw string
	ev  map[string]any
}

func (s sseEvent) typ() string { return provStr(s.ev["type"]) }
func (s sseEvent) seq() int {
	f, _ := s.ev["seq"].(float64)
	return int(f)
}

// sseConn is one open event stream.
type sseConn struct {
	t    *testing.T
	resp *http.Response
	rd   *bufio.Reader
}

// stream opens /api/runs/ID/events, after lastID when not empty.
func (sp *serveProc) stream(runID, lastID string) *sseConn {
	sp.t.Helper()
	req, _ := http.NewRequest("GET", sp.base+"/api/runs/"+runID+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+sp.token)
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		sp.t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		sp.t.Fatalf("events of %s: %d %s", runID, resp.StatusCode, b)
	}
	c := &sseConn{t: sp.t, resp: resp, rd: bufio.NewReader(resp.Body)}
	sp.t.Cleanup(func() { resp.Body.Close() })
	return c
}

// next reads one event (io.EOF at the end of the stream).
func (c *sseConn) next() (sseEvent, error) {
	var ev sseEvent
	var data []string
	for {
		line, err := c.rd.ReadString('\n')
		if err != nil {
			return ev, err
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "":
			if len(data) == 0 {
				continue
			}
			ev.raw = strings.Join(data, "\n")
			if err := json.Unmarshal([]byte(ev.raw), &ev.ev); err != nil {
				c.t.Fatalf("event data is not JSON: %q", ev.raw)
			}
			return ev, nil
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "id: "):
			ev.id = line[4:]
		case strings.HasPrefix(line, "data: "):
			data = append(data, line[6:])
		}
	}
}

// until reads events up to and including the first of type typ.
func (c *sseConn) until(typ string) []sseEvent {
	c.t.Helper()
	var out []sseEvent
	for {
		ev, err := c.next()
		if err != nil {
			c.t.Fatalf("stream ended before %s (got %d events): %v", typ, len(out), err)
		}
		out = append(out, ev)
		if ev.typ() == typ {
			return out
		}
	}
}

// rest reads the stream to its end, which must follow one terminal event.
func (c *sseConn) rest() []sseEvent {
	c.t.Helper()
	var out []sseEvent
	for {
		ev, err := c.next()
		if err == io.EOF {
			if len(out) == 0 || (out[len(out)-1].typ() != "run_completed" && out[len(out)-1].typ() != "run_failed") {
				c.t.Fatalf("stream ended without a terminal event: %d events", len(out))
			}
			return out
		}
		if err != nil {
			c.t.Fatal(err)
		}
		out = append(out, ev)
	}
}

func (c *sseConn) close() { c.resp.Body.Close() }

func ofType(evs []sseEvent, typ string) []sseEvent {
	var out []sseEvent
	for _, e := range evs {
		if e.typ() == typ {
			out = append(out, e)
		}
	}
	return out
}

func last(evs []sseEvent) sseEvent { return evs[len(evs)-1] }

func callID(t *testing.T, ev sseEvent) string {
	t.Helper()
	id := provStr(ev.ev["call_id"])
	if id == "" {
		t.Fatalf("no call_id in %s", ev.raw)
	}
	return id
}

func serveEnv(t *testing.T) *env {
	t.Helper()
	if testing.Short() {
		t.Skip("starts lovia serve")
	}
	e := newEnv(t)
	e.write("script.yaml", serveScript)
	if out, err := exec.Command("git", "-C", e.dir, "init", "-q").CombinedOutput(); err != nil {
		t.Logf("git init: %v %s", err, out)
	}
	return e
}

// TestServeStreamReconnectApprove: a run streams its stream-json events; a client that
// drops mid-run and reconnects with Last-Event-ID gets every event exactly once; the
// approval is answered over the API and the command runs.
func TestServeStreamReconnectApprove(t *testing.T) {
	e := serveEnv(t)
	sp := startServe(t, e, "-m", "script:script.yaml")
	validate := loadSchema(t)

	st := sp.start("create x.txt", "")
	c := sp.stream(st.RunID, "")
	first := c.until("approval_required")
	c.close() // the tab closes while the run waits: the run goes on
	ask := last(first)
	sp.must(http.StatusOK, "POST", "/api/runs/"+st.RunID+"/approvals/"+callID(t, ask), map[string]any{"decision": "allow"}, nil)
	second := sp.stream(st.RunID, ask.id).rest()

	all := append(append([]sseEvent{}, first...), second...)
	for i, ev := range all {
		if ev.seq() != i+1 || ev.id != strconv.Itoa(i+1) {
			t.Fatalf("event %d: id %q seq %d, want %d (each event exactly once, in order)", i, ev.id, ev.seq(), i+1)
		}
		if err := validate(ev.ev); err != nil {
			t.Errorf("event %s does not match the stream-json schema: %v", ev.raw, err)
		}
	}
	term := last(all)
	if term.typ() != "run_completed" || provStr(term.ev["final_output"]) != "Made **x.txt**." {
		t.Fatalf("terminal event: %s", term.raw)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "x.txt")); err != nil {
		t.Fatalf("the approved command did not run: %v", err)
	}
	// A replay from the start (?from=0) is the same stream.
	code, body := sp.do("GET", "/api/runs/"+st.RunID+"/events?from=0", nil)
	if code != 200 || strings.Count(string(body), "\ndata: ")+boolInt(strings.HasPrefix(string(body), "data: ")) != len(all) {
		t.Fatalf("replay: %d, %d events, want %d", code, strings.Count(string(body), "data: "), len(all))
	}
	// After the terminal event there is nothing more: 204 stops an EventSource.
	if code, _ := sp.do("GET", "/api/runs/"+st.RunID+"/events", nil, "Last-Event-ID", term.id); code != http.StatusNoContent {
		t.Fatalf("events after the terminal one: %d, want 204", code)
	}
	var info map[string]any
	sp.must(200, "GET", "/api/runs/"+st.RunID, nil, &info)
	if info["status"] != "completed" || info["session_id"] != st.SessionID {
		t.Fatalf("run info: %v", info)
	}
	var sess map[string]any
	sp.must(200, "GET", "/api/sessions/"+st.SessionID, nil, &sess)
	if ents, _ := sess["entries"].([]any); len(ents) < 4 {
		t.Fatalf("session entries: %v", sess)
	}
	code, md := sp.do("GET", "/api/sessions/"+st.SessionID+"/export?format=md", nil)
	if code != 200 || !strings.Contains(string(md), "Made **x.txt**.") {
		t.Fatalf("export md: %d %s", code, md)
	}
	sp.stop(syscall.SIGTERM)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestServeDenyConflictSteerCancel: a second run in a busy session is refused (409);
// a denial's message reaches the model; a steering message is injected at the next
// turn; cancel interrupts the run.
func TestServeDenyConflictSteerCancel(t *testing.T) {
	e := serveEnv(t)
	sp := startServe(t, e, "-m", "script:script.yaml")

	// Deny with a message, while a second run in the session is refused.
	st := sp.start("create x.txt", "")
	c := sp.stream(st.RunID, "")
	ask := last(c.until("approval_required"))
	code, body := sp.do("POST", "/api/runs", map[string]any{"prompt": "again", "session_id": st.SessionID})
	if code != http.StatusConflict {
		t.Fatalf("second run in a busy session: %d %s, want 409", code, body)
	}
	sp.must(200, "POST", "/api/runs/"+st.RunID+"/approvals/"+callID(t, ask), map[string]any{"decision": "deny", "message": "not in this directory"}, nil)
	evs := c.rest()
	failed := ofType(evs, "tool_call_failed")
	if len(failed) != 1 || !strings.Contains(provStr(failed[0].ev["output"]), "not in this directory") {
		t.Fatalf("denial: %v", failed)
	}
	if ap, _ := failed[0].ev["approval"].(map[string]any); ap["decision"] != "denied" {
		t.Fatalf("denial decision: %s", failed[0].raw)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "x.txt")); err == nil {
		t.Fatal("the denied command ran")
	}
	// The session is free again.
	st2 := sp.start("create x.txt", st.SessionID)

	// Steer while the run waits, then allow: the message opens the next turn.
	c2 := sp.stream(st2.RunID, "")
	ask2 := last(c2.until("approval_required"))
	sp.must(http.StatusAccepted, "POST", "/api/runs/"+st2.RunID+"/messages", map[string]any{"text": "Also update the changelog."}, nil)
	sp.must(200, "POST", "/api/runs/"+st2.RunID+"/approvals/"+callID(t, ask2), map[string]any{"decision": "allow"}, nil)
	evs2 := c2.rest()
	inj := ofType(evs2, "user_message_injected")
	if len(inj) != 1 || provStr(inj[0].ev["text"]) != "Also update the changelog." {
		t.Fatalf("steering: %v", inj)
	}
	if last(evs2).typ() != "run_completed" {
		t.Fatalf("steered run: %s", last(evs2).raw)
	}

	// Cancel a waiting run: interrupted, and the approval is gone.
	st3 := sp.start("create x.txt", "")
	c3 := sp.stream(st3.RunID, "")
	c3.until("approval_required")
	sp.must(http.StatusAccepted, "POST", "/api/runs/"+st3.RunID+"/cancel", nil, nil)
	term := last(c3.rest())
	if term.typ() != "run_failed" || term.ev["status"] != "interrupted" {
		t.Fatalf("cancelled run: %s", term.raw)
	}
	if code, _ := sp.do("POST", "/api/runs/"+st3.RunID+"/cancel", nil); code != http.StatusConflict {
		t.Fatalf("cancelling a finished run: %d, want 409", code)
	}
	sp.stop(syscall.SIGTERM)
}

// TestServeAuth: no token → 401; a foreign Origin or Host → 403 even with the token;
// the printed URL sets an HttpOnly cookie that then authorises the page.
func TestServeAuth(t *testing.T) {
	e := serveEnv(t)
	sp := startServe(t, e, "-m", "script:script.yaml")
	home := filepath.Join(e.home, "data")
	fi, err := os.Stat(filepath.Join(home, "serve.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("serve.json: %v %v", fi, err)
	}
	var info struct {
		URL, Token string
		PID        int
	}
	data, _ := os.ReadFile(filepath.Join(home, "serve.json"))
	if err := json.Unmarshal(data, &info); err != nil || info.Token != sp.token || info.URL != sp.url || info.PID != sp.cmd.Process.Pid {
		t.Fatalf("serve.json: %s", data)
	}

	for _, path := range []string{"/api/runs", "/api/health", "/api/sessions", "/", "/static/app.js"} {
		if code, _ := sp.do("GET", path, nil, "Authorization", ""); code != http.StatusUnauthorized {
			t.Errorf("GET %s without the token: %d, want 401", path, code)
		}
		if code, _ := sp.do("GET", path, nil, "Authorization", "Bearer "+strings.Repeat("0", len(sp.token))); code != http.StatusUnauthorized {
			t.Errorf("GET %s with a wrong token: %d, want 401", path, code)
		}
	}
	if code, _ := sp.do("POST", "/api/runs", map[string]any{"prompt": "x"}, "Authorization", ""); code != http.StatusUnauthorized {
		t.Errorf("POST without the token: %d", code)
	}
	if code, _ := sp.do("GET", "/api/runs", nil, "Origin", "http://evil.example"); code != http.StatusForbidden {
		t.Errorf("foreign Origin: %d, want 403", code)
	}
	if code, _ := sp.do("POST", "/api/runs", map[string]any{"prompt": "x"}, "Origin", "http://evil.example"); code != http.StatusForbidden {
		t.Errorf("foreign Origin POST: %d, want 403", code)
	}
	// DNS rebinding: a name that resolves to 127.0.0.1 but is not ours.
	req, _ := http.NewRequest("GET", sp.base+"/api/runs", nil)
	req.Host = "rebind.example:" + sp.base[strings.LastIndex(sp.base, ":")+1:]
	req.Header.Set("Authorization", "Bearer "+sp.token)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Host: %v %v, want 403", resp, err)
	}

	// The printed URL: cookie, then redirect to / without the token.
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(sp.url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "lovia_token" {
			cookie = c
		}
	}
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" || cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode {
		t.Fatalf("token URL: %d %v %v", resp.StatusCode, resp.Header, cookie)
	}
	get := func(path string, hdr ...string) *http.Response {
		req, _ := http.NewRequest("GET", sp.base+path, nil)
		req.AddCookie(cookie)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	page := get("/")
	if page.StatusCode != 200 || !strings.Contains(page.Header.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Fatalf("page with the cookie: %d %v", page.StatusCode, page.Header)
	}
	// A state change authorised only by the cookie must come from our page.
	preq, _ := http.NewRequest("POST", sp.base+"/api/runs", strings.NewReader(`{"prompt":"x"}`))
	preq.Header.Set("Content-Type", "application/json")
	preq.AddCookie(cookie)
	if resp, err := http.DefaultClient.Do(preq); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("cookie POST without Origin: %v %v, want 403", resp, err)
	}
	sp.stop(syscall.SIGTERM)
	if _, err := os.Stat(filepath.Join(home, "serve.json")); err == nil {
		t.Error("serve.json outlived the server")
	}
}

// TestServeResumeAfterSIGTERM: SIGTERM stops the server with the waiting run
// interrupted (and checkpointed); a new server lists it and resumes it, and it asks
// for the approval again and completes.
func TestServeResumeAfterSIGTERM(t *testing.T) {
	e := serveEnv(t)
	sp := startServe(t, e, "-m", "script:script.yaml")
	st := sp.start("create x.txt", "")
	c := sp.stream(st.RunID, "")
	c.until("approval_required")
	sp.stop(syscall.SIGTERM)
	term := last(c.rest())
	if term.typ() != "run_failed" || term.ev["status"] != "interrupted" {
		t.Fatalf("after SIGTERM: %s", term.raw)
	}
	if er, _ := term.ev["error"].(map[string]any); er["kind"] != "terminated" {
		t.Fatalf("after SIGTERM: %s", term.raw)
	}

	// `lovia runs` agrees: interrupted, resumable.
	r := e.run(nil, "runs", "--json")
	var runs []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &runs); err != nil {
		t.Fatalf("lovia runs --json: %v\n%s%s", err, r.stdout, r.stderr)
	}
	found := false
	for _, ri := range runs {
		if ri["run_id"] == st.RunID {
			found = ri["status"] == "interrupted"
		}
	}
	if !found {
		t.Fatalf("lovia runs: %s", r.stdout)
	}

	sp2 := startServe(t, e, "-m", "script:script.yaml")
	var listed []map[string]any
	sp2.must(200, "GET", "/api/runs?status=interrupted", nil, &listed)
	if len(listed) != 1 || listed[0]["run_id"] != st.RunID || listed[0]["session_id"] != st.SessionID {
		t.Fatalf("interrupted runs after restart: %v", listed)
	}
	var res started
	sp2.must(http.StatusAccepted, "POST", "/api/runs/"+st.RunID+"/resume", nil, &res)
	if res.RunID != st.RunID || res.SessionID != st.SessionID {
		t.Fatalf("resume: %+v", res)
	}
	c2 := sp2.stream(st.RunID, "")
	ask := last(c2.until("approval_required"))
	if code, _ := sp2.do("POST", "/api/runs/"+st.RunID+"/resume", nil); code != http.StatusConflict {
		t.Fatalf("resuming a running run: %d, want 409", code)
	}
	sp2.must(200, "POST", "/api/runs/"+st.RunID+"/approvals/"+callID(t, ask), map[string]any{"decision": "allow"}, nil)
	end := last(c2.rest())
	if end.typ() != "run_completed" {
		t.Fatalf("resumed run: %s", end.raw)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "x.txt")); err != nil {
		t.Fatal(err)
	}
	sp2.stop(syscall.SIGTERM)
}

// TestServeApprovalTimeout: an approval nobody answers is denied after the timeout.
func TestServeApprovalTimeout(t *testing.T) {
	e := serveEnv(t)
	sp := startServe(t, e, "-m", "script:script.yaml", "--approval-timeout", "200ms")
	st := sp.start("create x.txt", "")
	evs := sp.stream(st.RunID, "").rest()
	failed := ofType(evs, "tool_call_failed")
	if len(failed) != 1 || !strings.Contains(provStr(failed[0].ev["output"]), "nobody answered") {
		t.Fatalf("unanswered approval: %v", failed)
	}
	if last(evs).typ() != "run_completed" {
		t.Fatalf("%s", last(evs).raw)
	}
	sp.stop(syscall.SIGTERM)
}

// TestServeSubagentTasks: a run's subagent children are runs of their own, listed
// with parent_id and streamed like any run.
func TestServeSubagentTasks(t *testing.T) {
	e := serveEnv(t)
	e.write("sub.yaml", `turns:
  - tool_calls:
      - name: spawn_subagent
        args: {task: "say hi"}
  - tool_calls:
      - name: wait_subagents
        args: {}
  - text: "All done."
`)
	sp := startServe(t, e, "-m", "script:sub.yaml")
	st := sp.start("delegate", "")
	if end := last(sp.stream(st.RunID, "").rest()); end.typ() != "run_completed" {
		t.Fatalf("parent: %s", end.raw)
	}
	child := st.RunID + ".sub1"
	var runs []map[string]any
	sp.must(200, "GET", "/api/runs", nil, &runs)
	var parent, kid map[string]any
	for _, r := range runs {
		switch r["run_id"] {
		case st.RunID:
			parent = r
		case child:
			kid = r
		}
	}
	if kid == nil || kid["parent_id"] != st.RunID || kid["status"] != "completed" {
		t.Fatalf("the task in the run list: %v", runs)
	}
	if kids, _ := parent["children"].([]any); len(kids) != 1 || kids[0] != child {
		t.Fatalf("the parent's children: %v", parent)
	}
	evs := sp.stream(child, "").rest()
	if evs[0].typ() != "run_started" || last(evs).typ() != "run_completed" {
		t.Fatalf("the task's events: %s … %s", evs[0].raw, last(evs).raw)
	}
	sp.stop(syscall.SIGTERM)
}
