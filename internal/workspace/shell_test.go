package workspace

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/workspace/sandbox"
)

// TestMain doubles as the sandbox helper: the executor re-executes this test binary
// with sandbox.Subcommand, as lovia re-executes itself.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.Subcommand {
		os.Exit(sandbox.Main(os.Args[2:], os.Stderr))
	}
	if root := os.Getenv("LOVIA_TEST_STANDIN"); root != "" {
		standIn(root, os.Getenv("LOVIA_TEST_STANDIN_CMD"))
	}
	os.Exit(m.Run())
}

func newWS(t *testing.T, e testEnv, policy, sb string) *Workspace {
	t.Helper()
	cfg := e.config(policy)
	cfg.Sandbox = sb
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func run(t *testing.T, w *Workspace, req ShellRequest) (ShellResult, string) {
	t.Helper()
	var out bytes.Buffer
	req.Output = &out
	res := w.RunShell(context.Background(), req)
	return res, out.String()
}

func TestShellRuns(t *testing.T) {
	e := newTestEnv(t)
	w := newWS(t, e, PresetCoding, SandboxOff)
	res, out := run(t, w, ShellRequest{Command: "echo hello; echo err >&2; cd src && pwd", Approved: true})
	if res.ExitCode != 0 || res.Err != nil || out != "hello\nerr\n"+e.root+"/src\n" {
		t.Fatalf("res %+v out %q", res, out)
	}
	res, _ = run(t, w, ShellRequest{Command: "sh -c 'exit 3'", Approved: true})
	if res.ExitCode != 3 {
		t.Fatalf("exit %d", res.ExitCode)
	}
	res, out = run(t, w, ShellRequest{Command: "echo hi > out.txt && cat out.txt | tr a-z A-Z", Approved: true})
	if res.ExitCode != 0 || out != "HI\n" {
		t.Fatalf("res %+v out %q", res, out)
	}
	// The environment is minimal: secrets do not reach commands.
	t.Setenv("LOVIA_TEST_SECRET", "s3cret")
	w2 := newWS(t, e, PresetCoding, SandboxOff)
	_, out = run(t, w2, ShellRequest{Command: "env", Approved: true})
	if strings.Contains(out, "s3cret") || !strings.Contains(out, "PATH=") || !strings.Contains(out, "GIT_TERMINAL_PROMPT=0") {
		t.Fatalf("env leaked or PATH missing: %q", out)
	}
	// inherit_env passes the rest of lovia's environment, never its keys.
	t.Setenv("LOVIA_TEST_PLAIN", "p")
	t.Setenv("OPENAI_API_KEY", "sk-fake-1")
	t.Setenv("GH_TOKEN", "sk-fake-2")
	cfg := e.config(PresetCoding)
	cfg.Sandbox, cfg.InheritEnv, cfg.Env = SandboxOff, true, map[string]string{"EXTRA": "1"}
	w3, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, out = run(t, w3, ShellRequest{Command: "env", Approved: true}); strings.Contains(out, "LOVIA_TEST_SECRET=s3cret") || !strings.Contains(out, "EXTRA=1") || !strings.Contains(out, "LOVIA_TEST_PLAIN=p") || strings.Contains(out, "sk-fake") {
		t.Fatalf("inherit_env: %q", out)
	}
}

func TestShellRuntimeChecks(t *testing.T) {
	e := newTestEnv(t)
	victim := filepath.Join(e.base, "victim")
	if err := os.WriteFile(victim, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, policy, cmd string
		approved          bool
		wantDenied        bool
		wantAsk           bool
	}{
		// Functions expand "$1" at run time: the real path is checked.
		{"function arg", PresetCoding, `f() { rm -f "$1"; }; f ../victim`, true, true, false},
		{"variable redirect", PresetCoding, `x=../out; echo hi > $x`, true, true, false},
		{"cmdsubst read unapproved", PresetCoding, `cat $(echo /etc/hostname)`, false, true, true},
		// Approving "cat $(...)" did not show /etc/hostname: asked again (nobody answers).
		{"cmdsubst read approved blind", PresetCoding, `cat $(echo /etc/hostname)`, true, true, true},
		{"symlink made at run time", PresetTrusted, `ln -s ` + e.base + ` up && echo x > up/victim`, false, true, true},
		{"eval payload", PresetTrusted, `c="rm -f ../victim"; eval "$c"`, false, true, true},
		{"denied path via var", PresetTrusted, `f=.env; cat $f`, true, true, false},
		{"PATH changed", PresetTrusted, `PATH=/tmp:$PATH ls`, false, true, true},
		{"inside is fine", PresetTrusted, `d=src; ls $d > listing.txt`, false, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWS(t, e, c.policy, SandboxOff)
			res, out := run(t, w, ShellRequest{Command: c.cmd, Approved: c.approved})
			if (res.Denied != nil) != c.wantDenied {
				t.Fatalf("denied=%v (%v), out %q res %+v", res.Denied != nil, res.Denied, out, res)
			}
			if res.Denied != nil && res.Denied.Ask != c.wantAsk {
				t.Fatalf("ask=%v: %v", res.Denied.Ask, res.Denied)
			}
		})
	}
	if _, err := os.Stat(victim); err != nil {
		t.Fatalf("victim removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.base, "out")); err == nil {
		t.Fatal("redirect outside the root created a file")
	}
	// A path the approved command showed is covered at run time.
	w0 := newWS(t, e, PresetCoding, SandboxOff)
	if res, out := run(t, w0, ShellRequest{Command: "cat /etc/hostname", Approved: true, ApprovedPaths: []string{"/etc/hostname"}}); res.Denied != nil || res.ExitCode != 0 {
		t.Fatalf("visible approved read: %+v %q", res, out)
	}
	// A run-time ask goes through the approval callback.
	w := newWS(t, e, PresetTrusted, SandboxOff)
	var asked string
	res, _ := run(t, w, ShellRequest{Command: `t=` + e.base + `/approved.txt; echo ok > $t`, Ask: func(_ context.Context, what, reason string) bool {
		asked = what
		return true
	}})
	if res.Denied != nil || asked == "" {
		t.Fatalf("callback not used: %+v asked %q", res, asked)
	}
}

func TestBackgroundProcesses(t *testing.T) {
	e := newTestEnv(t)
	w := newWS(t, e, PresetTrusted, SandboxOff)
	id := w.StartBackground(ShellRequest{Command: "echo a; sleep 0.2; echo b"})
	out, err := w.ReadProcessOutput(context.Background(), id, 5*time.Second)
	if err != nil || !strings.Contains(out, "a\nb\n") || !strings.Contains(out, "exited with status 0") {
		t.Fatalf("out %q err %v", out, err)
	}
	out, _ = w.ReadProcessOutput(context.Background(), id, 0)
	if !strings.Contains(out, "(no new output)") {
		t.Fatalf("second read %q", out)
	}
	id2 := w.StartBackground(ShellRequest{Command: "echo started; sleep 30"})
	// "killed", not an exit status, says it did not run to its end.
	msg, err := w.KillProcess(id2)
	if err != nil || !strings.Contains(msg, "killed") {
		t.Fatalf("kill: %q %v", msg, err)
	}
	if _, err := w.ReadProcessOutput(context.Background(), id2, 0); err == nil {
		t.Fatal("killed process still listed")
	}
}

func TestCapBuffer(t *testing.T) {
	b := newCapBuffer(30)
	for i := 0; i < 100; i++ {
		b.Write([]byte(strconv.Itoa(i % 10)))
	}
	s := b.String()
	if !strings.HasPrefix(s, "01234567890123456789") || !strings.HasSuffix(s, "0123456789") || !strings.Contains(s, "70 bytes of output omitted") {
		t.Fatalf("%q", s)
	}
	small := newCapBuffer(30)
	small.Write([]byte("hello"))
	if small.String() != "hello" {
		t.Fatal(small.String())
	}
}

func python(t *testing.T) string {
	for _, p := range []string{"/usr/bin/python3"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	return p
}

func TestSandboxConfinesInterpreters(t *testing.T) {
	if v, _ := sandbox.ABI(); v == 0 {
		t.Skip("Landlock unavailable")
	}
	e := newTestEnv(t)
	w := newWS(t, e, PresetTrusted, SandboxRequired)
	if !w.Sandboxed() {
		t.Fatal("not sandboxed")
	}
	outside := filepath.Join(e.base, "escaped.txt")
	py := python(t)
	write(t, e.root+"/w.sh", "echo x > "+outside+"\n")
	cmds := []string{
		py + ` -c 'open("` + outside + `", "w").write("x")'`,
		`perl -e 'open(F, ">", "` + outside + `") or die "denied: $!"; print F "x"'`,
		// A script's contents are invisible to the guard.
		`sh ./w.sh`,
	}
	for _, c := range cmds {
		res, out := run(t, w, ShellRequest{Command: c, Approved: true})
		t.Logf("%s -> %d %q", c, res.ExitCode, out)
		if !strings.Contains(out, "ermission denied") {
			t.Errorf("%s: not refused by the sandbox: %q", c, out)
		}
		if res.ExitCode == 0 {
			t.Errorf("%s: succeeded (out %q)", c, out)
		}
		if _, err := os.Stat(outside); err == nil {
			t.Fatalf("%s: wrote outside the root", c)
		}
	}
	// Inside the root, the temp dir, and reads anywhere still work.
	res, out := run(t, w, ShellRequest{Command: py + ` -c 'open("inside.txt", "w").write(open("/etc/hostname").read())' && perl -e 'open(F, ">", "` + e.tmp + `/t") or die; print F "y"' && cat inside.txt > /dev/null && echo ok`, Approved: true})
	if res.ExitCode != 0 || !strings.Contains(out, "ok") {
		t.Fatalf("inside write failed: %+v %q", res, out)
	}
	// An approved write outside opens exactly that path for the call.
	target := filepath.Join(e.base, "granted")
	os.Mkdir(target, 0o755)
	res, out = run(t, w, ShellRequest{Command: py + ` -c 'open("` + target + `/f", "w").write("x")'`, Approved: true, Writable: []string{target}})
	if res.ExitCode != 0 {
		t.Fatalf("approved write failed: %+v %q", res, out)
	}
}

func TestSandboxHelperProbe(t *testing.T) {
	if v, _ := sandbox.ABI(); v == 0 {
		t.Skip("Landlock unavailable")
	}
	e := newTestEnv(t)
	cfg := e.config(PresetCoding)
	cfg.SandboxHelper = []string{"/bin/false"}
	cfg.Sandbox = SandboxAuto
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Auto probes in the background: the prompt says commands are sandboxed, so a
	// broken helper refuses them rather than running them unconfined.
	if !w.Sandboxed() || !strings.Contains(w.Instructions(), "Landlock") {
		t.Fatalf("auto on a Landlock kernel: sandboxed=%v note=%q", w.Sandboxed(), w.SandboxNote())
	}
	res, out := run(t, w, ShellRequest{Command: "touch f.txt", Approved: true})
	if res.ExitCode == 0 || !strings.Contains(out, "sandbox helper failed") || !strings.Contains(out, "--sandbox off") {
		t.Fatalf("a command ran although the helper is broken: %+v %q", res, out)
	}
	if _, err := os.Stat(filepath.Join(e.root, "f.txt")); err == nil {
		t.Fatal("the refused command still wrote its file")
	}
	w.Close()
	cfg.Sandbox = SandboxRequired
	if _, err := New(cfg); err == nil {
		t.Fatal("required with a broken helper accepted")
	}
	cfg.Sandbox = "sometimes"
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "unknown sandbox mode") {
		t.Fatalf("bad mode: %v", err)
	}
}

// The user's build caches are read-only to commands (a poisoned entry would run in
// the user's next build); commands get lovia's own caches through GOCACHE & co.
func TestSandboxToolCaches(t *testing.T) {
	if v, _ := sandbox.ABI(); v == 0 {
		t.Skip("Landlock unavailable")
	}
	e := newTestEnv(t)
	t.Setenv("GOCACHE", "")
	t.Setenv("XDG_CACHE_HOME", "")
	os.MkdirAll(e.home+"/.cache/go-build", 0o755)
	write(t, e.root+"/c.sh", "echo x > "+e.home+"/.cache/go-build/entry\n")
	write(t, e.root+"/own.sh", "echo x > \"$GOCACHE/entry\" && echo \"$GOCACHE $XDG_CACHE_HOME $npm_config_cache $PIP_CACHE_DIR\"\n")
	w := newWS(t, e, PresetCoding, SandboxRequired)
	if res, out := run(t, w, ShellRequest{Command: "sh ./c.sh", Approved: true}); res.ExitCode == 0 || !strings.Contains(out, "ermission denied") {
		t.Fatalf("the user's GOCACHE is writable: %+v %q", res, out)
	}
	res, out := run(t, w, ShellRequest{Command: "sh ./own.sh", Approved: true})
	// One cache per root (another repository's builds must not use what this one's
	// commands planted).
	sum := sha256.Sum256([]byte(w.policy.root))
	own := e.home + "/.cache/lovia/sandbox-cache/" + hex.EncodeToString(sum[:8]) + "/"
	if res.ExitCode != 0 || !strings.Contains(out, own+"go-build "+own+"xdg "+own+"npm "+own+"pip") {
		t.Fatalf("lovia's cache: %+v %q", res, out)
	}
	if !strings.Contains(w.Instructions(), own+"go-build") {
		t.Errorf("instructions do not name the cache:\n%s", w.Instructions())
	}
	// workspace.writable naming the user's cache keeps it in use, writable.
	cfg := e.config(PresetCoding)
	cfg.Sandbox = SandboxRequired
	cfg.Writable = append(cfg.Writable, "~/.cache/go-build")
	named, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer named.Close()
	if res, out := run(t, named, ShellRequest{Command: "sh ./c.sh; echo \"[$GOCACHE]\"", Approved: true}); res.ExitCode != 0 || !strings.Contains(out, "["+e.home+"/.cache/go-build]") {
		t.Fatalf("a writable-named cache: %+v %q", res, out)
	}
	cfg = e.config(PresetCoding)
	cfg.Sandbox, cfg.StrictSandbox = SandboxRequired, true
	strict, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer strict.Close()
	if res, out := run(t, strict, ShellRequest{Command: "sh ./c.sh", Approved: true}); res.ExitCode == 0 || !strings.Contains(out, "ermission denied") {
		t.Fatalf("strict sandbox let the cache write through: %+v %q", res, out)
	}
}

func TestSandboxExecServer(t *testing.T) {
	if v, _ := sandbox.ABI(); v == 0 {
		t.Skip("Landlock unavailable")
	}
	e := newTestEnv(t)
	w := newWS(t, e, PresetTrusted, SandboxRequired)
	write(t, e.root+"/in.txt", "b\na\n")
	cases := []struct {
		cmd  string
		code int
		out  string
	}{
		{"printf 'b\\na\\n' | sort | head -n 1", 0, "a\n"},
		{"sort < in.txt | tr a-z A-Z", 0, "A\nB\n"},
		{"cat in.txt | wc -l", 0, "2\n"},
		{"sh -c 'echo out; echo err >&2; exit 7'", 7, "out\nerr\n"},
		{"sh -c 'kill -9 $$'", 137, ""},
		{"/bin/nonexistent-program", 127, ""},
	}
	for _, c := range cases {
		res, out := run(t, w, ShellRequest{Command: c.cmd})
		if res.ExitCode != c.code || (c.out != "" && strings.TrimLeft(out, " ") != c.out) || res.Denied != nil {
			t.Errorf("%s: code %d out %q (%+v)", c.cmd, res.ExitCode, out, res)
		}
	}
	sb := w.executor.(*SandboxExecutor)
	if sb.srv[1] == nil || !sb.srv[1].alive() {
		t.Fatal("exec server not used")
	}
	// Many commands cost one helper start, not one each.
	start := time.Now()
	if res, _ := run(t, w, ShellRequest{Command: "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do /bin/true; done"}); res.ExitCode != 0 {
		t.Fatalf("loop: %+v", res)
	}
	t.Logf("20 sandboxed commands: %v", time.Since(start))
	// Timeouts kill through the server too; a background grandchild holding stdout
	// does not hold the call past the grace period.
	start = time.Now()
	res, _ := run(t, w, ShellRequest{Command: "sleep 30", Timeout: 300 * time.Millisecond})
	if !res.TimedOut || time.Since(start) > 5*time.Second {
		t.Fatalf("timeout: %+v after %v", res, time.Since(start))
	}
	start = time.Now()
	res, out := run(t, w, ShellRequest{Command: "sh -c 'sleep 20 & echo hi'"})
	if res.ExitCode != 0 || out != "hi\n" || time.Since(start) > 8*time.Second {
		t.Fatalf("grandchild: %+v %q after %v", res, out, time.Since(start))
	}
	// The server survives a crash of its own: killed, it is restarted.
	sb.srv[1].close()
	<-sb.srv[1].exited
	if res, out := run(t, w, ShellRequest{Command: "cat in.txt"}); res.ExitCode != 0 || out != "b\na\n" {
		t.Fatalf("after server death: %+v %q", res, out)
	}
	w.Close()
}

// An approved shell function bomb is stopped inside lovia's shell (its tasks are
// goroutines, out of the sandbox's process limit) and lovia carries on.
func TestShellFunctionBombStopped(t *testing.T) {
	e := newTestEnv(t)
	w := newWS(t, e, PresetCoding, SandboxOff)
	res, _ := run(t, w, ShellRequest{Command: ":(){ :|:& :|:; };:", Approved: true, Timeout: 60 * time.Second})
	if res.Denied == nil || !strings.Contains(res.Denied.Error(), "concurrent shell tasks") {
		t.Fatalf("bomb result %+v", res)
	}
	if res, out := run(t, w, ShellRequest{Command: "echo alive", Approved: true}); res.ExitCode != 0 || out != "alive\n" {
		t.Fatalf("after the bomb: %+v %q", res, out)
	}
}
