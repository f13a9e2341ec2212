package openai

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/provider/providertest"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// fakeOllama answers /api/show from testdata fixtures (real `ollama show` API
// output), /api/ps with the loaded models given, and /v1/chat/completions with a
// scripted reply.
func fakeOllama(t *testing.T, show map[string]string, ps string) *httptest.Server {
	t.Helper()
	var turns []providertest.Turn
	for range 6 {
		turns = append(turns, providertest.Turn{Text: "ok"})
	}
	chat := providertest.NewOpenAIServer(t, turns...)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/show", func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Model, Name string }
		_ = json.NewDecoder(r.Body).Decode(&req)
		file, ok := show[req.Model]
		if !ok {
			http.Error(w, `{"error":"model '`+req.Model+`' not found"}`, http.StatusNotFound)
			return
		}
		data, err := os.ReadFile("testdata/" + file)
		if err != nil {
			t.Error(err)
		}
		w.Write(data)
	})
	mux.HandleFunc("GET /api/ps", func(w http.ResponseWriter, r *http.Request) {
		if ps == "" {
			io.WriteString(w, `{"models":[]}`)
			return
		}
		data, _ := os.ReadFile("testdata/" + ps)
		w.Write(data)
	})
	mux.Handle("/v1/", chat.Config.Handler)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) add(m string) { w.mu.Lock(); w.msgs = append(w.msgs, m); w.mu.Unlock() }

func ollamaEnv(srv *httptest.Server, vars map[string]string, windows map[string]int, w *warnings) provider.Env {
	all := map[string]string{"OLLAMA_HOST": srv.URL}
	for k, v := range vars {
		all[k] = v
	}
	return provider.Env{Getenv: func(k string) string { return all[k] }, HTTPClient: srv.Client(), ContextWindows: windows, Warn: w.add}
}

// bigRequest is a prompt of about n tokens.
func bigRequest(n int) provider.Request {
	return provider.Request{System: "be brief", Entries: []transcript.Entry{transcript.UserInput(strings.Repeat("word ", n*4/5))}}
}

func drain(t *testing.T, p provider.Provider, req provider.Request) {
	t.Helper()
	for _, err := range p.Stream(context.Background(), req) {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestOllamaContextWindowFromServer(t *testing.T) {
	show := map[string]string{"llama3.1:8b": "ollama_show_llama3.1.json", "qwen2.5-coder:7b": "ollama_show_qwen2.5-coder.json"}
	for _, tt := range []struct {
		name, model, ps string
		vars            map[string]string
		windows         map[string]int
		want            int
	}{
		{"num_ctx in the Modelfile", "llama3.1:8b", "", nil, nil, 8192},
		{"the loaded model's context wins", "qwen2.5-coder:7b", "ollama_ps.json", nil, nil, 16384},
		{"OLLAMA_CONTEXT_LENGTH, capped by the model's own length", "qwen2.5-coder:7b", "", map[string]string{"OLLAMA_CONTEXT_LENGTH": "65536"}, nil, 32768},
		{"nothing set: the model's own length", "qwen2.5-coder:7b", "", nil, nil, 32768},
		{"config wins", "llama3.1:8b", "", nil, map[string]int{"ollama:llama3.1:8b": 100000}, 100000},
		{"unknown to the server: the built-in table", "llama3.2:3b", "", nil, nil, 131072},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeOllama(t, show, tt.ps)
			p, err := OllamaFactory(context.Background(), tt.model, ollamaEnv(srv, tt.vars, tt.windows, &warnings{}))
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Info().ContextWindow; got != tt.want {
				t.Errorf("context window %d, want %d", got, tt.want)
			}
		})
	}
}

func TestOllamaWarnsOnceWhenThePromptWouldBeCut(t *testing.T) {
	srv := fakeOllama(t, map[string]string{"llama3.1:8b": "ollama_show_llama3.1.json", "qwen2.5-coder:7b": "ollama_show_qwen2.5-coder.json"}, "")
	w := &warnings{}
	p, err := OllamaFactory(context.Background(), "llama3.1:8b", ollamaEnv(srv, nil, nil, w))
	if err != nil {
		t.Fatal(err)
	}
	drain(t, p, bigRequest(12000))
	drain(t, p, bigRequest(12000))
	if len(w.msgs) != 1 {
		t.Fatalf("%d warnings, want 1: %q", len(w.msgs), w.msgs)
	}
	for _, s := range []string{"ollama:llama3.1:8b", "keeps only 8192", "num_ctx", "OLLAMA_CONTEXT_LENGTH=32768"} {
		if !strings.Contains(w.msgs[0], s) {
			t.Errorf("warning lacks %q: %s", s, w.msgs[0])
		}
	}

	// A prompt that fits: no warning.
	w2 := &warnings{}
	p, _ = OllamaFactory(context.Background(), "llama3.1:8b", ollamaEnv(srv, nil, nil, w2))
	drain(t, p, bigRequest(2000))
	if len(w2.msgs) != 0 {
		t.Errorf("warned about a prompt that fits: %q", w2.msgs)
	}

	// The server does not say: lovia warns against its smallest default.
	w3 := &warnings{}
	p, _ = OllamaFactory(context.Background(), "qwen2.5-coder:7b", ollamaEnv(srv, nil, nil, w3))
	drain(t, p, bigRequest(6000))
	if len(w3.msgs) != 1 || !strings.Contains(w3.msgs[0], "may keep only 4096") || !strings.Contains(w3.msgs[0], "default") {
		t.Errorf("want a warning about the default context: %q", w3.msgs)
	}
}

func TestOllamaNumCtx(t *testing.T) {
	if n := numCtx("stop \"x\"\nnum_ctx                        8192\n"); n != 8192 {
		t.Errorf("numCtx = %d", n)
	}
	if n := numCtx("temperature 0.2"); n != 0 {
		t.Errorf("numCtx without one = %d", n)
	}
	if !sameOllamaModel("llama3.1:latest", "llama3.1") || sameOllamaModel("llama3.1:8b", "llama3.1") {
		t.Error("sameOllamaModel")
	}
}
