package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Default request timeouts (SPEC §2): a server that accepts the connection and then
// says nothing must not hold a run forever.
const (
	DefaultConnectTimeout    = 30 * time.Second
	DefaultHeaderTimeout     = 120 * time.Second // reasoning models can be slow to start
	DefaultStreamIdleTimeout = 300 * time.Second
)

// Timeouts bound each model request. Zero fields mean no limit for that phase.
type Timeouts struct {
	// Connect bounds dialing (TCP and TLS handshake).
	Connect time.Duration
	// Header bounds the wait from sending the request to the response headers.
	Header time.Duration
	// StreamIdle bounds the wait between two stream events (a blank line ends an
	// SSE event, so a server trickling bytes that never complete an event trips it).
	StreamIdle time.Duration
}

// DefaultTimeouts returns the defaults.
func DefaultTimeouts() Timeouts {
	return Timeouts{Connect: DefaultConnectTimeout, Header: DefaultHeaderTimeout, StreamIdle: DefaultStreamIdleTimeout}
}

// TimeoutError is a request that ran out of one of its Timeouts. It is a transport
// failure: retryable, and the partial output of the attempt is discarded.
type TimeoutError struct {
	// Phase is "connect", "headers" or "stream".
	Phase  string
	Limit  time.Duration
	Server string // scheme://host of the request
}

// TimeoutSetting names the config key and environment variable of a phase.
func TimeoutSetting(phase string) (key, env string) {
	switch phase {
	case "connect":
		return "provider.connect_timeout", "LOVIA_CONNECT_TIMEOUT"
	case "headers":
		return "provider.header_timeout", "LOVIA_HEADER_TIMEOUT"
	}
	return "provider.stream_idle_timeout", "LOVIA_STREAM_IDLE_TIMEOUT"
}

func (e *TimeoutError) Error() string {
	what := map[string]string{
		"connect": "could not connect to %s within %s",
		"headers": "%s sent no response within %s",
		"stream":  "%s sent nothing for %s in the middle of the reply",
	}[e.Phase]
	if what == "" {
		what = "%s timed out after %s"
	}
	key, env := TimeoutSetting(e.Phase)
	return fmt.Sprintf(what, e.Server, e.Limit) + fmt.Sprintf(" (%s, %s)", key, env)
}

// Timeout marks the error as a timeout for net.Error-style checks.
func (e *TimeoutError) Timeout() bool { return true }

// AsTimeout returns the *TimeoutError in err's chain, if any.
func AsTimeout(err error) (*TimeoutError, bool) {
	var te *TimeoutError
	ok := errors.As(err, &te)
	return te, ok
}

// Client returns an HTTP client that enforces t around base's transport (nil base:
// a clone of http.DefaultTransport). The client itself has no overall timeout: a
// long reply that keeps streaming is fine.
func (t Timeouts) Client(base *http.Client) *http.Client {
	out := &http.Client{}
	var rt http.RoundTripper = http.DefaultTransport
	if base != nil {
		*out = *base
		if base.Transport != nil {
			rt = base.Transport
		}
	}
	if ht, ok := rt.(*http.Transport); ok && t.Connect > 0 {
		ht = ht.Clone()
		d := &net.Dialer{Timeout: t.Connect, KeepAlive: 30 * time.Second}
		limit := t.Connect
		ht.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			var ne net.Error
			if err != nil && ctx.Err() == nil && errors.As(err, &ne) && ne.Timeout() {
				return nil, &TimeoutError{Phase: "connect", Limit: limit, Server: addr}
			}
			return c, err
		}
		if ht.TLSHandshakeTimeout == 0 || ht.TLSHandshakeTimeout > t.Connect {
			ht.TLSHandshakeTimeout = t.Connect
		}
		rt = ht
	}
	out.Transport = &timeoutTransport{base: rt, t: t}
	return out
}

type timeoutTransport struct {
	base http.RoundTripper
	t    Timeouts
}

func (tt *timeoutTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	server := req.URL.Scheme + "://" + req.URL.Host
	var hdr *time.Timer
	if tt.t.Header > 0 {
		hdr = time.AfterFunc(tt.t.Header, func() {
			cancel(&TimeoutError{Phase: "headers", Limit: tt.t.Header, Server: server})
		})
	}
	resp, err := tt.base.RoundTrip(req.WithContext(ctx))
	if hdr != nil {
		hdr.Stop()
	}
	if err != nil {
		cause := context.Cause(ctx)
		cancel(nil)
		if te, ok := AsTimeout(cause); ok {
			return nil, te
		}
		return nil, err
	}
	if context.Cause(ctx) != nil {
		// The header timer fired just as the headers arrived: the body is dead.
		resp.Body.Close()
		te, ok := AsTimeout(context.Cause(ctx))
		cancel(nil)
		if ok {
			return nil, te
		}
		return nil, ctx.Err()
	}
	b := &idleBody{rc: resp.Body, ctx: ctx, cancel: cancel}
	if tt.t.StreamIdle > 0 {
		limit := tt.t.StreamIdle
		b.timer = time.AfterFunc(limit, func() {
			cancel(&TimeoutError{Phase: "stream", Limit: limit, Server: server})
		})
		b.limit = limit
	}
	resp.Body = b
	return resp, nil
}

// idleBody restarts the idle timer at every completed stream event and turns a read
// cut by the timer into the *TimeoutError.
type idleBody struct {
	rc     io.ReadCloser
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer
	limit  time.Duration

	mu     sync.Mutex
	prevNL bool // the last byte read (ignoring \r) was a newline
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 && b.timer != nil {
		b.mu.Lock()
		boundary := false
		for _, c := range p[:n] {
			switch c {
			case '\n':
				if b.prevNL {
					boundary = true
				}
				b.prevNL = true
			case '\r':
			default:
				b.prevNL = false
			}
		}
		b.mu.Unlock()
		if boundary && b.ctx.Err() == nil {
			b.timer.Reset(b.limit)
		}
	}
	if err != nil && err != io.EOF {
		if te, ok := AsTimeout(context.Cause(b.ctx)); ok {
			return n, te
		}
	}
	return n, err
}

func (b *idleBody) Close() error {
	if b.timer != nil {
		b.timer.Stop()
	}
	err := b.rc.Close()
	b.cancel(nil)
	return err
}
