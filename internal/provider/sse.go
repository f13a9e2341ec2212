package provider

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
)

// SSEReader reads a text/event-stream body event by event. It reuses its
// buffers: Data and Name are valid only until the next call to Next, so a
// 1 MiB reply streamed as 170,000 events costs no per-event allocation here.
type SSEReader struct {
	r    *bufio.Reader
	data []byte
	name []byte
	line []byte
	err  error
}

// NewSSEReader returns a reader over body.
func NewSSEReader(body io.Reader) *SSEReader {
	return &SSEReader{r: bufio.NewReaderSize(body, sseBuffer)}
}

const sseBuffer = 16 << 10

// SSEBuffers lends SSEReaders their read buffers, so an adapter's requests reuse
// one buffer instead of allocating 16 KiB each. The zero value is ready to use.
type SSEBuffers struct{ p sync.Pool }

// Reader is NewSSEReader with a lent buffer; Release gives it back.
func (b *SSEBuffers) Reader(body io.Reader) *SSEReader {
	if r, ok := b.p.Get().(*bufio.Reader); ok {
		r.Reset(body)
		return &SSEReader{r: r}
	}
	return NewSSEReader(body)
}

// Release gives s's buffer back; s must not be used after. Data and Name are
// copies, never views of the buffer, so they stay as valid as before.
func (b *SSEBuffers) Release(s *SSEReader) {
	if s.r == nil {
		return
	}
	s.r.Reset(nil)
	b.p.Put(s.r)
	s.r = nil
}

// maxEvent bounds one event's data so a hostile or broken server cannot make
// the reader grow without limit.
const maxEvent = 64 << 20

// ErrEventTooLarge is returned by Err when one event exceeds 64 MiB.
var ErrEventTooLarge = errors.New("server-sent event larger than 64 MiB")

// Next advances to the next event with data; false at the end of the body or on
// a read error (see Err). An event cut off by the end of the body is dropped,
// as the SSE specification says.
func (s *SSEReader) Next() bool {
	s.data, s.name = s.data[:0], s.name[:0]
	hasData := false
	for s.err == nil {
		line, err := s.readLine()
		if err != nil {
			s.err = err
			break
		}
		if len(line) == 0 {
			if hasData {
				return true
			}
			s.name = s.name[:0]
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if hasData {
				s.data = append(s.data, '\n')
			}
			s.data = append(s.data, value...)
			hasData = true
			if len(s.data) > maxEvent {
				s.err = ErrEventTooLarge
			}
		case "event":
			s.name = append(s.name[:0], value...)
		}
	}
	return false
}

// readLine returns the next line without its terminator (\n, \r\n).
func (s *SSEReader) readLine() ([]byte, error) {
	line, err := s.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		s.line = append(s.line[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) && len(s.line) <= maxEvent {
			line, err = s.r.ReadSlice('\n')
			s.line = append(s.line, line...)
		}
		if len(s.line) > maxEvent {
			return nil, ErrEventTooLarge
		}
		line = s.line
	}
	if err != nil {
		if err == io.EOF && len(line) > 0 {
			err = nil // a last line without newline still counts
		} else {
			return nil, err
		}
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r")), nil
}

// Data is the current event's data (data lines joined by "\n").
func (s *SSEReader) Data() []byte { return s.data }

// Name is the current event's "event:" field, empty when absent.
func (s *SSEReader) Name() []byte { return s.name }

// Err is the read error that ended the stream; nil at a clean end of body.
func (s *SSEReader) Err() error {
	if s.err == io.EOF {
		return nil
	}
	return s.err
}
