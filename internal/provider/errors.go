package provider

import (
	"errors"
	"fmt"
	"time"
)

// ErrContextOverflow is matched (errors.Is) by any error that means the request did
// not fit the model's context window.
var ErrContextOverflow = errors.New("context window exceeded")

// ErrStreamCut is matched by errors meaning the connection dropped mid-stream.
var ErrStreamCut = errors.New("stream interrupted")

// HTTPError is a provider's non-2xx reply, or a transport failure (Status 0).
type HTTPError struct {
	Provider   string
	Status     int
	Message    string // the server's own message, secrets removed
	RetryAfter time.Duration
	Overflow   bool
	// Transport is set for dropped connections and other network failures.
	Transport error
	// Protocol marks a reply that broke its wire format (a malformed chunk in a 200
	// stream): the server's fault, not an HTTP status it sent.
	Protocol bool
}

func (e *HTTPError) Error() string {
	switch {
	case e.Transport != nil:
		return fmt.Sprintf("%s: connection failed: %v", e.Provider, e.Transport)
	case e.Protocol:
		return fmt.Sprintf("%s: protocol error from the server: %s", e.Provider, e.Message)
	case e.Message != "":
		return fmt.Sprintf("%s: HTTP %d: %s", e.Provider, e.Status, e.Message)
	}
	return fmt.Sprintf("%s: HTTP %d", e.Provider, e.Status)
}

func (e *HTTPError) Unwrap() error { return e.Transport }

// Is makes errors.Is(err, ErrContextOverflow) true for overflow replies.
func (e *HTTPError) Is(target error) bool {
	return (target == ErrContextOverflow && e.Overflow) || (target == ErrStreamCut && e.Transport != nil)
}

// Retryable reports whether the retry policy should try again.
func (e *HTTPError) Retryable() bool {
	if e.Overflow {
		return false
	}
	if e.Transport != nil || e.Protocol {
		return true
	}
	switch e.Status {
	case 408, 409, 429:
		return true
	}
	return e.Status >= 500
}
