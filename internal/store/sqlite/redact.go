package sqlite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// Redacted replaces secret values in stored settings and metadata.
const Redacted = "[REDACTED]"

// secretKey reports whether a JSON object key names a credential. Keys are compared
// lowercased with separators removed, so "api_key", "apiKey", "X-Api-Key" and
// "OPENAI_API_KEY" all match; token counters ("max_tokens", "input_tokens") do not.
func secretKey(k string) bool {
	var b strings.Builder
	for _, r := range strings.ToLower(k) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	n := b.String()
	for _, s := range []string{"apikey", "authorization", "secret", "password", "passwd", "credential", "cookie", "privatekey"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return strings.HasSuffix(n, "token") || n == "auth" || n == "bearer"
}

// secretValue catches credentials stored under innocent keys (e.g. a header list).
func secretValue(s string) bool {
	l := strings.ToLower(strings.TrimSpace(s))
	return strings.HasPrefix(l, "bearer ") || strings.HasPrefix(l, "basic ") ||
		strings.HasPrefix(l, "sk-ant-") || strings.HasPrefix(l, "sk-proj-")
}

// redactJSON returns raw with secret-looking values replaced by Redacted. raw is
// returned unchanged (same bytes) when nothing needed redacting; invalid JSON is an
// error, since it could not be stored in the head anyway.
func redactJSON(raw json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // keep numbers exactly as written
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("invalid JSON: trailing data")
	}
	v, changed := redactValue(v)
	if !changed {
		return raw, nil
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func redactValue(v any) (any, bool) {
	switch t := v.(type) {
	case map[string]any:
		changed := false
		for k, x := range t {
			if secretKey(k) {
				if s, ok := x.(string); ok && (s == Redacted || s == "") {
					continue
				}
				if x == nil {
					continue
				}
				t[k] = Redacted
				changed = true
				continue
			}
			if nx, c := redactValue(x); c {
				t[k] = nx
				changed = true
			}
		}
		return t, changed
	case []any:
		changed := false
		for i, x := range t {
			if nx, c := redactValue(x); c {
				t[i] = nx
				changed = true
			}
		}
		return t, changed
	case string:
		if secretValue(t) {
			return Redacted, true
		}
	}
	return v, false
}

// redactSettings is redactJSON for a checkpoint head's settings, remembering the
// last answer: a run writes the same settings at every checkpoint, and decoding
// them each time cost a few percent of a checkpoint.
func (db *DB) redactSettings(raw json.RawMessage) (json.RawMessage, error) {
	m := &db.settings
	m.mu.Lock()
	if m.in != nil && bytes.Equal(m.in, raw) {
		out := m.out
		m.mu.Unlock()
		return out, nil
	}
	m.mu.Unlock()
	out, err := redactJSON(raw)
	if err != nil {
		return nil, err
	}
	// Copies: the caller may reuse raw's bytes.
	in := append(json.RawMessage{}, raw...)
	out = append(json.RawMessage(nil), out...)
	m.mu.Lock()
	m.in, m.out = in, out
	m.mu.Unlock()
	return out, nil
}

// settingsMemo is the last settings redactSettings saw and its answer.
type settingsMemo struct {
	mu      sync.Mutex
	in, out json.RawMessage
}
