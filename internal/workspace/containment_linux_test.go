//go:build linux

package workspace

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSwapBetweenCheckAndOpen swaps, in a goroutine and without pause, a file for a
// symlink to the canary and a directory for a symlink to the outside directory
// (renameat2 RENAME_EXCHANGE: atomic), while the file tools and redirects run
// against those names again and again. Whatever the interleaving, the canary is
// never read, written, or joined by a new file.
func TestSwapBetweenCheckAndOpen(t *testing.T) {
	e := newEscapeEnv(t)
	r := e.root
	write(t, r+"/swap", "inside\n")
	if err := os.Symlink(e.canary, r+"/swap_alt"); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(r+"/dswap", 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, r+"/dswap/f.txt", "inside\n")
	if err := os.Symlink(e.outside+"/dir", r+"/dswap_alt"); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	started := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			if i == 1 {
				close(started)
			}
			select {
			case <-done:
				return
			default:
			}
			if err := unix.Renameat2(unix.AT_FDCWD, r+"/swap", unix.AT_FDCWD, r+"/swap_alt", unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("exchange swap: %v", err)
				return
			}
			if err := unix.Renameat2(unix.AT_FDCWD, r+"/dswap", unix.AT_FDCWD, r+"/dswap_alt", unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("exchange dswap: %v", err)
				return
			}
		}
	}()
	stop := sync.OnceFunc(func() { close(done); wg.Wait() })
	t.Cleanup(stop) // before the temp dir goes, also when the test fails early
	<-started
	w := newWS(t, e.testEnv, PresetCoding, SandboxOff)
	ctx := context.Background()
	leak := func(what, out string, err error) {
		t.Helper()
		s := out
		if err != nil {
			s += err.Error()
		}
		if strings.Contains(s, "CANARY-OUTSIDE") {
			t.Fatalf("%s read the canary: %q", what, s)
		}
	}
	n := 40
	if testing.Short() {
		n = 15
	}
	reads := 0
	for i := 0; i < n; i++ {
		for _, p := range []string{"swap", "dswap/f.txt"} {
			out, err := w.ReadFile(p, 0, 0, false)
			leak("read_file "+p, out, err)
			if err == nil {
				reads++
			}
			out, err = w.GrepFiles(ctx, GrepOptions{Pattern: "CANARY|inside", Path: p}, false)
			leak("grep_files "+p, out, err)
			out, err = w.WriteFile(p, "PWNED\n", false, false)
			leak("write_file "+p, out, err)
			out, err = w.EditFile(p, "inside", "PWNED", false, false)
			leak("edit_file "+p, out, err)
			res, sout := run(t, w, ShellRequest{Command: "cat < " + p + "; echo PWNED >> " + p, Approved: true})
			leak("redirect "+p, sout, res.Err)
		}
		out, err := w.GrepFiles(ctx, GrepOptions{Pattern: "CANARY"}, false)
		leak("grep_files .", out, err)
	}
	stop()
	e.checkCanary(t)
	t.Logf("%d of %d reads reached the inside file", reads, 2*n)
}

// TestOpenWalkFallback covers the opener used where openat2 is missing (kernels
// before 5.6, seccomp filters, other systems): every component with O_NOFOLLOW.
func TestOpenWalkFallback(t *testing.T) {
	e := newEscapeEnv(t)
	open := func(abs string, mkdir bool) error {
		fd, err := openWalk(unix.AT_FDCWD, abs, unix.O_RDONLY, 0, mkdir)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}
	if err := open(e.root+"/src/main.go", false); err != nil {
		t.Fatalf("plain path: %v", err)
	}
	for _, p := range []string{e.root + "/link_in/main.go", e.root + "/to_canary", e.root + "/to_outdir/canary.txt", e.root + "/src/../to_canary"} {
		if err := open(p, false); err == nil {
			t.Errorf("%s opened through a symlink or ..", p)
		}
	}
	if err := open(e.root+"/new/dir", true); err != nil {
		t.Fatalf("mkdir: %v", err)
	}
	if fi, err := os.Lstat(e.root + "/new/dir"); err != nil || !fi.IsDir() {
		t.Fatalf("mkdir did not create: %v", err)
	}
	if err := open(e.root+"/to_outdir/made", true); err == nil {
		t.Fatal("mkdir went through a symlink")
	}
	if _, err := os.Stat(e.outside + "/made"); err == nil {
		t.Fatal("a directory was made outside")
	}
	// Relative to the root's fd, as openResolved does inside the root.
	root, err := os.Open(e.root)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	fd, err := openWalk(int(root.Fd()), "src/main.go", unix.O_RDONLY, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(fd)
	if _, err := openWalk(int(root.Fd()), "../outside/canary.txt", unix.O_RDONLY, 0, false); err == nil {
		t.Fatal(".. escaped the root fd")
	}
}
