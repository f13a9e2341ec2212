package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sort"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tools whose execution.taskSupport is "required" (MCP 2025-11 tasks) can only be
// called as tasks, which lovia does not implement: they are not offered to the
// model, and `lovia mcp list` names them with the reason. The SDK's Tool type drops
// the field, so the connection's tools/list responses are read as they arrive
// (observe) and the names recorded before the SDK hands the list over.

// taskRequiredReason is why such a tool is skipped.
const taskRequiredReason = "needs MCP task support (execution.taskSupport: required), which lovia does not implement"

// maxObserved bounds what is buffered of one HTTP body to look for tool lists.
const maxObserved = 8 << 20

// taskTools records a connection's tools that require tasks.
type taskTools struct {
	mu       sync.Mutex
	required map[string]bool
}

// observe reads one JSON-RPC message (or its result) and records the tools of a
// tools/list result by their execution.taskSupport.
func (t *taskTools) observe(msg []byte) {
	if !bytes.Contains(msg, []byte("taskSupport")) {
		return
	}
	var v struct {
		Result *struct {
			Tools []toolExecution `json:"tools"`
		} `json:"result"`
		Tools []toolExecution `json:"tools"`
	}
	if json.Unmarshal(msg, &v) != nil {
		return
	}
	tools := v.Tools
	if v.Result != nil {
		tools = v.Result.Tools
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, tl := range tools {
		if t.required == nil {
			t.required = map[string]bool{}
		}
		t.required[tl.Name] = tl.Execution != nil && tl.Execution.TaskSupport == "required"
	}
}

type toolExecution struct {
	Name      string `json:"name"`
	Execution *struct {
		TaskSupport string `json:"taskSupport"`
	} `json:"execution"`
}

// requires reports whether the server said the tool must run as a task.
func (t *taskTools) requires(name string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.required[name]
}

// SkippedTool is a server's tool lovia does not offer, with the reason.
type SkippedTool struct {
	// Name is the namespaced name the tool would have (filled by ListServers).
	Name     string `json:"name,omitempty"`
	Original string `json:"original"`
	Reason   string `json:"reason"`
}

// split separates the tools lovia can call from those it cannot.
func (t *taskTools) split(tools []*sdk.Tool) (offered []*sdk.Tool, skipped []SkippedTool) {
	for _, tl := range tools {
		if t.requires(tl.Name) {
			skipped = append(skipped, SkippedTool{Original: tl.Name, Reason: taskRequiredReason})
			continue
		}
		offered = append(offered, tl)
	}
	sort.Slice(skipped, func(i, j int) bool { return skipped[i].Original < skipped[j].Original })
	return offered, skipped
}

// wrap observes the messages of a message-level transport (stdio, legacy SSE). The
// streamable HTTP transport must not be wrapped (the SDK reaches into its
// connection); its bodies are observed by headerTransport instead (observeBody).
func (t *taskTools) wrap(inner sdk.Transport) sdk.Transport {
	if _, ok := inner.(*sdk.StreamableClientTransport); ok {
		return inner
	}
	return observingTransport{inner: inner, tasks: t}
}

type observingTransport struct {
	inner sdk.Transport
	tasks *taskTools
}

func (o observingTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := o.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &observingConn{Connection: c, tasks: o.tasks}, nil
}

type observingConn struct {
	sdk.Connection
	tasks *taskTools
}

func (c *observingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if r, ok := m.(*jsonrpc.Response); ok && len(r.Result) > 0 {
		c.tasks.observe(r.Result)
	}
	return m, err
}

// observeBody wraps an HTTP response body so each JSON-RPC message in it (a JSON
// body, or the data of each server-sent event) is observed before the SDK reads it.
func (t *taskTools) observeBody(body io.ReadCloser, contentType string) io.ReadCloser {
	return &observingBody{ReadCloser: body, sse: bytes.HasPrefix([]byte(contentType), []byte("text/event-stream")), tasks: t}
}

type observingBody struct {
	io.ReadCloser
	sse   bool
	buf   []byte
	off   bool
	tasks *taskTools
}

func (b *observingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.off {
		return n, err
	}
	b.buf = append(b.buf, p[:n]...)
	if len(b.buf) > maxObserved {
		b.off, b.buf = true, nil // too big to be a tool list worth reading
		return n, err
	}
	if b.sse {
		if bytes.IndexByte(b.buf, '\r') >= 0 {
			b.buf = bytes.ReplaceAll(b.buf, []byte("\r\n"), []byte("\n"))
		}
		for {
			i := bytes.Index(b.buf, []byte("\n\n"))
			if i < 0 {
				break
			}
			b.event(b.buf[:i])
			b.buf = b.buf[i+2:]
		}
	}
	if err != nil {
		if b.sse {
			b.event(b.buf)
		} else {
			b.tasks.observe(b.buf)
		}
		b.buf = nil
	}
	return n, err
}

// event observes the data of one server-sent event.
func (b *observingBody) event(ev []byte) {
	var data []byte
	for _, line := range bytes.Split(ev, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = append(data, bytes.TrimPrefix(d, []byte(" "))...)
			data = append(data, '\n')
		}
	}
	if len(data) > 0 {
		b.tasks.observe(data)
	}
}
