package provider

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// A small validating JSON walker for the streaming hot path. A 1 MiB reply
// arrives as ~170,000 small events; walking each event once, validating as it
// goes and decoding only the members asked for, costs a fraction of repeated
// path lookups or reflection-based decoding (gjson, which validates in a
// separate pass and copies each event, measured 1.3 to 2.2 times the CPU per
// reply; see BenchmarkChatStream). Rare, complex events (usage, errors, item
// headers) are read through Value, on top of the same walker.

const maxDepth = 512

// WalkObject calls fn with the raw key (without quotes, escapes kept) and the raw
// value of each member of the JSON object in data, in order. It reports whether
// data is exactly one well-formed JSON object (surrounding whitespace allowed);
// when fn returns false the walk stops and the rest is not checked.
func WalkObject(data []byte, fn func(key, value []byte) bool) bool {
	i := skipWS(data, 0)
	end, ok := walkObject(data, i, 0, fn)
	if !ok {
		return false
	}
	if end < 0 { // stopped by fn
		return true
	}
	return skipWS(data, end) == len(data)
}

// WalkArray calls fn with each raw element of the JSON array in data.
func WalkArray(data []byte, fn func(elem []byte) bool) bool {
	i := skipWS(data, 0)
	if i >= len(data) || data[i] != '[' {
		return false
	}
	i = skipWS(data, i+1)
	if i < len(data) && data[i] == ']' {
		return skipWS(data, i+1) == len(data)
	}
	for {
		end, ok := skipValue(data, i, 1)
		if !ok {
			return false
		}
		if !fn(data[i:end]) {
			return true
		}
		i = skipWS(data, end)
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case ',':
			i = skipWS(data, i+1)
		case ']':
			return skipWS(data, i+1) == len(data)
		default:
			return false
		}
	}
}

// Value is a raw JSON value from data WalkObject accepted (so valid JSON), read
// member by member. The stream decoders read the rare events (usage, errors,
// item headers) with it; nil is an absent value.
type Value []byte

// Get returns the value at path, a sequence of object keys, or nil when a key
// is absent or a value on the way is not an object.
func (v Value) Get(path ...string) Value {
	for _, key := range path {
		var found Value
		WalkObject(v, func(k, val []byte) bool {
			if string(k) == key {
				found = val
				return false
			}
			return true
		})
		if found == nil {
			return nil
		}
		v = found
	}
	return v
}

// Exists reports whether the value is present (null included).
func (v Value) Exists() bool { return v != nil }

// IsNull reports whether the value is absent or null.
func (v Value) IsNull() bool { return v == nil || string(v) == "null" }

// IsObject reports whether the value is a JSON object.
func (v Value) IsObject() bool { return len(v) > 0 && v[0] == '{' }

// IsString reports whether the value is a JSON string.
func (v Value) IsString() bool { return len(v) > 0 && v[0] == '"' }

// String is a string's text; absent and null are "", any other value its JSON
// text (a number's digits, an object as sent).
func (v Value) String() string {
	if s, ok := JSONText(v); ok {
		return s
	}
	if v.IsNull() {
		return ""
	}
	return string(v)
}

// Int is an integer's value; 0 for anything else.
func (v Value) Int() int64 {
	n, _ := JSONInt(v)
	return n
}

// Each calls fn with each element while fn returns true; nothing when v is not
// an array.
func (v Value) Each(fn func(Value) bool) {
	if len(v) > 0 && v[0] == '[' {
		WalkArray(v, func(e []byte) bool { return fn(e) })
	}
}

// JSONText decodes a raw JSON string value; ok is false for any other value.
func JSONText(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	for _, c := range body {
		if c == '\\' {
			var s string
			if json.Unmarshal(raw, &s) != nil {
				return "", false
			}
			return s, true
		}
	}
	return string(body), true
}

// JSONInt decodes a raw JSON integer; ok is false for any other value.
func JSONInt(raw []byte) (int64, bool) {
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return n, err == nil
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// walkObject walks the object starting at b[i] == '{'. It returns the index
// after the closing brace, or -1 when fn stopped the walk.
func walkObject(b []byte, i, depth int, fn func(key, value []byte) bool) (int, bool) {
	if i >= len(b) || b[i] != '{' || depth > maxDepth {
		return 0, false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, false
		}
		kend, ok := skipString(b, i)
		if !ok {
			return 0, false
		}
		key := b[i+1 : kend-1]
		i = skipWS(b, kend)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		i = skipWS(b, i+1)
		vend, ok := skipValue(b, i, depth+1)
		if !ok {
			return 0, false
		}
		if fn != nil && !fn(key, b[i:vend]) {
			return -1, true
		}
		i = skipWS(b, vend)
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case '}':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// skipValue returns the index after the value starting at b[i], validating it.
func skipValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) || depth > maxDepth {
		return 0, false
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{':
		return walkObject(b, i, depth, nil)
	case c == '[':
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, true
		}
		for {
			end, ok := skipValue(b, i, depth+1)
			if !ok {
				return 0, false
			}
			i = skipWS(b, end)
			if i >= len(b) {
				return 0, false
			}
			switch b[i] {
			case ',':
				i = skipWS(b, i+1)
			case ']':
				return i + 1, true
			default:
				return 0, false
			}
		}
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return skipNumber(b, i)
	}
	return 0, false
}

func literal(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// skipString validates the string at b[i] == '"' (escapes, no control bytes).
// It jumps from quote to quote with IndexByte and checks each run in a tight
// loop, the hot path of every event.
func skipString(b []byte, i int) (int, bool) {
	j := i + 1
	for {
		q := bytes.IndexByte(b[j:], '"')
		if q < 0 {
			return 0, false
		}
		esc := -1
		for k, c := range b[j : j+q] {
			if c < 0x20 {
				return 0, false
			}
			if c == '\\' {
				esc = j + k
				break
			}
		}
		if esc < 0 {
			return j + q + 1, true
		}
		k := esc + 1
		if k >= len(b) {
			return 0, false
		}
		switch b[k] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		case 'u':
			if k+4 >= len(b) {
				return 0, false
			}
			for _, h := range b[k+1 : k+5] {
				if !isHex(h) {
					return 0, false
				}
			}
			k += 4
		default:
			return 0, false
		}
		j = k + 1
	}
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// skipNumber validates -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)?
func skipNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}
