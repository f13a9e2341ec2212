package provider

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

type ev struct{ Name, Data string }

func readAll(body string) ([]ev, error) {
	r := NewSSEReader(strings.NewReader(body))
	var out []ev
	for r.Next() {
		out = append(out, ev{string(r.Name()), string(r.Data())})
	}
	return out, r.Err()
}

func TestSSEReader(t *testing.T) {
	big := strings.Repeat("x", 200_000)
	tests := []struct {
		name string
		body string
		want []ev
	}{
		{"basic", "data: a\n\ndata: b\n\n", []ev{{"", "a"}, {"", "b"}}},
		{"event names reset per event", "event: one\ndata: 1\n\ndata: 2\n\n", []ev{{"one", "1"}, {"", "2"}}},
		{"multi-line data", "data: a\ndata: b\n\n", []ev{{"", "a\nb"}}},
		{"crlf", "event: x\r\ndata: a\r\n\r\n", []ev{{"x", "a"}}},
		{"comments and unknown fields", ": ping\nid: 4\nretry: 10\ndata: a\n\n", []ev{{"", "a"}}},
		{"no space after colon", "data:a\n\n", []ev{{"", "a"}}},
		{"blank lines without data", "\n\n\nevent: lonely\n\ndata: a\n\n", []ev{{"", "a"}}},
		{"event cut by end of body is dropped", "data: a\n\ndata: b\n", []ev{{"", "a"}}},
		{"line longer than the buffer", "data: " + big + "\n\n", []ev{{"", big}}},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAll(tt.body)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

type failingReader struct{ r io.Reader }

func (f failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, io.ErrUnexpectedEOF
	}
	return n, err
}

func TestSSEReaderError(t *testing.T) {
	r := NewSSEReader(failingReader{strings.NewReader("data: a\n\ndata: b")})
	n := 0
	for r.Next() {
		n++
	}
	if n != 1 || !errors.Is(r.Err(), io.ErrUnexpectedEOF) {
		t.Errorf("%d events, err %v", n, r.Err())
	}
}

func FuzzSSEReader(f *testing.F) {
	f.Add([]byte("event: x\ndata: a\ndata: b\n\n: c\r\ndata: d\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		r := NewSSEReader(bytes.NewReader(body))
		total := 0
		for r.Next() {
			total += len(r.Data())
		}
		if total > len(body) || r.Err() != nil {
			t.Fatalf("data %d from body %d, err %v", total, len(body), r.Err())
		}
	})
}

// Readers with lent buffers read each body as a new reader would, one after
// another, whatever the previous one left unread.
func TestSSEBuffersReuse(t *testing.T) {
	var bufs SSEBuffers
	bodies := []string{"data: a\n\ndata: b\n\n: left unread\ndata: c\n\n", "event: e\ndata: d\n\n", "data: " + strings.Repeat("y", 40_000) + "\n\n"}
	for i, body := range bodies {
		want, _ := readAll(body)
		r := bufs.Reader(strings.NewReader(body))
		var got []ev
		for r.Next() {
			got = append(got, ev{string(r.Name()), string(r.Data())})
			if i == 0 && len(got) == 2 {
				break // the rest stays in the buffer
			}
		}
		bufs.Release(r)
		if i == 0 {
			want = want[:2]
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("body %d: got %q, want %q", i, got, want)
		}
	}
}
