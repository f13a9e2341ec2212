package e2e

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

	"github.com/lovia-dev/lovia/internal/compaction"
	"github.com/lovia-dev/lovia/internal/provider/providertest"
)

// cmpServer is a fake Chat Completions server with a real context window. It
// serves the scripted agent turns in order, answers summary requests (the
// compaction summarizer's, recognised by their system prompt) with a structured
// summary, refuses a request whose token estimate exceeds the window with the
// provider's context-length error, and reports each request's estimate as its
// prompt_tokens, so lovia's calibration sees this server's "tokenizer".
//
// The token estimate is the request body's bytes/4: everything the model would
// read (system prompt, messages, tool schemas) plus JSON punctuation.
type cmpServer struct {
	*httptest.Server
	kind   string // providertest.KindOpenAI, KindResponses or KindAnthropic
	window int

	mu        sync.Mutex
	script    []providertest.Turn
	served    int
	reqs      []cmpRequest // agent requests, in order
	summaries int
	overflows []int // token estimates of refused requests
	// holdAt > 0: the holdAt-th agent request (1-based) is recorded, held is
	// closed, and the reply waits until the client goes away (a test interrupts
	// lovia meanwhile); the scripted turn stays for the next request.
	holdAt int
	held   chan struct{}
}

// cmpRequest is one agent request as the server saw it.
type cmpRequest struct {
	body   []byte
	tokens int // len(body)/4
	// messages are verbatim, system message first (Chat), the instructions then
	// the input items (Responses), or the system blocks then the messages
	// (Anthropic) without cache_control markers: they move as the prefix grows
	// and are not part of what the model reads.
	messages []json.RawMessage
	tools    json.RawMessage
	marks    []string // Anthropic cache breakpoints (provCacheMarks)
	decoded  map[string]any
}

const cmpSummaryMarker = "You maintain the running summary"

func newCmpServer(t *testing.T, kind string, window int, script []providertest.Turn) *cmpServer {
	s := &cmpServer{kind: kind, window: window, script: script}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *cmpServer) serve(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	path := map[string]string{providertest.KindOpenAI: "/v1/chat/completions", providertest.KindResponses: "/v1/responses",
		providertest.KindAnthropic: "/v1/messages"}[s.kind]
	if err != nil || r.URL.Path != path {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	rec, summary, err := s.parse(raw)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}

	s.mu.Lock()
	if rec.tokens > s.window {
		s.overflows = append(s.overflows, rec.tokens)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		if s.kind == providertest.KindAnthropic {
			fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: %d tokens > %d maximum"}}`, rec.tokens, s.window)
			return
		}
		fmt.Fprintf(w, `{"error":{"message":"This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, s.window, rec.tokens)
		return
	}
	var turn providertest.Turn
	if summary {
		s.summaries++
		turn = providertest.Turn{Text: cmpSummaryText(s.summaries), Chunk: 64}
	} else {
		if s.served >= len(s.script) {
			s.mu.Unlock()
			http.Error(w, `{"error":{"message":"cmpServer: script exhausted","type":"invalid_request_error"}}`, http.StatusBadRequest)
			return
		}
		s.reqs = append(s.reqs, rec)
		if len(s.reqs) == s.holdAt {
			s.mu.Unlock()
			close(s.held)
			<-r.Context().Done()
			return
		}
		turn = s.script[s.served]
		s.served++
	}
	n := s.served + s.summaries
	s.mu.Unlock()

	turn.Usage.InputTokens = rec.tokens
	turn.Usage.OutputTokens = 20
	w.Header().Set("Content-Type", "text/event-stream")
	switch s.kind {
	case providertest.KindAnthropic:
		_, _ = w.Write(providertest.AnthropicStream(turn, n))
	case providertest.KindResponses:
		_, _ = w.Write(providertest.ResponsesStream(turn, n))
	default:
		_, _ = w.Write(providertest.OpenAIStream(turn, n))
	}
}

// parse records a request body; summary reports the summarizer's requests.
func (s *cmpServer) parse(raw []byte) (rec cmpRequest, summary bool, err error) {
	rec = cmpRequest{body: raw, tokens: len(raw) / 4}
	if s.kind == providertest.KindResponses {
		var req struct {
			Instructions string            `json:"instructions"`
			Input        []json.RawMessage `json:"input"`
			Tools        json.RawMessage   `json:"tools"`
		}
		if err := json.Unmarshal(raw, &req); err != nil || len(req.Input) == 0 {
			return rec, false, fmt.Errorf("body is not a responses request: %v", err)
		}
		sys, _ := json.Marshal(req.Instructions)
		rec.messages, rec.tools = append([]json.RawMessage{sys}, req.Input...), req.Tools
		return rec, strings.HasPrefix(req.Instructions, cmpSummaryMarker), nil
	}
	if s.kind == providertest.KindOpenAI {
		var req struct {
			Messages []json.RawMessage `json:"messages"`
			Tools    json.RawMessage   `json:"tools"`
		}
		if err := json.Unmarshal(raw, &req); err != nil || len(req.Messages) == 0 {
			return rec, false, fmt.Errorf("body is not a chat request: %v", err)
		}
		var first struct{ Content string }
		_ = json.Unmarshal(req.Messages[0], &first)
		rec.messages, rec.tools = req.Messages, req.Tools
		return rec, strings.HasPrefix(first.Content, cmpSummaryMarker), nil
	}
	m := map[string]any{}
	if err := json.Unmarshal(raw, &m); err != nil {
		return rec, false, fmt.Errorf("body is not a messages request: %v", err)
	}
	rec.decoded, rec.marks = m, provCacheMarks(m)
	var system strings.Builder
	if str, ok := m["system"].(string); ok {
		m["system"] = []any{map[string]any{"type": "text", "text": str}}
	}
	for _, part := range []string{"system", "messages"} {
		for _, v := range provList(m, part) {
			b, _ := json.Marshal(provNoCache(v))
			rec.messages = append(rec.messages, b)
			if part == "system" {
				system.WriteString(provStr(v["text"]))
			}
		}
	}
	rec.tools, _ = json.Marshal(provNoCache(m["tools"]))
	return rec, strings.HasPrefix(system.String(), cmpSummaryMarker), nil
}

// cmpSummaryText is a summary in the sections the summarizer asks for.
func cmpSummaryText(n int) string {
	var b strings.Builder
	for _, sec := range compaction.SummarySections {
		b.WriteString(sec + "\n")
		switch sec {
		case "## Goal":
			b.WriteString("Page through big.txt with the shell and report at the end.\n")
		case "## Progress":
			fmt.Fprintf(&b, "Summary update %d: earlier slices of big.txt were read; nothing unusual found.\n", n)
		default:
			b.WriteString("None.\n")
		}
	}
	return b.String()
}

// push appends agent turns to the script (the next run of a session).
func (s *cmpServer) push(turns ...providertest.Turn) {
	s.mu.Lock()
	s.script = append(s.script, turns...)
	s.mu.Unlock()
}

// hold makes the n-th agent request hang; the returned channel closes when it
// arrives.
func (s *cmpServer) hold(n int) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holdAt, s.held = n, make(chan struct{})
	return s.held
}

func (s *cmpServer) snapshot() (reqs []cmpRequest, summaries int, overflows []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]cmpRequest(nil), s.reqs...), s.summaries, append([]int(nil), s.overflows...)
}

// prompt is the request in the order a provider's prompt cache reads it: tool
// schemas, then the messages (system first). A request body puts the tools last,
// which would hide that they are carried over every time.
func (r cmpRequest) prompt() []byte {
	var b bytes.Buffer
	b.Write(r.tools)
	for _, m := range r.messages {
		b.Write(m)
	}
	return b.Bytes()
}
