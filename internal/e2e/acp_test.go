package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

// acpScript: the first prompt plans, reads and edits hello.txt, asks twice to run a
// command and ends; the second prompt (scope: session continues the turns) streams
// a line, then waits long enough to be cancelled.
const acpScript = `
scope: session
turns:
  - reasoning: "Plan first."
    text: "Let me look at the file."
    tool_calls:
      - name: todo_write
        args: {todos: [{content: "edit hello.txt", status: in_progress}, {content: "touch files", status: pending}]}
      - name: read_file
        args: {path: hello.txt}
  - text: "Editing it."
    tool_calls:
      - name: edit_file
        args: {path: hello.txt, old_string: "hello", new_string: "hello, world"}
  - text: "Now a command."
    tool_calls:
      - name: shell
        args: {command: "touch allowed.txt"}
  - text: "And another."
    tool_calls:
      - name: shell
        args: {command: "touch rejected.txt"}
  - text: "All done."
  - text: "Still working on it."
    tool_calls:
      - name: read_file
        args: {path: hello.txt}
  - delay: 10m
    text: "never streamed"
`

// acpClient is the editor side: it records every update and answers permission
// requests with the queued option ids.
type acpClient struct {
	mu      sync.Mutex
	updates []sdk.SessionNotification
	asked   []sdk.RequestPermissionRequest
	answers []string
	seen    chan sdk.SessionNotification
}

func newACPClient(answers ...string) *acpClient {
	return &acpClient{answers: answers, seen: make(chan sdk.SessionNotification, 100000)}
}

func (c *acpClient) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	c.updates = append(c.updates, n)
	c.mu.Unlock()
	c.seen <- n
	return nil
}

func (c *acpClient) RequestPermission(_ context.Context, r sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked = append(c.asked, r)
	if len(c.answers) == 0 {
		return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{Outcome: "cancelled"}}}, nil
	}
	id := c.answers[0]
	c.answers = c.answers[1:]
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Selected: &sdk.RequestPermissionOutcomeSelected{OptionId: sdk.PermissionOptionId(id), Outcome: "selected"}}}, nil
}

func (c *acpClient) snapshot() ([]sdk.SessionNotification, []sdk.RequestPermissionRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]sdk.SessionNotification(nil), c.updates...), append([]sdk.RequestPermissionRequest(nil), c.asked...)
}

var errNoFS = errors.New("lovia uses its own workspace; the client offers no file system or terminal")

func (c *acpClient) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, errNoFS
}
func (c *acpClient) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, errNoFS
}
func (c *acpClient) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, errNoFS
}
func (c *acpClient) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, errNoFS
}
func (c *acpClient) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, errNoFS
}
func (c *acpClient) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, errNoFS
}
func (c *acpClient) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, errNoFS
}

// acpProc is a running `lovia acp` with the client connected over its pipes.
type acpProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	conn   *sdk.ClientSideConnection
	stderr *bytes.Buffer
	// raw keeps every byte lovia wrote on stdout: it must all be protocol.
	raw *bytes.Buffer
}

func startACP(t *testing.T, e *env, c *acpClient, args ...string) *acpProc {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"acp"}, args...)...)
	cmd.Dir = e.dir
	cmd.Env = e.vars
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &acpProc{t: t, cmd: cmd, stdin: stdin, stderr: &bytes.Buffer{}, raw: &bytes.Buffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The connection reads its logger unsynchronized: hold its input until it is set.
	ready := make(chan struct{})
	p.conn = sdk.NewClientSideConnection(c, stdin, gated{io.TeeReader(stdout, &lockedBuffer{b: p.raw}), ready})
	p.conn.SetLogger(slog.New(slog.DiscardHandler))
	close(ready)
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	})
	return p
}

type gated struct {
	r     io.Reader
	ready chan struct{}
}

func (g gated) Read(p []byte) (int, error) {
	<-g.ready
	return g.r.Read(p)
}

type lockedBuffer struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// stop closes lovia's stdin (the editor went away) and checks it exits cleanly
// having written nothing but JSON-RPC on stdout.
func (p *acpProc) stop() {
	p.t.Helper()
	p.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			p.t.Fatalf("lovia acp exited with %v\nstderr:\n%s", err, p.stderr)
		}
	case <-time.After(60 * time.Second):
		p.t.Fatalf("lovia acp did not exit after stdin closed\nstderr:\n%s", p.stderr)
	}
	<-p.conn.Done()
	for _, line := range strings.Split(strings.TrimSpace(p.raw.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil || m["jsonrpc"] != "2.0" {
			p.t.Fatalf("stdout carried a line that is not JSON-RPC: %q", line)
		}
	}
}

func (p *acpProc) initialize(ctx context.Context) sdk.InitializeResponse {
	p.t.Helper()
	res, err := p.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber,
		ClientInfo: &sdk.Implementation{Name: "lovia-e2e", Version: "1"}})
	if err != nil {
		p.t.Fatalf("initialize: %v\nstderr:\n%s", err, p.stderr)
	}
	return res
}

// waitUpdate waits for the first update (from now on) that ok accepts.
func waitUpdate(t *testing.T, c *acpClient, ok func(sdk.SessionNotification) bool) {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case n := <-c.seen:
			if ok(n) {
				return
			}
		case <-timeout:
			t.Fatal("timed out waiting for a session update")
		}
	}
}

// acpText joins the agent_message_chunk texts of updates.
func acpText(ups []sdk.SessionNotification, kind string) string {
	var b strings.Builder
	for _, u := range ups {
		switch {
		case kind == "agent" && u.Update.AgentMessageChunk != nil && u.Update.AgentMessageChunk.Content.Text != nil:
			b.WriteString(u.Update.AgentMessageChunk.Content.Text.Text)
		case kind == "thought" && u.Update.AgentThoughtChunk != nil && u.Update.AgentThoughtChunk.Content.Text != nil:
			b.WriteString(u.Update.AgentThoughtChunk.Content.Text.Text)
		case kind == "user" && u.Update.UserMessageChunk != nil && u.Update.UserMessageChunk.Content.Text != nil:
			b.WriteString(u.Update.UserMessageChunk.Content.Text.Text)
		}
	}
	return b.String()
}

// acpCalls indexes tool_call starts by id and collects each call's updates.
func acpCalls(ups []sdk.SessionNotification) (starts map[string]*sdk.SessionUpdateToolCall, updates map[string][]*sdk.SessionToolCallUpdate, order []string) {
	starts = map[string]*sdk.SessionUpdateToolCall{}
	updates = map[string][]*sdk.SessionToolCallUpdate{}
	for _, u := range ups {
		if tc := u.Update.ToolCall; tc != nil {
			starts[string(tc.ToolCallId)] = tc
			order = append(order, string(tc.ToolCallId))
		}
		if tu := u.Update.ToolCallUpdate; tu != nil {
			updates[string(tu.ToolCallId)] = append(updates[string(tu.ToolCallId)], tu)
		}
	}
	return starts, updates, order
}

func lastStatus(us []*sdk.SessionToolCallUpdate) sdk.ToolCallStatus {
	var st sdk.ToolCallStatus
	for _, u := range us {
		if u.Status != nil {
			st = *u.Status
		}
	}
	return st
}

// findCall returns the id of the first call whose title contains s.
func findCall(t *testing.T, starts map[string]*sdk.SessionUpdateToolCall, order []string, s string) string {
	t.Helper()
	for _, id := range order {
		if strings.Contains(starts[id].Title, s) {
			return id
		}
	}
	t.Fatalf("no tool call titled %q among %d calls", s, len(order))
	return ""
}

func TestACPEditorSession(t *testing.T) {
	e := newEnv(t)
	e.write("hello.txt", "hello\n")
	script := filepath.Join(e.home, "acp.yaml")
	if err := os.WriteFile(script, []byte(acpScript), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// allow the first command, reject the second.
	c := newACPClient("allow", "reject")
	p := startACP(t, e, c, "-m", "script:"+script)
	init := p.initialize(ctx)
	if init.ProtocolVersion != sdk.ProtocolVersionNumber || !init.AgentCapabilities.LoadSession {
		t.Fatalf("initialize: protocol %d, loadSession %v", init.ProtocolVersion, init.AgentCapabilities.LoadSession)
	}
	if init.AgentCapabilities.PromptCapabilities.Audio {
		t.Error("initialize offers audio prompts, which lovia does not take")
	}

	ns, err := p.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: e.dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatalf("session/new: %v\nstderr:\n%s", err, p.stderr)
	}
	if !reSes.MatchString(string(ns.SessionId)) {
		t.Fatalf("session id %q is not a lovia session id", ns.SessionId)
	}
	if ns.Modes == nil || ns.Modes.CurrentModeId != "coding" || len(ns.Modes.AvailableModes) != 3 {
		t.Fatalf("modes: %+v", ns.Modes)
	}

	pr, err := p.conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("please edit hello.txt")}})
	if err != nil {
		t.Fatalf("session/prompt: %v\nstderr:\n%s", err, p.stderr)
	}
	if pr.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q, want end_turn", pr.StopReason)
	}
	run1 := runIDOf(t, pr.Meta)
	ups, asked := c.snapshot()

	if got := acpText(ups, "agent"); !strings.Contains(got, "Let me look at the file.") || !strings.HasSuffix(got, "All done.") {
		t.Errorf("agent message chunks: %q", got)
	}
	if got := acpText(ups, "thought"); got != "Plan first." {
		t.Errorf("thought chunks: %q", got)
	}
	starts, updates, order := acpCalls(ups)

	read := findCall(t, starts, order, "Read hello.txt")
	if starts[read].Kind != sdk.ToolKindRead || len(starts[read].Locations) != 1 || starts[read].Locations[0].Path != filepath.Join(e.dir, "hello.txt") {
		t.Errorf("read call: kind %q, locations %+v", starts[read].Kind, starts[read].Locations)
	}
	edit := findCall(t, starts, order, "Edit hello.txt")
	if starts[edit].Kind != sdk.ToolKindEdit {
		t.Errorf("edit kind %q", starts[edit].Kind)
	}
	if lastStatus(updates[edit]) != sdk.ToolCallStatusCompleted {
		t.Fatalf("edit status %q", lastStatus(updates[edit]))
	}
	var diff *sdk.ToolCallContentDiff
	for _, u := range updates[edit] {
		for _, ct := range u.Content {
			if ct.Diff != nil {
				diff = ct.Diff
			}
		}
	}
	if diff == nil || diff.Path != filepath.Join(e.dir, "hello.txt") || diff.OldText == nil || *diff.OldText != "hello\n" || diff.NewText != "hello, world\n" {
		old := "<nil>"
		if diff != nil && diff.OldText != nil {
			old = *diff.OldText
		}
		t.Fatalf("edit tool_call_update has no diff hello -> hello, world: %+v (old %q)", diff, old)
	}

	plan := false
	for _, u := range ups {
		if pl := u.Update.Plan; pl != nil && len(pl.Entries) == 2 && pl.Entries[0].Content == "edit hello.txt" && pl.Entries[0].Status == sdk.PlanEntryStatusInProgress {
			plan = true
		}
	}
	if !plan {
		t.Error("no plan update from todo_write")
	}

	// Two commands asked; the first was allowed and ran, the second rejected.
	if len(asked) != 2 {
		t.Fatalf("%d permission requests, want 2", len(asked))
	}
	for _, a := range asked {
		if a.ToolCall.Kind == nil || *a.ToolCall.Kind != sdk.ToolKindExecute || len(a.Options) != 3 {
			t.Errorf("permission request: kind %v, %d options", a.ToolCall.Kind, len(a.Options))
		}
		kinds := map[sdk.PermissionOptionKind]bool{}
		for _, o := range a.Options {
			kinds[o.Kind] = true
		}
		if !kinds[sdk.PermissionOptionKindAllowOnce] || !kinds[sdk.PermissionOptionKindAllowAlways] || !kinds[sdk.PermissionOptionKindRejectOnce] {
			t.Errorf("permission options: %+v", a.Options)
		}
	}
	allowed := findCall(t, starts, order, "touch allowed.txt")
	rejected := findCall(t, starts, order, "touch rejected.txt")
	if string(asked[0].ToolCall.ToolCallId) != allowed || string(asked[1].ToolCall.ToolCallId) != rejected {
		t.Errorf("permission requests for %s, %s; want %s, %s", asked[0].ToolCall.ToolCallId, asked[1].ToolCall.ToolCallId, allowed, rejected)
	}
	if lastStatus(updates[allowed]) != sdk.ToolCallStatusCompleted || lastStatus(updates[rejected]) != sdk.ToolCallStatusFailed {
		t.Errorf("command statuses: allowed %q, rejected %q", lastStatus(updates[allowed]), lastStatus(updates[rejected]))
	}
	if starts[allowed].Kind != sdk.ToolKindExecute {
		t.Errorf("shell kind %q", starts[allowed].Kind)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "allowed.txt")); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "rejected.txt")); err == nil {
		t.Error("the rejected command ran")
	}
	if b, _ := os.ReadFile(filepath.Join(e.dir, "hello.txt")); string(b) != "hello, world\n" {
		t.Errorf("hello.txt = %q", b)
	}

	// Cancel mid-stream: once the second prompt's text arrives, cancel; the prompt
	// ends with stop reason cancelled.
	type promptResult struct {
		r   sdk.PromptResponse
		err error
	}
	done := make(chan promptResult, 1)
	go func() {
		r, err := p.conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("keep going")}})
		done <- promptResult{r, err}
	}()
	waitUpdate(t, c, func(n sdk.SessionNotification) bool {
		ch := n.Update.AgentMessageChunk
		return ch != nil && ch.Content.Text != nil && strings.Contains(ch.Content.Text.Text, "Still")
	})
	if err := p.conn.Cancel(ctx, sdk.CancelNotification{SessionId: ns.SessionId}); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.err != nil || res.r.StopReason != sdk.StopReasonCancelled {
		t.Fatalf("cancelled prompt: %q, %v", res.r.StopReason, res.err)
	}
	run2 := runIDOf(t, res.r.Meta)
	p.stop()

	// Both runs are ordinary lovia runs.
	r := e.run(nil, "runs")
	if r.code != 0 || !strings.Contains(r.stdout, run1) || !strings.Contains(r.stdout, run2) {
		t.Fatalf("lovia runs (%d) does not list %s and %s:\n%s%s", r.code, run1, run2, r.stdout, r.stderr)
	}

	// A new editor process loads the session: it is replayed as updates.
	c2 := newACPClient()
	p2 := startACP(t, e, c2, "-m", "script:"+script)
	p2.initialize(ctx)
	if _, err := p2.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: ns.SessionId, Cwd: e.dir, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatalf("session/load: %v\nstderr:\n%s", err, p2.stderr)
	}
	ups2, _ := c2.snapshot()
	if got := acpText(ups2, "user"); !strings.Contains(got, "please edit hello.txt") {
		t.Errorf("replayed user messages: %q", got)
	}
	if got := acpText(ups2, "agent"); !strings.Contains(got, "All done.") {
		t.Errorf("replayed agent messages: %q", got)
	}
	starts2, updates2, order2 := acpCalls(ups2)
	edit2 := findCall(t, starts2, order2, "Edit hello.txt")
	var diff2 *sdk.ToolCallContentDiff
	for _, u := range updates2[edit2] {
		for _, ct := range u.Content {
			if ct.Diff != nil {
				diff2 = ct.Diff
			}
		}
	}
	if diff2 == nil || diff2.NewText != "hello, world" {
		t.Errorf("replayed edit has no diff: %+v", diff2)
	}
	rej2 := findCall(t, starts2, order2, "touch rejected.txt")
	if lastStatus(updates2[rej2]) != sdk.ToolCallStatusFailed {
		t.Errorf("replayed rejected command status %q", lastStatus(updates2[rej2]))
	}
	p2.stop()
}

func runIDOf(t *testing.T, meta map[string]any) string {
	t.Helper()
	l, _ := meta["lovia"].(map[string]any)
	id, _ := l["runId"].(string)
	if !reRun.MatchString(id) {
		t.Fatalf("prompt response names no lovia run: %v", meta)
	}
	return id
}

// TestACPEditorMCPServerAndModes: an MCP server the editor passes joins the run (its
// call asks; "allow for this session" lets the next call through unasked), and
// session/set_mode readonly makes the next prompt's edit a denial nobody is asked
// about.
func TestACPEditorMCPServerAndModes(t *testing.T) {
	e := newEnv(t)
	ts := mcpTestServer(t)
	script := filepath.Join(e.home, "acp.yaml")
	body := `
scope: session
turns:
  - tool_calls: [{name: editor-tools__env, args: {name: GREETING}}]
  - tool_calls: [{name: editor-tools__env, args: {name: GREETING}}]
  - text: "echoed"
  - tool_calls: [{name: write_file, args: {path: new.txt, content: "x"}}]
  - text: "could not write"
`
	if err := os.WriteFile(script, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := newACPClient("allow_always")
	p := startACP(t, e, c, "-m", "script:"+script)
	p.initialize(ctx)
	ns, err := p.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: e.dir, McpServers: []sdk.McpServer{
		{Stdio: &sdk.McpServerStdio{Name: "editor tools", Command: ts, Args: []string{}, Env: []sdk.EnvVariable{{Name: "GREETING", Value: "hi from the editor"}}}},
	}})
	if err != nil {
		t.Fatalf("session/new: %v\nstderr:\n%s", err, p.stderr)
	}
	pr, err := p.conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("greet")}})
	if err != nil || pr.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %q %v\nstderr:\n%s", pr.StopReason, err, p.stderr)
	}
	ups, asked := c.snapshot()
	if len(asked) != 1 {
		t.Fatalf("%d permission requests, want 1 (the second call is allowed by the session rule)", len(asked))
	}
	starts, updates, order := acpCalls(ups)
	if len(order) != 2 {
		t.Fatalf("%d tool calls, want 2", len(order))
	}
	for _, id := range order {
		if lastStatus(updates[id]) != sdk.ToolCallStatusCompleted {
			t.Fatalf("%s: status %q", starts[id].Title, lastStatus(updates[id]))
		}
		out := ""
		for _, u := range updates[id] {
			for _, ct := range u.Content {
				if ct.Content != nil && ct.Content.Content.Text != nil {
					out += ct.Content.Content.Text.Text
				}
			}
		}
		if !strings.Contains(out, "hi from the editor") {
			t.Errorf("MCP call output %q lacks the editor's env", out)
		}
	}

	if _, err := p.conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: ns.SessionId, ModeId: "readonly"}); err != nil {
		t.Fatalf("set_mode: %v", err)
	}
	if _, err := p.conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: ns.SessionId, ModeId: "yolo"}); err == nil {
		t.Error("an unknown mode was accepted")
	}
	pr, err = p.conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("write")}})
	if err != nil || pr.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("readonly prompt: %q %v", pr.StopReason, err)
	}
	ups, asked = c.snapshot()
	if len(asked) != 1 {
		t.Errorf("readonly put %d more requests to the editor; a policy denial is not a question", len(asked)-1)
	}
	starts, updates, order = acpCalls(ups)
	w := findCall(t, starts, order, "Write new.txt")
	if lastStatus(updates[w]) != sdk.ToolCallStatusFailed {
		t.Errorf("write under readonly: %q", lastStatus(updates[w]))
	}
	if _, err := os.Stat(filepath.Join(e.dir, "new.txt")); err == nil {
		t.Error("readonly wrote a file")
	}
	p.stop()
}
