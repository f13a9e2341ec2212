//go:build linux

package workspace

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/workspace/sandbox"
)

// Sandbox v2 (issue 13, classes 3, 4, 6, 7): what a sandboxed command can no longer
// do, checked through the workspace API with the guard bypassed (Approved: true, the
// way a person's approval or a guard bug would let the command through).

func needNS(t *testing.T) {
	t.Helper()
	if v, _ := sandbox.ABI(); v == 0 {
		t.Skip("Landlock unavailable")
	}
	if err := sandbox.ProbeKernel(); err != nil {
		t.Skip(err)
	}
}

// nsWS is a workspace under policy with the sandbox required (namespaces + Landlock).
func nsWS(t *testing.T, e testEnv, policy string, edit func(*Config)) *Workspace {
	t.Helper()
	cfg := e.config(policy)
	cfg.Sandbox = SandboxRequired
	if edit != nil {
		edit(&cfg)
	}
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	rep, nsErr, ok := w.SandboxLayers()
	if !ok || nsErr != nil || !rep.Namespaces || !rep.PrivateProc || rep.Landlock == 0 {
		t.Fatalf("layers: %+v %v %v", rep, nsErr, ok)
	}
	return w
}

// bypass runs command as if the guard had let everything through: the call and
// every path it touches approved. What stops it then is the sandbox alone.
func bypass(t *testing.T, w *Workspace, command string, timeout time.Duration) (ShellResult, string) {
	t.Helper()
	return run(t, w, ShellRequest{Command: command, Approved: true, ApprovedPaths: []string{"/"}, Timeout: timeout})
}

var uniq atomic.Int64

// marker is a sleep duration no other process on the machine uses: it names a
// possible survivor for pgrep.
func marker() string {
	return fmt.Sprintf("%d.%d", 3000+os.Getpid()%1000, uniq.Add(1))
}

func survivors(t *testing.T, m string) string {
	t.Helper()
	out, _ := exec.Command("pgrep", "-af", "sleep "+m).Output()
	return strings.TrimSpace(string(out))
}

func TestSandboxV2NoSecretsInProcesses(t *testing.T) {
	needNS(t)
	t.Setenv("OPENAI_API_KEY", "sk-canary-openai")
	t.Setenv("ANTHROPIC_API_KEY", "sk-canary-anthropic")
	e := newTestEnv(t)
	w := nsWS(t, e, PresetCoding, nil)
	cmds := []string{
		"cat /proc/$PPID/environ",
		"cat /proc/*/environ",
		"cat /proc/1/environ",
		"sh -c 'cat /proc/$PPID/environ; cat /proc/*/environ; tr \"\\0\" \"\\n\" < /proc/1/environ'",
		"env",
	}
	if _, err := exec.LookPath("ps"); err == nil {
		cmds = append(cmds, "ps eww", "ps auxeww")
	}
	for _, c := range cmds {
		res, out := bypass(t, w, c, 0)
		if strings.Contains(out, "sk-canary") {
			t.Errorf("%s (exit %d) shows a provider key:\n%s", c, res.ExitCode, out)
		}
	}
	// The processes visible are the sandbox's own.
	_, out := bypass(t, w, "ls /proc", 0)
	n := 0
	for _, f := range strings.Fields(out) {
		if f[0] >= '0' && f[0] <= '9' {
			n++
		}
	}
	if n > 8 {
		t.Errorf("%d processes visible in the sandbox's /proc: %s", n, out)
	}
}

func TestSandboxV2ProtectedFiles(t *testing.T) {
	needNS(t)
	e := newTestEnv(t)
	git := filepath.Join(e.root, ".git")
	os.MkdirAll(filepath.Join(git, "hooks"), 0o755)
	write(t, filepath.Join(git, "config"), "[core]\n\tbare = false\n")
	write(t, filepath.Join(git, "HEAD"), "ref: refs/heads/main\n")
	os.MkdirAll(filepath.Join(e.root, ".lovia"), 0o755)
	write(t, filepath.Join(e.root, ".lovia", "config.yaml"), "workspace:\n  policy: coding\n")
	write(t, e.root+"/evil", "#!/bin/sh\ntouch /tmp/pwned\n")
	// Under coding the path policy denies these writes outright; under trusted they
	// ask, and the approval lets them past the guard to meet the sandbox.
	w := nsWS(t, e, PresetTrusted, nil)
	attacks := []string{
		"sh -c 'echo x > .git/config'",
		"sh -c 'echo \"[core] fsmonitor = evil\" >> .git/config'",
		"cp evil .git/hooks/pre-commit",
		"sh -c 'mkdir -p .lovia && echo \"workspace: {policy: trusted}\" > .lovia/config.yaml'",
		"sh -c 'mv .git .git-old && mkdir .git && echo evil > .git/config'",
		"sh -c 'mv .lovia .lovia-old'",
		"sh -c 'rm -rf .git/hooks; mkdir .git/hooks; cp evil .git/hooks/post-checkout'",
		"sh -c 'ln -sf ../evil .git/hooks/pre-push'",
		"sh -c 'umount .git/config; echo x > .git/config'",
		"python3 -c 'open(\".git/config\",\"a\").write(\"[alias]\\n\")'",
	}
	if _, err := exec.LookPath("git"); err == nil {
		attacks = append(attacks, "git config core.fsmonitor 'touch /tmp/pwned'", "git config alias.st '!touch /tmp/pwned'", "git config core.hooksPath /tmp")
	}
	for _, a := range attacks {
		if res, out := bypass(t, w, a, 0); res.Denied != nil {
			t.Errorf("%s: the guard stopped it, so the sandbox is not tested: %v %q", a, res.Denied, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(git, "config")); string(b) != "[core]\n\tbare = false\n" {
		t.Errorf(".git/config changed: %q", b)
	}
	if ents, _ := os.ReadDir(filepath.Join(git, "hooks")); len(ents) != 0 {
		t.Errorf(".git/hooks gained %v", ents)
	}
	if b, _ := os.ReadFile(filepath.Join(e.root, ".lovia", "config.yaml")); string(b) != "workspace:\n  policy: coding\n" {
		t.Errorf(".lovia/config.yaml changed: %q", b)
	}
	for _, p := range []string{".git-old", ".lovia-old"} {
		if _, err := os.Stat(filepath.Join(e.root, p)); err == nil {
			t.Errorf("%s was renamed away", p)
		}
	}
	// The rest of .git and the root stay writable.
	if res, out := bypass(t, w, "sh -c 'echo ref > .git/HEAD && echo ok > inside.txt'", 0); res.ExitCode != 0 {
		t.Errorf("ordinary writes failed: %+v %q", res, out)
	}
	// Bypassing the shell too: the executor itself, as an approved request.
	sb := w.executor.(*SandboxExecutor)
	cmd, err := sb.Command(context.Background(), ExecRequest{Path: "/bin/sh", Args: []string{"sh", "-c", "echo x >> .git/config"}, Dir: e.root, Env: w.env()})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "Read-only") {
		t.Errorf("per-command helper wrote .git/config: %v %q", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(git, "config")); string(b) != "[core]\n\tbare = false\n" {
		t.Errorf(".git/config changed: %q", b)
	}
}

// A .git made after the sandbox started (git init) is protected from the next
// command on.
func TestSandboxV2ProtectsNewGitDir(t *testing.T) {
	needNS(t)
	e := newTestEnv(t)
	w := nsWS(t, e, PresetTrusted, nil) // approved past the path policy (see above)
	res, out := bypass(t, w, "sh -c 'mkdir -p .git/hooks; echo [core] > .git/config'", 0)
	if res.ExitCode != 0 {
		t.Fatalf("%+v %q", res, out)
	}
	bypass(t, w, "sh -c 'echo \"fsmonitor = evil\" >> .git/config'", 0)
	if b, _ := os.ReadFile(e.root + "/.git/config"); string(b) != "[core]\n" {
		t.Errorf(".git/config changed: %q", b)
	}
}

func TestSandboxV2CredentialStoresHidden(t *testing.T) {
	needNS(t)
	e := newTestEnv(t)
	write(t, e.home+"/.aws/credentials", "aws_secret_access_key=AKIA-canary\n")
	write(t, e.home+"/.netrc", "machine x password canary-netrc\n")
	cfg := func(c *Config) { c.DeniedPaths = nil } // the policy's built-in list alone
	w := nsWS(t, e, PresetTrusted, cfg)
	for _, c := range []string{"grep -r canary " + e.home, "cat " + e.home + "/.ssh/id_rsa", "tar -C " + e.home + " -cf - .ssh .aws .netrc", "find " + e.home + " -type f -exec cat {} +"} {
		_, out := bypass(t, w, c, 0)
		if strings.Contains(out, "canary") || strings.Contains(out, "private") {
			t.Errorf("%s read a credential store:\n%s", c, out)
		}
	}
}

func TestSandboxV2Network(t *testing.T) {
	needNS(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "PONG") }))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	e := newTestEnv(t)
	bash, _ := exec.LookPath("python3") // a program not known to need the network
	curl, _ := exec.LookPath("curl")
	tcp := fmt.Sprintf(`python3 -c 'import urllib.request as u; print(u.urlopen("http://127.0.0.1:%d/").read())'`, port)
	curlCmd := fmt.Sprintf("curl -s http://127.0.0.1:%d/", port)

	w := nsWS(t, e, PresetCoding, nil)
	if bash != "" {
		// Not known to need the network: runs, without it.
		if _, out := bypass(t, w, tcp, 0); strings.Contains(out, "PONG") {
			t.Errorf("bash /dev/tcp reached the host under ask: %q", out)
		}
	}
	if a := w.Policy().AnalyzeCommand(curlCmd, ""); a.Decision != Ask || !strings.Contains(a.Explain(), "needs the network") || !a.Network {
		t.Errorf("curl under ask: %s %q", a.Decision, a.Explain())
	}
	if curl != "" {
		if res, out := run(t, w, ShellRequest{Command: curlCmd}); res.Denied == nil || !strings.Contains(res.Denied.Reason, "needs the network") || strings.Contains(out, "PONG") {
			t.Errorf("unapproved curl: %+v %q", res, out)
		}
		if res, out := run(t, w, ShellRequest{Command: curlCmd, Approved: true}); !strings.Contains(out, "PONG") {
			t.Errorf("approved curl failed: %+v %q", res, out)
		}
		// A command rule (or "allow for this session") counts as the approval.
		w.Policy().Grant([]string{"curl"})
		if res, out := run(t, w, ShellRequest{Command: curlCmd}); !strings.Contains(out, "PONG") {
			t.Errorf("granted curl failed: %+v %q", res, out)
		}
	}

	deny := nsWS(t, e, PresetCoding, func(c *Config) { c.Network = NetworkDeny })
	if res, out := run(t, deny, ShellRequest{Command: curlCmd, Approved: true}); res.Denied == nil || strings.Contains(out, "PONG") {
		t.Errorf("curl under deny: %+v %q", res, out)
	}
	if bash != "" {
		if _, out := bypass(t, deny, tcp, 0); strings.Contains(out, "PONG") {
			t.Errorf("bash /dev/tcp under deny: %q", out)
		}
	}

	allow := nsWS(t, e, PresetCoding, func(c *Config) { c.Network = NetworkAllow })
	if bash != "" {
		if res, out := bypass(t, allow, tcp, 0); !strings.Contains(out, "PONG") {
			t.Errorf("bash /dev/tcp under allow: %+v %q", res, out)
		}
	}
	if _, err := New(Config{Root: e.root, Network: "sometimes"}); err == nil {
		t.Error("a bad workspace.network was accepted")
	}
}

func TestSandboxV2NoSurvivors(t *testing.T) {
	needNS(t)
	e := newTestEnv(t)
	w := nsWS(t, e, PresetCoding, nil)
	var ms []string
	check := func(when string) {
		t.Helper()
		for _, m := range ms {
			if s := survivors(t, m); s != "" {
				t.Errorf("%s: survivor %s", when, s)
			}
		}
		ms = nil
	}
	for _, c := range []string{
		"setsid -f sleep %s",
		"sh -c '(sleep %s &) &'",
		"sh -c 'nohup sleep %s >/dev/null 2>&1 &'",
		"sh -c 'setsid sh -c \"sleep %s\" & exit 0'",
	} {
		m := marker()
		ms = append(ms, m)
		if res, out := bypass(t, w, fmt.Sprintf(c, m), 0); res.ExitCode != 0 {
			t.Fatalf("%s: %+v %q", c, res, out)
		}
	}
	check("after the command")

	// A timeout kills what the command left behind too.
	m := marker()
	ms = append(ms, m)
	res, _ := bypass(t, w, fmt.Sprintf("sh -c 'setsid -f sleep %s; sleep 600'", m), time.Second)
	if !res.TimedOut {
		t.Fatalf("no timeout: %+v", res)
	}
	check("after the timeout")

	// Background processes die with the workspace (lovia exiting).
	m = marker()
	ms = append(ms, m)
	id := w.StartBackground(ShellRequest{Command: fmt.Sprintf("sh -c 'setsid -f sleep %s; echo started; sleep 600'", m), Approved: true, ApprovedPaths: []string{"/"}})
	for {
		out, _ := w.ReadProcessOutput(context.Background(), id, 100*time.Millisecond)
		if strings.Contains(out, "started") {
			break
		}
	}
	if survivors(t, m) == "" {
		t.Fatal("the background command's daemon is not running")
	}
	w.Close()
	check("after Close")
}

// TestSandboxV2SurvivesNothingAfterSIGKILL: lovia (here: this test binary as a
// stand-in that opens a workspace and runs a command) is killed with SIGKILL; the
// command's daemon dies with it (PR_SET_PDEATHSIG of the PID namespace's init).
func TestSandboxV2NothingAfterSIGKILL(t *testing.T) {
	needNS(t)
	e := newTestEnv(t)
	m := marker()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LOVIA_TEST_STANDIN="+e.root, "LOVIA_TEST_STANDIN_CMD="+fmt.Sprintf("sh -c 'setsid -f sleep %s; echo started; sleep 600'", m))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := out.Read(buf)
	if !strings.Contains(string(buf[:n]), "started") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("stand-in: %q", buf[:n])
	}
	if survivors(t, m) == "" {
		t.Fatal("the daemon is not running")
	}
	cmd.Process.Kill() // SIGKILL
	cmd.Wait()
	// The kernel kills the namespace as the server dies; wait for it, bounded.
	deadline := time.Now().Add(10 * time.Second)
	for survivors(t, m) != "" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if s := survivors(t, m); s != "" {
		t.Fatalf("survivor after SIGKILL of lovia: %s", s)
	}
}

// standIn is lovia for TestSandboxV2NothingAfterSIGKILL (called from TestMain).
func standIn(root, command string) {
	w, err := New(Config{Root: root, Sandbox: SandboxRequired, Policy: PresetCoding})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	w.RunShell(context.Background(), ShellRequest{Command: command, Approved: true, ApprovedPaths: []string{"/"}, Output: os.Stdout})
	os.Exit(0)
}

func TestSandboxV2ForkBomb(t *testing.T) {
	needNS(t)
	if testing.Short() {
		t.Skip("fork bomb")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	e := newTestEnv(t)
	w := nsWS(t, e, PresetCoding, nil)
	sb := w.executor.(*SandboxExecutor)
	sb.Close()
	sb.MaxProcs = 400
	// The limit is in force before the bomb goes off: the server says so, and 450
	// processes cannot start.
	if res, out := bypass(t, w, "sh -c true", 0); res.ExitCode != 0 {
		t.Fatalf("%+v %q", res, out)
	}
	if rep, _ := sb.Layers(); !strings.Contains(rep.ProcLimit, "pid_max 400") {
		t.Skipf("no per-namespace pid_max here (%q): not running a fork bomb", rep.ProcLimit)
	}
	res, out := bypass(t, w, "sh -c 'i=0; while [ $i -lt 450 ]; do sleep 60 & i=$((i+1)); done; echo spawned'", 30*time.Second)
	if strings.Contains(out, "spawned") && !strings.Contains(out, "fork") {
		t.Fatalf("450 processes started under a limit of 400: %+v %q", res, out)
	}
	res, out = bypass(t, w, bash+` -c ':(){ :|:& };:'`, 3*time.Second)
	t.Logf("fork bomb: %+v, %d bytes of output", res, len(out))
	// The sandbox still works, and nothing of the bomb is left.
	if res, out := bypass(t, w, "sh -c 'echo alive'", 0); res.ExitCode != 0 || out != "alive\n" {
		t.Fatalf("after the fork bomb: %+v %q", res, out)
	}
	if o, _ := exec.Command("pgrep", "-fc", `:\|:`).Output(); strings.TrimSpace(string(o)) != "0" && len(o) > 0 {
		t.Logf("pgrep: %s", o)
	}
}

// go test and git commit work under coding without a prompt (command rules of the
// test configuration allow git and go test; no network is needed).
func TestSandboxV2NormalWork(t *testing.T) {
	needNS(t)
	if testing.Short() {
		t.Skip("builds a module")
	}
	e := newTestEnv(t)
	w := nsWS(t, e, PresetCoding, func(c *Config) {
		c.Env = map[string]string{"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
	})
	write(t, e.root+"/go.mod", "module example.com/tiny\n\ngo 1.21\n")
	write(t, e.root+"/tiny.go", "package tiny\n\nfunc Add(a, b int) int { return a + b }\n")
	write(t, e.root+"/tiny_test.go", "package tiny\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal()\n\t}\n}\n")
	if _, err := exec.LookPath("git"); err == nil {
		steps := "git init -q && git add -A && git commit -qm init && git log --oneline"
		if a := w.Policy().AnalyzeCommand(steps, ""); a.Decision != Allow {
			t.Fatalf("git needs approval: %s", a.Explain())
		}
		if res, out := run(t, w, ShellRequest{Command: steps}); res.ExitCode != 0 || !strings.Contains(out, "init") {
			t.Fatalf("git commit: %+v %q", res, out)
		}
	}
	if _, err := exec.LookPath("go"); err == nil {
		if a := w.Policy().AnalyzeCommand("go test ./...", ""); a.Decision != Allow {
			t.Fatalf("go test needs approval: %s", a.Explain())
		}
		res, out := run(t, w, ShellRequest{Command: "go test ./...", Timeout: 5 * time.Minute})
		if res.ExitCode != 0 || !strings.Contains(out, "ok") {
			t.Fatalf("go test: %+v %q", res, out)
		}
	}
}

// A .git made while a background command keeps the server busy: a new server
// protects it, the background command runs on.
func TestSandboxV2NewGitDirWhileBusy(t *testing.T) {
	needNS(t)
	e := newTestEnv(t)
	w := nsWS(t, e, PresetCoding, nil)
	m := marker()
	id := w.StartBackground(ShellRequest{Command: "sh -c 'echo started; exec sleep " + m + "'", Approved: true, ApprovedPaths: []string{"/"}})
	for {
		out, _ := w.ReadProcessOutput(context.Background(), id, 100*time.Millisecond)
		if strings.Contains(out, "started") {
			break
		}
	}
	os.MkdirAll(e.root+"/.git/hooks", 0o755)
	write(t, e.root+"/.git/config", "[core]\n")
	bypass(t, w, "sh -c 'echo \"fsmonitor = evil\" >> .git/config'", 0)
	if b, _ := os.ReadFile(e.root + "/.git/config"); string(b) != "[core]\n" {
		t.Errorf(".git/config changed: %q", b)
	}
	if survivors(t, m) == "" {
		t.Error("the background command died with the old server")
	}
	w.Close()
	if s := survivors(t, m); s != "" {
		t.Errorf("survivor after Close: %s", s)
	}
}

// Without namespaces (restricted user namespaces), Landlock alone: commands run,
// TCP is denied by Landlock's rules, and the layers say so.
func TestSandboxV2LandlockOnlyFallback(t *testing.T) {
	if v, _ := sandbox.ABI(); v < 4 {
		t.Skip("Landlock ABI < 4")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "PONG") }))
	defer srv.Close()
	e := newTestEnv(t)
	cfg := e.config(PresetCoding)
	cfg.Sandbox = SandboxRequired
	w, err := New(cfg)
	if err != nil {
		t.Skip(err)
	}
	defer w.Close()
	sb := w.executor.(*SandboxExecutor)
	sb.Close()
	sb.Namespaces = false
	get := py + ` -c 'import urllib.request as u; print(u.urlopen("` + srv.URL + `").read())'`
	res, out := bypass(t, w, get, 0)
	if strings.Contains(out, "PONG") {
		t.Fatalf("TCP reached the host without a network namespace: %+v %q", res, out)
	}
	rep, _ := sb.Layers()
	if rep.Namespaces || !rep.DenyNetTCP || rep.Landlock < 4 {
		t.Errorf("layers: %+v", rep)
	}
	if res, out := bypass(t, w, "sh -c 'echo ok > inside.txt && cat inside.txt'", 0); res.ExitCode != 0 || out != "ok\n" {
		t.Errorf("ordinary command: %+v %q", res, out)
	}
	// Allowed network: no Landlock TCP rules either.
	cfg.Network = NetworkAllow
	w2, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	sb2 := w2.executor.(*SandboxExecutor)
	sb2.Close()
	sb2.Namespaces = false
	if _, out := bypass(t, w2, get, 0); !strings.Contains(out, "PONG") {
		t.Errorf("network allow without namespaces: %q", out)
	}
}

// Commands hold no capabilities, whoever runs lovia (root too): they cannot undo the
// sandbox's mounts.
func TestSandboxV2NoCapabilities(t *testing.T) {
	needNS(t)
	e := newTestEnv(t)
	w := nsWS(t, e, PresetCoding, nil)
	for _, c := range []string{"cat /proc/self/status", "sh -c 'sleep 0 & cat /proc/self/status'"} {
		_, out := bypass(t, w, c, 0)
		for _, k := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
			if !strings.Contains(out, k+":\t0000000000000000") {
				t.Errorf("%s: %s is not empty:\n%s", c, k, out)
			}
		}
	}
}

// A .git file (worktree, submodule) must not make the namespace set-up fail and the
// sandbox drop to Landlock alone: the file itself is read-only, and the layers stay.
func TestSandboxV2GitFileKeepsLayers(t *testing.T) {
	needNS(t)
	e := newTestEnv(t)
	real := t.TempDir()
	write(t, filepath.Join(e.root, ".git"), "gitdir: "+real+"\n")
	w := nsWS(t, e, PresetTrusted, nil)
	res, out := bypass(t, w, "sh -c 'grep NSpid /proc/self/status; echo gitdir: /tmp/evil > .git'", 0)
	if !strings.Contains(out, "NSpid:\t") || len(strings.Fields(strings.SplitN(strings.SplitN(out, "NSpid:", 2)[1], "\n", 2)[0])) < 2 {
		t.Errorf("commands run without a PID namespace: %+v %q", res, out)
	}
	if b, _ := os.ReadFile(filepath.Join(e.root, ".git")); string(b) != "gitdir: "+real+"\n" {
		t.Errorf(".git file repointed: %q", b)
	}
}

// A system that refuses the namespace layer where no repository path takes part (a
// container's masked /proc; the helper exits sandbox.ExitNoNamespaces) leaves auto
// with Landlock alone, as doctor reports, instead of refusing every command; required
// still refuses to start.
func TestSandboxV2SystemRefusalFallsBack(t *testing.T) {
	needNS(t)
	e := newTestEnv(t)
	cfg := e.config(PresetCoding)
	script := `case " $* " in *" --ns "*) echo "lovia sandbox: mounting a private /proc: operation not permitted" >&2; exit ` +
		strconv.Itoa(sandbox.ExitNoNamespaces) + `;; esac; exec "$0" "$@"`
	cfg.SandboxHelper = []string{"/bin/sh", "-c", script, os.Args[0], sandbox.Subcommand}
	cfg.Sandbox = SandboxAuto
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if res, out := bypass(t, w, "sh -c 'echo ok > inside.txt && cat inside.txt'", 0); res.ExitCode != 0 || out != "ok\n" {
		t.Fatalf("auto refused a command although Landlock works: %+v %q", res, out)
	}
	rep, nsErr, _ := w.SandboxLayers()
	if rep.Namespaces || rep.Landlock == 0 || nsErr == nil || !strings.Contains(nsErr.Error(), "private /proc") {
		t.Errorf("layers: %+v, %v", rep, nsErr)
	}
	cfg.Sandbox = SandboxRequired
	if w2, err := New(cfg); err == nil {
		w2.Close()
		t.Fatal("required started without the namespace layer")
	}
}

// A daemon that runs what a client asks (the user's D-Bus bus and systemd manager:
// systemd-run --user; Docker and Podman) is a way out of any sandbox: with
// namespaces its socket refuses the connection, unless workspace.writable names it.
func TestSandboxV2DaemonSocketsRefused(t *testing.T) {
	needNS(t)
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	e := newTestEnv(t)
	runtimeDir := filepath.Join(e.base, "run-user")
	other := filepath.Join(e.base, "other")
	for _, d := range []string{filepath.Join(runtimeDir, "systemd"), other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("XDG_RUNTIME_DIR", runtimeDir)
	socks := map[string]string{
		"bus":     filepath.Join(runtimeDir, "bus"),
		"systemd": filepath.Join(runtimeDir, "systemd", "private"),
		"docker":  filepath.Join(runtimeDir, "docker.sock"),
		"control": filepath.Join(other, "app.sock"), // any other socket stays reachable
	}
	for _, p := range socks {
		l, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	}
	write(t, filepath.Join(e.root, "probe.py"), "import socket, sys\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect(sys.argv[1])\n    print('connected')\nexcept OSError as e:\n    print('refused', e.errno)\n")
	probe := func(w *Workspace, name string) string {
		t.Helper()
		_, out := bypass(t, w, py+" probe.py "+socks[name], 0)
		return strings.TrimSpace(out)
	}
	w := nsWS(t, e, PresetTrusted, nil)
	for _, name := range []string{"bus", "systemd", "docker"} {
		if out := probe(w, name); !strings.HasPrefix(out, "refused") {
			t.Errorf("a sandboxed command reached the %s socket: %s", name, out)
		}
	}
	if out := probe(w, "control"); out != "connected" {
		t.Fatalf("the control socket: %s (the probe itself fails)", out)
	}
	// Named in workspace.writable: the user's choice, reachable.
	w2 := nsWS(t, e, PresetTrusted, func(c *Config) { c.Writable = append(c.Writable, socks["docker"]) })
	if out := probe(w2, "docker"); out != "connected" {
		t.Errorf("the docker socket named in workspace.writable: %s", out)
	}
	if out := probe(w2, "bus"); !strings.HasPrefix(out, "refused") {
		t.Errorf("a sandboxed command reached the bus socket: %s", out)
	}
}

// workspace.writable may name a single file: commands write it, the sandbox still
// starts (Landlock refuses directory rights on a file), and its siblings stay
// read-only.
func TestSandboxV2WritableFile(t *testing.T) {
	needNS(t)
	e := newTestEnv(t)
	notes := filepath.Join(e.home, "notes.txt")
	write(t, notes, "one\n")
	write(t, filepath.Join(e.home, "other.txt"), "keep\n")
	w := nsWS(t, e, PresetCoding, func(c *Config) { c.Writable = append(c.Writable, notes) })
	if res, out := bypass(t, w, "echo two >> "+notes, 0); res.ExitCode != 0 {
		t.Fatalf("appending to a writable file: %d %s", res.ExitCode, out)
	}
	if b, _ := os.ReadFile(notes); string(b) != "one\ntwo\n" {
		t.Errorf("notes.txt = %q", b)
	}
	bypass(t, w, "echo x >> "+filepath.Join(e.home, "other.txt")+"; echo y > "+filepath.Join(e.home, "new.txt"), 0)
	if b, _ := os.ReadFile(filepath.Join(e.home, "other.txt")); string(b) != "keep\n" {
		t.Errorf("a sibling of the writable file changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(e.home, "new.txt")); err == nil {
		t.Error("a file was created beside the writable file")
	}
}
