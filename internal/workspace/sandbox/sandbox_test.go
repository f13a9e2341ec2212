package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == Subcommand {
		os.Exit(Main(os.Args[2:], os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == maskedProc {
		os.Exit(helperUnderMaskedProc())
	}
	if len(os.Args) > 1 && os.Args[1] == probeUnderLandlock {
		os.Exit(probeKernelUnderLandlock())
	}
	if len(os.Args) > 1 && os.Args[1] == reportGC {
		// The collector's setting before and after restoreGC (SetGCPercent returns
		// the previous one).
		before := debug.SetGCPercent(-1)
		debug.SetGCPercent(before)
		restoreGC()
		fmt.Printf("before=%d after=%d", before, debug.SetGCPercent(100))
		os.Exit(0)
	}
	if len(os.Args) > 1 && os.Args[1] == reportDefaultGC {
		SetDefaultGC()
		fmt.Printf("gc=%d", debug.SetGCPercent(100))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestArgs(t *testing.T) {
	got := strings.Join(Args(Options{RW: []string{"/r"}, RO: []string{"/"}, Required: true}, "/bin/echo", []string{"echo", "--", "-x"}), " ")
	if got != "--rw /r --ro / --required --path /bin/echo -- echo -- -x" {
		t.Fatal(got)
	}
}

func TestMainUsageErrors(t *testing.T) {
	for _, args := range [][]string{{}, {"--rw"}, {"--bogus", "x", "--", "true"}, {"--rw", "/"}} {
		var errb bytes.Buffer
		if code := Main(args, &errb); code != 126 || !strings.Contains(errb.String(), "lovia sandbox:") {
			t.Errorf("%q: code %d, %q", args, code, errb.String())
		}
	}
}

// TestHelperConfines runs this test binary as the helper, as lovia runs itself.
func TestHelperConfines(t *testing.T) {
	if v, _ := ABI(); v == 0 {
		t.Skip("Landlock unavailable")
	}
	dir := t.TempDir()
	rw := filepath.Join(dir, "rw")
	os.Mkdir(rw, 0o755)
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	script := "echo in > " + rw + "/a && echo out > " + dir + "/b"
	args := append([]string{Subcommand}, Args(Options{RW: []string{rw}, RO: []string{"/"}, Required: true}, sh, []string{"sh", "-c", script})...)
	out, err := exec.Command(os.Args[0], args...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Permission denied") {
		t.Fatalf("err %v, out %q", err, out)
	}
	if b, _ := os.ReadFile(rw + "/a"); string(b) != "in\n" {
		t.Fatalf("write inside the rw dir failed: %q", b)
	}
	if _, err := os.Stat(dir + "/b"); err == nil {
		t.Fatal("wrote outside the rw dir")
	}
	// A missing program is 127, like a shell.
	args = append([]string{Subcommand}, Args(Options{RO: []string{"/"}}, "/nonexistent/prog", []string{"prog"})...)
	err = exec.Command(os.Args[0], args...).Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 127 {
		t.Fatalf("missing program: %v", err)
	}
}

// maskedProc makes the test binary start the helper under a partly covered /proc.
const maskedProc = "helper-under-masked-proc"

// probeUnderLandlock makes the test binary run ProbeKernel inside a Landlock domain.
const probeUnderLandlock = "probe-kernel-under-landlock"

func probeKernelUnderLandlock() int {
	// /proc stays writable: the probe writes the user namespace's uid_map.
	if err := Restrict(Options{RO: []string{"/"}, RW: []string{"/proc"}, Required: true}); err != nil {
		fmt.Println("restrict:", err)
		return 2
	}
	if err := ProbeKernel(); err != nil {
		fmt.Println("probe failed:", err)
		return 1
	}
	fmt.Println("probe passed")
	return 0
}

// reportGC makes the test binary print its GC setting around restoreGC.
const reportGC = "report-gc"

// The exec server starts with GOGC=off (ServerEnv); the helper takes it out of its
// own environment at once (Main), so what it runs never inherits it, and puts back
// the GOGC its parent's environment had.
func TestHelperDropsServerGOGC(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	script := `echo "GOGC=${GOGC-unset} saved=${` + savedGOGC + `-unset}"`
	for _, c := range []struct{ env, want string }{
		{"", "GOGC=unset saved=unset\n"},
		{"GOGC=50", "GOGC=50 saved=unset\n"},
		{savedGOGC + "=GOGC=7", "GOGC=unset saved=unset\n"}, // not taken from the parent
	} {
		env := []string{"PATH=" + os.Getenv("PATH")}
		if c.env != "" {
			env = append(env, c.env)
		}
		args := append([]string{Subcommand}, Args(Options{RO: []string{"/"}}, sh, []string{"sh", "-c", script})...)
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = ServerEnv(env)
		out, err := cmd.CombinedOutput()
		if err != nil || string(out) != c.want {
			t.Errorf("env %q: %v, %q, want %q", c.env, err, out, c.want)
		}
	}
}

// The helper's collector runs again once Main has started: as the parent's GOGC
// says, or by default.
func TestHelperRestoresGC(t *testing.T) {
	for _, c := range []struct{ env, want string }{
		{"", "before=-1 after=80"}, // DefaultGCPercent
		{"GOGC=50", "before=-1 after=50"},
		{"GOGC=off", "before=-1 after=-1"},
	} {
		var env []string
		if c.env != "" {
			env = append(env, c.env)
		}
		cmd := exec.Command(os.Args[0], reportGC)
		cmd.Env = ServerEnv(env)
		out, err := cmd.Output()
		if err != nil || string(out) != c.want {
			t.Errorf("env %q: %v, %q, want %q", c.env, err, out, c.want)
		}
	}
}

// reportDefaultGC makes the test binary print its GC setting after SetDefaultGC.
const reportDefaultGC = "report-default-gc"

// lovia collects at DefaultGCPercent unless GOGC says otherwise, and does not put
// its default into the environment its commands inherit.
func TestSetDefaultGC(t *testing.T) {
	for _, c := range []struct{ env, want string }{
		{"", "gc=80"},
		{"GOGC=100", "gc=100"},
		{"GOGC=off", "gc=-1"},
	} {
		cmd := exec.Command(os.Args[0], reportDefaultGC)
		if c.env != "" {
			cmd.Env = []string{c.env}
		} else {
			cmd.Env = []string{}
		}
		if out, err := cmd.Output(); err != nil || string(out) != c.want {
			t.Errorf("env %q: %v, %q, want %q", c.env, err, out, c.want)
		}
	}
	if _, ok := os.LookupEnv("GOGC"); !ok {
		SetDefaultGC()
		defer debug.SetGCPercent(100)
		if _, ok := os.LookupEnv("GOGC"); ok {
			t.Error("SetDefaultGC set GOGC in the environment")
		}
	}
}

// Without ServerEnv the helper leaves GOGC alone (a command's own GOGC=off).
func TestHelperKeepsOwnGOGC(t *testing.T) {
	cmd := exec.Command(os.Args[0], reportGC)
	cmd.Env = []string{"GOGC=off"}
	if out, err := cmd.Output(); err != nil || string(out) != "before=-1 after=-1" {
		t.Errorf("%v, %q", err, out)
	}
}
