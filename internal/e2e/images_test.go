package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/provider/providertest"
)

// imgPNG is a small PNG (w×h, one colour).
func imgPNG(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		if i%4 == 0 || i%4 == 3 {
			img.Pix[i] = 0xff
		}
	}
	img.Set(0, 0, color.RGBA{0, 0, 0xff, 0xff})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// imgWire is one wire format and where an image shows up in its request body.
type imgWire struct {
	name, model string
	serve       func(testing.TB, ...providertest.Turn) *providertest.Server
	// ollama points OLLAMA_HOST (not OPENAI_BASE_URL) at the server.
	ollama bool
	// found reports whether v (a JSON object of the body) is an image part with
	// base64 b64.
	found func(v map[string]any, b64 string) bool
}

func chatImagePart(v map[string]any, b64 string) bool {
	iu, _ := v["image_url"].(map[string]any)
	u, _ := iu["url"].(string)
	return v["type"] == "image_url" && strings.HasPrefix(u, "data:image/") && strings.HasSuffix(u, ";base64,"+b64)
}

func responsesImagePart(v map[string]any, b64 string) bool {
	u, _ := v["image_url"].(string)
	return v["type"] == "input_image" && strings.HasPrefix(u, "data:image/") && strings.HasSuffix(u, ";base64,"+b64)
}

func anthropicImagePart(v map[string]any, b64 string) bool {
	src, _ := v["source"].(map[string]any)
	return v["type"] == "image" && src["type"] == "base64" && src["data"] == b64
}

var imgWires = []imgWire{
	{name: "openai", model: "gpt-4.1", serve: providertest.NewOpenAIServer, found: chatImagePart},
	{name: "openai-responses", model: "gpt-4.1", serve: providertest.NewResponsesServer, found: responsesImagePart},
	{name: "anthropic", model: "claude-sonnet-4-5", serve: providertest.NewAnthropicServer, found: anthropicImagePart},
	{name: "ollama", model: "llava", serve: providertest.NewOpenAIServer, ollama: true, found: chatImagePart},
}

// imgEnv is a test machine pointed at srv for wire w.
func imgEnv(t *testing.T, w imgWire, srv *providertest.Server) *env {
	t.Helper()
	e := provEnv(t, srv)
	if w.ollama {
		e.vars = append(e.vars, "OLLAMA_HOST="+srv.URL)
	}
	return e
}

// imgParts counts the image parts in body (a request's JSON) that carry b64, and
// reports where the first one sits (the path of keys from the root).
func imgParts(body []byte, b64 string, found func(map[string]any, string) bool) (n int, where string) {
	var root any
	if json.Unmarshal(body, &root) != nil {
		return 0, ""
	}
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch x := v.(type) {
		case map[string]any:
			if found(x, b64) {
				if n == 0 {
					where = path
				}
				n++
				return
			}
			for k, c := range x {
				walk(c, path+"."+k)
			}
		case []any:
			for _, c := range x {
				walk(c, path+"[]")
			}
		}
	}
	walk(root, "")
	return n, where
}

// `lovia run --image FILE` and `@FILE` in the prompt put the image into the request,
// natively for each wire format: an image_url part (OpenAI Chat, and Ollama through
// it), an input_image (Responses), an image block (Anthropic). The file's name does
// not decide: shot.dat is sniffed as a PNG.
func TestImagesRunFlag(t *testing.T) {
	pic := imgPNG(t, 8, 4)
	b64 := base64.StdEncoding.EncodeToString(pic)
	for _, w := range imgWires {
		t.Run(w.name, func(t *testing.T) {
			for _, how := range []string{"flag", "mention"} {
				srv := w.serve(t, providertest.Turn{Text: "a white rectangle"})
				e := imgEnv(t, w, srv)
				if err := os.WriteFile(filepath.Join(e.dir, "shot.dat"), pic, 0o644); err != nil {
					t.Fatal(err)
				}
				args := []string{"run", "--model", w.name + ":" + w.model, "--output", "stream-json"}
				prompt := "what is in this picture?"
				if how == "flag" {
					args = append(args, "--image", "shot.dat")
				} else {
					prompt = "what is in @shot.dat?"
				}
				p := provRun(e, 60*time.Second, append(args, prompt)...)
				p.terminal(t, "run_completed")
				reqs := srv.Requests()
				if len(reqs) != 1 {
					t.Fatalf("%s: %d requests", how, len(reqs))
				}
				if n, where := imgParts(reqs[0].Body, b64, w.found); n != 1 {
					t.Fatalf("%s: %d image parts with the file's bytes in the request, want 1\nbody: %s", how, n, provTail(string(reqs[0].Body), 2000))
				} else if !strings.Contains(where, "messages") && !strings.Contains(where, "input") {
					t.Errorf("%s: image at %s", how, where)
				}
				if bytes.Contains([]byte(p.stdout), []byte(b64)) {
					t.Errorf("%s: stream-json carries the image's base64", how)
				}
			}
		})
	}
}

// A model known to take text only refuses images before any request, with a usage
// or configuration exit code (2) and a message that says why and what to do.
func TestImagesTextOnlyModelRefuses(t *testing.T) {
	srv := providertest.NewOpenAIServer(t, providertest.Turn{Text: "never"})
	e := provEnv(t, srv)
	e.write("shot.png", string(imgPNG(t, 4, 4)))
	p := provRun(e, 60*time.Second, "run", "--model", "openai:gpt-3.5-turbo", "--image", "shot.png", "describe it")
	if p.code != 2 || !strings.Contains(p.stderr, "does not accept images") || !strings.Contains(p.stderr, "vision: true") {
		t.Fatalf("exit %d, stderr: %s", p.code, p.stderr)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent for a text-only model", n)
	}
	// The config override says it does take images: sent.
	e.write(".lovia/config.yaml", "models:\n  \"openai:gpt-3.5-turbo\": {vision: true}\n")
	p = provRun(e, 60*time.Second, "run", "--trust", "--model", "openai:gpt-3.5-turbo", "--image", "shot.png", "describe it")
	if p.code != 0 || len(srv.Requests()) != 1 {
		t.Fatalf("with vision: true: exit %d, %d requests, stderr: %s", p.code, len(srv.Requests()), p.stderr)
	}
}

// --image reads through the workspace policy: a symlink to a file the agent may not
// read, or a file that is no image, attaches nothing and sends nothing.
func TestImagesRunRefusesDeniedAndNonImages(t *testing.T) {
	srv := providertest.NewOpenAIServer(t, providertest.Turn{Text: "never"})
	e := provEnv(t, srv)
	// A credential store is denied under every policy (the test's home is in the
	// temp directory, which the coding policy lets the agent read).
	secret := filepath.Join(e.home, ".ssh", "shot.png")
	if err := os.MkdirAll(filepath.Dir(secret), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, imgPNG(t, 4, 4), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(e.dir, "innocent.png")); err != nil {
		t.Fatal(err)
	}
	e.write("notes.png", "just text, named like an image\n")
	for _, f := range []string{"innocent.png", "notes.png", "missing.png"} {
		p := provRun(e, 60*time.Second, "run", "--model", "openai:gpt-4.1", "--image", f, "describe it")
		if p.code != 2 || !strings.Contains(p.stderr, f) {
			t.Errorf("--image %s: exit %d, stderr: %s", f, p.code, p.stderr)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}
