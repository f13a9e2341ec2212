package mcp

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A tool that changes its server's lists (a tool added, a resource registered) sends
// list_changed before its result. The SDK hands notifications to their handlers
// asynchronously, so the result could overtake them; the connection counts the
// notifications as they are read, and a call returns only once the lists they
// announce are listed again (or settleTimeout passed). The next run, in this or a
// later process (the lists are cached on disk), sees the new lists.
//
// Only stdio connections are watched: the SDK's streamable HTTP connection learns
// the session's state through an unexported method a wrapper would hide. Over HTTP
// the lists are listed again as soon as the notification is handled, without the
// call waiting for it.

// settleTimeout bounds how long a call waits for lists its server said changed.
const settleTimeout = 5 * time.Second

// relisting counts list_changed notifications read but not yet listed again.
type relisting struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to 0
}

func (r *relisting) add() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == 0 {
		r.idle = make(chan struct{})
	}
	r.n++
}

func (r *relisting) done() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == 0 {
		return
	}
	r.n--
	if r.n == 0 {
		close(r.idle)
	}
}

// wait returns when nothing is being listed again, or at settleTimeout or ctx's end.
func (r *relisting) wait(ctx context.Context) {
	r.mu.Lock()
	if r.n == 0 {
		r.mu.Unlock()
		return
	}
	idle := r.idle
	r.mu.Unlock()
	t := time.NewTimer(settleTimeout)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	case <-ctx.Done():
	}
}

// settle waits for the lists the server announced as changed (see above).
func (s *server) settle(ctx context.Context) {
	s.lists.mu.Lock()
	r := s.lists.relisting
	s.lists.mu.Unlock()
	if r != nil {
		r.wait(ctx)
	}
}

// isListChanged reports the notifications relist handles.
func isListChanged(m jsonrpc.Message) bool {
	r, ok := m.(*jsonrpc.Request)
	if !ok || r.IsCall() {
		return false
	}
	switch r.Method {
	case "notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed":
		return true
	}
	return false
}

// watch wraps a transport so list_changed notifications are counted as read.
// It uses the counter clientOptions made for this connection.
func (s *server) watch(t sdk.Transport) sdk.Transport {
	s.lists.mu.Lock()
	defer s.lists.mu.Unlock()
	if s.lists.relisting == nil {
		s.lists.relisting = &relisting{}
	}
	return watchTransport{inner: t, r: s.lists.relisting}
}

type watchTransport struct {
	inner sdk.Transport
	r     *relisting
}

func (t watchTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &watchConn{Connection: c, r: t.r}, nil
}

type watchConn struct {
	sdk.Connection
	r *relisting
}

func (c *watchConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err == nil && isListChanged(m) {
		c.r.add()
	}
	return m, err
}
