package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"

	"github.com/lovia-dev/lovia/internal/provider"
)

// Ollama serves a model with the context it was loaded with, not the model's own:
// the Modelfile's num_ctx, else the server's OLLAMA_CONTEXT_LENGTH, else a default
// (2048 in old versions, 4096 later, then chosen by VRAM: 4k under 24 GiB). A prompt
// longer than that is cut from the front without an error, so the model silently
// loses the system prompt and the start of the task. lovia asks the server what it
// will keep (/api/ps for a loaded model, /api/show for num_ctx and the model's own
// length), compacts to that, and warns when a request would not fit.

// OllamaDefaultContext is the smallest context current Ollama servers give a model
// when nothing sets one (GPUs under 24 GiB): what lovia warns against when the
// server does not say.
const OllamaDefaultContext = 4096

// ollamaProbeTimeout bounds the /api/show and /api/ps queries: a server that does
// not answer in time is treated as unknown (the model call reports it).
const ollamaProbeTimeout = 3 * time.Second

// ollamaContext is what the server says about one model's context.
type ollamaContext struct {
	// ModelLength is the model's own context length (model_info
	// "<architecture>.context_length"; 0 = not reported).
	ModelLength int
	// NumCtx is the Modelfile's num_ctx parameter (0 = not set).
	NumCtx int
	// Loaded is the context the running model was loaded with (/api/ps
	// context_length; 0 = not loaded, or an older server).
	Loaded int
	// EnvLength is OLLAMA_CONTEXT_LENGTH as lovia's environment has it (the server's
	// own environment is out of sight; usually the same machine).
	EnvLength int
}

// kept is how many tokens the server keeps of a prompt, and whether it said so
// (false: lovia assumes OllamaDefaultContext).
func (oc ollamaContext) kept() (int, string, bool) {
	switch {
	case oc.Loaded > 0:
		return oc.Loaded, "the loaded model's context (ollama ps)", true
	case oc.NumCtx > 0:
		return oc.NumCtx, "the model's num_ctx parameter", true
	case oc.EnvLength > 0:
		return oc.EnvLength, "OLLAMA_CONTEXT_LENGTH", true
	}
	return OllamaDefaultContext, "Ollama's default context on GPUs under 24 GiB (the server did not say)", false
}

// window is the context window lovia compacts to: what the server keeps, never
// more than the model's own length; when the server does not say, the model's own
// length (the warning covers the risk).
func (oc ollamaContext) window() int {
	k, _, known := oc.kept()
	switch {
	case known && oc.ModelLength > 0:
		return min(k, oc.ModelLength)
	case known:
		return k
	}
	return oc.ModelLength
}

// probeOllama asks the server at root (the URL without /v1) about model. Errors
// leave the fields it could not learn at 0.
func probeOllama(ctx context.Context, client *http.Client, root, apiKey, model string) ollamaContext {
	var oc ollamaContext
	ctx, cancel := context.WithTimeout(ctx, ollamaProbeTimeout)
	defer cancel()
	// "name" is what servers before 0.1.44 read; later ones read "model".
	body, _ := json.Marshal(map[string]string{"model": model, "name": model})
	if show, err := ollamaCall(ctx, client, http.MethodPost, root+"/api/show", apiKey, body); err == nil {
		arch := show.Get("model_info").Get(gjson.Escape("general.architecture")).String()
		if arch != "" {
			oc.ModelLength = int(show.Get("model_info").Get(gjson.Escape(arch + ".context_length")).Int())
		}
		if oc.ModelLength == 0 {
			show.Get("model_info").ForEach(func(k, v gjson.Result) bool {
				if strings.HasSuffix(k.String(), ".context_length") {
					oc.ModelLength = int(v.Int())
					return false
				}
				return true
			})
		}
		oc.NumCtx = numCtx(show.Get("parameters").String())
	}
	if ps, err := ollamaCall(ctx, client, http.MethodGet, root+"/api/ps", apiKey, nil); err == nil {
		ps.Get("models").ForEach(func(_, m gjson.Result) bool {
			if sameOllamaModel(m.Get("name").String(), model) || sameOllamaModel(m.Get("model").String(), model) {
				oc.Loaded = int(m.Get("context_length").Int())
				return false
			}
			return true
		})
	}
	return oc
}

// sameOllamaModel compares model names the way Ollama resolves them: no tag means
// ":latest".
func sameOllamaModel(a, b string) bool {
	norm := func(s string) string {
		if s != "" && !strings.Contains(s[strings.LastIndexByte(s, '/')+1:], ":") {
			s += ":latest"
		}
		return s
	}
	return a != "" && norm(a) == norm(b)
}

// numCtx reads num_ctx from /api/show's parameters text ("num_ctx    8192\nstop ...").
func numCtx(params string) int {
	for _, line := range strings.Split(params, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "num_ctx" {
			if n, err := strconv.Atoi(f[1]); err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}

func ollamaCall(ctx context.Context, client *http.Client, method, url, apiKey string, body []byte) (gjson.Result, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return gjson.Result{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return gjson.Result{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return gjson.Result{}, err
	}
	if resp.StatusCode != http.StatusOK || !gjson.ValidBytes(data) {
		return gjson.Result{}, fmt.Errorf("%s %s: %s", method, url, resp.Status)
	}
	return gjson.ParseBytes(data), nil
}

// ollamaRoot is the server's root URL from the OpenAI-compatible base URL.
func ollamaRoot(base string) string {
	return strings.TrimSuffix(strings.TrimRight(base, "/"), "/v1")
}

// contextCheck warns, once per provider, when a request's prompt would not fit what
// the server keeps (compaction usually keeps it in bounds; a long prompt or a small
// server default does not).
type contextCheck struct {
	warned atomic.Bool
	model  string
	oc     ollamaContext
	warn   func(string)
}

func (cc *contextCheck) check(req provider.Request) {
	if cc.warned.Load() {
		return
	}
	kept, why, known := cc.oc.kept()
	need := estimatePrompt(req)
	if need <= kept || cc.warned.Swap(true) {
		return
	}
	keeps := "keeps only"
	if !known {
		keeps = "may keep only"
	}
	cc.warn(fmt.Sprintf("ollama:%s: this request is about %d tokens but the server %s %d (%s) and silently drops the rest, "+
		"starting with the instructions; raise it: OLLAMA_CONTEXT_LENGTH=%d ollama serve, or PARAMETER num_ctx in a Modelfile (docs/providers.md#ollama-context-size)",
		cc.model, need, keeps, kept, why, suggestCtx(need, cc.oc.ModelLength)))
}

// suggestCtx is a context size that fits need with room to work, within the model's
// own length.
func suggestCtx(need, modelLen int) int {
	n := 8192
	for n < need*2 {
		n *= 2
	}
	if modelLen > 0 && n > modelLen {
		n = modelLen
	}
	return n
}

// estimatePrompt guesses a request's prompt tokens (4 bytes of text a token; images
// and other binary parts are not counted).
func estimatePrompt(req provider.Request) int {
	n := len(req.System)
	for _, e := range req.Entries {
		n += len(e.Text) + len(e.Args) + len(e.Name) + 8
	}
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Schema)
	}
	return n / 4
}
