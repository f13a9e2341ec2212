package providertest

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestServerScriptAndRecording(t *testing.T) {
	srv := NewAnthropicServer(t, Turn{Text: "hi"})
	post := func(path, body string) (int, string) {
		resp, err := srv.Client().Post(srv.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post("/v1/messages", `{"model":"m"}`); code != 200 || !strings.Contains(body, `"text":"hi"`) || !strings.Contains(body, "message_stop") {
		t.Errorf("scripted turn: %d %s", code, body)
	}
	if code, body := post("/v1/messages", `{}`); code != 400 || !strings.Contains(body, "no scripted turn left") {
		t.Errorf("exhausted script: %d %s", code, body)
	}
	if code, _ := post("/v1/chat/completions", `{}`); code != 404 {
		t.Errorf("wrong route: %d", code)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || reqs[0].JSON()["model"] != "m" || reqs[0].Method != http.MethodPost {
		t.Errorf("recorded %+v", reqs)
	}
	if srv.EnvVars()["ANTHROPIC_API_KEY"] != APIKey || srv.Env().Getenv("ANTHROPIC_BASE_URL") != srv.URL {
		t.Errorf("env %v", srv.EnvVars())
	}
}

func TestPieces(t *testing.T) {
	got := pieces("héllo wörld", 2)
	if strings.Join(got, "") != "héllo wörld" {
		t.Fatalf("%q", got)
	}
	for _, p := range got {
		if !strings.ContainsRune(p, 0xFFFD) && len(p) > 0 && !isRuneStart(p[0]) {
			t.Errorf("piece %q starts mid-rune", p)
		}
	}
}
