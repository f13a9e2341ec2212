package e2e

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/provider/providertest"
)

// fakeOllamaServer answers /api/show with show, /api/ps with no loaded model, and
// the chat endpoint from chat.
func fakeOllamaServer(t *testing.T, show []byte, chat *providertest.Server) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/show", func(w http.ResponseWriter, r *http.Request) { w.Write(show) })
	mux.HandleFunc("GET /api/ps", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"models":[]}`) })
	mux.Handle("/v1/", chat.Config.Handler)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestOllamaContextFromServer: lovia compacts to the context the Ollama server keeps
// (num_ctx 8192 in the model's Modelfile, from a real /api/show answer), so a long
// prompt is cut by lovia's compaction, not silently by the server; when the server
// does not say (no num_ctx), a prompt larger than Ollama's smallest default gets one
// warning on stderr naming the size, the cause and the fix.
func TestOllamaContextFromServer(t *testing.T) {
	show, err := os.ReadFile("../provider/openai/testdata/ollama_show_llama3.1.json")
	if err != nil {
		t.Fatal(err)
	}
	long := "summarize: " + strings.Repeat("The quick brown fox jumps over the lazy dog. ", 1000) // ~11k tokens
	turns := []providertest.Turn{{Text: "Summary."}, {Text: "Summary."}, {Text: "Summary."}, {Text: "Summary."}}

	chat := providertest.NewOpenAIServer(t, turns...)
	srv := fakeOllamaServer(t, show, chat)
	e := provEnv(t, nil)
	e.vars = append(e.vars, "OLLAMA_HOST="+srv.URL)
	p := provRun(e, 60*time.Second, "run", "-m", "ollama:llama3.1:8b", "--output", "json", long)
	if p.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", p.code, p.stderr)
	}
	for _, r := range chat.Requests() {
		if len(r.Body) > 8192*4 {
			t.Errorf("a %d-byte request went to a server that keeps 8192 tokens", len(r.Body))
		}
	}
	if strings.Contains(p.stderr, "this request is about") {
		t.Errorf("warned although compaction made the request fit:\n%s", p.stderr)
	}
	if !strings.Contains(p.stdout, `"cost_usd": 0`) {
		t.Errorf("a local model is free, not unknown:\n%s", p.stdout)
	}

	noNumCtx := bytes.Replace(show, []byte(`num_ctx                        8192\n`), nil, 1)
	if bytes.Equal(noNumCtx, show) {
		t.Fatal("fixture has no num_ctx line")
	}
	chat2 := providertest.NewOpenAIServer(t, turns...)
	srv2 := fakeOllamaServer(t, noNumCtx, chat2)
	e2 := provEnv(t, nil)
	e2.vars = append(e2.vars, "OLLAMA_HOST="+srv2.URL)
	p = provRun(e2, 60*time.Second, "run", "-m", "ollama:llama3.1:8b", "--output", "json", long)
	if p.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", p.code, p.stderr)
	}
	if n := strings.Count(p.stderr, "lovia: warning: ollama:llama3.1:8b: this request is about"); n != 1 {
		t.Fatalf("want one context warning, got %d:\n%s", n, p.stderr)
	}
	for _, s := range []string{"may keep only 4096", "default", "OLLAMA_CONTEXT_LENGTH=32768 ollama serve", "num_ctx"} {
		if !strings.Contains(p.stderr, s) {
			t.Errorf("warning lacks %q:\n%s", s, p.stderr)
		}
	}
}
