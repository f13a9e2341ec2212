package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A run's context tells the App when its first HTTP request (the model's) has been
// written: the workspaces' sandbox helper waits for that (requestSent).
func TestRunContextSignalsTheFirstRequest(t *testing.T) {
	a := newFixture(t).app(t, true)
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	ctx := a.RunContext(context.Background())
	select {
	case <-a.extra.requestSent:
		t.Fatal("signalled before any request")
	default:
	}
	for range 2 { // the second request finds the signal given
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		<-a.extra.requestSent // closed once the request was written
	}
}
