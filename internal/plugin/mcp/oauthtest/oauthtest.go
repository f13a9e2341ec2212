// Package oauthtest is an in-test OAuth 2.1 authorization server and an MCP server
// protected by it, for the tests of lovia's MCP OAuth support (unit and e2e). The
// authorization server publishes RFC 8414 metadata, registers clients (RFC 7591),
// approves every authorization request at once (redirecting with the code), checks
// PKCE (S256), the redirect URI and the resource indicator (RFC 8707) at the token
// endpoint, and renews tokens with rotating refresh tokens. The MCP server (the SDK's
// streamable handler behind the SDK's bearer-token middleware) publishes its RFC 9728
// metadata and has one tool, whoami.
package oauthtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Server is the pair of servers.
type Server struct {
	AS  *httptest.Server // the authorization server
	RS  *httptest.Server // the MCP server (resource server)
	ttl time.Duration

	mu      sync.Mutex
	clients map[string][]string // client_id → redirect URIs
	codes   map[string]grant
	access  map[string]time.Time // live access tokens → expiry
	refresh map[string]bool      // live refresh tokens
	stats   Stats
}

// Stats counts what the authorization server did.
type Stats struct {
	Registrations, Exchanges, Refreshes int
	// BadVerifier counts code exchanges refused for a PKCE verifier that does not
	// match the challenge; BadRefresh refreshes refused for a dead refresh token.
	BadVerifier, BadRefresh int
	// Calls counts whoami calls the MCP server answered (with a valid token).
	Calls int
	// LastToken is the access token of the last whoami call.
	LastToken string
}

type grant struct {
	client, redirect, challenge, resource string
}

// New starts both servers; Close stops them.
func New() *Server {
	s := &Server{ttl: time.Hour, clients: map[string][]string{}, codes: map[string]grant{}, access: map[string]time.Time{}, refresh: map[string]bool{}}
	s.AS = httptest.NewServer(s.asHandler())
	s.RS = httptest.NewUnstartedServer(nil)
	s.RS.Config.Handler = s.rsHandler("http://" + s.RS.Listener.Addr().String())
	s.RS.Start()
	return s
}

// Close stops both servers.
func (s *Server) Close() {
	s.RS.Close()
	s.AS.Close()
}

// URL is the MCP endpoint.
func (s *Server) URL() string { return s.RS.URL + "/mcp" }

// Stats returns a copy of the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// RevokeAccess makes every access token issued so far invalid (the MCP server
// answers 401), as a server-side revocation or a lost session would.
func (s *Server) RevokeAccess() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.access = map[string]time.Time{}
}

// RevokeRefresh makes every refresh token issued so far invalid.
func (s *Server) RevokeRefresh() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refresh = map[string]bool{}
}

func token() string { return rand.Text() }

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func oauthError(w http.ResponseWriter, code, desc string) {
	writeJSON(w, http.StatusBadRequest, map[string]string{"error": code, "error_description": desc})
}

func (s *Server) asHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, oauthex.AuthServerMeta{
			Issuer:                            s.AS.URL,
			AuthorizationEndpoint:             s.AS.URL + "/authorize",
			TokenEndpoint:                     s.AS.URL + "/token",
			RegistrationEndpoint:              s.AS.URL + "/register",
			ResponseTypesSupported:            []string{"code"},
			GrantTypesSupported:               []string{"authorization_code", "refresh_token"},
			CodeChallengeMethodsSupported:     []string{"S256"},
			TokenEndpointAuthMethodsSupported: []string{"none"},
			ScopesSupported:                   []string{"mcp", "offline_access"},
		})
	})
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
		var m oauthex.ClientRegistrationMetadata
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&m); err != nil || len(m.RedirectURIs) == 0 {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
			return
		}
		id := "client-" + token()
		s.mu.Lock()
		s.clients[id] = m.RedirectURIs
		s.stats.Registrations++
		s.mu.Unlock()
		writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "redirect_uris": m.RedirectURIs, "token_endpoint_auth_method": "none",
			"grant_types": []string{"authorization_code", "refresh_token"}})
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		s.mu.Lock()
		uris, ok := s.clients[q.Get("client_id")]
		s.mu.Unlock()
		switch {
		case !ok:
			http.Error(w, "unknown client", http.StatusBadRequest)
			return
		case !slices.Contains(uris, q.Get("redirect_uri")):
			http.Error(w, "redirect_uri not registered", http.StatusBadRequest)
			return
		case q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
			http.Error(w, "PKCE S256 and response_type=code are required", http.StatusBadRequest)
			return
		case q.Get("resource") != s.URL():
			http.Error(w, "resource indicator missing or wrong", http.StatusBadRequest)
			return
		}
		code := token()
		s.mu.Lock()
		s.codes[code] = grant{client: q.Get("client_id"), redirect: q.Get("redirect_uri"), challenge: q.Get("code_challenge"), resource: q.Get("resource")}
		s.mu.Unlock()
		back, _ := url.Parse(q.Get("redirect_uri"))
		bq := back.Query()
		bq.Set("code", code)
		bq.Set("state", q.Get("state"))
		back.RawQuery = bq.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound) // the user approved at once
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 1<<16)
		if err := r.ParseForm(); err != nil {
			oauthError(w, "invalid_request", err.Error())
			return
		}
		f := r.PostForm
		s.mu.Lock()
		defer s.mu.Unlock()
		switch f.Get("grant_type") {
		case "authorization_code":
			g, ok := s.codes[f.Get("code")]
			if !ok || g.client != f.Get("client_id") || g.redirect != f.Get("redirect_uri") {
				oauthError(w, "invalid_grant", "unknown code, client or redirect_uri")
				return
			}
			sum := sha256.Sum256([]byte(f.Get("code_verifier")))
			if base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
				// A real server would burn the code too; the tests show the refusal.
				s.stats.BadVerifier++
				oauthError(w, "invalid_grant", "PKCE verification failed")
				return
			}
			if f.Get("resource") != g.resource {
				oauthError(w, "invalid_target", "resource differs from the authorization request")
				return
			}
			delete(s.codes, f.Get("code"))
			s.stats.Exchanges++
		case "refresh_token":
			if !s.refresh[f.Get("refresh_token")] {
				s.stats.BadRefresh++
				oauthError(w, "invalid_grant", "refresh token revoked")
				return
			}
			delete(s.refresh, f.Get("refresh_token")) // rotation
			s.stats.Refreshes++
		default:
			oauthError(w, "unsupported_grant_type", f.Get("grant_type"))
			return
		}
		at, rt := "at-"+token(), "rt-"+token()
		s.access[at] = time.Now().Add(s.ttl)
		s.refresh[rt] = true
		writeJSON(w, http.StatusOK, map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": int(s.ttl.Seconds()), "refresh_token": rt, "scope": "mcp offline_access"})
	})
	return mux
}

func (s *Server) rsHandler(base string) http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Description: "Says the caller is authorized"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		tok := strings.TrimPrefix(req.Extra.Header.Get("Authorization"), "Bearer ")
		s.mu.Lock()
		s.stats.Calls++
		s.stats.LastToken = tok
		s.mu.Unlock()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "authorized caller"}}}, nil, nil
	})
	stream := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	verify := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		s.mu.Lock()
		exp, ok := s.access[tok]
		s.mu.Unlock()
		if !ok {
			return nil, errors.Join(auth.ErrInvalidToken, errors.New("unknown or revoked token"))
		}
		// One user: the SDK binds a session to it, and a renewed token keeps the session.
		return &auth.TokenInfo{Expiration: exp, UserID: "user-1", Scopes: []string{"mcp"}}, nil
	}
	meta := base + "/.well-known/oauth-protected-resource/mcp"
	mux := http.NewServeMux()
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: base + "/mcp", AuthorizationServers: []string{s.AS.URL}, ScopesSupported: []string{"mcp"},
	}))
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: meta, Scopes: []string{"mcp"}})(stream))
	return mux
}
