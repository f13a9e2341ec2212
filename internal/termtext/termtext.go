// Package termtext makes untrusted text (model replies, tool output, file names, MCP
// server messages) safe to show a person on a terminal. Whole ANSI/ECMA-48 control
// sequences — CSI, OSC (titles, OSC 8 links, OSC 52 clipboard writes), DCS, SOS, PM,
// APC, single-character escapes and their 8-bit C1 forms — are removed; any other
// control character (C0 but newline and tab, DEL, C1, stray ESC, bytes of invalid
// UTF-8) and the bidirectional override and isolate characters that can reorder what
// is seen ("Trojan Source") become visible escapes such as ^[, \x9b or \u202e. A lone
// carriage return becomes a newline, so overwriting a line cannot hide text.
//
// The output never contains ESC, BEL, a C1 control or a bidi control, is always valid
// UTF-8, and sanitizing it again changes nothing. lovia's own styling is applied after
// sanitizing, so it survives.
package termtext

import (
	"io"
	"unicode/utf8"
)

// String returns s made safe for a terminal. Clean text is returned as is, without
// allocating.
func String(s string) string {
	i := cleanPrefix(s)
	if i == len(s) {
		return s
	}
	var st Stream
	dst := make([]byte, 0, len(s)+8)
	dst = append(dst, s[:i]...)
	dst = appendClean(&st, dst, s[i:])
	dst = st.appendEnd(dst)
	return string(dst)
}

// Stream sanitizes text that arrives in pieces (streamed model deltas): a control
// sequence or a UTF-8 character split across two pieces is still recognised. The
// concatenation of its outputs followed by End equals String of the whole text. The
// zero value is ready to use; it keeps no buffer.
type Stream struct {
	state  uint8
	n      uint16 // bytes swallowed by the current sequence (bounded by maxCSI, maxStr)
	lastCR bool   // the previous character was a CR (shown as a newline): a following LF is dropped
	npend  uint8  // bytes of an incomplete UTF-8 character held for the next piece
	pend   [3]byte
}

// Parser states.
const (
	ground   uint8 = iota
	escape         // after ESC
	escInter       // ESC followed by intermediate bytes (ESC ( B, ESC # 8, ...)
	csi            // ESC [ or 0x9B: parameters and intermediates until a final byte
	str            // OSC, DCS, SOS, PM, APC body until BEL or ST
	strEsc         // ESC inside a string: ST if a backslash follows
)

// Limits on how much text a sequence may swallow before it is given up and the rest
// is shown as text: an unterminated sequence must not hide the answer.
const (
	maxCSI = 256
	maxStr = 4096
)

// String sanitizes the next piece p and returns what to show for it.
func (st *Stream) String(p string) string {
	if st.state == ground && st.npend == 0 && !st.lastCR {
		if i := cleanPrefix(p); i == len(p) {
			return p
		}
	}
	return string(appendClean(st, make([]byte, 0, len(p)+8), p))
}

// End finishes the text: an unterminated sequence is dropped, an incomplete UTF-8
// character is escaped. It returns what is left to show and resets the Stream.
func (st *Stream) End() string { return string(st.appendEnd(nil)) }

func (st *Stream) appendEnd(dst []byte) []byte {
	if st.state == escape {
		dst = append(dst, '^', '[')
	}
	for i := range int(st.npend) {
		dst = appendHexByte(dst, st.pend[i])
	}
	*st = Stream{}
	return dst
}

// Writer sanitizes everything written to it before passing it on. Call Flush at the
// end of the text. Each Write makes one Write to the underlying writer with a buffer
// that is reused, so streaming many small pieces does not allocate.
type Writer struct {
	w   io.Writer
	st  Stream
	buf []byte
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write implements io.Writer; it reports len(p) when the sanitized text was written.
func (w *Writer) Write(p []byte) (int, error) {
	w.buf = appendClean(&w.st, w.buf[:0], p)
	return w.flush(len(p))
}

// WriteString implements io.StringWriter.
func (w *Writer) WriteString(s string) (int, error) {
	w.buf = appendClean(&w.st, w.buf[:0], s)
	return w.flush(len(s))
}

// flush writes the sanitized buffer and reports n (the input's length) on success.
func (w *Writer) flush(n int) (int, error) {
	if len(w.buf) == 0 {
		return n, nil
	}
	if _, err := w.w.Write(w.buf); err != nil {
		return 0, err
	}
	if cap(w.buf) > 64<<10 {
		w.buf = nil // one huge write must not pin its buffer
	}
	return n, nil
}

// Flush ends the text (see Stream.End) and writes what is left.
func (w *Writer) Flush() error {
	w.buf = w.st.appendEnd(w.buf[:0])
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.w.Write(w.buf)
	return err
}

// safe marks the ASCII bytes shown as they are.
var safe = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = true
	}
	t['\n'], t['\t'] = true, true
	return t
}()

// cleanPrefix returns the length of the longest prefix of s that is shown unchanged
// and ends on a character boundary.
func cleanPrefix[T string | []byte](s T) int {
	i := 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if !safe[c] {
				return i
			}
			i++
			continue
		}
		r, size, ok := decode(s, i)
		if !ok || size == 0 || showAs(r) != keep {
			return i
		}
		i += size
	}
	return i
}

// decode decodes the UTF-8 character at s[i]. size 0 means the character is
// incomplete at the end of s; ok false means the byte at i is not valid UTF-8.
func decode[T string | []byte](s T, i int) (r rune, size int, ok bool) {
	var b [utf8.UTFMax]byte
	n := copy(b[:], s[i:min(i+utf8.UTFMax, len(s))])
	if !utf8.FullRune(b[:n]) {
		return 0, 0, true
	}
	r, size = utf8.DecodeRune(b[:n])
	if r == utf8.RuneError && size == 1 {
		return 0, 1, false
	}
	return r, size, true
}

// What to do with a non-ASCII character.
const (
	keep     = iota
	escapeIt // show as \uXXXX
	startCSI // 8-bit CSI
	startStr // 8-bit OSC, DCS, SOS, PM, APC
)

func showAs(r rune) int {
	switch {
	case r >= 0x80 && r <= 0x9f:
		switch r {
		case 0x9b:
			return startCSI
		case 0x90, 0x98, 0x9d, 0x9e, 0x9f:
			return startStr
		}
		return escapeIt
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return escapeIt
	}
	return keep
}

const hexDigits = "0123456789abcdef"

func appendHexByte(dst []byte, c byte) []byte {
	return append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
}

func appendU(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', hexDigits[r>>12&15], hexDigits[r>>8&15], hexDigits[r>>4&15], hexDigits[r&15])
}

// appendCaret shows a C0 control or DEL in caret notation (^[ for ESC, ^? for DEL).
func appendCaret(dst []byte, c byte) []byte { return append(dst, '^', c^0x40) }

// appendClean runs the parser over p, appending what is shown to dst.
func appendClean[T string | []byte](st *Stream, dst []byte, p T) []byte {
	i := 0
	// An incomplete character from the previous piece: complete it first.
	if st.npend > 0 {
		var b [utf8.UTFMax]byte
		n := copy(b[:], st.pend[:st.npend])
		n += copy(b[n:], p[:min(len(p), utf8.UTFMax-n)])
		if !utf8.FullRune(b[:n]) {
			// Still incomplete (p is tiny): hold all of it.
			copy(st.pend[st.npend:], p)
			st.npend = uint8(n)
			return dst
		}
		held := int(st.npend)
		st.npend = 0
		r, size := utf8.DecodeRune(b[:n])
		if r == utf8.RuneError && size == 1 {
			// The held lead byte is invalid on its own; the rest is parsed normally.
			dst = st.rawByte(dst, b[0])
			for k := 1; k < held; k++ {
				// Re-parse the other held bytes as if they started this piece.
				dst = appendClean(st, dst, string(b[k:k+1]))
			}
		} else {
			dst = st.char(dst, r, b[:size])
			i = size - held
		}
	}
	for i < len(p) {
		c := p[i]
		if st.state == ground {
			// Fast path: copy the run of plain text at once.
			j := i
			for j < len(p) && safe[p[j]] {
				j++
			}
			if j > i {
				if st.lastCR && p[i] == '\n' {
					i++
					st.lastCR = false
					continue
				}
				st.lastCR = false
				dst = append(dst, p[i:j]...)
				i = j
				continue
			}
		}
		if c < utf8.RuneSelf {
			dst = st.ascii(dst, c)
			i++
			continue
		}
		r, size, ok := decode(p, i)
		switch {
		case size == 0:
			// Incomplete at the end of the piece: hold it.
			n := copy(st.pend[:], p[i:])
			st.npend = uint8(n)
			return dst
		case !ok:
			dst = st.rawByte(dst, c)
			i++
		default:
			var b [utf8.UTFMax]byte
			copy(b[:], p[i:i+size])
			dst = st.char(dst, r, b[:size])
			i += size
		}
	}
	return dst
}

// ascii handles one 7-bit byte in any state.
func (st *Stream) ascii(dst []byte, c byte) []byte {
	switch st.state {
	case ground:
		wasCR := st.lastCR
		st.lastCR = false
		switch {
		case c == '\r':
			st.lastCR = true
			return append(dst, '\n')
		case c == '\n':
			if wasCR {
				return dst
			}
			return append(dst, c)
		case c == 0x1b:
			st.state, st.n = escape, 0
			return dst
		case safe[c]:
			return append(dst, c)
		}
		return appendCaret(dst, c)
	case escape:
		switch {
		case c == '[':
			st.state, st.n = csi, 0
		case c == ']', c == 'P', c == 'X', c == '^', c == '_':
			st.state, st.n = str, 0
		case c >= 0x20 && c <= 0x2f:
			st.state = escInter
		case c >= 0x30 && c <= 0x7e:
			st.state = ground // a complete two-character escape (ESC c, ESC 7, ESC \)
		default:
			// Not a sequence: show the ESC, then the byte as text.
			st.state = ground
			return st.ascii(append(dst, '^', '['), c)
		}
		return dst
	case escInter:
		switch {
		case c >= 0x20 && c <= 0x2f:
			if st.n++; st.n > maxCSI {
				st.state = ground
			}
		case c >= 0x30 && c <= 0x7e:
			st.state = ground
		default:
			st.state = ground
			return st.ascii(dst, c)
		}
		return dst
	case csi:
		switch {
		case c >= 0x20 && c <= 0x3f:
			if st.n++; st.n > maxCSI {
				st.state = ground // give up: the rest is text
			}
		case c >= 0x40 && c <= 0x7e:
			st.state = ground
		default:
			// A control inside CSI cancels it; the control itself is shown.
			st.state = ground
			return st.ascii(dst, c)
		}
		return dst
	case str:
		switch c {
		case 0x07, 0x18, 0x1a: // BEL ends OSC; CAN and SUB cancel any string
			st.state = ground
		case 0x1b:
			st.state = strEsc
		case '\n', '\r':
			// Strings never span lines here: an unterminated one hides at most a line.
			st.state = ground
			return st.ascii(dst, c)
		default:
			if st.n++; st.n > maxStr {
				st.state = ground
				return st.ascii(dst, c)
			}
		}
		return dst
	case strEsc:
		if c == '\\' {
			st.state = ground // ST
			return dst
		}
		// Another escape sequence starts; the string ended.
		st.state = escape
		return st.ascii(dst, c)
	}
	return dst
}

// rawByte handles a byte that is not valid UTF-8. 8-bit C1 controls are interpreted
// like their 7-bit forms (some terminals do); any other byte is escaped as \xNN.
func (st *Stream) rawByte(dst []byte, c byte) []byte {
	switch st.state {
	case str:
		if c == 0x9c {
			st.state = ground // 8-bit ST
			return dst
		}
		if st.n++; st.n <= maxStr {
			return dst
		}
		st.state = ground
	case escape:
		// Not a sequence: show the ESC.
		dst = append(dst, '^', '[')
		st.state = ground
	default:
		// Any other sequence is cancelled by a byte that cannot belong to it (after
		// ESC in a string, the string has ended).
		st.state = ground
	}
	st.lastCR = false
	switch c {
	case 0x9b:
		st.state, st.n = csi, 0
		return dst
	case 0x90, 0x98, 0x9d, 0x9e, 0x9f:
		st.state, st.n = str, 0
		return dst
	}
	return appendHexByte(dst, c)
}

// char handles one valid non-ASCII character r encoded as enc.
func (st *Stream) char(dst []byte, r rune, enc []byte) []byte {
	switch st.state {
	case str:
		if r == 0x9c {
			st.state = ground // ST
			return dst
		}
		if st.n += uint16(len(enc)); st.n > maxStr {
			st.state = ground
			return st.char(dst, r, enc)
		}
		return dst
	case strEsc:
		st.state = ground // ESC then a non-ASCII character: the string ended
	case escape:
		dst = append(dst, '^', '[')
		st.state = ground
	case escInter, csi:
		st.state = ground
	}
	st.lastCR = false
	switch showAs(r) {
	case startCSI:
		st.state, st.n = csi, 0
		return dst
	case startStr:
		st.state, st.n = str, 0
		return dst
	case escapeIt:
		return appendU(dst, r)
	}
	return append(dst, enc...)
}
