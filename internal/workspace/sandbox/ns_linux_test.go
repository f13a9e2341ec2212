//go:build linux

package sandbox

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// nsHelper runs sh -c script through this test binary as the helper, in namespaces.
func nsHelper(t *testing.T, o Options, isolateNet bool, script string) (string, error) {
	t.Helper()
	o.NS, o.NetNS = true, isolateNet
	args := append([]string{Subcommand}, Args(o, "/bin/sh", []string{"sh", "-c", script})...)
	cmd := exec.Command(os.Args[0], args...)
	cmd.SysProcAttr = NamespaceAttr(isolateNet)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + os.Getenv("HOME")}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func needNamespaces(t *testing.T) {
	t.Helper()
	if err := ProbeKernel(); err != nil {
		t.Skip(err)
	}
}

func TestNamespacesPrivateProc(t *testing.T) {
	needNamespaces(t)
	t.Setenv("FAKE_SECRET_API_KEY", "sk-canary-123")
	out, err := nsHelper(t, Options{RO: []string{"/"}}, true, "cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'; echo; ls /proc | grep -c '^[0-9]'")
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if strings.Contains(out, "sk-canary") {
		t.Fatalf("a sandboxed process read the parent's environment:\n%s", out)
	}
	// Only the helper, the shell and its pipeline are visible.
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if n := lines[len(lines)-1]; len(n) > 1 {
		t.Fatalf("%s processes visible in /proc, want a handful:\n%s", n, out)
	}
}

func TestNamespacesProtectAndHide(t *testing.T) {
	needNamespaces(t)
	dir := t.TempDir()
	git := filepath.Join(dir, ".git")
	os.MkdirAll(filepath.Join(git, "hooks"), 0o755)
	os.WriteFile(filepath.Join(git, "config"), []byte("[core]\n"), 0o644)
	os.WriteFile(filepath.Join(git, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	cred := filepath.Join(dir, "home", ".ssh")
	os.MkdirAll(cred, 0o700)
	os.WriteFile(filepath.Join(cred, "id_rsa"), []byte("PRIVATE"), 0o600)
	netrc := filepath.Join(dir, "home", ".netrc")
	os.WriteFile(netrc, []byte("machine x password SECRET"), 0o600)
	o := Options{RW: []string{dir}, RO: []string{"/"}, Protect: []string{git + "/config", git + "/hooks", dir + "/.lovia"}, Hide: []string{cred, netrc}}
	script := fmt.Sprintf(`cd %s
echo x >> .git/config && echo WROTE-CONFIG
cp /bin/true .git/hooks/pre-commit && echo WROTE-HOOK
mv .git .git2 && echo RENAMED-GIT
rm -f .git/config && echo REMOVED-CONFIG
umount .git/config && echo UNMOUNTED
echo ref > .git/HEAD && echo WROTE-HEAD
cat home/.netrc && echo READ-EMPTY
cat home/.ssh/id_rsa
ls -A home/.ssh
true`, dir)
	out, err := nsHelper(t, o, true, script)
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, bad := range []string{"WROTE-CONFIG", "WROTE-HOOK", "RENAMED-GIT", "REMOVED-CONFIG", "UNMOUNTED", "PRIVATE", "SECRET"} {
		if strings.Contains(out, bad) {
			t.Errorf("%s:\n%s", bad, out)
		}
	}
	if strings.Count(out, "READ-EMPTY") != 1 {
		t.Errorf("a hidden credential file must read as empty (its directory as missing):\n%s", out)
	}
	if !strings.Contains(out, "WROTE-HEAD") {
		t.Errorf("the rest of .git must stay writable:\n%s", out)
	}
	if b, _ := os.ReadFile(git + "/config"); string(b) != "[core]\n" {
		t.Errorf(".git/config changed: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(cred, "id_rsa")); string(b) != "PRIVATE" {
		t.Errorf("the hidden key changed: %q", b)
	}
}

func TestNamespacesNetwork(t *testing.T) {
	needNamespaces(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HELLO\n"))
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	script := fmt.Sprintf(`%s -c 'exec 3<>/dev/tcp/127.0.0.1/%d && head -1 <&3'`, bash, port)
	out, _ := nsHelper(t, Options{RO: []string{"/"}}, true, script)
	if strings.Contains(out, "HELLO") {
		t.Fatalf("connected out of the network namespace: %s", out)
	}
	out, err = nsHelper(t, Options{RO: []string{"/"}}, false, script)
	if err != nil || !strings.Contains(out, "HELLO") {
		t.Fatalf("without the network namespace the connection must work: %v %s", err, out)
	}
	// Loopback inside the namespace is up: a command can talk to itself.
	py, err := exec.LookPath("python3")
	if err != nil {
		return
	}
	self := py + ` -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));s.listen();c=socket.create_connection(s.getsockname());print("LOOPBACK-OK")'`
	out, err = nsHelper(t, Options{RO: []string{"/"}}, true, self)
	if err != nil || !strings.Contains(out, "LOOPBACK-OK") {
		t.Fatalf("loopback in the namespace: %v %s", err, out)
	}
}

func TestNamespacesKillLeftovers(t *testing.T) {
	needNamespaces(t)
	dir := t.TempDir()
	pidf := filepath.Join(dir, "pid")
	// A unique duration names the survivor on the whole machine.
	dur := fmt.Sprintf("%d.%d", 100000+os.Getpid(), len(dir))
	// setsid -f leaves a daemon behind; it must die with the command.
	out, err := nsHelper(t, Options{RW: []string{dir}, RO: []string{"/"}}, true, "setsid -f sh -c 'echo $$ > "+pidf+"; exec sleep "+dur+"'; while [ ! -s "+pidf+" ]; do :; done; echo STARTED")
	if err != nil || !strings.Contains(out, "STARTED") {
		t.Fatalf("%v %s", err, out)
	}
	if b, _ := exec.Command("pgrep", "-f", "sleep "+dur).Output(); len(bytes.TrimSpace(b)) > 0 {
		t.Fatalf("survivor %s after the helper exited", b)
	}
}

// A system that lets a user create the namespaces but not mount in them (Ubuntu's
// AppArmor restriction; here a Landlock domain, which may never mount) has no
// namespace layer: the probe says so, so that --sandbox auto uses Landlock alone and
// --sandbox required refuses to start, instead of a helper that fails on every command.
func TestProbeKernelNeedsMounts(t *testing.T) {
	needNamespaces(t)
	if v, _ := ABI(); v == 0 {
		t.Skip("Landlock unavailable")
	}
	out, err := exec.Command(os.Args[0], probeUnderLandlock).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "probe failed") {
		t.Fatalf("the kernel probe passed where the namespaces cannot mount: %v\n%s", err, out)
	}
}

// helperUnderMaskedProc covers part of its /proc (as container runtimes do) in
// namespaces of its own, then starts the helper there.
func helperUnderMaskedProc() int {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		fmt.Println("private:", err)
		return 2
	}
	// Its own /proc first (the nested helper's uid_map is written through it).
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		fmt.Println("proc:", err)
		return 2
	}
	if err := unix.Mount("tmpfs", "/proc/sys", "tmpfs", unix.MS_RDONLY, ""); err != nil {
		fmt.Println("mask:", err)
		return 2
	}
	cmd := exec.Command(os.Args[0], append([]string{Subcommand}, Args(Options{NS: true, RO: []string{"/"}}, "/bin/true", []string{"true"})...)...)
	cmd.SysProcAttr = NamespaceAttr(false)
	out, err := cmd.CombinedOutput()
	fmt.Printf("%s", out)
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		fmt.Println(err)
		return 2
	}
	return 0
}

// Where the system's /proc is partly covered, a private /proc cannot be mounted: the
// helper says the system refuses the layer (ExitNoNamespaces, so --sandbox auto runs
// commands under Landlock alone), not that it failed (126, which refuses commands).
func TestHelperUnderMaskedProc(t *testing.T) {
	needNamespaces(t)
	cmd := exec.Command(os.Args[0], maskedProc)
	cmd.SysProcAttr = NamespaceAttr(false)
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != ExitNoNamespaces {
		t.Fatalf("helper under a masked /proc: %v, want exit %d:\n%s", err, ExitNoNamespaces, out)
	}
	if !strings.Contains(string(out), "private /proc") {
		t.Fatalf("the helper did not say why:\n%s", out)
	}
}

func TestCommonDir(t *testing.T) {
	for _, c := range []struct {
		ps   []string
		want string
	}{
		{nil, "/"},
		{[]string{"/r/.lovia"}, "/r"},
		{[]string{"/r/.lovia", "/r/.git/config", "/r/vendor/lib/.git/hooks"}, "/r"},
		{[]string{"/r/a/x", "/r/ab/y"}, "/r"},
		{[]string{"/r/a/x", "/s/y"}, "/"},
	} {
		if got := commonDir(c.ps); got != c.want {
			t.Errorf("commonDir(%q) = %q, want %q", c.ps, got, c.want)
		}
	}
}
