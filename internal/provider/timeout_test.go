package provider

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// stallServer answers with what phase says and then says nothing until the client
// goes away.
func stallServer(t *testing.T, phase string) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f := w.(http.Flusher)
		switch phase {
		case "headers":
		case "stream":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"a\":1}\n\n")
			f.Flush()
		case "trickle":
			w.Header().Set("Content-Type", "text/event-stream")
			f.Flush()
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-r.Context().Done():
					return
				case <-tick.C:
					// Bytes keep coming, but never a whole event.
					if _, err := io.WriteString(w, "x"); err != nil {
						return
					}
					f.Flush()
				}
			}
		}
		<-r.Context().Done()
	}))
	t.Cleanup(s.Close)
	return s
}

func TestTimeoutsPerPhase(t *testing.T) {
	to := Timeouts{Connect: time.Second, Header: 100 * time.Millisecond, StreamIdle: 100 * time.Millisecond}
	for _, phase := range []string{"headers", "stream", "trickle"} {
		t.Run(phase, func(t *testing.T) {
			s := stallServer(t, phase)
			c := to.Client(s.Client())
			resp, err := c.Get(s.URL)
			if phase == "headers" {
				te, ok := AsTimeout(err)
				if !ok || te.Phase != "headers" {
					t.Fatalf("err = %v, want a headers timeout", err)
				}
				if !strings.Contains(err.Error(), "LOVIA_HEADER_TIMEOUT") || !strings.Contains(err.Error(), s.URL) {
					t.Errorf("message %q does not name the setting and the server", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			_, err = io.ReadAll(resp.Body)
			te, ok := AsTimeout(err)
			if !ok || te.Phase != "stream" {
				t.Fatalf("read err = %v, want a stream idle timeout", err)
			}
			if !strings.Contains(err.Error(), "LOVIA_STREAM_IDLE_TIMEOUT") {
				t.Errorf("message %q does not name the setting", err)
			}
		})
	}
}

// A stream whose events keep coming is never cut, however long it lasts in total.
func TestStreamIdleResetsPerEvent(t *testing.T) {
	const events = 40
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < events; i++ {
			io.WriteString(w, "data: {}\r\n\r\n")
			w.(http.Flusher).Flush()
			time.Sleep(5 * time.Millisecond)
		}
	}))
	defer s.Close()
	// The limit is well above one gap but far below the whole reply.
	c := Timeouts{StreamIdle: 100 * time.Millisecond, Header: time.Second}.Client(s.Client())
	resp, err := c.Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if got := strings.Count(string(b), "data:"); got != events {
		t.Fatalf("%d events, want %d", got, events)
	}
}

func TestTimeoutErrorIsRetryableTransport(t *testing.T) {
	he := &HTTPError{Provider: "openai", Transport: &TimeoutError{Phase: "headers", Limit: time.Second, Server: "http://x"}}
	if !he.Retryable() {
		t.Fatal("a timeout must be retryable")
	}
	if _, ok := AsTimeout(he); !ok {
		t.Fatal("the timeout is lost in the chain")
	}
	if !errors.Is(he, ErrStreamCut) {
		t.Fatal("a timeout discards partial output like a cut stream")
	}
}
