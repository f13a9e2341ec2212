package openai

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"testing"

	oa "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/lovia-dev/lovia/internal/provider"
	pt "github.com/lovia-dev/lovia/internal/provider/providertest"
)

// sameRequest fails unless two captured requests are the same on the wire:
// method, path, every header and the body byte for byte.
func sameRequest(t *testing.T, got, want pt.Request) {
	t.Helper()
	if got.Method != want.Method || got.Path != want.Path {
		t.Errorf("sent %s %s, want %s %s", got.Method, got.Path, want.Method, want.Path)
	}
	if !bytes.Equal(got.Body, want.Body) {
		t.Errorf("body:\n got %s\nwant %s", got.Body, want.Body)
	}
	keys := func(h http.Header) []string {
		var ks []string
		for k := range h {
			if k != "Accept-Encoding" { // the transport's, not the client's
				ks = append(ks, k)
			}
		}
		slices.Sort(ks)
		return ks
	}
	if g, w := keys(got.Header), keys(want.Header); !slices.Equal(g, w) {
		t.Errorf("headers %q, want %q", g, w)
	}
	for k, w := range want.Header {
		if g := got.Header[k]; k != "Accept-Encoding" && !slices.Equal(g, w) {
			t.Errorf("header %s: %q, want %q", k, g, w)
		}
	}
}

// The request a provider sends is the one the client's own streaming method
// sends for the same prebuilt body: same headers (key, organization, project,
// custom headers, the client's own), same path, the body byte for byte. Keys in
// the process environment are never sent (the client is built without its
// environment defaults).
func TestSendMatchesClientMethod(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-process-env")
	t.Setenv("OPENAI_ADMIN_KEY", "sk-admin-from-process-env")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Env: leaked")
	t.Setenv("OPENAI_ORG_ID", "org-env")
	req := bodyConversation()[8]
	for _, tc := range []struct {
		name  string
		serve func(testing.TB, ...pt.Turn) *pt.Server
		cfg   func(*pt.Server) Config
	}{
		{"chat", pt.NewOpenAIServer, func(s *pt.Server) Config {
			return Config{Provider: "openai", BaseURL: s.URL + "/v1", APIKey: pt.APIKey, HTTPClient: s.Client(),
				Organization: "org-1", Project: "proj-1", Headers: http.Header{"X-Gateway": {"a", "b"}}}
		}},
		{"keyless", pt.NewOpenAIServer, func(s *pt.Server) Config {
			return Config{Provider: "ollama", BaseURL: s.URL + "/v1", HTTPClient: s.Client()}
		}},
		{"responses", pt.NewResponsesServer, func(s *pt.Server) Config {
			return Config{Provider: "openai-responses", BaseURL: s.URL + "/v1", APIKey: pt.APIKey, HTTPClient: s.Client(),
				Headers: http.Header{"X-Gateway": {"c"}}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := tc.serve(t, pt.Turn{Text: "one"}, pt.Turn{Text: "two"})
			cfg := tc.cfg(srv)
			var p provider.Provider
			var body []byte
			var err error
			var viaMethod func() error
			ctx := context.Background()
			if tc.name == "responses" {
				r := NewResponses("gpt-5", cfg)
				p = r
				body, err = r.body(req)
				viaMethod = func() error {
					svc := responses.NewResponseService(cfg.options()...)
					s := svc.NewStreaming(ctx, responses.ResponseNewParams{},
						option.WithRequestBody("application/json", body))
					defer s.Close()
					return s.Err()
				}
			} else {
				c := NewChat("gpt-4.1", cfg)
				p = c
				body, err = c.body(req)
				viaMethod = func() error {
					svc := oa.NewChatCompletionService(cfg.options()...)
					s := svc.NewStreaming(ctx, oa.ChatCompletionNewParams{},
						option.WithRequestBody("application/json", body))
					defer s.Close()
					return s.Err()
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if r := pt.Collect(ctx, p, req); r.Err != nil || r.Text != "one" {
				t.Fatalf("reply %q, %v", r.Text, r.Err)
			}
			if err := viaMethod(); err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			sameRequest(t, reqs[0], reqs[1])
			if !bytes.Equal(reqs[0].Body, body) {
				t.Errorf("sent a body other than the one built:\n got %s\nwant %s", reqs[0].Body, body)
			}
			for k, vs := range reqs[0].Header {
				for _, v := range vs {
					if bytes.Contains([]byte(v), []byte("env")) || k == "X-Env" {
						t.Errorf("process environment sent: %s: %s", k, v)
					}
				}
			}
		})
	}
}
