package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lovia-dev/lovia/internal/textutil"
	"github.com/lovia-dev/lovia/internal/workspace"

	"golang.org/x/oauth2"
)

// OAuth 2.1 for url: servers (the MCP authorization specification). `lovia mcp
// login NAME` (login.go) runs the browser flow and stores the tokens in one 0600 file
// per server under Config.AuthDir; every request of a connection then carries the
// access token (authTransport), refreshed when it expires or the server answers 401.
// A run never starts a login by itself: a server that needs one fails to start with
// an error naming the command.

// Bounds for talking to authorization servers, which the MCP server names and so
// are not trusted.
const (
	oauthTimeout  = 30 * time.Second
	maxOAuthBody  = 1 << 20
	refreshMargin = 30 * time.Second
)

// storedLogin is the token file of one server.
type storedLogin struct {
	// ServerURL is the url: the tokens were issued for: they are never sent elsewhere.
	ServerURL string `json:"server_url"`
	Resource  string `json:"resource,omitempty"`
	Issuer    string `json:"issuer,omitempty"`
	TokenURL  string `json:"token_url"`
	ClientID  string `json:"client_id"`
	// ClientSecret is kept only for a dynamically registered client (a configured
	// client_secret is read from the config each time).
	ClientSecret string           `json:"client_secret,omitempty"`
	AuthStyle    oauth2.AuthStyle `json:"auth_style,omitempty"`
	Scopes       []string         `json:"scopes,omitempty"`
	Token        *oauth2.Token    `json:"token"`
	Saved        time.Time        `json:"saved"`
}

// AuthDir is where the logins of url: servers are kept under lovia's data directory.
// The sandbox hides it from commands (workspace.MCPAuthDir).
func AuthDir(home string) string { return filepath.Join(home, workspace.MCPAuthDir) }

// tokenFile is the file of server name in dir.
func tokenFile(dir, name string) string { return filepath.Join(dir, name+".json") }

func readLogin(dir, name string) (*storedLogin, error) {
	f, err := os.Open(tokenFile(dir, name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxOAuthBody))
	if err != nil {
		return nil, err
	}
	var l storedLogin
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, fmt.Errorf("%s: %w", tokenFile(dir, name), err)
	}
	if l.Token == nil || l.Token.AccessToken == "" {
		return nil, fmt.Errorf("%s: no access token", tokenFile(dir, name))
	}
	return &l, nil
}

// writeLogin replaces the token file atomically: directory 0700, file 0600.
func writeLogin(dir, name string, l *storedLogin) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	_ = os.Chmod(dir, 0o700)
	data, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".login-*")
	if err != nil {
		return err
	}
	_ = tmp.Chmod(0o600)
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr == nil && cerr == nil {
		werr = os.Rename(tmp.Name(), tokenFile(dir, name))
	}
	if werr != nil || cerr != nil {
		_ = os.Remove(tmp.Name())
		return errors.Join(werr, cerr)
	}
	return nil
}

// oauthClient is one server's login, shared by its connections.
type oauthClient struct {
	name string
	cfg  ServerConfig
	dir  string
	hc   *http.Client

	mu    sync.Mutex
	login *storedLogin // nil until read

	// need is why the last request could not be authorized (cleared at each start).
	need atomic.Pointer[error]
}

func newOAuthClient(name string, cfg ServerConfig, dir string) *oauthClient {
	if dir == "" || !cfg.oauthEnabled() {
		return nil
	}
	return &oauthClient{name: name, cfg: cfg, dir: dir, hc: oauthHTTPClient()}
}

// LoginCommand is what a user runs to log in to server name.
func LoginCommand(name string) string { return "lovia mcp login " + name }

func (a *oauthClient) fail(format string, args ...any) error {
	err := fmt.Errorf("MCP server %q (%s) "+format+": run `%s`", append(append([]any{a.name, a.cfg.URL}, args...), LoginCommand(a.name))...)
	a.need.Store(&err)
	return err
}

// stored returns the login for the configured URL (nil when there is none).
func (a *oauthClient) stored() *storedLogin {
	if a.login == nil {
		l, err := readLogin(a.dir, a.name)
		if err != nil || l.ServerURL != os.ExpandEnv(a.cfg.URL) {
			return nil
		}
		a.login = l
	}
	return a.login
}

// token returns the access token to send (nil = not logged in), refreshed first when
// it expires within refreshMargin, or when force is set (the server refused it).
func (a *oauthClient) token(ctx context.Context, force string) (*oauth2.Token, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	l := a.stored()
	if l == nil {
		return nil, nil
	}
	t := l.Token
	if force != "" && t.AccessToken != force {
		return t, nil // another request refreshed it already
	}
	if force == "" && (t.Expiry.IsZero() || time.Until(t.Expiry) > refreshMargin) {
		return t, nil
	}
	if t.RefreshToken == "" {
		return nil, a.fail("login expired")
	}
	// Another process may have refreshed it (and rotated the refresh token).
	if fresh, err := readLogin(a.dir, a.name); err == nil && fresh.ServerURL == l.ServerURL && fresh.Token.AccessToken != t.AccessToken &&
		(fresh.Token.Expiry.IsZero() || time.Until(fresh.Token.Expiry) > refreshMargin) {
		a.login = fresh
		return fresh.Token, nil
	}
	secret := l.ClientSecret
	if a.cfg.ClientSecret != "" {
		secret = os.ExpandEnv(a.cfg.ClientSecret)
	}
	oc := &oauth2.Config{ClientID: l.ClientID, ClientSecret: secret, Endpoint: oauth2.Endpoint{TokenURL: l.TokenURL, AuthStyle: l.AuthStyle}}
	old := *t
	old.Expiry = time.Unix(1, 0) // makes the token source refresh now
	rctx, cancel := context.WithTimeout(context.WithValue(ctx, oauth2.HTTPClient, a.hc), oauthTimeout)
	defer cancel()
	nt, err := oc.TokenSource(rctx, &old).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			reason := re.ErrorCode
			if reason == "" {
				reason = re.Response.Status
			}
			return nil, a.fail("login expired and could not be renewed (%s)", textutil.Clip(reason, 120))
		}
		return nil, fmt.Errorf("MCP server %q: renewing the login: %w", a.name, err)
	}
	nl := *l
	nl.Token, nl.Saved = nt, time.Now()
	if err := writeLogin(a.dir, a.name, &nl); err != nil {
		return nil, fmt.Errorf("MCP server %q: storing the renewed login: %w", a.name, err)
	}
	a.login = &nl
	return nt, nil
}

// loginError is why the server's last start could not be authorized (nil = it was).
func (s *server) loginError() error {
	if s.auth == nil {
		return nil
	}
	if e := s.auth.need.Load(); e != nil {
		return *e
	}
	return nil
}

// authTransport sends the stored access token and, when the server answers 401,
// renews it once and retries; without a usable login the request fails with an error
// naming `lovia mcp login`. The token goes only to the URL it was issued for.
type authTransport struct {
	auth *oauthClient
	base http.RoundTripper
}

func (t *authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	tok, err := t.auth.token(r.Context(), "")
	if err != nil {
		return nil, err
	}
	send := func(tok *oauth2.Token) (*http.Response, error) {
		r2 := r.Clone(r.Context())
		if tok != nil {
			r2.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		}
		if r.GetBody != nil && r.Body != nil && r.Body != http.NoBody {
			b, err := r.GetBody()
			if err != nil {
				return nil, err
			}
			r2.Body = b
		}
		return t.base.RoundTrip(r2)
	}
	resp, err := send(tok)
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	drainBody(resp)
	if tok == nil {
		return nil, t.auth.fail("requires authorization (HTTP 401)")
	}
	if r.Body != nil && r.Body != http.NoBody && r.GetBody == nil {
		return nil, t.auth.fail("refused the stored login (HTTP 401)")
	}
	ntok, err := t.auth.token(r.Context(), tok.AccessToken)
	if err != nil {
		return nil, err
	}
	resp, err = send(ntok)
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	drainBody(resp)
	return nil, t.auth.fail("refused the renewed login (HTTP 401)")
}

func drainBody(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
}

// oauthHTTPClient talks to authorization servers and metadata endpoints: only https
// (or http to a loopback address), bounded in time and size, redirects checked too.
func oauthHTTPClient() *http.Client {
	return &http.Client{
		Timeout:   oauthTimeout,
		Transport: safeTransport{base: http.DefaultTransport},
		CheckRedirect: func(r *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("too many redirects")
			}
			return checkOAuthURL(r.URL)
		},
	}
}

type safeTransport struct{ base http.RoundTripper }

func (t safeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := checkOAuthURL(r.URL); err != nil {
		return nil, err
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitedBody{rc: resp.Body, left: maxOAuthBody}
	return resp, nil
}

// limitedBody fails a read past its limit (rather than truncating JSON silently).
type limitedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n > 0 {
			return 0, fmt.Errorf("authorization server response larger than %d bytes", maxOAuthBody)
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// checkOAuthURL allows https, and http only to a loopback address.
func checkOAuthURL(u *url.URL) error {
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if isLoopback(u.Hostname()) {
			return nil
		}
	}
	return fmt.Errorf("refusing OAuth endpoint %s: only https (or http on a loopback address) is allowed", (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String())
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// AuthStatus says how server name authenticates, for `lovia mcp list` and `get`:
// "" (stdio), "off" (oauth: false), "header" (its own Authorization header),
// "logged in", "logged in (expired; renews at next use)" or "not logged in".
func AuthStatus(name string, cfg ServerConfig, dir string) string {
	switch {
	case cfg.URL == "":
		return ""
	case cfg.OAuth != nil && !*cfg.OAuth:
		return "off"
	case !cfg.oauthEnabled():
		return "header"
	}
	l, err := readLogin(dir, name)
	if dir == "" || err != nil || l.ServerURL != os.ExpandEnv(cfg.URL) {
		return "not logged in"
	}
	if !l.Token.Expiry.IsZero() && time.Now().After(l.Token.Expiry) {
		if l.Token.RefreshToken == "" {
			return "login expired"
		}
		return "logged in (expired; renews at next use)"
	}
	return "logged in"
}

// Logout deletes the stored login of server name; it reports whether there was one.
func Logout(dir, name string) (bool, error) {
	err := os.Remove(tokenFile(dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
