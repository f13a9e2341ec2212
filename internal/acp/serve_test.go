package acp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/lovia-dev/lovia/internal/app"
	"github.com/lovia-dev/lovia/internal/config"
)

// client is the editor side of an in-process connection. It answers permission
// requests from answers in order; once they run out it holds each request open
// (signalling blocked) until the agent withdraws it.
type client struct {
	mu      sync.Mutex
	updates []sdk.SessionUpdate
	asked   int
	answers []string
	seen    chan sdk.SessionUpdate
	blocked chan struct{}
}

func newClient(answers ...string) *client {
	return &client{answers: answers, seen: make(chan sdk.SessionUpdate, 10000), blocked: make(chan struct{}, 100)}
}

func (c *client) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	c.updates = append(c.updates, n.Update)
	c.mu.Unlock()
	c.seen <- n.Update
	return nil
}

func (c *client) RequestPermission(ctx context.Context, _ sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.asked++
	var answer string
	if len(c.answers) > 0 {
		answer, c.answers = c.answers[0], c.answers[1:]
	}
	c.mu.Unlock()
	if answer == "" {
		c.blocked <- struct{}{}
		<-ctx.Done()
		return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{Outcome: "cancelled"}}}, nil
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Selected: &sdk.RequestPermissionOutcomeSelected{OptionId: sdk.PermissionOptionId(answer)}}}, nil
}

var errUnsupported = errors.New("unsupported")

func (c *client) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, errUnsupported
}
func (c *client) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, errUnsupported
}
func (c *client) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, errUnsupported
}
func (c *client) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, errUnsupported
}
func (c *client) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, errUnsupported
}
func (c *client) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, errUnsupported
}
func (c *client) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, errUnsupported
}

// serveScript: a command that asks, then (for later prompts) a command that asks
// and waits for an answer the client holds back.
const serveScript = `
scope: session
turns:
  - text: "Running it."
    tool_calls: [{name: shell, args: {command: "touch made.txt"}}]
  - text: "Done."
  - text: "Waiting."
    tool_calls: [{name: shell, args: {command: "touch wait.txt"}}]
  - text: "Waiting."
    tool_calls: [{name: shell, args: {command: "touch wait.txt"}}]
  - text: "Gave up."
`

// serve starts Serve in-process on pipes with an in-memory store and the scripted
// model; it returns the client connection and a function that disconnects and waits
// for Serve to return.
func serve(t *testing.T, c *client) (*sdk.ClientSideConnection, string, func() error) {
	t.Helper()
	base := t.TempDir()
	dir, home := filepath.Join(base, "work"), filepath.Join(base, "home")
	for _, d := range []string{dir, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(home, "script.yaml")
	if err := os.WriteFile(script, []byte(serveScript), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"LOVIA_HOME": filepath.Join(home, "data"), "LOVIA_SANDBOX": "off"}
	opts := Options{Base: app.Options{Getenv: func(k string) string { return env[k] }, Memory: true, LogWriter: io.Discard,
		Flags: []config.Override{{Key: "model", Value: "script:" + script, Flag: "-m"}}}}
	inR, inW := io.Pipe()   // client -> agent
	outR, outW := io.Pipe() // agent -> client
	done := make(chan error, 1)
	go func() {
		done <- Serve(context.Background(), inR, outW, opts)
		outW.Close()
	}()
	gate := &gatedReader{r: outR, ready: make(chan struct{})}
	conn := sdk.NewClientSideConnection(c, inW, gate)
	conn.SetLogger(slog.New(slog.DiscardHandler))
	close(gate.ready)
	stop := func() error {
		inW.Close()
		return <-done
	}
	return conn, dir, stop
}

func TestServePromptApproveCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := newClient(optAllow)
	conn, dir, stop := serve(t, c)

	if _, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: 7}); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: "relative/dir", McpServers: []sdk.McpServer{}}); err == nil {
		t.Error("a relative cwd was accepted")
	}
	if _, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: "ses_nope", Prompt: []sdk.ContentBlock{sdk.TextBlock("hi")}}); err == nil {
		t.Error("a prompt to an unknown session was accepted")
	}
	ns, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	pr, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("make it")}})
	if err != nil || pr.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %q, %v", pr.StopReason, err)
	}
	c.mu.Lock()
	asked := c.asked
	c.mu.Unlock()
	if asked != 1 {
		t.Errorf("%d permission requests, want 1", asked)
	}
	if _, err := os.Stat(filepath.Join(dir, "made.txt")); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}

	prompt := func(text string) <-chan sdk.PromptResponse {
		res := make(chan sdk.PromptResponse, 1)
		go func() {
			r, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
			if err != nil {
				t.Errorf("prompt %q: %v", text, err)
			}
			res <- r
		}()
		return res
	}
	first := prompt("wait")
	<-c.blocked
	// A newer prompt supersedes the running one, which ends cancelled; then
	// session/cancel ends the newer one.
	second := prompt("again")
	if r := <-first; r.StopReason != sdk.StopReasonCancelled {
		t.Errorf("superseded prompt ended with %q", r.StopReason)
	}
	<-c.blocked // the newer prompt's run asks in turn
	if err := conn.Cancel(ctx, sdk.CancelNotification{SessionId: ns.SessionId}); err != nil {
		t.Fatal(err)
	}
	if r := <-second; r.StopReason != sdk.StopReasonCancelled {
		t.Errorf("cancelled prompt ended with %q", r.StopReason)
	}
	if err := stop(); err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// A client that goes away mid-prompt ends the run (interrupted, resumable) and Serve
// returns.
func TestServeDisconnectMidPrompt(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := newClient(optReject)
	conn, dir, stop := serve(t, c)
	if _, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: 1}); err != nil {
		t.Fatal(err)
	}
	ns, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	// The rejected command is reported and the run goes on to "Done.".
	pr, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("make it")}})
	if err != nil || pr.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %q, %v", pr.StopReason, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "made.txt")); err == nil {
		t.Error("the rejected command ran")
	}
	go func() {
		_, _ = conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("wait")}})
	}()
	<-c.blocked // a permission request is pending when the editor goes away
	if err := stop(); err != nil {
		t.Errorf("Serve: %v", err)
	}
}
