package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/workspace"
)

// stderrTail is how much of a stdio server's stderr is kept for error messages.
const stderrTail = 2048

// tailBuffer keeps the last stderrTail bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > stderrTail {
		b.buf = append([]byte(nil), b.buf[len(b.buf)-stderrTail:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.TrimSpace(string(b.buf))
}

// conn is one live session with a server.
type conn struct {
	session *sdk.ClientSession
	toolsMu sync.Mutex
	tools   []*sdk.Tool    // under toolsMu once published (tools/list_changed replaces it)
	proc    *procTransport // stdio only
	// end cancels every HTTP request of the connection (HTTP only).
	end     context.CancelFunc
	done    chan struct{}
	exitErr error // set before done is closed
	// tasks knows the server's tools that need task support; skipped are those left
	// out of tools for it (see tasks.go).
	tasks   *taskTools
	skipped []SkippedTool
}

func (c *conn) alive() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// server manages the connection to one configured server. Calls are concurrent; a
// (re)start is serialized by mu.
type server struct {
	name   string
	cfg    ServerConfig
	logger *slog.Logger
	stderr tailBuffer
	// cacheFile keeps the tool list between processes ("" = none).
	cacheFile string
	notify    notifyState

	mu      sync.Mutex
	cur     *conn
	lastErr error
	// deaths counts connections lost after a successful start (for notices).
	deaths int

	// ask: the tool calls in flight, which answer the server's sampling and
	// elicitation requests (ask.go); resolve and samplingMax come from Config.
	ask         callers
	resolve     func(context.Context, string) (provider.Provider, error)
	samplingMax int
	// scrub hides the user's secrets in what a sampling error tells the server.
	scrub func(string) string

	// detected is the transport an earlier start found for a url: server without
	// transport: ("sse" or "" = streamable HTTP; see remote.go).
	detected string
	// auth is the server's OAuth login (nil = none; see remote_oauth.go).
	auth *oauthClient

	// lists are the server's prompts and resources, and its root (lists.go).
	lists listState
}

func newServer(name string, cfg ServerConfig, cacheDir string, logger *slog.Logger) *server {
	s := &server{name: name, cfg: cfg, logger: logger.With("mcp_server", name)}
	if cacheDir != "" {
		s.cacheFile = filepath.Join(cacheDir, cacheKey(name, cfg)+".json")
	}
	return s
}

// cacheKey names a server's cached tool list after its whole configuration, so a
// changed command, argument or environment lists the tools afresh.
func cacheKey(name string, cfg ServerConfig) string {
	b, _ := json.Marshal(struct {
		Name string
		Cfg  ServerConfig
	}{name, cfg})
	sum := sha256.Sum256(b)
	return name + "-" + hex.EncodeToString(sum[:8])
}

// maxCacheBytes bounds a cached tool list (a server's schemas are small).
const maxCacheBytes = 4 << 20

// cachedTools returns the tool list a previous start recorded, nil when there is none.
func (s *server) cachedTools() []*sdk.Tool {
	if s.cacheFile == "" {
		return nil
	}
	f, err := os.Open(s.cacheFile)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxCacheBytes+1))
	if err != nil || len(data) > maxCacheBytes {
		return nil
	}
	var tools []*sdk.Tool
	if json.Unmarshal(data, &tools) != nil {
		return nil
	}
	return tools
}

// saveCache records the tool list for the next process (best effort, 0600).
func (s *server) saveCache(tools []*sdk.Tool) {
	if s.cacheFile == "" {
		return
	}
	data, err := json.Marshal(tools)
	if err != nil || len(data) > maxCacheBytes {
		return
	}
	if err := os.MkdirAll(filepath.Dir(s.cacheFile), 0o700); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.cacheFile), ".tools-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), s.cacheFile) != nil {
		_ = os.Remove(tmp.Name())
		s.logger.Debug("mcp tool cache not written", "file", s.cacheFile)
	}
}

// ensure returns a live connection, starting the server if needed.
func (s *server) ensure(ctx context.Context) (*conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil && s.cur.alive() {
		return s.cur, nil
	}
	if s.cur != nil {
		s.cur = nil
	}
	c, err := s.start(ctx)
	s.lastErr = err
	if err != nil {
		return nil, err
	}
	s.cur = c
	return c, nil
}

// snapshot returns the current connection (nil if none) and the last start error.
func (s *server) snapshot() (*conn, error, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur, s.lastErr, s.deaths
}

func (s *server) start(ctx context.Context) (*conn, error) {
	timeout := s.cfg.startupTimeout()
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "lovia", Version: "1"}, s.clientOptions())
	s.addRoots(client) // lists.go
	life, end := context.WithCancel(context.Background())
	c := &conn{done: make(chan struct{}), end: end, tasks: &taskTools{}}
	var transport sdk.Transport
	var rt remoteTransports
	if s.cfg.URL != "" {
		rt = s.remote(life, c.tasks)
	} else {
		cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
		cmd.Dir = s.cfg.Dir
		// Never lovia's whole environment: a server (and its get-env tool) sees the
		// allow-list plus what its config names explicitly.
		var extra []string
		for k, v := range s.cfg.Env {
			extra = append(extra, k+"="+os.ExpandEnv(v))
		}
		cmd.Env = workspace.MinimalEnv(extra...)
		cmd.Stderr = &s.stderr
		setProcessGroup(cmd)
		c.proc = &procTransport{inner: &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}}
		transport = s.watch(c.proc) // settle.go: count list_changed as read
	}
	transport = c.tasks.wrap(transport)
	started := time.Now()
	// A server that hangs while starting is killed at the deadline, so Connect returns
	// promptly instead of waiting for a graceful shutdown that will not come.
	stopKill := context.AfterFunc(sctx, func() {
		s.kill(c)
		end() // HTTP: abort requests the SDK sent with contexts of its own
	})
	var session *sdk.ClientSession
	var err error
	if s.cfg.URL != "" {
		session, err = s.connectRemote(sctx, client, rt)
	} else {
		session, err = client.Connect(sctx, transport, nil)
	}
	if err != nil {
		end()
		return nil, s.startError(sctx, err, timeout)
	}
	var tools []*sdk.Tool
	for t, err := range session.Tools(sctx, nil) {
		if err != nil {
			_ = session.Close()
			end()
			return nil, s.startError(sctx, fmt.Errorf("listing tools: %w", err), timeout)
		}
		tools = append(tools, t)
	}
	tools, c.skipped = c.tasks.split(tools)
	s.fetchLists(sctx, session, true, true) // lists.go
	if !stopKill() {
		// The deadline hit just after listing finished; the process is being killed.
		_ = session.Close()
		end()
		return nil, s.startError(sctx, sctx.Err(), timeout)
	}
	c.session, c.tools = session, tools
	go s.setLogLevel(life, session)
	go func() {
		err := session.Wait()
		end()
		c.exitErr = err
		close(c.done)
		s.mu.Lock()
		if s.cur == c {
			s.deaths++
		}
		s.mu.Unlock()
		s.logger.Debug("mcp server connection ended", "err", err)
	}()
	s.logger.Debug("mcp server started", "tools", len(tools), "took", time.Since(started))
	s.saveCache(tools)
	return c, nil
}

func (s *server) startError(sctx context.Context, err error, timeout time.Duration) error {
	if le := s.loginError(); le != nil {
		// The SDK's wrapping adds nothing the user can act on.
		return le
	}
	msg := fmt.Sprintf("MCP server %q (%s) failed to start: %v", s.name, s.cfg, err)
	if errors.Is(sctx.Err(), context.DeadlineExceeded) {
		msg = fmt.Sprintf("MCP server %q (%s) did not start within %s (startup_timeout)", s.name, s.cfg, timeout)
	}
	if tail := s.stderr.String(); tail != "" {
		msg += "; its stderr: " + lastLines(tail, 5)
	}
	return errors.New(msg)
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// kill stops a stdio server that never finished starting (the SDK reaps it when it
// closes the failed connection).
func (s *server) kill(c *conn) {
	if c.proc != nil {
		if pid := int(c.proc.pid.Load()); pid > 0 {
			killGroup(pid)
		}
	}
}

// procTransport records the stdio server's pid once started, for kill (reading
// exec.Cmd.Process from another goroutine would race with Start).
type procTransport struct {
	inner *sdk.CommandTransport
	pid   atomic.Int64
}

func (t *procTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err == nil {
		t.pid.Store(int64(t.inner.Command.Process.Pid))
	}
	return c, err
}

// close ends the current connection (closing stdin, then SIGTERM after 2s).
func (s *server) close() error {
	// list_changed handlers (lists.go) end with the session; none writes the cache
	// after close returns.
	defer s.lists.bg.Wait()
	s.mu.Lock()
	c := s.cur
	s.cur = nil
	s.mu.Unlock()
	if c == nil || c.session == nil {
		return nil
	}
	// An HTTP server that does not answer the closing request must not hold up exit.
	t := time.AfterFunc(3*time.Second, c.end)
	err := c.session.Close()
	t.Stop()
	c.end()
	<-c.done
	return err
}

// drop forgets a connection that failed at the transport level so the next call
// reconnects (an HTTP server that went away does not end the session by itself).
func (s *server) drop(c *conn) <-chan struct{} {
	s.mu.Lock()
	if s.cur == c {
		s.cur = nil
		s.deaths++
	}
	s.mu.Unlock()
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		_ = c.session.Close()
		c.end()
	}()
	return closed
}

// headerTransport adds the configured headers and ties every request to the
// connection's lifetime: the SDK sends some requests with contexts of its own, and a
// server that never answers must not keep them open after the connection is given up.
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
	life    context.Context
	tasks   *taskTools // observes tool lists (nil: none)
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(r.Context())
	stop := context.AfterFunc(t.life, cancel)
	r = r.Clone(ctx)
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		stop()
		cancel()
		return nil, err
	}
	body := resp.Body
	if t.tasks != nil {
		body = t.tasks.observeBody(body, resp.Header.Get("Content-Type"))
	}
	resp.Body = &releasingBody{ReadCloser: body, release: func() { stop(); cancel() }}
	return resp, nil
}

type releasingBody struct {
	io.ReadCloser
	once    sync.Once
	release func()
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.release)
	return err
}

func expandAll(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = os.ExpandEnv(v)
	}
	return out
}
