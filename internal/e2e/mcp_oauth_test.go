package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/plugin/mcp/oauthtest"
)

// toolOutput runs a script that calls tool once and returns what the call gave the
// model (from stream-json).
func (e *env) toolOutput(tool string) string {
	e.t.Helper()
	e.write("script.yaml", "turns:\n  - tool_calls: [{name: "+tool+", args: {}}]\n  - text: done\n")
	r := e.run(nil, "run", "-m", "script:script.yaml", "--output", "stream-json", "--approve", "all", "who am i")
	for _, line := range strings.Split(r.stdout, "\n") {
		var ev struct{ Type, Name, Output string }
		if json.Unmarshal([]byte(line), &ev) == nil && (ev.Type == "tool_call_completed" || ev.Type == "tool_call_failed") && ev.Name == tool {
			return ev.Output
		}
	}
	e.t.Fatalf("no result of %s (exit %d)\n%s\n%s", tool, r.code, r.stdout, r.stderr)
	return ""
}

// TestMCPOAuthLogin: a server answering 401 fails to start with an error naming
// `lovia mcp login`; the login (the test plays the browser) stores 0600 tokens; runs
// call the tool with them, renew them when the server refuses them or they expire,
// and name the command again once the refresh token is revoked.
func TestMCPOAuthLogin(t *testing.T) {
	fake := oauthtest.New()
	t.Cleanup(fake.Close)
	e := newEnv(t)
	e.userConfig("mcp:\n  servers:\n    remote:\n      url: " + fake.URL() + "\n      startup_timeout: 20s\n")

	r := e.run(nil, "mcp", "list")
	if r.code != 1 || !strings.Contains(r.stdout, "lovia mcp login remote") || !strings.Contains(r.stdout, "not logged in") {
		t.Fatalf("mcp list before login: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "mcp", "login", "--no-browser", "remote")
	cmd.Dir, cmd.Env = e.dir, e.vars
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	var authURL string
	var printed strings.Builder
	for authURL == "" && sc.Scan() {
		printed.WriteString(sc.Text() + "\n")
		if l := strings.TrimSpace(sc.Text()); strings.HasPrefix(l, fake.AS.URL+"/authorize?") {
			authURL = l
		}
	}
	if authURL == "" {
		t.Fatalf("no authorization URL printed:\n%s\n%s", printed.String(), stderr.String())
	}
	// The browser: the fake authorization server approves and redirects to lovia.
	resp, err := http.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "Logged in") {
		t.Fatalf("callback page: %s %s", resp.Status, page)
	}
	rest, _ := io.ReadAll(stdout)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("mcp login: %v\n%s%s\n%s", err, printed.String(), rest, stderr.String())
	}
	if !strings.Contains(string(rest), "Logged in to MCP server remote") {
		t.Fatalf("mcp login said:\n%s", rest)
	}
	tokens := filepath.Join(e.home, "data", "mcp-auth", "remote.json")
	if st, err := os.Stat(tokens); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("tokens file: %v %v", st, err)
	}
	if st, _ := os.Stat(filepath.Dir(tokens)); st.Mode().Perm() != 0o700 {
		t.Fatalf("tokens dir mode %v", st.Mode())
	}
	stored := func() (tok struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}) {
		var f struct {
			Token json.RawMessage `json:"token"`
		}
		data, _ := os.ReadFile(tokens)
		if json.Unmarshal(data, &f) != nil || json.Unmarshal(f.Token, &tok) != nil || tok.AccessToken == "" {
			t.Fatalf("tokens file:\n%s", data)
		}
		return tok
	}
	first := stored()

	if out := e.toolOutput("remote__whoami"); out != "authorized caller" {
		t.Fatalf("whoami = %q", out)
	}
	if s := fake.Stats(); s.Calls != 1 || s.LastToken != first.AccessToken {
		t.Fatalf("the call did not carry the stored token: %+v", s)
	}

	// The server stops accepting the token: renewed on the 401.
	fake.RevokeAccess()
	if out := e.toolOutput("remote__whoami"); out != "authorized caller" {
		t.Fatalf("whoami after revocation = %q", out)
	}
	second := stored()
	if s := fake.Stats(); s.Refreshes != 1 || s.LastToken != second.AccessToken || second.AccessToken == first.AccessToken {
		t.Fatalf("not renewed on 401: %+v", s)
	}

	// An expired token is renewed before it is sent.
	var f map[string]any
	data, _ := os.ReadFile(tokens)
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	f["token"].(map[string]any)["expiry"] = time.Now().Add(-time.Hour).Format(time.RFC3339)
	data, _ = json.Marshal(f)
	if err := os.WriteFile(tokens, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := e.run(nil, "mcp", "get", "remote"); !strings.Contains(r.stdout, "auth: logged in (expired; renews at next use)") {
		t.Fatalf("mcp get:\n%s%s", r.stdout, r.stderr)
	}
	if out := e.toolOutput("remote__whoami"); out != "authorized caller" {
		t.Fatalf("whoami with an expired token = %q", out)
	}
	if s := fake.Stats(); s.Refreshes != 2 {
		t.Fatalf("expired token not renewed: %+v", s)
	}
	third := stored()

	// Revoked refresh token: a clear error naming the command.
	fake.RevokeAccess()
	fake.RevokeRefresh()
	if out := e.toolOutput("remote__whoami"); !strings.Contains(out, "lovia mcp login remote") {
		t.Fatalf("whoami with a revoked refresh token = %q", out)
	}

	// No token in the database or the log.
	db := e.dbBytes()
	log, _ := os.ReadFile(filepath.Join(e.home, "data", "logs", "lovia.log"))
	for _, tok := range []string{first.AccessToken, first.RefreshToken, second.AccessToken, second.RefreshToken, third.AccessToken, third.RefreshToken} {
		if strings.Contains(db, tok) || strings.Contains(string(log), tok) {
			t.Fatal("a token is in the database or the log")
		}
	}

	if r := e.run(nil, "mcp", "logout", "remote"); r.code != 0 || !strings.Contains(r.stdout, "Logged out") {
		t.Fatalf("logout: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(tokens); !os.IsNotExist(err) {
		t.Fatalf("tokens after logout: %v", err)
	}
}
