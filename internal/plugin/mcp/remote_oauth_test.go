package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/plugin/mcp/oauthtest"
)

// browser follows the authorization URL as a browser whose user approves would:
// the fake authorization server redirects to lovia's loopback listener.
func browser(t *testing.T) func(string) error {
	return func(u string) error {
		resp, err := http.Get(u)
		if err != nil {
			t.Errorf("browser: %v", err)
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Logged in") {
			t.Errorf("browser: %s: %s", resp.Status, body)
		}
		return nil
	}
}

func login(t *testing.T, name string, cfg ServerConfig, dir string, open func(string) error) error {
	t.Helper()
	var out bytes.Buffer
	err := Login(context.Background(), name, cfg, LoginOptions{AuthDir: dir, Out: &out, Open: open, Timeout: time.Minute})
	if err == nil && !strings.Contains(out.String(), "/authorize?") {
		t.Errorf("the authorization URL was not printed:\n%s", out.String())
	}
	return err
}

func TestOAuthLoginCallRefresh(t *testing.T) {
	fake := oauthtest.New()
	t.Cleanup(fake.Close) // after the plugins (registered later) are closed
	dir := filepath.Join(t.TempDir(), "auth")
	cfg := Config{Servers: map[string]ServerConfig{"remote": {URL: fake.URL(), StartupTimeout: 20 * time.Second}}, AuthDir: dir}

	// Not logged in: the server fails to start, naming the command; no browser opens.
	p, c := setup(t, cfg)
	if _, err, _ := p.servers["remote"].snapshot(); err == nil || !strings.Contains(err.Error(), "lovia mcp login remote") {
		t.Fatalf("start without a login: %v", err)
	}
	if len(c.Tools) != 0 || !strings.Contains(c.Instructions, "lovia mcp login remote") {
		t.Fatalf("contribution without a login: %d tools, %q", len(c.Tools), c.Instructions)
	}
	if got := AuthStatus("remote", cfg.Servers["remote"], dir); got != "not logged in" {
		t.Fatalf("status = %q", got)
	}

	if err := login(t, "remote", cfg.Servers["remote"], dir, browser(t)); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(tokenFile(dir, "remote"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", st, err)
	}
	if d, _ := os.Stat(dir); d.Mode().Perm() != 0o700 {
		t.Fatalf("token dir mode = %v", d.Mode())
	}
	if s := fake.Stats(); s.Registrations != 1 || s.Exchanges != 1 {
		t.Fatalf("stats after login: %+v", s)
	}
	if got := AuthStatus("remote", cfg.Servers["remote"], dir); got != "logged in" {
		t.Fatalf("status = %q", got)
	}

	_, c = setup(t, cfg)
	if res := run(t, c, "remote__whoami", `{}`); res.IsError || res.Text != "authorized caller" {
		t.Fatalf("whoami = %+v", res)
	}
	stored, _ := readLogin(dir, "remote")
	if s := fake.Stats(); s.Calls != 1 || s.LastToken != stored.Token.AccessToken {
		t.Fatalf("the call did not carry the stored token: %+v", s)
	}

	// The server stops accepting the token: the 401 renews it and the call goes through.
	fake.RevokeAccess()
	if res := run(t, c, "remote__whoami", `{}`); res.IsError {
		t.Fatalf("whoami after revocation = %+v", res)
	}
	renewed, _ := readLogin(dir, "remote")
	if s := fake.Stats(); s.Refreshes != 1 || s.LastToken != renewed.Token.AccessToken || renewed.Token.AccessToken == stored.Token.AccessToken {
		t.Fatalf("not renewed on 401: %+v", s)
	}

	// An expired token is renewed before it is sent.
	renewed.Token.Expiry = time.Now().Add(-time.Minute)
	if err := writeLogin(dir, "remote", renewed); err != nil {
		t.Fatal(err)
	}
	if got := AuthStatus("remote", cfg.Servers["remote"], dir); !strings.Contains(got, "expired") {
		t.Fatalf("status = %q", got)
	}
	_, c = setup(t, cfg)
	if res := run(t, c, "remote__whoami", `{}`); res.IsError {
		t.Fatalf("whoami with an expired token = %+v", res)
	}
	if s := fake.Stats(); s.Refreshes != 2 {
		t.Fatalf("expired token not renewed: %+v", s)
	}

	// The refresh token is revoked too: a clear error naming the command.
	fake.RevokeAccess()
	fake.RevokeRefresh()
	p, _ = setup(t, cfg)
	_, err, _ = p.servers["remote"].snapshot()
	if err == nil || !strings.Contains(err.Error(), "lovia mcp login remote") || !strings.Contains(err.Error(), "invalid_grant") {
		t.Fatalf("revoked refresh token: %v", err)
	}
	for _, secret := range []string{renewed.Token.AccessToken, renewed.Token.RefreshToken} {
		if strings.Contains(err.Error(), secret) {
			t.Fatal("a token is in the error")
		}
	}

	if had, err := Logout(dir, "remote"); !had || err != nil {
		t.Fatalf("logout: %v %v", had, err)
	}
	if _, err := os.Stat(tokenFile(dir, "remote")); !os.IsNotExist(err) {
		t.Fatalf("token file after logout: %v", err)
	}
}

// TestOAuthLoginRefusesForgeries: a redirect with another state is refused (and the
// login waits on for the real one), and the authorization server checks the PKCE
// verifier: a code is worthless without the verifier only lovia holds.
func TestOAuthLoginRefusesForgeries(t *testing.T) {
	fake := oauthtest.New()
	t.Cleanup(fake.Close) // after the plugins (registered later) are closed
	dir := t.TempDir()
	sc := ServerConfig{URL: fake.URL()}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	open := func(u string) error {
		resp, err := noRedirect.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		back, err := url.Parse(resp.Header.Get("Location"))
		if err != nil || back.Query().Get("code") == "" {
			t.Fatalf("authorize: %s %q", resp.Status, resp.Header.Get("Location"))
		}
		auth, _ := url.Parse(u)
		// Someone who saw the code but not the verifier.
		form := url.Values{"grant_type": {"authorization_code"}, "code": {back.Query().Get("code")}, "client_id": {auth.Query().Get("client_id")},
			"redirect_uri": {auth.Query().Get("redirect_uri")}, "code_verifier": {"not-the-verifier-not-the-verifier-not-the-verifier"}, "resource": {fake.URL()}}
		resp, err = http.PostForm(fake.AS.URL+"/token", form)
		if err != nil {
			t.Fatal(err)
		}
		var tr struct{ Error, AccessToken string }
		json.NewDecoder(resp.Body).Decode(&tr)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || tr.Error != "invalid_grant" {
			t.Fatalf("wrong verifier: %s %+v", resp.Status, tr)
		}
		// A forged redirect to lovia's listener with another state.
		forged := *back
		q := forged.Query()
		q.Set("state", "forged")
		forged.RawQuery = q.Encode()
		resp, err = http.Get(forged.String())
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "state mismatch") {
			t.Fatalf("forged state: %s %s", resp.Status, body)
		}
		// The real redirect completes the login.
		return browser(t)(u)
	}
	if err := login(t, "remote", sc, dir, open); err != nil {
		t.Fatal(err)
	}
	if s := fake.Stats(); s.BadVerifier != 1 || s.Exchanges != 1 {
		t.Fatalf("stats: %+v", s)
	}
}

func TestOAuthDisabledAndNoLoginNeeded(t *testing.T) {
	fake := oauthtest.New()
	t.Cleanup(fake.Close) // after the plugins (registered later) are closed
	dir := t.TempDir()
	off := false
	p, _ := setup(t, Config{Servers: map[string]ServerConfig{"remote": {URL: fake.URL(), OAuth: &off, StartupTimeout: 20 * time.Second}}, AuthDir: dir})
	if _, err, _ := p.servers["remote"].snapshot(); err == nil || strings.Contains(err.Error(), "lovia mcp login") {
		t.Fatalf("oauth: false still handles the 401: %v", err)
	}
	if err := Login(context.Background(), "remote", ServerConfig{URL: fake.URL(), OAuth: &off}, LoginOptions{AuthDir: dir, Out: io.Discard}); err == nil {
		t.Fatal("login with oauth: false")
	}
	open, _ := startHTTP(t)
	if err := Login(context.Background(), "open", ServerConfig{URL: open}, LoginOptions{AuthDir: dir, Out: io.Discard}); err != ErrNoLoginNeeded {
		t.Fatalf("login to a server without authorization: %v", err)
	}
}

func TestOAuthURLsMustBeHTTPSOrLoopback(t *testing.T) {
	for u, ok := range map[string]bool{
		"https://auth.example.com/token": true,
		"http://127.0.0.1:8080/token":    true,
		"http://[::1]:1/token":           true,
		"http://localhost/token":         true,
		"http://auth.example.com/token":  false,
		"http://10.0.0.1/token":          false,
		"file:///etc/passwd":             false,
		"javascript:alert(1)":            false,
	} {
		pu, _ := url.Parse(u)
		if err := checkOAuthURL(pu); (err == nil) != ok {
			t.Errorf("%s: %v", u, err)
		}
	}
	// A body past the bound fails instead of being buffered.
	big := &limitedBody{rc: io.NopCloser(strings.NewReader(strings.Repeat("x", maxOAuthBody+10))), left: maxOAuthBody}
	if _, err := io.ReadAll(big); err == nil {
		t.Fatal("an oversized body was read whole")
	}
}
