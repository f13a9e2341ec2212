package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/imagefit"
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
	// found returns the base64 of v when v (a JSON object of the body) is an
	// image part, else "".
	found func(v map[string]any) string
}

// The image parts of each wire: they return the base64 the part carries ("" for
// anything else).
func chatImagePart(v map[string]any) string {
	iu, _ := v["image_url"].(map[string]any)
	u, _ := iu["url"].(string)
	if v["type"] != "image_url" || !strings.HasPrefix(u, "data:image/") {
		return ""
	}
	_, b64, _ := strings.Cut(u, ";base64,")
	return b64
}

func responsesImagePart(v map[string]any) string {
	u, _ := v["image_url"].(string)
	if v["type"] != "input_image" || !strings.HasPrefix(u, "data:image/") {
		return ""
	}
	_, b64, _ := strings.Cut(u, ";base64,")
	return b64
}

func anthropicImagePart(v map[string]any) string {
	src, _ := v["source"].(map[string]any)
	if v["type"] != "image" || src["type"] != "base64" {
		return ""
	}
	b64, _ := src["data"].(string)
	return b64
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

// imgPart is one image part of a request body: its base64 and where it sits (the
// path of keys from the root; [i] for array elements).
type imgPart struct{ b64, path string }

// imgParts lists the image parts of body (a request's JSON), in document order.
func imgParts(body []byte, found func(map[string]any) string) []imgPart {
	var root any
	if json.Unmarshal(body, &root) != nil {
		return nil
	}
	var out []imgPart
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch x := v.(type) {
		case map[string]any:
			if b := found(x); b != "" {
				out = append(out, imgPart{b, path})
				return
			}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(x[k], path+"."+k)
			}
		case []any:
			for i, c := range x {
				walk(c, fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
	walk(root, "")
	return out
}

// `lovia run --image FILE` and `@FILE` in the prompt put the image into the request,
// natively for each wire format: an image_url part (OpenAI Chat, and Ollama through
// it), an input_image (Responses), an image block (Anthropic). The file's name does
// not decide: shot.dat is sniffed as a PNG.
func TestImagesRunFlag(t *testing.T) {
	pic := imgPNG(t, 8, 4)
	b64 := base64.StdEncoding.EncodeToString(pic)
	validate := loadSchema(t)
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
				parts := imgParts(reqs[0].Body, w.found)
				if len(parts) != 1 || parts[0].b64 != b64 {
					t.Fatalf("%s: image parts %+v in the request, want one with the file's bytes\nbody: %s", how, parts, provTail(string(reqs[0].Body), 2000))
				}
				if p := parts[0].path; !strings.HasPrefix(p, ".messages[") && !strings.HasPrefix(p, ".input[") {
					t.Errorf("%s: image at %s", how, p)
				}
				if bytes.Contains([]byte(p.stdout), []byte(b64)) {
					t.Errorf("%s: stream-json carries the image's base64", how)
				}
				// run_started shows the image as a placeholder, valid per the schema.
				started := p.ofType("run_started")
				if len(started) != 1 || fmt.Sprint(started[0]["images"]) != fmt.Sprintf("[map[bytes:%d mime:image/png name:shot.dat]]", len(pic)) {
					t.Errorf("%s: run_started = %v", how, started)
				}
				for _, ev := range p.events {
					if err := validate(ev); err != nil {
						t.Errorf("%s: event %v: %v", how, ev["type"], err)
					}
				}
				if w.name != "openai" || how != "flag" || len(started) != 1 {
					continue
				}
				// sessions show: a placeholder line; --json: size and hash, no bytes.
				id, _ := started[0]["session_id"].(string)
				show := provRun(e, 30*time.Second, "sessions", "show", id)
				want := fmt.Sprintf("> [image 1: image/png, %d bytes, shot.dat]", len(pic))
				if show.code != 0 || !strings.Contains(show.stdout, want) || strings.Contains(show.stdout, b64) {
					t.Errorf("sessions show: exit %d, want %q in:\n%s%s", show.code, want, show.stdout, show.stderr)
				}
				js := provRun(e, 30*time.Second, "sessions", "show", "--json", id)
				if js.code != 0 || strings.Contains(js.stdout, b64) || !strings.Contains(js.stdout, `"sha256"`) ||
					!strings.Contains(js.stdout, fmt.Sprintf(`"size": %d`, len(pic))) {
					t.Errorf("sessions show --json: exit %d\n%s%s", js.code, js.stdout, js.stderr)
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

// everythingServer is the config of the reference MCP server (stdio), or a skip
// when it is not installed (.ci/run installs it from npm).
func everythingServer(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("mcp-server-everything")
	if err != nil {
		t.Skip("mcp-server-everything not installed (npm install -g @modelcontextprotocol/server-everything)")
	}
	return "mcp:\n  servers:\n    everything:\n      command: " + p + "\n      args: [stdio]\n      startup_timeout: 60s\n"
}

// The image a tool returns (the reference server's get-tiny-image, an MCP image
// content) reaches the model on every wire: inside the tool result (Anthropic), in
// the function_call_output's array (Responses), in a user message right after the
// tool messages, naming the call (OpenAI Chat, which has no images in tool
// messages).
func TestImagesFromMCPToolReachEveryWire(t *testing.T) {
	cfg := everythingServer(t)
	for _, w := range imgWires[:3] {
		t.Run(w.name, func(t *testing.T) {
			srv := w.serve(t,
				providertest.Turn{Calls: []providertest.Call{{ID: "call_img_1", Name: "everything__get-tiny-image", Args: `{}`}}},
				providertest.Turn{Text: "It is the MCP logo."})
			e := imgEnv(t, w, srv)
			e.userConfig(cfg)
			p := provRun(e, 120*time.Second, "run", "--model", w.name+":"+w.model, "--output", "stream-json", "--approve", "all", "show me the tiny image")
			p.terminal(t, "run_completed")
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests\nstderr: %s", len(reqs), p.stderr)
			}
			body := reqs[1].Body
			parts := imgParts(body, w.found)
			if len(parts) != 1 {
				t.Fatalf("image parts %+v in the second request, want 1\nbody: %s", parts, provTail(string(body), 3000))
			}
			pic, err := base64.StdEncoding.DecodeString(parts[0].b64)
			if err != nil {
				t.Fatal(err)
			}
			if in, err := imagefit.Check(pic); err != nil || in.MIME != "image/png" || in.Width != 20 {
				t.Fatalf("the image sent is not the tiny PNG: %+v %v", in, err)
			}
			var req map[string]any
			if err := json.Unmarshal(body, &req); err != nil {
				t.Fatal(err)
			}
			path := parts[0].path
			switch w.name {
			case "openai":
				// .messages[i].content[j]: a user message right after the tool message.
				var i int
				if _, err := fmt.Sscanf(path, ".messages[%d]", &i); err != nil || i < 1 {
					t.Fatalf("image at %s", path)
				}
				msgs := req["messages"].([]any)
				um, tm := msgs[i].(map[string]any), msgs[i-1].(map[string]any)
				if um["role"] != "user" || tm["role"] != "tool" || tm["tool_call_id"] != "call_img_1" {
					t.Fatalf("image in %v after %v", um["role"], tm)
				}
				if s := fmt.Sprint(um["content"]); !strings.Contains(s, "call_img_1") {
					t.Errorf("the image message does not name its call: %s", s)
				}
				if s := fmt.Sprint(tm["content"]); strings.Contains(s, "not shown") {
					t.Errorf("the tool message says the image was not shown: %s", s)
				}
			case "openai-responses":
				var i int
				if _, err := fmt.Sscanf(path, ".input[%d].output[", &i); err != nil {
					t.Fatalf("image at %s", path)
				}
				it := req["input"].([]any)[i].(map[string]any)
				if it["type"] != "function_call_output" || it["call_id"] != "call_img_1" {
					t.Fatalf("image in %v", it)
				}
			case "anthropic":
				var i, j int
				if _, err := fmt.Sscanf(path, ".messages[%d].content[%d].content[", &i, &j); err != nil {
					t.Fatalf("image at %s", path)
				}
				blk := req["messages"].([]any)[i].(map[string]any)["content"].([]any)[j].(map[string]any)
				if blk["type"] != "tool_result" || blk["tool_use_id"] != "call_img_1" {
					t.Fatalf("image in %v", blk)
				}
			}
			if strings.Contains(p.stdout, parts[0].b64) {
				t.Errorf("stream-json carries the image's base64")
			}
		})
	}
}
