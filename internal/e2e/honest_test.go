package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/provider/providertest"
)

// TestHonestUsageErrors: mistakes on the command line get an error that names the
// cause and the fix, instead of doing something else.
func TestHonestUsageErrors(t *testing.T) {
	e := newEnv(t)
	e.write("script.yaml", "turns:\n  - text: first answer\n")
	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"mistyped command", []string{"resme"}, 2, []string{`unknown command "resme"`, "lovia resume", "lovia chat resme"}},
		{"unknown word", []string{"frobnicate"}, 2, []string{`unknown command "frobnicate"`, "lovia chat frobnicate"}},
		{"negative max turns", []string{"run", "-m", "script:script.yaml", "--max-turns", "-5", "go"}, 2, []string{"--max-turns", "negative", "positive"}},
		{"run id with a newline", []string{"run", "-m", "script:script.yaml", "--run-id", "a\nb", "go"}, 2, []string{"not a valid run id", "letters, digits"}},
		{"run id with a tab", []string{"run", "-m", "script:script.yaml", "--run-id", "a\tb", "go"}, 2, []string{"not a valid run id"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.run(nil, c.args...)
			if r.code != c.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, c.code, r.stdout, r.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
		})
	}
}

// TestRunIDConflict: a completed run id re-issued with a different prompt is an
// error that says so (not a silent replay of the old answer).
func TestRunIDConflict(t *testing.T) {
	e := newEnv(t)
	e.write("script.yaml", "turns:\n  - text: first answer\n")
	if r := e.run(nil, "run", "-m", "script:script.yaml", "--run-id", "job-7", "go"); r.code != 0 {
		t.Fatalf("first run: exit %d: %s", r.code, r.stderr)
	}
	r := e.run(nil, "run", "-m", "script:script.yaml", "--run-id", "job-7", "do something else")
	if r.code != 2 || !strings.Contains(r.stderr, "different prompt") || !strings.Contains(r.stderr, "--run-id") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "first answer") {
		t.Errorf("the old answer was replayed for a new prompt: %s", r.stdout)
	}
}

// TestRefusalFails: a model refusal (Anthropic stop_reason "refusal", OpenAI refusal
// content) ends the run as failed with finish reason "refusal" and the model's words,
// not as an empty success.
func TestRefusalFails(t *testing.T) {
	const words = "I can't help with that request."
	for _, k := range provKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			var raw string
			switch k.name {
			case providertest.KindOpenAI:
				raw = strings.ReplaceAll(string(providertest.OpenAIStream(providertest.Turn{Text: words}, 1)), `"content":`, `"refusal":`)
			case providertest.KindResponses:
				raw = string(providertest.ResponsesStream(providertest.Turn{Text: words}, 1))
				raw = strings.ReplaceAll(raw, "response.output_text.", "response.refusal.")
				raw = strings.ReplaceAll(raw, `"type":"output_text","text":`, `"type":"refusal","refusal":`)
			default:
				raw = strings.Replace(string(providertest.AnthropicStream(providertest.Turn{Text: words}, 1)), `"stop_reason":"end_turn"`, `"stop_reason":"refusal"`, 1)
			}
			srv := k.serve(t, providertest.Turn{Raw: raw})
			e := provEnv(t, srv)
			e.vars = append(e.vars, k.env...)
			p := provRun(e, 60*time.Second, "run", "--model", k.name+":"+k.model, "--output", "json", "do something bad")
			if p.code != 1 {
				t.Fatalf("exit %d, want 1\nstdout: %s\nstderr: %s", p.code, p.stdout, p.stderr)
			}
			if !strings.Contains(p.stdout, `"finish_reason": "refusal"`) {
				t.Errorf("json output lacks finish_reason refusal:\n%s", p.stdout)
			}
			if !strings.Contains(p.stderr, "the model refused: "+words) {
				t.Errorf("stderr does not quote the refusal:\n%s", p.stderr)
			}
		})
	}
}

// TestMalformedChunk: a 200 stream with a broken chunk is reported as a protocol
// error from the server (retried), not as an HTTP status the server never sent.
func TestMalformedChunk(t *testing.T) {
	k := provKinds[0]
	bad := providertest.Turn{Raw: "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\n\n"}
	srv := k.serve(t, bad, bad)
	e := provEnv(t, srv)
	e.write(".lovia/config.yaml", "provider:\n  max_attempts: 2\n")
	p := provRun(e, 60*time.Second, "run", "--model", k.name+":"+k.model, "hi")
	if p.code != 1 {
		t.Fatalf("exit %d\nstderr: %s", p.code, p.stderr)
	}
	if !strings.Contains(p.stderr, "protocol error") || strings.Contains(p.stderr, "HTTP 502") {
		t.Errorf("stderr:\n%s", p.stderr)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2 (retried)", n)
	}
}

// TestInterruptBeforeRecorded: Ctrl-C while the run is still being set up (a slow
// session_start hook) exits 130 without a resume hint for a run that does not exist.
func TestInterruptBeforeRecorded(t *testing.T) {
	e := newEnv(t)
	e.write("script.yaml", "turns:\n  - text: never\n")
	cfg := filepath.Join(e.home, ".config", "lovia", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("hooks:\n  - {event: session_start, command: \"touch started && sleep 20\", timeout: 60}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "-m", "script:script.yaml", "--run-id", "early", "go")
	cmd.Dir, cmd.Env = e.dir, e.vars
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(e.dir, "started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session_start hook never ran; stderr: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("exit %d, want 130; stderr: %s", code, stderr.String())
	}
	if strings.Contains(stderr.String(), "lovia resume") || !strings.Contains(stderr.String(), "nothing to resume") {
		t.Errorf("stderr: %s", stderr.String())
	}
}

// TestNegativeDurationsRefused: negative durations in config are configuration
// errors naming the key and the fix, not silently used.
func TestNegativeDurationsRefused(t *testing.T) {
	for _, c := range []struct{ body, key string }{
		{"workspace:\n  shell_timeout: -5\n", "workspace.shell_timeout"},
		{"provider:\n  header_timeout: -1s\n", "provider.header_timeout"},
		{"mcp:\n  servers:\n    x: {command: x, call_timeout: -1s}\n", "negative timeout"},
	} {
		e := newEnv(t)
		e.write("script.yaml", "turns:\n  - text: hi\n")
		e.write(".lovia/config.yaml", c.body)
		r := e.run(nil, "run", "-m", "script:script.yaml", "go")
		if r.code != 2 || !strings.Contains(r.stderr, c.key) {
			t.Errorf("%q: exit %d\n%s", c.body, r.code, r.stderr)
		}
	}
}
