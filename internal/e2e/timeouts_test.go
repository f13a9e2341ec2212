package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/provider/providertest"
)

// TestProviderTimeouts: a server that accepts the connection and then goes quiet —
// before the headers, mid-stream, or trickling one byte at a time — ends the run by
// itself after the configured attempts (exit 1, a message naming the timeout, the
// server and the setting), and the run resumes to completion once the server answers.
func TestProviderTimeouts(t *testing.T) {
	cases := []struct{ stall, env, key string }{
		{"headers", "LOVIA_HEADER_TIMEOUT", "provider.header_timeout"},
		{"stream", "LOVIA_STREAM_IDLE_TIMEOUT", "provider.stream_idle_timeout"},
		{"trickle", "LOVIA_STREAM_IDLE_TIMEOUT", "provider.stream_idle_timeout"},
	}
	for _, k := range provKinds {
		for _, c := range cases {
			t.Run(k.name+"/"+c.stall, func(t *testing.T) {
				t.Parallel()
				stall := providertest.Turn{Text: "a reply that never arrives in time", Stall: c.stall}
				srv := k.serve(t, stall, stall)
				e := provEnv(t, srv)
				e.vars = append(e.vars, k.env...)
				e.vars = append(e.vars, "LOVIA_HEADER_TIMEOUT=400ms", "LOVIA_STREAM_IDLE_TIMEOUT=400ms")
				e.write(".lovia/config.yaml", "provider:\n  max_attempts: 2\n")
				runID := "timeout-" + strings.ReplaceAll(k.name, "-", "") + "-" + c.stall
				p := provRun(e, 60*time.Second, "run", "--model", k.name+":"+k.model, "--run-id", runID, "say hello")
				if p.code != 1 {
					t.Fatalf("exit %d, want 1\nstdout: %s\nstderr: %s", p.code, p.stdout, p.stderr)
				}
				for _, want := range []string{c.env, c.key, "127.0.0.1", "2 attempts", "lovia resume " + runID} {
					if !strings.Contains(p.stderr, want) {
						t.Errorf("stderr does not mention %q:\n%s", want, p.stderr)
					}
				}
				if n := len(srv.Requests()); n != 2 {
					t.Errorf("%d requests, want 2 (max_attempts)", n)
				}
				srv.Push(providertest.Turn{Text: "hello at last"})
				r := provRun(e, 60*time.Second, "resume", runID)
				if r.code != 0 || !strings.Contains(r.stdout, "hello at last") {
					t.Fatalf("resume: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
				}
			})
		}
	}
}

// TestProviderTimeoutSettings: bad durations are configuration errors that say how
// to write one.
func TestProviderTimeoutSettings(t *testing.T) {
	e := newEnv(t)
	r := e.run(nil, "config")
	if r.code != 0 {
		t.Fatalf("config: exit %d: %s", r.code, r.stderr)
	}
	e.vars = append(e.vars, "LOVIA_HEADER_TIMEOUT=-5s")
	r = e.run(nil, "run", "-m", "script:x.yaml", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "LOVIA_HEADER_TIMEOUT") || !strings.Contains(r.stderr, "Go duration") {
		t.Fatalf("negative timeout: exit %d\n%s", r.code, r.stderr)
	}
	e.vars = e.vars[:len(e.vars)-1]
	e.write(".lovia/config.yaml", "provider:\n  stream_idle_timeout: soon\n")
	r = e.run(nil, "run", "-m", "script:x.yaml", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "provider.stream_idle_timeout") {
		t.Fatalf("bad duration in config: exit %d\n%s", r.code, r.stderr)
	}
}
