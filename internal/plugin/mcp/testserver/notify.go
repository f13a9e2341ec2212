package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tools for progress, cancellation, logging and task support:
//   - progress: sends steps progress notifications (when the call has a token), then
//     answers with the token's JSON type; with hold, only once release is called (a
//     client handles notifications apart from responses, so a test that needs every
//     notification first confirms it got them);
//   - release: lets a held progress call answer;
//   - block: sends one progress notification, then waits until the call is
//     cancelled (notifications/cancelled) and counts it;
//   - cancelled: answers how many block calls were cancelled, waiting up to 10s for
//     the first (the cancellation is a notification and may trail the next call);
//   - log: sends a notifications/message with the text at level warning;
//   - task_only / task_optional: listed with execution.taskSupport "required" /
//     "optional" (stdio; the SDK's Tool has no such field, so taskTransport adds it).

type progressIn struct {
	Steps   int    `json:"steps"`
	Message string `json:"message,omitempty"`
	Hold    bool   `json:"hold,omitempty"`
}

type logIn struct {
	Text string `json:"text"`
}

type cancels struct {
	mu    sync.Mutex
	n     int
	first chan struct{}
}

func addNotifyTools(s *mcp.Server) {
	cs := &cancels{first: make(chan struct{})}
	release := make(chan struct{}, 1)
	mcp.AddTool(s, &mcp.Tool{Name: "release", Description: "Let a held progress call answer"}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		select {
		case release <- struct{}{}:
		default:
		}
		return text("released"), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "progress", Description: "Report progress in steps"}, func(ctx context.Context, req *mcp.CallToolRequest, in progressIn) (*mcp.CallToolResult, any, error) {
		tok := req.Params.GetProgressToken()
		if tok == nil {
			return text("no progress token"), nil, nil
		}
		for i := 1; i <= in.Steps; i++ {
			msg := in.Message
			if msg == "" {
				msg = fmt.Sprintf("Step %d of %d", i, in.Steps)
			}
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(in.Steps), Message: msg}); err != nil {
				return nil, nil, err
			}
		}
		if in.Hold {
			select {
			case <-release:
			case <-time.After(30 * time.Second):
				return text("never released"), nil, nil
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		}
		return text(fmt.Sprintf("progress done (token %T)", tok)), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "block", Description: "Block until cancelled"}, func(ctx context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
		if tok := req.Params.GetProgressToken(); tok != nil {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Message: "waiting to be cancelled"})
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Minute):
			return text("never cancelled"), nil, nil
		}
		cs.mu.Lock()
		cs.n++
		if cs.n == 1 {
			close(cs.first)
		}
		cs.mu.Unlock()
		return nil, nil, ctx.Err()
	})
	mcp.AddTool(s, &mcp.Tool{Name: "cancelled", Description: "How many block calls were cancelled"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
		select {
		case <-cs.first:
		case <-time.After(10 * time.Second):
		case <-ctx.Done():
		}
		cs.mu.Lock()
		defer cs.mu.Unlock()
		return text(fmt.Sprintf("cancelled: %d", cs.n)), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "log", Description: "Send a log message"}, func(ctx context.Context, req *mcp.CallToolRequest, in logIn) (*mcp.CallToolResult, any, error) {
		if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "warning", Logger: "testserver", Data: in.Text}); err != nil {
			return nil, nil, err
		}
		return text("logged"), nil, nil
	})
	for _, name := range []string{"task_only", "task_optional"} {
		mcp.AddTool(s, &mcp.Tool{Name: name, Description: "A tool with task support " + name}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			return text(name + " ran"), nil, nil
		})
	}
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// taskSupport is what taskTransport adds to the listed tools.
var taskSupport = map[string]string{"task_only": "required", "task_optional": "optional"}

// taskTransport adds execution.taskSupport to the tools in tools/list results.
type taskTransport struct{ mcp.Transport }

func (t taskTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return taskConn{c}, nil
}

type taskConn struct{ mcp.Connection }

func (c taskConn) Write(ctx context.Context, m jsonrpc.Message) error {
	if r, ok := m.(*jsonrpc.Response); ok && bytes.Contains(r.Result, []byte(`"tools"`)) {
		var res map[string]json.RawMessage
		var tools []map[string]any
		if json.Unmarshal(r.Result, &res) == nil && json.Unmarshal(res["tools"], &tools) == nil {
			for _, tl := range tools {
				if ts, ok := taskSupport[fmt.Sprint(tl["name"])]; ok {
					tl["execution"] = map[string]any{"taskSupport": ts}
				}
			}
			res["tools"], _ = json.Marshal(tools)
			b, _ := json.Marshal(res)
			cp := *r
			cp.Result = b
			m = &cp
		}
	}
	return c.Connection.Write(ctx, m)
}
