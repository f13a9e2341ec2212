package termtext

import "io"

// JSONWriter passes JSON through, writing the C1 controls (U+0080–U+009F) and the
// bidi override and isolate characters as \u escapes. encoding/json escapes C0
// controls but leaves these raw, and a terminal showing the JSON may act on them
// (U+009B is CSI for xterm in UTF-8 mode). In valid JSON they can only occur inside
// strings, where the escape decodes to the same text, so the JSON means the same.
type JSONWriter struct {
	w    io.Writer
	buf  []byte
	held [2]byte // a possible start of an escaped character split across writes
	nh   int
}

// NewJSONWriter returns a JSONWriter writing to w.
func NewJSONWriter(w io.Writer) *JSONWriter { return &JSONWriter{w: w} }

// Write implements io.Writer.
func (j *JSONWriter) Write(p []byte) (int, error) {
	if j.nh == 0 && !hasLead(p) {
		if _, err := j.w.Write(p); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	in := p
	if j.nh > 0 {
		in = append(append(make([]byte, 0, j.nh+len(p)), j.held[:j.nh]...), p...)
		j.nh = 0
	}
	out := j.buf[:0]
	for i := 0; i < len(in); i++ {
		c := in[i]
		if c != 0xc2 && c != 0xe2 {
			out = append(out, c)
			continue
		}
		rest := len(in) - i
		if c == 0xc2 {
			if rest < 2 {
				j.held[0], j.nh = c, 1
				break
			}
			if in[i+1] >= 0x80 && in[i+1] <= 0x9f {
				out = appendU(out, rune(in[i+1]))
				i++
				continue
			}
			out = append(out, c)
			continue
		}
		// 0xe2: U+202A–U+202E is E2 80 AA–AE, U+2066–U+2069 is E2 81 A6–A9.
		if rest < 3 {
			if rest == 1 || in[i+1] == 0x80 || in[i+1] == 0x81 {
				j.nh = copy(j.held[:], in[i:])
				break
			}
			out = append(out, c)
			continue
		}
		b1, b2 := in[i+1], in[i+2]
		if b1 == 0x80 && b2 >= 0xaa && b2 <= 0xae || b1 == 0x81 && b2 >= 0xa6 && b2 <= 0xa9 {
			out = appendU(out, 0x2000|rune(b1&0x3f)<<6|rune(b2&0x3f))
			i += 2
			continue
		}
		out = append(out, c)
	}
	j.buf = out
	if len(out) > 0 {
		if _, err := j.w.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush writes a held partial character (only an unfinished write leaves one).
func (j *JSONWriter) Flush() error {
	if j.nh == 0 {
		return nil
	}
	_, err := j.w.Write(j.held[:j.nh])
	j.nh = 0
	return err
}

func hasLead(p []byte) bool {
	for _, c := range p {
		if c == 0xc2 || c == 0xe2 {
			return true
		}
	}
	return false
}
