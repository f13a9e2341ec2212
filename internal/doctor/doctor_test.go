package doctor

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/config"
	"github.com/lovia-dev/lovia/internal/store/sqlite"
	"github.com/lovia-dev/lovia/internal/workspace"
	"github.com/lovia-dev/lovia/internal/workspace/sandbox"
)

// offline is an HTTP client that never leaves the process.
var offline = &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
	return nil, errors.New("dial tcp: connect: connection refused")
})}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// env is a sandboxed environment: every directory lovia reads is under t.TempDir.
type env struct {
	t    *testing.T
	dir  string // the working directory
	vars map[string]string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	base := t.TempDir()
	e := &env{t: t, dir: filepath.Join(base, "work"), vars: map[string]string{
		"HOME":            filepath.Join(base, "home"),
		"XDG_CONFIG_HOME": filepath.Join(base, "config"),
		"LOVIA_HOME":      filepath.Join(base, "data"),
	}}
	for _, d := range []string{e.dir, e.vars["HOME"], e.vars["XDG_CONFIG_HOME"]} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(e.dir, "s.yaml"), []byte("turns:\n  - text: hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) getenv(k string) string { return e.vars[k] }

// script selects the valid scripted model written by newEnv.
func (e *env) script() []config.Override { return model("script:" + filepath.Join(e.dir, "s.yaml")) }

func (e *env) writeProjectConfig(body string) {
	e.t.Helper()
	p := filepath.Join(e.dir, ".lovia", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) run(opts Options) []Result {
	e.t.Helper()
	opts.Cwd, opts.Getenv = e.dir, e.getenv
	// The project settings these tests write are the checks' subject: trust them.
	opts.Trust = true
	if opts.HTTPClient == nil {
		opts.HTTPClient = offline
	}
	if opts.Landlock == nil {
		opts.Landlock = func() (int, error) { return 4, nil }
	}
	if opts.Sandbox == nil {
		opts.Sandbox = fullSandbox
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return Run(ctx, opts)
}

// fullSandbox is a sandbox with every layer in force.
func fullSandbox(cfg workspace.Config) (sandbox.Report, error, error) {
	return sandbox.Report{Landlock: 7, Namespaces: true, PrivateProc: true, NetNS: true, ProcLimit: "pid_max 4096 in the PID namespace",
		Protected: []string{filepath.Join(cfg.Root, ".git/config")}, Hidden: []string{"/home/u/.ssh"}}, nil, nil
}

func noNamespaces(workspace.Config) (sandbox.Report, error, error) {
	return sandbox.Report{Landlock: 7}, errors.New("namespaces unavailable: operation not permitted"), nil
}

// TestSandboxLayers: each layer is reported as it is, never claimed when off.
func TestSandboxLayers(t *testing.T) {
	e := newEnv(t)
	rs := e.run(Options{Flags: e.script()})
	ns, nw := find(t, rs, "sandbox namespaces"), find(t, rs, "sandbox network")
	if ns.Status != OK || !strings.Contains(ns.Detail, "private /proc") || !strings.Contains(ns.Detail, ".git/config") || !strings.Contains(ns.Detail, "pid_max") || !strings.Contains(ns.Detail, "1 credential stores hidden") {
		t.Errorf("namespaces: %+v", ns)
	}
	if nw.Status != OK || !strings.Contains(nw.Detail, "denied") || !strings.Contains(nw.Detail, "ask") {
		t.Errorf("network: %+v", nw)
	}
	rs = e.run(Options{Flags: e.script(), Sandbox: noNamespaces})
	ns, nw = find(t, rs, "sandbox namespaces"), find(t, rs, "sandbox network")
	if ns.Status != Warn || !strings.Contains(ns.Detail, "not permitted") || !strings.Contains(ns.Detail, "no private /proc") || !strings.Contains(ns.Fix, "unprivileged_userns") {
		t.Errorf("no namespaces: %+v", ns)
	}
	if nw.Status != Warn || !strings.Contains(nw.Detail, "Landlock") {
		t.Errorf("network without namespaces: %+v", nw)
	}
	e.writeProjectConfig("workspace:\n  sandbox: required\n  network: allow\n")
	rs = e.run(Options{Flags: e.script(), Sandbox: noNamespaces})
	if ns := find(t, rs, "sandbox namespaces"); ns.Status != Fail || !strings.Contains(ns.Fix, "required") {
		t.Errorf("required without namespaces: %+v", ns)
	}
	if nw := find(t, rs, "sandbox network"); !strings.Contains(nw.Detail, "allowed") {
		t.Errorf("network allow: %+v", nw)
	}
}

func find(t *testing.T, rs []Result, check string) Result {
	t.Helper()
	for _, r := range rs {
		if r.Check == check {
			return r
		}
	}
	t.Fatalf("no %q check in %+v", check, rs)
	return Result{}
}

func model(m string) []config.Override {
	return []config.Override{{Key: "model", Value: m, Flag: "--model"}}
}

func TestAllGood(t *testing.T) {
	e := newEnv(t)
	rs := e.run(Options{Flags: e.script()})
	if Failed(rs) {
		t.Fatalf("failed: %+v", rs)
	}
	var b bytes.Buffer
	if err := Write(&b, rs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"✓ config", "✓ model", "scripted, no network", "✓ database", "created on the first run", "Landlock ABI v4", "\nready\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	if _, err := os.Stat(filepath.Join(e.vars["LOVIA_HOME"], "lovia.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("doctor created the database: %v", err)
	}
}

func TestFailures(t *testing.T) {
	const secret = "sk-test-SECRET-1234567890"
	tests := []struct {
		name  string
		setup func(t *testing.T, e *env) Options
		check string
		want  Status
		// detail and fix must contain these.
		detail, fix string
	}{
		{
			name:  "missing key for the configured model",
			setup: func(t *testing.T, e *env) Options { return Options{Flags: model("openai:gpt-4.1")} },
			check: "OPENAI_API_KEY", want: Fail, detail: "not set, and the model openai:gpt-4.1 needs it", fix: "export OPENAI_API_KEY=",
		},
		{
			name: "key set is reported, never printed",
			setup: func(t *testing.T, e *env) Options {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					// An echoing server: the key must still not reach the report.
					w.Write([]byte(r.Header.Get("x-api-key")))
				}))
				t.Cleanup(srv.Close)
				e.vars["ANTHROPIC_API_KEY"] = secret
				e.vars["ANTHROPIC_BASE_URL"] = srv.URL
				return Options{Flags: model("anthropic:claude-sonnet-4-5"), HTTPClient: srv.Client()}
			},
			check: "ANTHROPIC_API_KEY", want: OK, detail: "set",
		},
		{
			name: "model server refuses connections",
			setup: func(t *testing.T, e *env) Options {
				srv := httptest.NewServer(http.NotFoundHandler())
				srv.Close() // nothing listens there any more
				e.vars["OPENAI_API_KEY"] = secret
				e.vars["OPENAI_BASE_URL"] = srv.URL + "/v1"
				return Options{Flags: model("openai:gpt-4.1"), HTTPClient: &http.Client{}}
			},
			check: "model", want: Fail, detail: "cannot reach", fix: "OPENAI_BASE_URL",
		},
		{
			name: "model server does not answer in time",
			setup: func(t *testing.T, e *env) Options {
				release := make(chan struct{})
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					select {
					case <-r.Context().Done():
					case <-release:
					}
				}))
				t.Cleanup(srv.Close)
				t.Cleanup(func() { close(release) })
				e.vars["ANTHROPIC_API_KEY"] = secret
				e.vars["ANTHROPIC_BASE_URL"] = srv.URL
				return Options{Flags: model("anthropic:claude-sonnet-4-5"), HTTPClient: srv.Client(), Timeout: 150 * time.Millisecond}
			},
			check: "model", want: Fail, detail: "no answer within 150ms", fix: "check the network",
		},
		{
			name: "model server rejects the key",
			setup: func(t *testing.T, e *env) Options {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					http.Error(w, `{"error":{"message":"bad key `+r.Header.Get("Authorization")+`"}}`, http.StatusUnauthorized)
				}))
				t.Cleanup(srv.Close)
				e.vars["OPENAI_API_KEY"] = secret
				e.vars["OPENAI_BASE_URL"] = srv.URL + "/v1"
				return Options{Flags: model("openai:gpt-4.1"), HTTPClient: srv.Client()}
			},
			check: "model", want: Warn, detail: "refused the key (HTTP 401)", fix: "check the API key",
		},
		{
			name:  "no model at all",
			setup: func(t *testing.T, e *env) Options { return Options{} },
			check: "model", want: Fail, detail: "no model configured", fix: "--model",
		},
		{
			name:  "unknown provider",
			setup: func(t *testing.T, e *env) Options { return Options{Flags: model("gemini:pro")} },
			check: "model", want: Fail, detail: `unknown provider "gemini"`, fix: "openai, openai-responses, anthropic, ollama or script",
		},
		{
			name: "script file missing",
			setup: func(t *testing.T, e *env) Options {
				return Options{Flags: model("script:" + filepath.Join(e.dir, "nope.yaml"))}
			},
			check: "model", want: Fail, detail: "nope.yaml",
		},
		{
			name: "corrupt database",
			setup: func(t *testing.T, e *env) Options {
				p := filepath.Join(e.vars["LOVIA_HOME"], "lovia.db")
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, bytes.Repeat([]byte("not a database "), 400), 0o644); err != nil {
					t.Fatal(err)
				}
				return Options{Flags: e.script()}
			},
			check: "database", want: Fail, detail: "lovia.db", fix: "aside",
		},
		{
			name: "bad config file",
			setup: func(t *testing.T, e *env) Options {
				e.writeProjectConfig("model: [unclosed\n")
				return Options{}
			},
			check: "config", want: Fail, detail: "config.yaml",
		},
		{
			name: "unknown config key",
			setup: func(t *testing.T, e *env) Options {
				e.writeProjectConfig("modle: openai:gpt-4.1\n")
				return Options{}
			},
			check: "config", want: Fail, detail: "modle",
		},
		{
			name: "unknown preset",
			setup: func(t *testing.T, e *env) Options {
				return Options{Flags: append(e.script(), config.Override{Key: "preset", Value: "nosuch", Flag: "--preset"})}
			},
			check: "preset", want: Fail, detail: "nosuch",
		},
		{
			name: "MCP server fails to start",
			setup: func(t *testing.T, e *env) Options {
				e.writeProjectConfig("mcp:\n  servers:\n    broken:\n      command: " + filepath.Join(e.dir, "no-such-server") + "\n      startup_timeout: 5s\n")
				return Options{Flags: e.script()}
			},
			check: "mcp broken", want: Fail, detail: "no-such-server", fix: "mcp.servers.broken",
		},
		{
			name: "MCP server exits at once",
			setup: func(t *testing.T, e *env) Options {
				e.writeProjectConfig("mcp:\n  servers:\n    quitter:\n      command: sh\n      args: [-c, 'echo boom >&2; exit 3']\n      startup_timeout: 5s\n")
				return Options{Flags: e.script()}
			},
			check: "mcp quitter", want: Fail, fix: "run the command by hand",
		},
		{
			name: "Landlock unavailable",
			setup: func(t *testing.T, e *env) Options {
				return Options{Flags: e.script(), Landlock: func() (int, error) { return 0, errors.New("function not implemented") }}
			},
			check: "sandbox", want: Warn, detail: "policy checks only", fix: "Landlock",
		},
		{
			name: "Landlock required but unavailable",
			setup: func(t *testing.T, e *env) Options {
				e.writeProjectConfig("workspace:\n  sandbox: required\n")
				return Options{Flags: e.script(), Landlock: func() (int, error) { return 0, errors.New("function not implemented") }}
			},
			check: "sandbox", want: Fail, fix: "required",
		},
		{
			name: "bad skill",
			setup: func(t *testing.T, e *env) Options {
				p := filepath.Join(e.dir, ".lovia", "skills", "broken", "SKILL.md")
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("---\nname: broken\ndescription: [oops\n---\nbody\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				return Options{Flags: e.script()}
			},
			check: "skills", want: Warn, detail: "SKILL.md",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			rs := e.run(tt.setup(t, e))
			var got Result
			for _, r := range rs {
				// A check may have several lines (skills); take the worst.
				if r.Check == tt.check && (got.Check == "" || r.Status == tt.want) {
					got = r
				}
			}
			if got.Check == "" {
				t.Fatalf("no %q check in %+v", tt.check, rs)
			}
			if got.Status != tt.want {
				t.Fatalf("%s: status %s, want %s (%+v)", tt.check, got.Status, tt.want, got)
			}
			if !strings.Contains(got.Detail, tt.detail) {
				t.Errorf("%s detail %q lacks %q", tt.check, got.Detail, tt.detail)
			}
			if !strings.Contains(got.Fix, tt.fix) {
				t.Errorf("%s fix %q lacks %q", tt.check, got.Fix, tt.fix)
			}
			if tt.want == Fail && got.Fix == "" {
				t.Errorf("%s failed without a fix", tt.check)
			}
			if Failed(rs) != (tt.want == Fail) && !strings.HasPrefix(tt.check, "OPENAI") {
				// The failure is the only one (a missing key also fails the probe).
				var other []string
				for _, r := range rs {
					if r.Status == Fail {
						other = append(other, r.Check)
					}
				}
				t.Errorf("Failed = %v (failing: %v), want %v", Failed(rs), other, tt.want == Fail)
			}
			var b, j bytes.Buffer
			if err := Write(&b, rs); err != nil {
				t.Fatal(err)
			}
			if err := WriteJSON(&j, rs); err != nil {
				t.Fatal(err)
			}
			for _, out := range []string{b.String(), j.String()} {
				if strings.Contains(out, secret) {
					t.Fatalf("the API key leaked into the report:\n%s", out)
				}
			}
			if tt.want == Fail && !strings.Contains(b.String(), "✗ "+tt.check) {
				t.Errorf("report lacks the ✗ line:\n%s", b.String())
			}
		})
	}
}

func TestReachableSendsKeyInHeader(t *testing.T) {
	e := newEnv(t)
	var gotPath, gotKey, gotVersion string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath, gotKey, gotVersion = r.URL.Path, r.Header.Get("x-api-key"), r.Header.Get("anthropic-version")
		w.Write([]byte(`{"data":[]}`))
	}))
	defer srv.Close()
	e.vars["ANTHROPIC_API_KEY"] = "k-123"
	e.vars["ANTHROPIC_BASE_URL"] = srv.URL
	rs := e.run(Options{Flags: model("claude:claude-sonnet-4-5"), HTTPClient: srv.Client()})
	r := find(t, rs, "model")
	if r.Status != OK || !strings.Contains(r.Detail, "HTTP 200") {
		t.Fatalf("model check %+v", r)
	}
	if gotPath != "/v1/models" || gotKey != "k-123" || gotVersion == "" {
		t.Errorf("probe: path %q key %q version %q", gotPath, gotKey, gotVersion)
	}
}

func TestHealthyDatabase(t *testing.T) {
	e := newEnv(t)
	p := filepath.Join(e.vars["LOVIA_HOME"], "lovia.db")
	db, err := sqlite.Open(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	r := find(t, e.run(Options{Flags: e.script()}), "database")
	if r.Status != OK || !strings.Contains(r.Detail, "integrity check passed") {
		t.Fatalf("database check %+v", r)
	}
}

func TestSandboxOff(t *testing.T) {
	e := newEnv(t)
	e.writeProjectConfig("workspace:\n  sandbox: \"off\"\n")
	r := find(t, e.run(Options{Flags: e.script()}), "sandbox")
	if r.Status != Warn || !strings.Contains(r.Detail, "off in config") {
		t.Fatalf("sandbox check %+v", r)
	}
}

func TestMCPServerStartsAndListsTools(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the MCP test server")
	}
	bin := filepath.Join(t.TempDir(), "testserver")
	if out, err := exec.Command("go", "build", "-o", bin, "../plugin/mcp/testserver").CombinedOutput(); err != nil {
		t.Fatalf("building the MCP test server: %v\n%s", err, out)
	}
	e := newEnv(t)
	e.writeProjectConfig("mcp:\n  servers:\n    test:\n      command: " + bin + "\n      startup_timeout: 20s\n    broken:\n      command: " + filepath.Join(e.dir, "missing") + "\n")
	rs := e.run(Options{Flags: e.script()})
	ok := find(t, rs, "mcp test")
	if ok.Status != OK || !strings.Contains(ok.Detail, "started") || !strings.Contains(ok.Detail, " tools") || strings.Contains(ok.Detail, " 0 tools") {
		t.Errorf("working server: %+v", ok)
	}
	if bad := find(t, rs, "mcp broken"); bad.Status != Fail {
		t.Errorf("broken server: %+v", bad)
	}
	if !Failed(rs) {
		t.Error("a failing server must fail the check-up")
	}
}

// TestUntrustedFolder: doctor warns about project settings ignored until the folder
// is trusted, and names them.
func TestUntrustedFolder(t *testing.T) {
	e := newEnv(t)
	e.writeProjectConfig("hooks:\n  - {event: session_start, command: \"true\"}\n")
	opts := Options{Flags: e.script()}
	opts.Cwd, opts.Getenv = e.dir, e.getenv
	opts.HTTPClient, opts.Landlock = offline, func() (int, error) { return 4, nil }
	r := find(t, Run(context.Background(), opts), "trust")
	if r.Status != Warn || !strings.Contains(r.Detail, "hooks[0]") || !strings.Contains(r.Fix, "lovia trust") {
		t.Errorf("trust check %+v", r)
	}
}
