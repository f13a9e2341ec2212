package anthropic

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/lovia-dev/lovia/internal/provider"
	pt "github.com/lovia-dev/lovia/internal/provider/providertest"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// The request the provider sends is the one the client's own streaming method
// sends for the same prebuilt body: same path, every header the same (key or
// token, version, custom headers, the client's own), the body byte for byte.
// Credentials and headers in the process environment are never sent.
func TestSendMatchesClientMethod(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-from-process-env")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "tok-from-process-env")
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Env: leaked")
	req := provider.Request{System: "sys", Entries: []transcript.Entry{transcript.UserInput("hi"),
		transcript.AssistantText("hello"), transcript.UserInput("again")}, StablePrefix: 2}
	for _, tc := range []struct {
		name string
		cfg  func(*pt.Server) Config
	}{
		{"key", func(s *pt.Server) Config {
			return Config{BaseURL: s.URL, APIKey: pt.APIKey, HTTPClient: s.Client(), Headers: http.Header{"Anthropic-Beta": {"x-1"}}}
		}},
		{"token", func(s *pt.Server) Config {
			return Config{BaseURL: s.URL, AuthToken: "gateway-token", HTTPClient: s.Client(), Thinking: "2000"}
		}},
		{"none", func(s *pt.Server) Config { return Config{BaseURL: s.URL, HTTPClient: s.Client()} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := pt.NewAnthropicServer(t, pt.Turn{Text: "one"}, pt.Turn{Text: "two"})
			cfg := tc.cfg(srv)
			p := New("claude-sonnet-4-5", cfg)
			params := p.params(req)
			body, err := p.body(params, req)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if r := pt.Collect(ctx, p, req); r.Err != nil || r.Text != "one" {
				t.Fatalf("reply %q, %v", r.Text, r.Err)
			}
			// The route used before: the typed method with the same body.
			opts := []option.RequestOption{option.WithBaseURL(srv.URL + "/"), option.WithMaxRetries(0), option.WithHTTPClient(srv.Client())}
			switch {
			case cfg.APIKey != "":
				opts = append(opts, option.WithAPIKey(cfg.APIKey))
			case cfg.AuthToken != "":
				opts = append(opts, option.WithAuthToken(cfg.AuthToken))
			}
			for k, vs := range cfg.Headers {
				for _, v := range vs {
					opts = append(opts, option.WithHeaderAdd(k, v))
				}
			}
			svc := sdk.NewMessageService(opts...)
			s := svc.NewStreaming(ctx, params, option.WithRequestBody("application/json", body))
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			s.Close()
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			got, want := reqs[0], reqs[1]
			if got.Method != want.Method || got.Path != want.Path {
				t.Errorf("sent %s %s, want %s %s", got.Method, got.Path, want.Method, want.Path)
			}
			if !bytes.Equal(got.Body, body) || !bytes.Equal(want.Body, body) {
				t.Errorf("body:\n got %s\nwant %s", got.Body, body)
			}
			names := func(h http.Header) []string {
				ks := slices.Sorted(func(yield func(string) bool) {
					for k := range h {
						if !yield(k) {
							return
						}
					}
				})
				return ks
			}
			if g, w := names(got.Header), names(want.Header); !slices.Equal(g, w) {
				t.Errorf("headers %q, want %q", g, w)
			}
			for k, w := range want.Header {
				if g := got.Header[k]; !slices.Equal(g, w) {
					t.Errorf("header %s: %q, want %q", k, g, w)
				}
			}
			for k, vs := range got.Header {
				for _, v := range vs {
					if strings.Contains(v, "process-env") || k == "X-Env" {
						t.Errorf("process environment sent: %s: %s", k, v)
					}
				}
			}
		})
	}
}
