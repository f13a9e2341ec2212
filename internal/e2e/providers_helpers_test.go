package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/provider/providertest"
)

// provEnv is a test machine whose provider variables point at srv (nil: none).
func provEnv(t testing.TB, srv *providertest.Server) *env {
	t.Helper()
	e := newEnv(t)
	// Nothing may leave the machine: a request that escapes the fake server goes
	// to a closed local port instead of the internet.
	e.vars = append(e.vars, "HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9", "NO_PROXY=127.0.0.1,localhost")
	if srv != nil {
		for k, v := range srv.EnvVars() {
			e.vars = append(e.vars, k+"="+v)
		}
	}
	return e
}

// provProc is one finished lovia process.
type provProc struct {
	result
	state   *os.ProcessState
	started time.Time
	events  []map[string]any // stream-json lines
}

// cpu is the child's user+system CPU time.
func (p provProc) cpu() time.Duration { return p.state.UserTime() + p.state.SystemTime() }

// provRun runs lovia like env.run, with a timeout of its own, and keeps the process
// state (CPU time) and the stream-json events.
func provRun(e *env, timeout time.Duration, args ...string) provProc {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = e.dir, e.vars
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	// On timeout, SIGQUIT: the Go runtime prints every goroutine's stack, which
	// says where lovia hung.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	cmd.WaitDelay = 5 * time.Second
	p := provProc{started: time.Now()}
	err := cmd.Run()
	if ctx.Err() != nil {
		dump, _ := os.CreateTemp("", "lovia-e2e-hang-*.txt")
		if dump != nil {
			_, _ = dump.Write(errb.Bytes())
			_ = dump.Close()
		}
		e.t.Fatalf("lovia %v did not finish in %s (goroutine dump in %s)\nstdout: %s\nstderr: %s", args, timeout,
			dump.Name(), provTail(out.String(), 1500), provTail(errb.String(), 3000))
	}
	p.code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		p.code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("running lovia: %v", err)
	}
	p.stdout, p.stderr, p.state = out.String(), errb.String(), cmd.ProcessState
	for _, line := range strings.Split(p.stdout, "\n") {
		var v map[string]any
		if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &v) == nil {
			p.events = append(p.events, v)
		}
	}
	return p
}

// ofType returns the events of type typ.
func (p provProc) ofType(typ string) []map[string]any {
	var out []map[string]any
	for _, ev := range p.events {
		if ev["type"] == typ {
			out = append(out, ev)
		}
	}
	return out
}

// terminal checks the stream ended with exactly one terminal event of type want.
func (p provProc) terminal(t testing.TB, want string) map[string]any {
	t.Helper()
	var term []map[string]any
	for _, ev := range p.events {
		if ev["type"] == "run_completed" || ev["type"] == "run_failed" {
			term = append(term, ev)
		}
	}
	if len(term) != 1 || term[0]["type"] != want || p.events[len(p.events)-1]["type"] != want {
		t.Fatalf("want exactly one terminal %s event, last; got %d terminal events\nstdout: %s\nstderr: %s",
			want, len(term), provTail(p.stdout, 3000), provTail(p.stderr, 2000))
	}
	return term[0]
}

func provTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// timedServer puts a recorder in front of srv: the time each request arrived.
// Its URL replaces srv's in the environment (provider kinds keep their paths).
type timedServer struct {
	*httptest.Server
	mu    sync.Mutex
	times []time.Time
}

func newTimedServer(t testing.TB, h http.Handler) *timedServer {
	ts := &timedServer{}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.mu.Lock()
		ts.times = append(ts.times, time.Now())
		ts.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts
}

func (ts *timedServer) arrivals() []time.Time {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]time.Time(nil), ts.times...)
}

// pointAt replaces the base-URL variables of e with ones for url (kind decides the
// variable and the /v1 suffix, as providertest.Server.EnvVars does).
func pointAt(e *env, kind, url string) {
	name, val := "OPENAI_BASE_URL", url+"/v1"
	if kind == providertest.KindAnthropic {
		name, val = "ANTHROPIC_BASE_URL", url
	}
	for i, v := range e.vars {
		if strings.HasPrefix(v, name+"=") {
			e.vars[i] = name + "=" + val
			return
		}
	}
	e.vars = append(e.vars, name+"="+val)
}

// secretLeaks lists every place the API key shows up: the given outputs and every
// file under the test's home (the database and its WAL, logs, archived tool
// outputs) and workspace. canary must be found in the home's files, which proves
// the scan reads what the run stored.
func secretLeaks(t *testing.T, e *env, canary string, outputs map[string]string) []string {
	t.Helper()
	var leaks []string
	for name, s := range outputs {
		if strings.Contains(s, providertest.APIKey) {
			leaks = append(leaks, name)
		}
	}
	seen := false
	scanned := 0
	for _, root := range []string{e.home, e.dir} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			scanned++
			if bytes.Contains(data, []byte(providertest.APIKey)) {
				leaks = append(leaks, path)
			}
			if root == e.home && bytes.Contains(data, []byte(canary)) {
				seen = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if !seen {
		t.Errorf("the canary %q is in none of the %d files under %s: the secret scan would not see the key either", canary, scanned, e.home)
	}
	return leaks
}

// body decodes a recorded request body.
func provBody(t *testing.T, r providertest.Request) map[string]any {
	t.Helper()
	m := map[string]any{}
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, provTail(string(r.Body), 500))
	}
	return m
}

// jsonList returns m[key] as a list of objects.
func provList(m map[string]any, key string) []map[string]any {
	raw, _ := m[key].([]any)
	out := make([]map[string]any, 0, len(raw))
	for _, v := range raw {
		o, _ := v.(map[string]any)
		out = append(out, o)
	}
	return out
}

func provStr(v any) string { s, _ := v.(string); return s }
