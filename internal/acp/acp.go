// Package acp serves lovia as an Agent Client Protocol agent (JSON-RPC 2.0 over
// stdio, ACP protocol version 1 as implemented by github.com/coder/acp-go-sdk, whose
// schema is 0.13.0): editors such as Zed, JetBrains IDEs and Neovim drive lovia
// runs and answer its approvals.
//
// An ACP session is a lovia session: each prompt is an ordinary lovia run (the App
// builds it, the runtime checkpoints it, `lovia runs` lists it). Approvals are not
// decided here: every `ask` becomes session/request_permission, so the editor's user
// is the approver.
package acp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/lovia-dev/lovia/internal/app"
	"github.com/lovia-dev/lovia/internal/config"
	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/plugin/mcp"
	"github.com/lovia-dev/lovia/internal/runtime"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// ProtocolVersion is the ACP protocol version lovia speaks.
const ProtocolVersion = sdk.ProtocolVersionNumber

// Options configure a server.
type Options struct {
	// Base are the App options of the command line (flags, --trust, -v); a session's
	// App is built from them with the session's cwd, mode and MCP servers.
	Base app.Options
	// NewApp builds an App (app.New; tests may wrap it).
	NewApp func(context.Context, app.Options) (*app.App, error)
	// Log receives diagnostics (the log file; never stdout, which carries the
	// protocol).
	Log *slog.Logger
}

// Serve speaks ACP on in/out until the client disconnects or ctx ends. Running
// prompts are cancelled (their runs stay resumable) and every session's App is
// closed before it returns.
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	if opts.NewApp == nil {
		opts.NewApp = app.New
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	sctx, cancel := context.WithCancel(ctx)
	s := &server{opts: opts, ctx: sctx, sessions: map[string]*session{}}
	// The connection's goroutines start at once and read its logger unsynchronized:
	// hold its input until the logger is set.
	gate := &gatedReader{r: in, ready: make(chan struct{})}
	s.conn = sdk.NewAgentSideConnection(s, out, gate)
	s.conn.SetLogger(opts.Log)
	close(gate.ready)
	select {
	case <-s.conn.Done():
	case <-ctx.Done():
	}
	s.mu.Lock()
	s.closing = true // no prompt starts after this
	s.mu.Unlock()
	cancel()
	s.runs.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []error
	for _, sess := range s.sessions {
		all = append(all, sess.close())
	}
	return errors.Join(all...)
}

// gatedReader blocks reads until ready is closed.
type gatedReader struct {
	r     io.Reader
	ready chan struct{}
}

func (g *gatedReader) Read(p []byte) (int, error) {
	<-g.ready
	return g.r.Read(p)
}

type server struct {
	opts Options
	conn *sdk.AgentSideConnection
	ctx  context.Context // the server's life: runs end with it
	runs sync.WaitGroup

	mu       sync.Mutex
	sessions map[string]*session
	closing  bool
}

// enter counts a prompt in (false once Serve is ending).
func (s *server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.runs.Add(1)
	return true
}

// session is one ACP session: a lovia session id, its working directory, its MCP
// servers and one App per mode used (each App's workspace holds that mode's
// "allow always" rules for the session's life).
type session struct {
	id  string
	cwd string
	mcp map[string]mcp.ServerConfig

	// turn holds one token while a prompt runs: prompts of a session take turns.
	turn chan struct{}

	mu   sync.Mutex
	mode string
	apps map[string]*app.App
	run  *runtime.Handle // the running prompt's, nil when idle
	// stop cancels the latest prompt (gen tells whose it is): session/cancel and a
	// newer prompt use it.
	stop context.CancelFunc
	gen  int
}

var _ sdk.Agent = (*server)(nil)
var _ sdk.AgentLoader = (*server)(nil)

func (s *server) Initialize(_ context.Context, req sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	s.opts.Log.Info("acp initialize", "client_version", int(req.ProtocolVersion))
	return sdk.InitializeResponse{
		// Only version 1 exists; a client asking for another gets ours and decides.
		ProtocolVersion: ProtocolVersion,
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession:        true,
			PromptCapabilities: sdk.PromptCapabilities{Image: true, EmbeddedContext: true},
			McpCapabilities:    sdk.McpCapabilities{Http: true, Sse: true},
		},
		AgentInfo: &sdk.Implementation{Name: "lovia", Title: sdk.Ptr("lovia"), Version: app.Version()},
		// Provider keys come from the environment (or lovia's config): nothing to
		// authenticate here.
		AuthMethods: []sdk.AuthMethod{},
	}, nil
}

func (s *server) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}

func (s *server) NewSession(ctx context.Context, req sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	sess, err := s.open(ctx, newSessionID(), req.Cwd, req.McpServers)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	s.mu.Lock()
	s.sessions[sess.id] = sess
	s.mu.Unlock()
	s.opts.Log.Info("acp session", "session", sess.id, "cwd", sess.cwd, "mode", sess.mode)
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(sess.id), Modes: modeState(sess.mode)}, nil
}

func (s *server) LoadSession(ctx context.Context, req sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	id := string(req.SessionId)
	s.mu.Lock()
	old := s.sessions[id]
	s.mu.Unlock()
	if old != nil && old.running() != nil {
		return sdk.LoadSessionResponse{}, sdk.NewInvalidRequest(map[string]any{"error": "session " + id + " is running a prompt"})
	}
	sess, err := s.open(ctx, id, req.Cwd, req.McpServers)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	a := sess.apps[sess.mode]
	entries, err := a.Session.Load(ctx, id)
	if err == nil && len(entries) == 0 {
		err = fmt.Errorf("no session %s (sessions are stored after their first prompt; list them with `lovia sessions`)", id)
	}
	if err != nil {
		sess.close()
		return sdk.LoadSessionResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	if err := replay(ctx, s.conn, id, a.Config.Cwd, entries); err != nil {
		sess.close()
		return sdk.LoadSessionResponse{}, err
	}
	s.mu.Lock()
	if old != nil {
		old.close()
	}
	s.sessions[id] = sess
	s.mu.Unlock()
	s.opts.Log.Info("acp session loaded", "session", id, "entries", len(entries))
	return sdk.LoadSessionResponse{Modes: modeState(sess.mode)}, nil
}

// open builds a session's first App (in the configured mode).
func (s *server) open(ctx context.Context, id, cwd string, servers []sdk.McpServer) (*session, error) {
	if !filepath.IsAbs(cwd) {
		return nil, sdk.NewInvalidParams(map[string]any{"error": "cwd must be an absolute path", "cwd": cwd})
	}
	if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
		return nil, sdk.NewInvalidParams(map[string]any{"error": "cwd is not a directory", "cwd": cwd})
	}
	m, err := mcpServers(servers)
	if err != nil {
		return nil, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	sess := &session{id: id, cwd: cwd, mcp: m, apps: map[string]*app.App{}, turn: make(chan struct{}, 1)}
	a, err := s.build(ctx, sess, "")
	if err != nil {
		return nil, err
	}
	sess.mode = a.CeilingPolicy()
	sess.apps[sess.mode] = a
	return sess, nil
}

// build makes the App of sess in mode ("" = the configured policy).
func (s *server) build(ctx context.Context, sess *session, mode string) (*app.App, error) {
	o := s.opts.Base
	o.Cwd = sess.cwd
	o.MCPServers = sess.mcp
	o.Flags = append([]config.Override(nil), o.Flags...)
	if mode != "" {
		o.Flags = append(o.Flags, config.Override{Key: "policy", Value: mode, Flag: "(editor mode)"})
	}
	log := s.opts.Log
	o.Warn = func(msg string) { log.Warn("acp session warning", "session", sess.id, "msg", msg) }
	a, err := s.opts.NewApp(ctx, o)
	if err != nil {
		return nil, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	if n := a.Config.Trust.Notice(); n != "" {
		log.Warn("acp project settings ignored", "session", sess.id, "notice", n)
	}
	return a, nil
}

func (s *server) SetSessionMode(ctx context.Context, req sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	sess, err := s.session(req.SessionId)
	if err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	mode := string(req.ModeId)
	if !validMode(mode) {
		return sdk.SetSessionModeResponse{}, sdk.NewInvalidParams(map[string]any{"error": "unknown mode " + mode + " (readonly, coding or trusted)"})
	}
	sess.mu.Lock()
	_, ok := sess.apps[mode]
	sess.mu.Unlock()
	if !ok {
		a, err := s.build(ctx, sess, mode)
		if err != nil {
			return sdk.SetSessionModeResponse{}, err
		}
		sess.mu.Lock()
		if _, ok := sess.apps[mode]; ok {
			a.Close()
		} else {
			sess.apps[mode] = a
		}
		sess.mu.Unlock()
	}
	sess.mu.Lock()
	sess.mode = mode
	sess.mu.Unlock()
	s.opts.Log.Info("acp mode", "session", sess.id, "mode", mode)
	return sdk.SetSessionModeResponse{}, nil
}

func (s *server) Cancel(_ context.Context, req sdk.CancelNotification) error {
	sess, err := s.session(req.SessionId)
	if err != nil {
		return nil // nothing to cancel
	}
	sess.mu.Lock()
	if sess.stop != nil {
		sess.stop()
	}
	sess.mu.Unlock()
	return nil
}

func (s *server) CloseSession(_ context.Context, req sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	s.mu.Lock()
	sess := s.sessions[string(req.SessionId)]
	delete(s.sessions, string(req.SessionId))
	s.mu.Unlock()
	if sess != nil {
		if h := sess.running(); h != nil {
			h.Cancel(nil)
			<-h.Done()
		}
		sess.close()
	}
	return sdk.CloseSessionResponse{}, nil
}

func (s *server) ListSessions(context.Context, sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	return sdk.ListSessionsResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionList)
}

func (s *server) ResumeSession(context.Context, sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	return sdk.ResumeSessionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionResume)
}

func (s *server) SetSessionConfigOption(context.Context, sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	return sdk.SetSessionConfigOptionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionSetConfigOption)
}

func (s *server) session(id sdk.SessionId) (*session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.sessions[string(id)]
	if sess == nil {
		return nil, sdk.NewInvalidParams(map[string]any{"error": "unknown session " + string(id)})
	}
	return sess, nil
}

func (sess *session) running() *runtime.Handle {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.run
}

func (sess *session) close() error {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	var all []error
	for _, a := range sess.apps {
		all = append(all, a.Close())
	}
	sess.apps = map[string]*app.App{}
	return errors.Join(all...)
}

// Prompt runs one lovia run on the prompt in the session and streams it.
func (s *server) Prompt(ctx context.Context, req sdk.PromptRequest) (sdk.PromptResponse, error) {
	sess, err := s.session(req.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	input, err := promptInput(req.Prompt)
	if err != nil {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	if !s.enter() {
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	}
	defer s.runs.Done()
	// A newer prompt supersedes a running one (as the SDK does by cancelling the
	// older request): the older ends cancelled, then this one runs.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sess.mu.Lock()
	if sess.stop != nil {
		sess.stop()
	}
	sess.gen++
	gen := sess.gen
	sess.stop = cancel
	sess.mu.Unlock()
	defer func() {
		sess.mu.Lock()
		if sess.gen == gen {
			sess.stop = nil
		}
		sess.mu.Unlock()
	}()
	select {
	case sess.turn <- struct{}{}:
	case <-ctx.Done():
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	}
	defer func() { <-sess.turn }()
	if ctx.Err() != nil || s.ctx.Err() != nil {
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	}

	sess.mu.Lock()
	a := sess.apps[sess.mode]
	if a == nil {
		sess.mu.Unlock()
		return sdk.PromptResponse{}, sdk.NewInvalidRequest(map[string]any{"error": "session is closed"})
	}
	t := newTranslator(s.conn, sess.id, a.Config.Cwd, s.opts.Log)
	// The run lives with the server, not the request: a cancel ends it through
	// Handle.Cancel so it is recorded as interrupted (resumable), like Ctrl-C.
	h, pr, err := a.Start(s.ctx, []transcript.Entry{input}, app.RunOptions{
		SessionID: sess.id,
		Approvals: runtime.ApprovalInteractive,
		Flags:     map[string]any{"frontend": "acp"},
		Plugins:   []plugin.Plugin{t.before.plugin()},
	})
	if err != nil {
		sess.mu.Unlock()
		return sdk.PromptResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	sess.run = h
	sess.mu.Unlock()
	defer func() {
		sess.mu.Lock()
		sess.run = nil
		sess.mu.Unlock()
	}()
	s.opts.Log.Info("acp run started", "session", sess.id, "run", h.RunID(), "model", pr.Settings.Model, "policy", pr.Settings.Policy)

	go func() {
		select {
		case <-ctx.Done():
			h.Cancel(nil)
		case <-h.Done():
		}
	}()
	// Updates still flow after a cancel: the client expects every pending update
	// before the response (ACP: "cancelled" comes last).
	uctx := context.WithoutCancel(ctx)
	var asks sync.WaitGroup
	for ev := range h.Events() {
		if ap := t.event(uctx, ev); ap != nil {
			asks.Add(1)
			go func() {
				defer asks.Done()
				s.ask(ctx, h, t, *ap)
			}()
		}
	}
	res, runErr := h.Result()
	asks.Wait()
	if ctx.Err() != nil {
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled, Meta: runMeta(h)}, nil
	}
	finish := ""
	if res != nil {
		finish = res.FinishReason
	}
	if sr, ok := stopReason(finish); ok {
		return sdk.PromptResponse{StopReason: sr, Meta: runMeta(h)}, nil
	}
	msg := "the run failed"
	if runErr != nil {
		msg = runErr.Error()
	}
	return sdk.PromptResponse{}, sdk.NewInternalError(map[string]any{"error": msg, "run_id": h.RunID()})
}

// runMeta names the lovia run a prompt was (for `lovia resume`, `lovia runs`).
func runMeta(h *runtime.Handle) map[string]any {
	return map[string]any{"lovia": map[string]any{"runId": h.RunID()}}
}

// Permission option ids.
const (
	optAllow       = "allow"
	optAllowAlways = "allow_always"
	optReject      = "reject"
)

// ask puts one approval to the client and answers the run with the choice. No
// answer (an error, a cancelled request) is a denial.
func (s *server) ask(ctx context.Context, h *runtime.Handle, t *translator, ap approvalReq) {
	if ap.elicitation {
		// A permission request cannot carry a form: the server hears "decline".
		if err := h.Approve(ap.callID, tool.Decision{}); err != nil {
			s.opts.Log.Debug("acp elicitation decline not delivered", "call", ap.callID, "err", err)
		}
		return
	}
	// The request is withdrawn when the run ends (a shutdown) as well as on cancel.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-h.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	resp, err := s.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{
		SessionId: sdk.SessionId(t.session),
		ToolCall:  ap.call,
		Options:   permissionOptions(ap),
	})
	d := decision(resp, err)
	if ap.question {
		d = questionDecision(ap, resp, err)
	}
	if d.Allow {
		// Before the answer: once answered, the tool may finish and report first.
		t.update(context.WithoutCancel(ctx), sdk.UpdateToolCall(sdk.ToolCallId(ap.callID), sdk.WithUpdateStatus(sdk.ToolCallStatusInProgress)))
	}
	if err := h.Approve(ap.callID, d); err != nil {
		s.opts.Log.Debug("acp approval not delivered", "call", ap.callID, "err", err)
	}
}

func newSessionID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "ses_" + hex.EncodeToString(b[:])
}
