package sqlite

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/lovia-dev/lovia/internal/transcript"
)

// Loading a long run for resume is dominated by decoding entry JSON (encoding/json
// validates the whole input, then decodes it by reflection). fastDecodeEntries is a
// direct decoder for the shape this package writes: an array of entry objects with
// string, boolean and raw-JSON (args) fields. It gives up (ok=false) on anything it is
// not certain to decode exactly as encoding/json would — unknown or differently cased
// keys, null, attachments, \u surrogates, invalid UTF-8, malformed input — and the
// caller then uses encoding/json. FuzzFastDecodeMatchesStdlib checks that whenever it
// succeeds, encoding/json produces the same entries.

// fastDecodeEntries appends the entries of data to *out (reset to length 0). After a
// false return *out holds partial garbage within its capacity; the caller must clear
// it before decoding again.
func fastDecodeEntries(data []byte, out *[]transcript.Entry) bool {
	d := fastDec{data: data}
	*out = (*out)[:0]
	d.ws()
	if !d.eat('[') {
		return false
	}
	d.ws()
	if d.eat(']') {
		return d.end()
	}
	for {
		*out = append(*out, transcript.Entry{})
		if !d.entry(&(*out)[len(*out)-1]) {
			return false
		}
		d.ws()
		if d.eat(',') {
			d.ws()
			continue
		}
		if d.eat(']') {
			return d.end()
		}
		return false
	}
}

type fastDec struct {
	data []byte
	i    int
}

func (d *fastDec) ws() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *fastDec) eat(c byte) bool {
	if d.i < len(d.data) && d.data[d.i] == c {
		d.i++
		return true
	}
	return false
}

func (d *fastDec) end() bool {
	d.ws()
	return d.i == len(d.data)
}

func (d *fastDec) entry(e *transcript.Entry) bool {
	d.ws()
	if !d.eat('{') {
		return false
	}
	d.ws()
	if d.eat('}') {
		return true
	}
	for {
		key, ok := d.key()
		if !ok {
			return false
		}
		d.ws()
		if !d.eat(':') {
			return false
		}
		d.ws()
		if !d.field(e, key) {
			return false
		}
		d.ws()
		if d.eat(',') {
			d.ws()
			continue
		}
		return d.eat('}')
	}
}

// key reads an object key in place; keys with escapes are left to encoding/json.
func (d *fastDec) key() ([]byte, bool) {
	if !d.eat('"') {
		return nil, false
	}
	start := d.i
	for d.i < len(d.data) {
		c := d.data[d.i]
		if c == '"' {
			d.i++
			return d.data[start : d.i-1], true
		}
		if c == '\\' || c < 0x20 || c >= 0x80 {
			return nil, false
		}
		d.i++
	}
	return nil, false
}

func (d *fastDec) field(e *transcript.Entry, key []byte) bool {
	var s *string
	switch string(key) { // no allocation: the compiler compares in place
	case "type":
		v, ok := d.str()
		e.Type = transcript.Type(v)
		return ok
	case "run_id":
		s = &e.RunID
	case "agent":
		s = &e.Agent
	case "role":
		s = &e.Role
	case "text":
		s = &e.Text
	case "signature":
		s = &e.Signature
	case "encrypted":
		s = &e.Encrypted
	case "provider_id":
		s = &e.ProviderID
	case "provider":
		s = &e.Provider
	case "call_id":
		s = &e.CallID
	case "name":
		s = &e.Name
	case "is_error":
		return d.boolean(&e.IsError)
	case "truncated":
		return d.boolean(&e.Truncated)
	case "synthetic":
		return d.boolean(&e.Synthetic)
	case "args":
		raw, ok := d.raw()
		if !ok {
			return false
		}
		e.Args = append(json.RawMessage(nil), raw...)
		return true
	default: // attachments, unknown or differently cased keys
		return false
	}
	v, ok := d.str()
	*s = v
	return ok
}

func (d *fastDec) boolean(b *bool) bool {
	rest := d.data[d.i:]
	switch {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		d.i += 4
		*b = true
	case len(rest) >= 5 && string(rest[:5]) == "false":
		d.i += 5
		*b = false
	default:
		return false
	}
	return true
}

// str reads a JSON string. The common case (no escapes, valid UTF-8) is one copy.
func (d *fastDec) str() (string, bool) {
	if !d.eat('"') {
		return "", false
	}
	start := d.i
	ascii := true
	for d.i < len(d.data) {
		c := d.data[d.i]
		switch {
		case c == '"':
			raw := d.data[start:d.i]
			d.i++
			if !ascii && !utf8.Valid(raw) {
				return "", false
			}
			return string(raw), true
		case c == '\\':
			return d.strEscaped(start)
		case c < 0x20:
			return "", false
		case c >= 0x80:
			ascii = false
		}
		d.i++
	}
	return "", false
}

// strEscaped continues a string that has escapes, from its start.
func (d *fastDec) strEscaped(start int) (string, bool) {
	d.i = start
	buf := make([]byte, 0, 256)
	for d.i < len(d.data) {
		// Copy the run up to the next quote, backslash or control byte at once.
		j := d.i
		for j < len(d.data) && d.data[j] != '"' && d.data[j] != '\\' && d.data[j] >= 0x20 {
			j++
		}
		buf = append(buf, d.data[d.i:j]...)
		d.i = j
		if j == len(d.data) {
			return "", false
		}
		switch c := d.data[j]; {
		case c == '"':
			d.i++
			if !utf8.Valid(buf) {
				return "", false
			}
			return string(buf), true
		case c < 0x20:
			return "", false
		}
		if d.i+1 >= len(d.data) {
			return "", false
		}
		esc := d.data[d.i+1]
		d.i += 2
		switch esc {
		case '"', '\\', '/':
			buf = append(buf, esc)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			if d.i+4 > len(d.data) {
				return "", false
			}
			r := rune(0)
			for _, h := range d.data[d.i : d.i+4] {
				var v byte
				switch {
				case h >= '0' && h <= '9':
					v = h - '0'
				case h >= 'a' && h <= 'f':
					v = h - 'a' + 10
				case h >= 'A' && h <= 'F':
					v = h - 'A' + 10
				default:
					return "", false
				}
				r = r<<4 | rune(v)
			}
			if r >= 0xD800 && r <= 0xDFFF {
				return "", false // surrogates: encoding/json pairs or replaces them
			}
			d.i += 4
			buf = utf8.AppendRune(buf, r)
		default:
			return "", false
		}
	}
	return "", false
}

// raw returns the bytes of one JSON value (for args) after checking it is valid.
func (d *fastDec) raw() ([]byte, bool) {
	start := d.i
	if !d.skip(0) {
		return nil, false
	}
	v := d.data[start:d.i]
	if len(v) > 0 && (v[0] == 'n') { // null: encoding/json's RawMessage handling differs
		return nil, false
	}
	return v, json.Valid(v)
}

// skip moves past one JSON value; json.Valid in raw does the strict check.
func (d *fastDec) skip(depth int) bool {
	if depth > 64 || d.i >= len(d.data) {
		return false
	}
	switch c := d.data[d.i]; c {
	case '"':
		d.i++
		for d.i < len(d.data) {
			switch d.data[d.i] {
			case '\\':
				d.i += 2
				continue
			case '"':
				d.i++
				return true
			}
			d.i++
		}
		return false
	case '{', '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		d.i++
		for {
			d.ws()
			if d.eat(closer) {
				return true
			}
			if !d.skip(depth + 1) {
				return false
			}
			d.ws()
			if d.eat(':') || d.eat(',') {
				continue
			}
			if d.eat(closer) {
				return true
			}
			return false
		}
	default: // number, true, false, null
		start := d.i
		for d.i < len(d.data) {
			switch d.data[d.i] {
			case ',', '}', ']', ':', ' ', '\t', '\n', '\r':
				return d.i > start
			}
			d.i++
		}
		return d.i > start
	}
}
