package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/tool"
)

// notifyState routes a server's notifications: progress to the call that asked for
// it, log messages to lovia's own log (never to the model or the screen).
type notifyState struct {
	scrub func(string) string

	mu       sync.Mutex
	next     uint64
	progress map[string]tool.ProgressFunc
	// Log rate limit: at most maxLogsPerWindow messages per logWindow; the rest are
	// counted and the count logged when the next window opens.
	window  time.Time
	logged  int
	dropped int
	// total is what this server's messages added to the log in this process; past
	// maxServerLogBytes the rest are dropped (lovia's log rotates only at start).
	total    int
	exceeded bool
}

const (
	maxLogsPerWindow = 50
	logWindow        = time.Second
	// maxLogData caps one server log message in lovia's log.
	maxLogData = 2048
	// maxServerLogBytes bounds what one server may add to lovia's log per process.
	maxServerLogBytes = 1 << 20
)

// notifyOptions adds the notification handlers to a client's options.
func (s *server) notifyOptions(o *sdk.ClientOptions) {
	o.ProgressNotificationHandler = s.onProgress
	o.LoggingMessageHandler = s.onLog
}

// trackProgress registers the call's progress reporter (from ctx) under a fresh
// token for CallToolParams; release forgets it, after which late notifications for
// the token are ignored.
func (s *server) trackProgress(ctx context.Context) (token string, release func()) {
	n := &s.notify
	n.mu.Lock()
	defer n.mu.Unlock()
	n.next++
	token = "lovia-" + strconv.FormatUint(n.next, 10)
	if n.progress == nil {
		n.progress = map[string]tool.ProgressFunc{}
	}
	n.progress[token] = func(p event.Progress) { tool.ReportProgress(ctx, p) }
	return token, func() {
		n.mu.Lock()
		delete(n.progress, token)
		n.mu.Unlock()
	}
}

func (s *server) onProgress(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	if req == nil || req.Params == nil {
		return
	}
	token, ok := req.Params.ProgressToken.(string)
	if !ok {
		return // not one of ours (lovia's tokens are strings)
	}
	n := &s.notify
	n.mu.Lock()
	report := n.progress[token]
	n.mu.Unlock()
	if report == nil {
		return // the call ended or was cancelled
	}
	msg := req.Params.Message
	if n.scrub != nil {
		msg = n.scrub(msg)
	}
	report(event.Progress{Progress: req.Params.Progress, Total: req.Params.Total, Message: msg})
}

// onLog writes a server's notifications/message to lovia's log: scrubbed, capped
// and rate-limited, since a server may send anything as often as it likes.
func (s *server) onLog(ctx context.Context, req *sdk.LoggingMessageRequest) {
	if req == nil || req.Params == nil {
		return
	}
	n := &s.notify
	now := time.Now()
	n.mu.Lock()
	var dropped int
	if now.Sub(n.window) >= logWindow {
		dropped, n.dropped = n.dropped, 0
		n.window, n.logged = now, 0
	}
	n.logged++
	if n.total >= maxServerLogBytes {
		first := !n.exceeded
		n.exceeded = true
		n.mu.Unlock()
		if first {
			s.logger.Warn("mcp server log messages dropped from now on: the server sent more than the limit", "limit_bytes", maxServerLogBytes)
		}
		return
	}
	if n.logged > maxLogsPerWindow {
		n.dropped++
		n.mu.Unlock()
		return
	}
	n.mu.Unlock()
	if dropped > 0 {
		s.logger.Warn("mcp server log messages dropped (rate limit)", "dropped", dropped)
	}
	p := req.Params
	var data string
	if str, ok := p.Data.(string); ok {
		data = str
	} else if b, err := json.Marshal(p.Data); err == nil {
		data = string(b)
	} else {
		data = fmt.Sprint(p.Data)
	}
	data = capText(data, maxLogData)
	if n.scrub != nil {
		data = n.scrub(data)
	}
	n.mu.Lock()
	n.total += len(data)
	n.mu.Unlock()
	attrs := []any{"level", string(p.Level), "data", data}
	if p.Logger != "" {
		attrs = append(attrs, "logger", capText(p.Logger, 100))
	}
	s.logger.Log(context.WithoutCancel(ctx), logLevel(p.Level), "mcp server log", attrs...)
}

// logLevel maps an MCP (syslog) level to slog's.
func logLevel(l sdk.LoggingLevel) slog.Level {
	switch l {
	case "debug":
		return slog.LevelDebug
	case "info", "notice":
		return slog.LevelInfo
	case "warning":
		return slog.LevelWarn
	default: // error, critical, alert, emergency, or anything unknown
		return slog.LevelError
	}
}

// logLevelWanted is the least level of the server log messages lovia asks for.
const logLevelWanted sdk.LoggingLevel = "info"

// setLogLevel asks a server that offers logging for messages from "info" up, so its
// notifications/message reach lovia's log (some servers send none until asked). It
// runs off the start path; a server that refuses is simply not asked again.
func (s *server) setLogLevel(ctx context.Context, session *sdk.ClientSession) {
	res := session.InitializeResult()
	if res == nil || res.Capabilities == nil || res.Capabilities.Logging == nil || res.ProtocolVersion >= "2026-07-28" {
		return // no logging, or the level goes with each request (call)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := session.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: logLevelWanted}); err != nil {
		s.logger.Debug("mcp server refused logging/setLevel", "err", err)
	}
}
