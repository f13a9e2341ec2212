// Package providertest runs fake model servers that speak the real wire formats
// (OpenAI Chat Completions, OpenAI Responses, Anthropic Messages) from scripted
// turns, and records every request they receive. Tests of any package use it to
// drive the real provider adapters (or the built binary, through EnvVars) with no
// network.
//
//	srv := providertest.NewOpenAIServer(t,
//		providertest.Turn{Calls: []providertest.Call{{ID: "c1", Name: "read_file", Args: `{"path":"a"}`}}},
//		providertest.Turn{Text: "done"})
//	reg := provider.NewRegistry(srv.Env())
//	... run ...
//	reqs := srv.Requests() // the exact JSON bodies the adapter sent
package providertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/usage"
)

// APIKey is the key the servers' environments carry; tests can assert it never
// appears in errors or logs.
const APIKey = "test-secret-key-7f3a9c"

// Wire formats.
const (
	KindOpenAI    = "openai"           // POST /v1/chat/completions
	KindResponses = "openai-responses" // POST /v1/responses
	KindAnthropic = "anthropic"        // POST /v1/messages
)

// Call is a scripted tool call.
type Call struct {
	ID, Name string
	Args     string // JSON text, streamed in Chunk-sized pieces
}

// Turn is one scripted reply. With Status set the server answers that HTTP
// error; with Raw it sends Raw verbatim as the SSE body (fixture files); else it
// encodes Reasoning, Text and Calls in the wire format, split into Chunk-byte
// deltas.
type Turn struct {
	Reasoning string
	// Signature is the Anthropic thinking signature / Responses encrypted
	// content sent with Reasoning (default derived from the turn number).
	Signature string
	Text      string
	Calls     []Call
	// Usage is reported in lovia's terms (InputTokens includes cached tokens);
	// the encoders translate it to each wire format.
	Usage usage.Usage
	// Chunk is the delta size in bytes (default 6).
	Chunk int

	Status  int         // non-zero: reply with this HTTP status and an error body
	Message string      // error message
	Code    string      // error code (OpenAI) or error type (Anthropic)
	Header  http.Header // extra reply headers, e.g. Retry-After

	// Raw is sent verbatim: the SSE body, or with Status the error body.
	Raw string
	// CutAfter > 0 drops the connection after that many body bytes.
	CutAfter int
	// Delay pauses after each event (flushed), so a client sees a live stream:
	// for tests that interrupt or watch a reply while it streams.
	Delay time.Duration
	// Stall makes the server go quiet until the client hangs up: "headers" before
	// any reply, "stream" after the first half of the stream, "trickle" sending
	// the stream one byte per TrickleEvery (default 50ms), never finishing an event
	// in time.
	Stall        string
	TrickleEvery time.Duration
}

// Request is one request the server received.
type Request struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// JSON decodes the body into a generic map for assertions.
func (r Request) JSON() map[string]any {
	m := map[string]any{}
	_ = json.Unmarshal(r.Body, &m)
	return m
}

// Server is a running fake server.
type Server struct {
	*httptest.Server
	Kind string

	mu    sync.Mutex
	turns []Turn
	reqs  []Request
	n     int
}

// NewOpenAIServer serves turns as Chat Completions streams.
func NewOpenAIServer(t testing.TB, turns ...Turn) *Server { return newServer(t, KindOpenAI, turns) }

// NewResponsesServer serves turns as Responses API streams.
func NewResponsesServer(t testing.TB, turns ...Turn) *Server {
	return newServer(t, KindResponses, turns)
}

// NewAnthropicServer serves turns as Anthropic Messages streams.
func NewAnthropicServer(t testing.TB, turns ...Turn) *Server {
	return newServer(t, KindAnthropic, turns)
}

func newServer(t testing.TB, kind string, turns []Turn) *Server {
	s := &Server{Kind: kind, turns: append([]Turn(nil), turns...)}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Push appends more scripted turns.
func (s *Server) Push(turns ...Turn) {
	s.mu.Lock()
	s.turns = append(s.turns, turns...)
	s.mu.Unlock()
}

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Remaining is the number of scripted turns not yet served.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.turns)
}

// EnvVars are the variables that point the matching lovia provider at this
// server (for a subprocess: append "K=V" pairs to cmd.Env).
func (s *Server) EnvVars() map[string]string {
	if s.Kind == KindAnthropic {
		return map[string]string{"ANTHROPIC_BASE_URL": s.URL, "ANTHROPIC_API_KEY": APIKey}
	}
	return map[string]string{"OPENAI_BASE_URL": s.URL + "/v1", "OPENAI_API_KEY": APIKey}
}

// Env is a provider.Env whose Getenv sees only EnvVars.
func (s *Server) Env() provider.Env {
	vars := s.EnvVars()
	return provider.Env{Getenv: func(k string) string { return vars[k] }, HTTPClient: s.Client()}
}

func (s *Server) path() string {
	switch s.Kind {
	case KindResponses:
		return "/v1/responses"
	case KindAnthropic:
		return "/v1/messages"
	}
	return "/v1/chat/completions"
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/api/") {
		// Ollama's own API (the ollama provider asks /api/show and /api/ps about the
		// model's context): not a model call, so no turn is spent or recorded.
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.reqs = append(s.reqs, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	var turn Turn
	ok := len(s.turns) > 0
	if ok {
		turn, s.turns = s.turns[0], s.turns[1:]
	}
	s.n++
	n := s.n
	s.mu.Unlock()

	if r.Method != http.MethodPost || r.URL.Path != s.path() {
		s.writeError(w, Turn{Status: 404, Message: fmt.Sprintf("providertest: no route %s %s (want POST %s)", r.Method, r.URL.Path, s.path())})
		return
	}
	if !ok {
		// 400, not 5xx: a test that runs out of script must fail, not retry.
		s.writeError(w, Turn{Status: 400, Message: "providertest: no scripted turn left"})
		return
	}
	for k, vs := range turn.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if turn.Status != 0 {
		s.writeError(w, turn)
		return
	}
	var stream []byte
	switch {
	case turn.Raw != "":
		stream = []byte(turn.Raw)
	case s.Kind == KindResponses:
		stream = ResponsesStream(turn, n)
	case s.Kind == KindAnthropic:
		stream = AnthropicStream(turn, n)
	default:
		stream = OpenAIStream(turn, n)
	}
	if turn.Stall == "headers" {
		<-r.Context().Done()
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if turn.Stall != "" {
		s.stall(w, r, turn, stream)
		return
	}
	if turn.CutAfter > 0 && turn.CutAfter < len(stream) {
		_, _ = w.Write(stream[:turn.CutAfter])
		if f, ok := w.(http.Flusher); ok {
			f.Flush() // the client must see the partial stream before the drop
		}
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close() // no terminating chunk: the client sees a dropped connection
			}
		}
		return
	}
	if turn.Delay > 0 {
		flusher, _ := w.(http.Flusher)
		for len(stream) > 0 {
			n := bytes.Index(stream, []byte("\n\n")) + 2
			if n < 2 {
				n = len(stream)
			}
			if _, err := w.Write(stream[:n]); err != nil {
				return
			}
			stream = stream[n:]
			if flusher != nil {
				flusher.Flush()
			}
			select {
			case <-r.Context().Done():
				return
			case <-time.After(turn.Delay):
			}
		}
		return
	}
	_, _ = w.Write(stream)
}

// stall writes part of stream (or trickles it) and then waits for the client to go.
func (s *Server) stall(w http.ResponseWriter, r *http.Request, turn Turn, stream []byte) {
	flusher, _ := w.(http.Flusher)
	if turn.Stall == "trickle" {
		every := turn.TrickleEvery
		if every <= 0 {
			every = 50 * time.Millisecond
		}
		t := time.NewTicker(every)
		defer t.Stop()
		for _, b := range stream {
			select {
			case <-r.Context().Done():
				return
			case <-t.C:
			}
			if _, err := w.Write([]byte{b}); err != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		return
	}
	_, _ = w.Write(stream[:len(stream)/2])
	if flusher != nil {
		flusher.Flush()
	}
	<-r.Context().Done()
}

func (s *Server) writeError(w http.ResponseWriter, t Turn) {
	if t.Raw != "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(t.Status)
		_, _ = w.Write([]byte(t.Raw))
		return
	}
	var body any
	if s.Kind == KindAnthropic {
		typ := t.Code
		if typ == "" {
			typ = anthropicErrorType(t.Status)
		}
		body = map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": t.Message}}
	} else {
		e := map[string]any{"message": t.Message, "type": openAIErrorType(t.Status), "param": nil, "code": nil}
		if t.Code != "" {
			e["code"] = t.Code
		}
		body = map[string]any{"error": e}
	}
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(t.Status)
	_, _ = w.Write(b)
}

func openAIErrorType(status int) string {
	switch {
	case status == 429:
		return "rate_limit_exceeded"
	case status == 401 || status == 403:
		return "invalid_request_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

func anthropicErrorType(status int) string {
	switch status {
	case 400, 413:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}

// pieces splits s into chunks of about n bytes without splitting a UTF-8 rune.
func pieces(s string, n int) []string {
	if n <= 0 {
		n = 6
	}
	out := make([]string, 0, len(s)/n+1)
	for len(s) > n {
		i := n
		for i < len(s) && !isRuneStart(s[i]) {
			i++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func jstr(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// sse writes one event; name may be empty (OpenAI Chat sends data lines only).
func sse(b *strings.Builder, name, data string) {
	if name != "" {
		b.WriteString("event: ")
		b.WriteString(name)
		b.WriteByte('\n')
	}
	b.WriteString("data: ")
	b.WriteString(data)
	b.WriteString("\n\n")
}
