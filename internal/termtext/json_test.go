package termtext

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestJSONWriter(t *testing.T) {
	orig := "a\u009b31m b\u202eevil\u2069 … ─ é \x1b]0;t\x07"
	raw, _ := json.Marshal(map[string]string{"text": orig})
	for cut := 0; cut <= len(raw); cut++ {
		var out bytes.Buffer
		j := NewJSONWriter(&out)
		j.Write(raw[:cut])
		j.Write(raw[cut:])
		j.Flush()
		if bytes.Contains(out.Bytes(), []byte("\u009b")) || bytes.Contains(out.Bytes(), []byte("\u202e")) || bytes.Contains(out.Bytes(), []byte("\u2069")) {
			t.Fatalf("cut %d: raw C1 or bidi left: %q", cut, out.String())
		}
		var back map[string]string
		if err := json.Unmarshal(out.Bytes(), &back); err != nil || back["text"] != orig {
			t.Fatalf("cut %d: %q decodes to %q (%v)", cut, out.String(), back["text"], err)
		}
	}
}
