package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lovia-dev/lovia/internal/plugin/memory"
)

// fakeConcepts are the fake embedding model's "meanings": words of one group embed
// close together, so a search finds a note that says the same thing in other words.
var fakeConcepts = [][]string{
	{"car", "automobile", "vehicle", "truck"},
	{"database", "postgres", "sql"},
	{"release", "ship", "deploy", "rollout"},
	{"feline", "kitten", "cat"},
	{"billing", "invoices", "invoice", "payment"},
}

var fakeWordRE = regexp.MustCompile(`[a-z0-9]+`)

// fakeEmbed is a deterministic bag-of-meanings embedding: one dimension per concept
// and 32 hashed dimensions for every other word.
func fakeEmbed(text string) []float32 {
	v := make([]float32, len(fakeConcepts)+32)
words:
	for _, w := range fakeWordRE.FindAllString(strings.ToLower(text), -1) {
		for i, c := range fakeConcepts {
			for _, cw := range c {
				if w == cw {
					v[i]++
					continue words
				}
			}
		}
		h := fnv.New32a()
		h.Write([]byte(w))
		v[len(fakeConcepts)+int(h.Sum32()%32)] += 0.2
	}
	var n float64
	for _, f := range v {
		n += float64(f) * float64(f)
	}
	if n > 0 {
		for i := range v {
			v[i] /= float32(math.Sqrt(n))
		}
	}
	return v
}

// fakeEmbedServer serves OpenAI's /v1/embeddings and Ollama's /api/embed.
func fakeEmbedServer(t *testing.T, calls *atomic.Int64) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		calls.Add(1)
		switch r.URL.Path {
		case "/v1/embeddings":
			if r.Header.Get("Authorization") != "Bearer test-embed-key" || req.Model != "fake-embed" {
				http.Error(w, "bad key or model", 401)
				return
			}
			type datum struct {
				Index     int       `json:"index"`
				Embedding []float32 `json:"embedding"`
			}
			var out struct {
				Data []datum `json:"data"`
			}
			for i, in := range req.Input {
				out.Data = append(out.Data, datum{i, fakeEmbed(in)})
			}
			json.NewEncoder(w).Encode(out)
		case "/api/embed":
			var out struct {
				Embeddings [][]float32 `json:"embeddings"`
			}
			for _, in := range req.Input {
				out.Embeddings = append(out.Embeddings, fakeEmbed(in))
			}
			json.NewEncoder(w).Encode(out)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// recallTargets are notes whose words differ from the query that should find them.
var recallTargets = []struct{ note, query string }{
	{"The car is parked in garage B on level two.", "automobile"},
	{"Postgres for staging listens on 5433.", "database"},
	{"We ship builds on Fridays only after QA signs off.", "release"},
	{"The office kitten is called Miso.", "feline"},
	{"Invoices go to accounts at example dot com.", "billing"},
}

// seedRecallFixture stores 50 notes (the 5 targets and 45 unrelated ones) in the
// archive the binary will open, without vectors: the first hybrid search embeds them.
func seedRecallFixture(t *testing.T, e *env) {
	t.Helper()
	arch, err := memory.OpenArchive(context.Background(), filepath.Join(e.home, "data", "memory.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer arch.Close()
	colours := []string{"teal", "amber", "violet", "olive", "coral"}
	for i := range 45 {
		note := fmt.Sprintf("Fact %d: the lamp in room %d is %s and the plant needs water every %d days.", i, i, colours[i%5], i%7+1)
		if _, err := arch.Add(context.Background(), memory.Item{Scope: memory.GlobalScope, Content: note}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tg := range recallTargets {
		if _, err := arch.Add(context.Background(), memory.Item{Scope: memory.GlobalScope, Content: tg.note}); err != nil {
			t.Fatal(err)
		}
	}
}

// searchScript searches for every target's query in one turn.
func searchScript() string {
	var b strings.Builder
	b.WriteString("turns:\n  - text: \"Searching.\"\n    tool_calls:\n")
	for _, tg := range recallTargets {
		fmt.Fprintf(&b, "      - name: search_memory\n        args: {query: %q, limit: 5}\n", tg.query)
	}
	b.WriteString("  - text: \"Searched.\"\n")
	return b.String()
}

// recallResults runs the searches and returns each query's search_memory output.
func recallResults(t *testing.T, e *env) []string {
	t.Helper()
	r := e.run(nil, "run", "-m", "script:search.yaml", "--output", "json", "what do you remember?")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var res struct {
		RunID string `json:"run_id"`
	}
	json.Unmarshal([]byte(r.stdout), &res)
	r = e.run(nil, "runs", "show", res.RunID, "--json")
	var d struct {
		Entries []struct {
			Type   string          `json:"type"`
			Name   string          `json:"name"`
			Text   string          `json:"text"`
			CallID string          `json:"call_id"`
			Args   json.RawMessage `json:"args"`
		} `json:"entries"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		t.Fatal(err)
	}
	// Calls may finish in any order: pair results with their queries by call id.
	byQuery := map[string]string{}
	queryOf := map[string]string{}
	for _, en := range d.Entries {
		switch {
		case en.Type == "tool_call" && en.Name == "search_memory":
			var a struct{ Query string }
			json.Unmarshal(en.Args, &a)
			queryOf[en.CallID] = a.Query
		case en.Type == "tool_result" && en.Name == "search_memory":
			byQuery[queryOf[en.CallID]] = en.Text
		}
	}
	out := make([]string, len(recallTargets))
	for i, tg := range recallTargets {
		text, ok := byQuery[tg.query]
		if !ok {
			t.Fatalf("no search result for %q: %v", tg.query, byQuery)
		}
		out[i] = text
	}
	return out
}

func recallHits(results []string) int {
	n := 0
	for i, tg := range recallTargets {
		if strings.Contains(results[i], tg.note) {
			n++
		}
	}
	return n
}

// TestMemoryHybridRecall: on a fixture of 50 notes, keyword search alone finds none
// of the notes that say the same thing in other words; with an embedding model
// configured (a fake OpenAI-compatible server), reciprocal-rank fusion of keyword and
// vector rankings finds every one, each as the best match.
func TestMemoryHybridRecall(t *testing.T) {
	var calls atomic.Int64
	srv := fakeEmbedServer(t, &calls)
	e := newEnv(t)
	seedRecallFixture(t, e)
	e.write("search.yaml", searchScript())

	keyword := recallResults(t, e)
	if n := recallHits(keyword); n != 0 {
		t.Errorf("keyword-only search found %d of the paraphrased notes; the fixture should defeat it", n)
	}
	if calls.Load() != 0 {
		t.Errorf("the embedding server was called without an embedding model configured")
	}

	guardUserConfig(t, e, "memory: {embed_model: \"openai:fake-embed\"}\n")
	e.vars = append(e.vars, "OPENAI_BASE_URL="+srv.URL+"/v1", "OPENAI_API_KEY=test-embed-key")
	hybrid := recallResults(t, e)
	if n := recallHits(hybrid); n != len(recallTargets) {
		t.Errorf("hybrid search found %d of %d paraphrased notes:\n%s", n, len(recallTargets), strings.Join(hybrid, "\n---\n"))
	}
	for i, tg := range recallTargets {
		first, _, _ := strings.Cut(hybrid[i], "\n")
		if !strings.Contains(first, tg.note) {
			t.Errorf("%q: best match %q, want the note %q", tg.query, first, tg.note)
		}
	}
	if calls.Load() == 0 {
		t.Errorf("the embedding server was never called")
	}

	// A keyword match still counts: an exact word finds its note first.
	e.write("exact.yaml", "turns:\n  - tool_calls:\n      - name: search_memory\n        args: {query: \"garage\"}\n  - text: done\n")
	r := e.run(nil, "run", "-m", "script:exact.yaml", "--output", "json", "x")
	if r.code != 0 {
		t.Fatalf("exact search: %d %s", r.code, r.stderr)
	}
}

// TestMemoryHybridOllama: the Ollama embed API works the same way, and a note saved
// with remember is embedded when it is saved.
func TestMemoryHybridOllama(t *testing.T) {
	var calls atomic.Int64
	srv := fakeEmbedServer(t, &calls)
	e := newEnv(t)
	guardUserConfig(t, e, "memory: {embed_model: \"ollama:fake\"}\n")
	e.vars = append(e.vars, "OLLAMA_HOST="+srv.URL)
	e.write("remember.yaml", "turns:\n  - tool_calls:\n      - name: remember\n        args: {content: \"The kitten sleeps on the red chair.\"}\n  - text: saved\n")
	if r := e.run(nil, "run", "-m", "script:remember.yaml", "remember this"); r.code != 0 {
		t.Fatalf("remember: %d\n%s", r.code, r.stderr)
	}
	if calls.Load() == 0 {
		t.Fatalf("remember did not embed the note")
	}
	e.write("search.yaml", "turns:\n  - tool_calls:\n      - name: search_memory\n        args: {query: \"feline\"}\n  - text: done\n")
	r := e.run(nil, "run", "-m", "script:search.yaml", "--output", "json", "search")
	if r.code != 0 {
		t.Fatalf("search: %d\n%s", r.code, r.stderr)
	}
	var res struct {
		RunID string `json:"run_id"`
	}
	json.Unmarshal([]byte(r.stdout), &res)
	show := e.run(nil, "runs", "show", res.RunID, "--json")
	if !strings.Contains(show.stdout, "The kitten sleeps on the red chair.") {
		t.Errorf("ollama hybrid search did not find the note:\n%s", show.stdout)
	}
	if _, err := os.Stat(filepath.Join(e.home, "data", "memory.db")); err != nil {
		t.Errorf("memory.db: %v", err)
	}
}
