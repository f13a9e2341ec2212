package provider

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// Helpers shared by the HTTP adapters (openai, anthropic): reading a server's error
// body, retry-after headers, overflow wording, and keeping secrets out of messages.

// ParseRetryAfter reads the wait a server asked for: retry-after-ms, then
// retry-after as seconds or an HTTP date. Zero means none (or unparseable).
func ParseRetryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// ServerMessage extracts the human-readable message from an error body in any of
// the common shapes: {"error":{"message":..}}, {"error":".."}, {"message":..},
// {"detail":..}; otherwise the trimmed body itself (capped).
func ServerMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) == nil {
		if len(v.Error) > 0 {
			var inner struct {
				Message string `json:"message"`
			}
			if json.Unmarshal(v.Error, &inner) == nil && inner.Message != "" {
				return inner.Message
			}
			var s string
			if json.Unmarshal(v.Error, &s) == nil && s != "" {
				return s
			}
		}
		if v.Message != "" {
			return v.Message
		}
		if len(v.Detail) > 0 {
			var s string
			if json.Unmarshal(v.Detail, &s) == nil {
				return s
			}
			return capText(string(v.Detail), 500)
		}
	}
	text := strings.TrimSpace(string(body))
	if strings.HasPrefix(text, "<") { // an HTML error page from a proxy: its title says enough
		lower := strings.ToLower(text)
		if i := strings.Index(lower, "<title>"); i >= 0 {
			if j := strings.Index(lower[i:], "</title>"); j > 0 {
				return strings.TrimSpace(text[i+len("<title>") : i+j])
			}
		}
	}
	return capText(text, 500)
}

func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// overflowPhrases are the ways servers say "your prompt does not fit".
var overflowPhrases = [...]string{
	"context_length_exceeded",
	"maximum context length",
	"context length exceeded",
	"prompt is too long",
	"exceeds the context window",
	"exceed context limit",
	"exceeds the available context size",
	"exceeds the maximum context",
	"context window exceeded",
	"too many tokens in the prompt",
	"input is too long",
}

// IsOverflowMessage reports whether a server message (or error code) means the
// request did not fit the model's context window.
func IsOverflowMessage(msg string) bool {
	m := strings.ToLower(msg)
	for _, p := range overflowPhrases {
		if strings.Contains(m, p) {
			return true
		}
	}
	return false
}

// keyLike matches strings shaped like API keys or bearer tokens, so a server that
// echoes one back (even partly masked) does not leak it into an error.
var keyLike = regexp.MustCompile(`(?i)\b(sk|ak|pk|rk)-[A-Za-z0-9_\-*.]{6,}|(?i)bearer\s+[A-Za-z0-9_\-.=*]{6,}`)

// Redact removes each secret, and anything shaped like an API key, from s.
func Redact(s string, secrets ...string) string {
	for _, sec := range secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	return keyLike.ReplaceAllString(s, "[redacted]")
}

// PairedView orders a view for chat-shaped APIs, which need every tool result
// right after the assistant message holding its call: after each run of assistant
// entries (reasoning, text, calls) come the results of those calls, in call order,
// wherever they were in entries (results are appended in completion order and pair
// by call id, never by position). A result whose call is absent becomes a user
// input describing it; a call without a result gets a synthetic error result, so
// the request is always well formed. orig[i] is the index in entries that out[i]
// came from, or -1 for a synthesized entry.
func PairedView(entries []transcript.Entry) (out []transcript.Entry, orig []int) {
	results := make(map[string]int)
	for i, e := range entries {
		if e.Type == transcript.TypeToolResult {
			if _, dup := results[e.CallID]; !dup {
				results[e.CallID] = i
			}
		}
	}
	used := make([]bool, len(entries))
	out = make([]transcript.Entry, 0, len(entries))
	orig = make([]int, 0, len(entries))
	groupStart := -1
	for i, e := range entries {
		if used[i] {
			continue
		}
		switch e.Type {
		case transcript.TypeAssistantText, transcript.TypeReasoning, transcript.TypeToolCall:
			if groupStart < 0 {
				groupStart = i
			}
			out, orig = append(out, e), append(orig, i)
			if i+1 < len(entries) && isAssistantSide(entries[i+1].Type) {
				continue
			}
			for j := groupStart; j <= i; j++ {
				c := entries[j]
				if c.Type != transcript.TypeToolCall {
					continue
				}
				if r, ok := results[c.CallID]; ok && !used[r] && r > j {
					used[r] = true
					out, orig = append(out, entries[r]), append(orig, r)
					continue
				}
				res := transcript.ToolResult(c.CallID, c.Name, "no result was recorded for this call", true)
				res.Synthetic = true
				out, orig = append(out, res), append(orig, -1)
			}
			groupStart = -1
		case transcript.TypeToolResult:
			// Not consumed by a call group: its call is missing (or it repeats one).
			in := transcript.UserInput(fmt.Sprintf("[result of tool %s (call %s)]\n%s", e.Name, e.CallID, e.Text))
			in.Attachments = e.Attachments
			out, orig = append(out, in), append(orig, i)
		default:
			out, orig = append(out, e), append(orig, i)
		}
	}
	return out, orig
}

func isAssistantSide(t transcript.Type) bool {
	return t == transcript.TypeAssistantText || t == transcript.TypeReasoning || t == transcript.TypeToolCall
}

// Failure describes an HTTP failure (or a mid-stream error mapped to a status)
// for StatusError.
type Failure struct {
	Provider, Model string
	Status          int
	Message, Code   string // server message and error code/type (secrets removed)
	RetryAfter      time.Duration
	// KeyVar names the variable holding the key ("" = none used); KeySet says
	// whether a key was sent. BaseVar/BaseURL name where requests went.
	KeyVar, BaseVar, BaseURL string
	KeySet                   bool
}

// StatusError classifies a failure: context overflow (400/413 with a
// context-length message or code) and everything retryable stay *HTTPError;
// 401/403 become errs.KindAuth naming the key variable; 404 becomes
// errs.KindConfig with the server's message (usually an unknown model).
func StatusError(f Failure) error {
	he := &HTTPError{Provider: f.Provider, Status: f.Status, Message: f.Message, RetryAfter: f.RetryAfter}
	if f.Status == 413 || ((f.Status == 400 || f.Status == 0) && (IsOverflowMessage(f.Code) || IsOverflowMessage(f.Message))) {
		he.Overflow = true
		if he.Status == 0 {
			he.Status = 400
		}
		return he
	}
	if strings.Contains(f.Code, "insufficient_quota") || strings.Contains(f.Code, "billing") {
		// Waiting does not fix an empty account: no retry (no HTTPError in the chain).
		return errs.New(errs.KindProvider, fmt.Sprintf("%s: the account has no quota or credit left: %s", f.Provider, f.Message),
			"check the plan and billing of the account behind "+f.KeyVar)
	}
	switch f.Status {
	case 401, 403:
		what := "the server refused the request"
		hint := fmt.Sprintf("check that %s points at the right server", f.BaseVar)
		switch {
		case f.KeySet:
			what = fmt.Sprintf("the key in %s was refused", f.KeyVar)
			hint = fmt.Sprintf("set %s to a valid key", f.KeyVar)
		case f.KeyVar != "":
			what = fmt.Sprintf("the server requires a key and %s is not set", f.KeyVar)
			hint = fmt.Sprintf("export %s=...", f.KeyVar)
		}
		return errs.Wrap(errs.KindAuth, he, fmt.Sprintf("%s: %s", f.Provider, what), hint)
	case 404:
		return errs.Wrap(errs.KindConfig, he, fmt.Sprintf("%s: model %q is not available", f.Provider, f.Model),
			fmt.Sprintf("check the model name and %s (%s)", f.BaseVar, f.BaseURL))
	}
	return he
}

// StatusForType maps an error type or code sent inside a stream to the HTTP
// status it stands for, so retries and overflow handling treat it alike.
func StatusForType(t string) int {
	t = strings.ToLower(t)
	switch {
	case IsOverflowMessage(t), strings.Contains(t, "invalid_request"):
		return 400
	case strings.Contains(t, "rate_limit"):
		return 429
	case strings.Contains(t, "overloaded"):
		return 529
	case strings.Contains(t, "authentication"), strings.Contains(t, "permission"):
		return 401
	case strings.Contains(t, "not_found"):
		return 404
	}
	return 500 // server_error, api_error, unknown: transient as far as we can tell
}

// NotStream returns an error when a 2xx reply is plain JSON instead of an event
// stream (a proxy or server that ignored stream=true, or one that reports errors
// with status 200); nil otherwise. It reads the body in that case.
func NotStream(prefix string, resp *http.Response, secrets ...string) error {
	ct := strings.ToLower(resp.Header.Get("Content-Type"))
	if !strings.HasPrefix(ct, "application/json") {
		return nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return &HTTPError{Provider: prefix, Status: resp.StatusCode,
		Message: Redact("the server replied with JSON instead of an event stream (does it support streaming?): "+ServerMessage(body), secrets...)}
}

// ParseHeaders reads extra request headers from a variable such as
// OPENAI_CUSTOM_HEADERS: one "Name: value" per line (gateways that need their
// own headers). Malformed lines are skipped.
func ParseHeaders(v string) http.Header {
	h := http.Header{}
	for _, line := range strings.Split(v, "\n") {
		name, value, ok := strings.Cut(line, ":")
		if name = strings.TrimSpace(name); ok && name != "" {
			h.Add(name, strings.TrimSpace(value))
		}
	}
	return h
}
