package cmd

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestTrustCommand(t *testing.T) {
	e := newStoreEnv(t)
	writeFile(t, filepath.Join(e.repoA, ".lovia", "config.yaml"), "workspace:\n  writable: [/srv/cache]\n  denied_paths: [.env]\n")

	// On a terminal it shows what it trusts and asks; "n" records nothing.
	e.stdinTTY, e.stdin = true, "n\n"
	if code := e.run(e.repoA, "trust"); code != 0 || !strings.Contains(e.out.String(), "workspace.writable[0]: /srv/cache") ||
		strings.Contains(e.out.String(), "denied_paths") || !strings.Contains(e.out.String(), "Not trusted") {
		t.Fatalf("answer n: %d\n%s%s", code, e.out, e.errb)
	}
	if e.run("", "trust", "--list"); !strings.Contains(e.out.String(), "No trusted folders") {
		t.Fatalf("list after n: %s", e.out)
	}
	e.stdin = "y\n"
	if code := e.run(e.repoA, "trust"); code != 0 || !strings.Contains(e.out.String(), "Trusted") {
		t.Fatalf("answer y: %d\n%s%s", code, e.out, e.errb)
	}
	if e.run(e.repoA, "trust"); !strings.Contains(e.out.String(), "already trusted") {
		t.Errorf("again: %s", e.out)
	}
	if e.run("", "trust", "--list"); !strings.Contains(e.out.String(), e.repoA) || !strings.Contains(e.out.String(), "1 setting") {
		t.Errorf("list: %s", e.out)
	}
	if e.run(e.repoA, "config"); !strings.Contains(e.out.String(), "trusted (lovia trust)") {
		t.Errorf("config: %s", e.out)
	}
	if code := e.run(e.repoA, "trust", "--untrust"); code != 0 || !strings.Contains(e.out.String(), "Forgot") {
		t.Errorf("untrust: %d %s", code, e.out)
	}
	if e.run(e.repoA, "config"); !strings.Contains(e.out.String(), "not trusted: 1 loosening") {
		t.Errorf("config after untrust: %s", e.out)
	}

	// Without a terminal and without --yes: print and refuse.
	e.stdinTTY, e.stdin = false, ""
	if code := e.run(e.repoA, "trust"); code != 2 || !strings.Contains(e.errb.String(), "lovia trust --yes") {
		t.Errorf("non-tty: %d %s", code, e.errb)
	}
	// A folder with nothing loosening.
	if code := e.run(e.repoB, "trust"); code != 0 || !strings.Contains(e.out.String(), "Nothing to trust") {
		t.Errorf("nothing: %d %s", code, e.out)
	}
}

// TestChatTrustPrompt: before the TUI starts, chat shows the project's untrusted
// loosening settings and asks; yes trusts the folder, anything else continues
// without them.
func TestChatTrustPrompt(t *testing.T) {
	e := newStoreEnv(t)
	writeFile(t, filepath.Join(e.repoA, ".lovia", "config.yaml"), "hooks:\n  - {event: session_start, command: \"touch x\"}\n")
	prompt := func(answer string) string {
		var out strings.Builder
		f := &Factory{IO: &IOStreams{In: strings.NewReader(answer), Out: &out, ErrOut: &out, StdinTTY: true, StdoutTTY: true},
			Getenv: e.getenv, Common: &CommonFlags{Cwd: e.repoA}}
		chatTrustPrompt(f, f.AppOptions())
		return out.String()
	}
	if out := prompt("\n"); !strings.Contains(out, "hooks[0]") || !strings.Contains(out, "continuing without these 1 setting") {
		t.Fatalf("no: %s", out)
	}
	if out := prompt("y\n"); !strings.Contains(out, "Trusted") {
		t.Fatalf("yes: %s", out)
	}
	if out := prompt(""); out != "" {
		t.Fatalf("asked again after trust: %s", out)
	}
}
