package mcp

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/lovia-dev/lovia/internal/textutil"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// LoginOptions are the inputs of Login.
type LoginOptions struct {
	// AuthDir is where the tokens are stored (Config.AuthDir).
	AuthDir string
	// Out receives the authorization URL and progress lines.
	Out io.Writer
	// Open opens the URL in a browser (nil or failing: the printed URL is all).
	Open func(url string) error
	// Timeout bounds the whole login, the user's time in the browser included.
	Timeout time.Duration
}

// ErrNoLoginNeeded is returned by Login when the server accepts requests without one.
var ErrNoLoginNeeded = errors.New("the server does not ask for authorization")

// Login runs the OAuth 2.1 authorization-code flow with PKCE for server name:
// it asks the server (which answers 401 with its protected-resource metadata),
// discovers the authorization server, registers a client dynamically unless
// client_id is configured, sends the user's browser to the authorization endpoint,
// receives the code on a loopback listener (state checked), exchanges it and stores
// the tokens. Discovery and registration are the MCP SDK's; this is the glue.
func Login(ctx context.Context, name string, cfg ServerConfig, o LoginOptions) error {
	switch {
	case cfg.URL == "":
		return fmt.Errorf("MCP server %q is a stdio server: only url: servers log in", name)
	case !cfg.oauthEnabled():
		return fmt.Errorf("MCP server %q has OAuth turned off (oauth: false, or its own Authorization header)", name)
	case o.AuthDir == "":
		return errors.New("no directory to store the login in")
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	serverURL := os.ExpandEnv(cfg.URL)
	req, resp, err := challenge(ctx, serverURL, cfg)
	if err != nil {
		return fmt.Errorf("logging in to MCP server %q: %w", name, err)
	}
	if resp == nil {
		return ErrNoLoginNeeded
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		drainBody(resp)
		return fmt.Errorf("listening for the browser's redirect: %w", err)
	}
	defer ln.Close()
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port)
	cb := newCallback()
	srv := &http.Server{Handler: cb, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	var got struct {
		cfg *oauth2.Config
		tok *oauth2.Token
	}
	hc := oauthHTTPClient()
	hcfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL: redirect,
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs:            []string{redirect},
			TokenEndpointAuthMethod: "none",
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			ClientName:              "lovia",
		}},
		RequestRefreshToken: true,
		Client:              hc,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			return cb.await(ctx, args.URL, o)
		},
		NewTokenSource: func(_ context.Context, c *oauth2.Config, t *oauth2.Token) (oauth2.TokenSource, error) {
			got.cfg, got.tok = c, t
			return oauth2.StaticTokenSource(t), nil
		},
	}
	if cfg.ClientID != "" {
		pc := &oauthex.ClientCredentials{ClientID: os.ExpandEnv(cfg.ClientID)}
		if cfg.ClientSecret != "" {
			pc.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: os.ExpandEnv(cfg.ClientSecret)}
		}
		hcfg.PreregisteredClient = pc
		hcfg.DynamicClientRegistrationConfig = nil
	}
	if len(cfg.Scopes) > 0 {
		hcfg.ScopeFilter = func([]string) []string { return cfg.Scopes }
	}
	h, err := auth.NewAuthorizationCodeHandler(hcfg)
	if err != nil {
		drainBody(resp)
		return err
	}
	if err := h.Authorize(ctx, req, resp); err != nil {
		return fmt.Errorf("logging in to MCP server %q: %w", name, err)
	}
	if got.tok == nil || got.tok.AccessToken == "" {
		return fmt.Errorf("logging in to MCP server %q: the authorization server issued no access token", name)
	}
	l := &storedLogin{
		ServerURL: serverURL,
		TokenURL:  got.cfg.Endpoint.TokenURL,
		ClientID:  got.cfg.ClientID,
		AuthStyle: got.cfg.Endpoint.AuthStyle,
		Scopes:    got.cfg.Scopes,
		Token:     got.tok,
		Saved:     time.Now(),
	}
	if cfg.ClientSecret == "" {
		l.ClientSecret = got.cfg.ClientSecret // a registered client's; a configured one stays in the config
	}
	if err := writeLogin(o.AuthDir, name, l); err != nil {
		return fmt.Errorf("storing the login: %w", err)
	}
	fmt.Fprintf(o.Out, "Logged in to MCP server %s; the tokens are in %s\n", name, tokenFile(o.AuthDir, name))
	return nil
}

// challenge sends the initialize request the way a start would (a POST, and for an
// SSE server or one refusing the POST, the GET of the event stream) and returns the
// request and its 401 response; resp is nil when the server answered otherwise.
func challenge(ctx context.Context, serverURL string, cfg ServerConfig) (*http.Request, *http.Response, error) {
	hc := &http.Client{Timeout: oauthTimeout}
	headers := expandAll(cfg.Headers)
	try := func(method string) (*http.Request, *http.Response, error) {
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"lovia","version":"1"}}}`)
		}
		req, err := http.NewRequestWithContext(ctx, method, serverURL, body)
		if err != nil {
			return nil, nil, err
		}
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		if method == http.MethodPost {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
		} else {
			req.Header.Set("Accept", "text/event-stream")
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, nil, fmt.Errorf("asking the MCP server: %w", err)
		}
		return req, resp, nil
	}
	method := http.MethodPost
	if cfg.Transport == "sse" {
		method = http.MethodGet
	}
	req, resp, err := try(method)
	if err != nil {
		return nil, nil, err
	}
	if method == http.MethodPost && cfg.Transport == "" {
		switch resp.StatusCode {
		case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
			_ = resp.Body.Close()
			if req, resp, err = try(http.MethodGet); err != nil {
				return nil, nil, err
			}
		}
	}
	if resp.StatusCode != http.StatusUnauthorized {
		_ = resp.Body.Close() // an event stream never ends: not drained
		return nil, nil, nil
	}
	return req, resp, nil
}

// callback receives the browser's redirect. A request whose state does not match is
// refused and the wait goes on: only the browser sent to the printed URL completes it.
type callback struct {
	state  chan string
	result chan callbackResult
}

type callbackResult struct {
	res *auth.AuthorizationResult
	err error
}

func newCallback() *callback {
	return &callback{state: make(chan string, 1), result: make(chan callbackResult, 1)}
}

func (c *callback) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/callback" {
		http.NotFound(w, r)
		return
	}
	var want string
	select {
	case want = <-c.state:
		c.state <- want
	default:
	}
	q := r.URL.Query()
	if want == "" || q.Get("state") != want {
		http.Error(w, "lovia: state mismatch; this is not the login lovia started", http.StatusBadRequest)
		return
	}
	res := callbackResult{res: &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}}
	if e := q.Get("error"); e != "" {
		res = callbackResult{err: fmt.Errorf("the authorization server refused: %s %s", textutil.Clip(e, 80), textutil.Clip(q.Get("error_description"), 200))}
	} else if res.res.Code == "" {
		res = callbackResult{err: errors.New("the authorization server sent no code")}
	}
	select {
	case c.result <- res:
	default:
		http.Error(w, "lovia: this login is already complete", http.StatusConflict)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	msg := "Logged in. You can close this tab and return to lovia."
	if res.err != nil {
		msg = "Login failed: " + res.err.Error()
	}
	fmt.Fprintf(w, "<!doctype html><title>lovia</title><p>%s</p>\n", html.EscapeString(msg))
}

// await prints (and opens) the authorization URL and waits for the redirect.
func (c *callback) await(ctx context.Context, authURL string, o LoginOptions) (*auth.AuthorizationResult, error) {
	u, err := url.Parse(authURL)
	if err != nil {
		return nil, err
	}
	if err := checkOAuthURL(u); err != nil {
		return nil, err
	}
	state := u.Query().Get("state")
	if state == "" {
		return nil, errors.New("authorization URL without state")
	}
	c.state <- state
	fmt.Fprintf(o.Out, "Open this URL in a browser to log in (waiting up to %s):\n\n  %s\n\n", o.Timeout.Round(time.Second), authURL)
	if o.Open != nil {
		if err := o.Open(authURL); err != nil {
			fmt.Fprintf(o.Out, "(could not open a browser: %v; open the URL yourself)\n", err)
		}
	}
	select {
	case r := <-c.result:
		return r.res, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("no answer from the browser: %w", ctx.Err())
	}
}
