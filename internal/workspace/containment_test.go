package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/tool"
)

// Issue 13 class 1: the path judged is the path opened. Every case below names a
// file outside the root (a canary) through a path that an earlier resolver judged
// as inside, or as a stream; none may read or change the canary without approval.

const canaryText = "CANARY-OUTSIDE-THE-ROOT\n"

// escapeEnv is testEnv plus an outside directory with a canary and links to it.
type escapeEnv struct {
	testEnv
	outside, canary string
}

func newEscapeEnv(t *testing.T) escapeEnv {
	t.Helper()
	e := escapeEnv{testEnv: newTestEnv(t)}
	e.outside = filepath.Join(e.base, "outside")
	e.canary = filepath.Join(e.outside, "canary.txt")
	if err := os.MkdirAll(e.outside+"/dir", 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, e.canary, canaryText)
	write(t, e.outside+"/dir/f.txt", canaryText)
	links := map[string]string{
		"to_canary": e.canary,
		"to_outdir": "../outside",
	}
	for l, target := range links {
		if err := os.Symlink(target, filepath.Join(e.root, l)); err != nil {
			t.Fatal(err)
		}
	}
	// c0 -> c1 -> ... -> c40 -> canary: 41 links, one more than the kernel follows.
	// d0 -> ... -> d39 -> src/main.go: exactly 40, which the kernel does follow.
	chain := func(prefix string, n int, last string) {
		for i := 0; i < n; i++ {
			target := fmt.Sprintf("%s%d", prefix, i+1)
			if i == n-1 {
				target = last
			}
			if err := os.Symlink(target, filepath.Join(e.root, fmt.Sprintf("%s%d", prefix, i))); err != nil {
				t.Fatal(err)
			}
		}
	}
	chain("c", 41, e.canary)
	chain("d", 40, "src/main.go")
	if err := os.MkdirAll(e.root+"/.git/hooks", 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, e.root+"/.git/config", "[core]\n")
	return e
}

func (e escapeEnv) checkCanary(t *testing.T) {
	t.Helper()
	if got := readStr(t, e.canary); got != canaryText {
		t.Fatalf("the canary outside the root was changed: %q", got)
	}
	ents, err := os.ReadDir(e.outside)
	if err != nil || len(ents) != 2 {
		t.Fatalf("something was created outside the root: %v %v", ents, err)
	}
	if got := readStr(t, e.outside+"/dir/f.txt"); got != canaryText {
		t.Fatalf("outside/dir/f.txt changed: %q", got)
	}
}

// escapePaths name the canary (or its directory) in ways the kernel follows.
func (e escapeEnv) escapePaths(fd int) []string {
	up := strings.TrimPrefix(e.canary, "/")
	return []string{
		"to_canary",
		"/dev/fd/../../../" + up,
		"/proc/self/fd/../../../" + up,
		"/proc/self/root" + e.canary,
		"/proc/self/cwd/" + mustRel(e.canary),
		"/proc/self/fd/" + strconv.Itoa(fd),
		"/dev/fd/" + strconv.Itoa(fd),
		"/proc/self/fd/" + strconv.Itoa(fd) + "/..",
		"nope/../to_canary",
		"nope/../to_outdir/canary.txt",
		"nope/nope2/../../to_canary",
		"src/main.go/../../to_canary",
		"c0",
		"link_in/../to_canary",
		"to_outdir/canary.txt",
		"to_outdir/../outside/canary.txt",
	}
}

func mustRel(p string) string {
	wd, _ := os.Getwd()
	r, err := filepath.Rel(wd, p)
	if err != nil {
		return p
	}
	return r
}

// openCanary opens the canary read-write in this (lovia's) process, so that
// /proc/self/fd/N names it.
func openCanary(t *testing.T, e escapeEnv) int {
	t.Helper()
	f, err := os.OpenFile(e.canary, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return int(f.Fd())
}

func TestFileToolsCannotEscape(t *testing.T) {
	e := newEscapeEnv(t)
	fd := openCanary(t, e)
	for _, pol := range []string{PresetReadonly, PresetCoding} {
		w := newWS(t, e.testEnv, pol, SandboxOff)
		for _, p := range e.escapePaths(fd) {
			t.Run(pol+"/"+p, func(t *testing.T) {
				if out, err := w.ReadFile(p, 0, 0, false); err == nil || strings.Contains(out+err.Error(), "CANARY") {
					t.Errorf("read_file: %q %v", out, err)
				}
				if out, err := w.WriteFile(p, "PWNED\n", false, false); err == nil {
					t.Errorf("write_file: %q", out)
				}
				if out, err := w.EditFile(p, "CANARY", "PWNED", false, false); err == nil {
					t.Errorf("edit_file: %q", out)
				}
				out, err := w.GrepFiles(context.Background(), GrepOptions{Pattern: "CANARY", Path: p}, false)
				if err == nil && strings.Contains(out, "CANARY-") {
					t.Errorf("grep_files: %q", out)
				}
				dir := p + "/.."
				if out, err := w.ListFiles(ListOptions{Path: dir}, false); err == nil && strings.Contains(out, "canary") {
					t.Errorf("list_files %s: %q", dir, out)
				}
				// The approval a model would be shown never calls this inside the root.
				if d, _ := w.Policy().decideFor(p, OpRead); d == Allow {
					t.Errorf("read judged allow")
				}
			})
			e.checkCanary(t)
		}
		// Walks do not follow links out of the root.
		for _, o := range []GrepOptions{{Pattern: "CANARY", Hidden: true}, {Pattern: "CANARY", Path: "to_outdir"}} {
			if out, err := w.GrepFiles(context.Background(), o, false); err == nil && strings.Contains(out, "CANARY-") {
				t.Errorf("grep %+v: %q", o, out)
			}
		}
		if out, _ := w.ListFiles(ListOptions{Pattern: "**", Hidden: true}, false); strings.Contains(out, "canary") {
			t.Errorf("list_files walked out of the root: %q", out)
		}
	}
	// The 40-link chain is within the kernel's limit and stays inside: allowed.
	w := newWS(t, e.testEnv, PresetCoding, SandboxOff)
	// An approved read outside still works, whichever way the path is spelled: it
	// is judged (and shown in the approval) as the canary itself.
	for _, p := range []string{e.canary, "to_canary", "/dev/fd/../../.." + e.canary} {
		if out, err := w.ReadFile(p, 0, 0, true); err != nil || !strings.Contains(out, "CANARY") {
			t.Errorf("approved read of %s: %q %v", p, out, err)
		}
	}
	if out, err := w.ReadFile("d0", 0, 0, false); err != nil || !strings.Contains(out, "package main") {
		t.Fatalf("40 links: %q %v", out, err)
	}
}

// decideFor is Judge from the root (test helper).
func (p *Policy) decideFor(path string, op Op) (Decision, string) {
	_, d, why := p.Judge(path, "", op)
	return d, why
}

func TestResolverFailuresAreDenied(t *testing.T) {
	e := newEscapeEnv(t)
	p := e.policy(t, PresetTrusted)
	cases := []struct {
		path  string
		errno syscall.Errno
	}{
		{"nope/../src/main.go", syscall.ENOENT},
		{"src/main.go/..", syscall.ENOTDIR},
		{"src/main.go/", syscall.ENOTDIR},
		{"loop", syscall.ELOOP},
		{"loop/x", syscall.ELOOP},
		{"c0", syscall.ELOOP},
	}
	for _, c := range cases {
		_, err := p.resolve(c.path, "")
		if !errors.Is(err, c.errno) {
			t.Errorf("%s: resolve error %v, want %v", c.path, err, c.errno)
		}
		// What the kernel says about the same path.
		_, kerr := os.Stat(e.root + "/" + c.path) // no Join: it would clean the path lexically
		if !errors.Is(kerr, c.errno) {
			t.Errorf("%s: the kernel says %v, not %v", c.path, kerr, c.errno)
		}
		for _, op := range []Op{OpRead, OpWrite} {
			if d, why := p.decideFor(c.path, op); d != Deny {
				t.Errorf("%s %s = %s (%s), want deny", op, c.path, d, why)
			}
		}
	}
	// Magic links are refused, even under trusted.
	for _, m := range []string{"/proc/self/cwd", "/proc/self/root/etc/hostname", "/proc/self/exe", "/dev/stdin"} {
		if _, err := p.resolve(m, ""); !errors.Is(err, errMagicLink) {
			t.Errorf("%s: %v, want a magic-link refusal", m, err)
		}
	}
	// A missing tail is fine: write_file creates directories.
	if abs, err := p.resolve("new/dir/./f.go", ""); err != nil || abs != e.root+"/new/dir/f.go" {
		t.Errorf("missing tail: %q %v", abs, err)
	}
	// A dangling link is judged as its target (what O_CREAT would create).
	if err := os.Symlink(e.outside+"/new.txt", e.root+"/dangling_out"); err != nil {
		t.Fatal(err)
	}
	if d, _ := e.policy(t, PresetCoding).decideFor("dangling_out", OpWrite); d != Deny {
		t.Errorf("write through a dangling link to outside = %s", d)
	}
}

func TestRedirectsCannotEscape(t *testing.T) {
	e := newEscapeEnv(t)
	fd := openCanary(t, e)
	up := strings.TrimPrefix(e.canary, "/")
	cmds := []string{
		"cat < /dev/fd/../../../" + up,
		"cat < /proc/self/fd/../../../" + up,
		"cat < /proc/self/fd/" + strconv.Itoa(fd),
		"cat < /dev/fd/" + strconv.Itoa(fd),
		"cat < nope/../to_canary",
		"cat < c0",
		"cat < to_canary",
		"echo PWNED > to_canary",
		"echo PWNED >> to_canary",
		"echo PWNED > /dev/fd/../../../" + up,
		"echo PWNED >> /proc/self/fd/" + strconv.Itoa(fd),
		"echo PWNED > /dev/fd/" + strconv.Itoa(fd),
		"echo PWNED > nope/../to_canary",
		"echo PWNED > c0",
		"echo PWNED > to_outdir/new.txt",
		"echo PWNED > link_in/../to_outdir/new.txt",
		"source /dev/fd/../../../" + up,
		". nope/../to_canary",
		"x=$(< /dev/fd/../../../" + up + "); echo $x",
		"echo '#!/bin/sh' > .git/hooks/pre-commit",
		"echo '[core] fsmonitor = x' >> .git/config",
		"echo x > .lovia/config.yaml",
	}
	for _, pol := range []string{PresetCoding, PresetReadonly} {
		w := newWS(t, e.testEnv, pol, SandboxOff)
		for _, c := range cmds {
			t.Run(pol+"/"+c, func(t *testing.T) {
				if a := w.Policy().AnalyzeCommand(c, ""); a.Decision == Allow {
					t.Errorf("the guard allows it")
				}
				res, out := run(t, w, ShellRequest{Command: c, Approved: true})
				if res.Denied == nil && res.ExitCode == 0 {
					t.Errorf("ran: %+v %q", res, out)
				}
				if strings.Contains(out, "CANARY") {
					t.Errorf("canary in the output: %q", out)
				}
			})
			e.checkCanary(t)
		}
	}
	if _, err := os.Stat(e.root + "/.git/hooks/pre-commit"); err == nil {
		t.Fatal("a hook was planted")
	}
	if readStr(t, e.root+"/.git/config") != "[core]\n" {
		t.Fatal(".git/config was changed")
	}
	// The exact stream names still work, as the command's own streams.
	w := newWS(t, e.testEnv, PresetCoding, SandboxOff)
	res, out := run(t, w, ShellRequest{Command: "echo out > /dev/stdout; echo err > /dev/stderr; echo gone > /dev/null; echo tty > /dev/tty; cat < /dev/null", Approved: true})
	if res.ExitCode != 0 || res.Denied != nil || out != "out\nerr\ntty\n" {
		t.Fatalf("streams: %+v %q", res, out)
	}
}

func TestProtectedPaths(t *testing.T) {
	e := newEscapeEnv(t)
	for _, c := range []struct {
		pol  string
		want Decision
	}{{PresetReadonly, Deny}, {PresetCoding, Deny}, {PresetTrusted, Ask}} {
		p := e.policy(t, c.pol)
		for _, path := range []string{".git/config", ".git/hooks/pre-commit", ".git/hooks", ".git", "sub/.git/config",
			"sub/.git/hooks/post-checkout", ".git/modules/lib/config", ".git/modules/lib/hooks/pre-push",
			".git/modules/a/modules/b/config", ".git/config.worktree", ".git/worktrees/w/config.worktree", "sub/.git",
			".git/commondir", ".git/worktrees/w/commondir", "sub/.git/commondir",
			".lovia/config.yaml", ".lovia", "sub/.lovia/config.yaml"} {
			if d, why := p.decideFor(path, OpWrite); d != c.want {
				t.Errorf("%s: write %s = %s (%s), want %s", c.pol, path, d, why, c.want)
			} else if !strings.Contains(why, "outside any sandbox") && !strings.Contains(why, "lovia trusts") {
				t.Errorf("%s: the reason does not say why: %s", path, why)
			}
		}
		if c.pol == PresetReadonly {
			continue
		}
		for _, path := range []string{".git/objects/ab/cdef", ".git/index", ".git/refs/heads/main", ".git/HEAD", ".git/COMMIT_EDITMSG", ".git/modules/lib/objects/x", ".github/workflows/ci.yml", "configs/hooks/x"} {
			if d, why := p.decideFor(path, OpWrite); d != Allow {
				t.Errorf("%s: write %s = %s (%s), want allow", c.pol, path, d, why)
			}
		}
	}
	w := newWS(t, e.testEnv, PresetCoding, SandboxOff)
	if _, err := w.WriteFile(".git/config", "[core]\n\tfsmonitor = evil\n", false, true); err == nil || !strings.Contains(err.Error(), "git runs") {
		t.Fatalf("write_file .git/config: %v", err)
	}
	if _, err := w.EditFile(".git/config", "[core]", "[core]\n\tpager = evil", false, true); err == nil {
		t.Fatal("edit_file .git/config succeeded")
	}
	if readStr(t, e.root+"/.git/config") != "[core]\n" {
		t.Fatal(".git/config was changed")
	}
}

// Normal git work is not harder under coding: init, add and commit in the root.
func TestGitCommitStillWorks(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	e := newTestEnv(t)
	w, err := New(Config{Root: e.root, Policy: PresetCoding, Sandbox: SandboxOff})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if res, out := run(t, w, ShellRequest{Command: "git init -q . && git config user.email t@example.com && git config user.name t", Approved: true}); res.ExitCode != 0 || res.Denied != nil {
		t.Fatalf("git init: %+v %q", res, out)
	}
	if _, err := w.WriteFile("src/new.go", "package main\n", false, false); err != nil {
		t.Fatal(err)
	}
	cmd := "git add src/new.go && git commit -q -m 'add new.go' && git branch topic && git log --oneline"
	if a := w.Policy().AnalyzeCommand("git add src/new.go", ""); a.Decision == Deny {
		t.Fatalf("git add denied: %s", a.Explain())
	}
	res, out := run(t, w, ShellRequest{Command: cmd, Approved: true})
	if res.ExitCode != 0 || res.Denied != nil || !strings.Contains(out, "add new.go") {
		t.Fatalf("git commit: %+v %q", res, out)
	}
}

func TestGlobsDoNotListOutside(t *testing.T) {
	e := newEscapeEnv(t)
	w := newWS(t, e.testEnv, PresetCoding, SandboxOff)
	// echo is a builtin: only the interpreter's own directory read could leak names.
	for _, c := range []string{"echo " + e.outside + "/*", "echo to_outdir/*", "echo nope/../to_outdir/*"} {
		res, out := run(t, w, ShellRequest{Command: c, Approved: true})
		if strings.Contains(out, "canary.txt") {
			t.Errorf("%s listed the outside directory: %+v %q", c, res, out)
		}
	}
	// Inside the root globs still expand.
	if res, out := run(t, w, ShellRequest{Command: "echo src/*.go", Approved: true}); out != "src/main.go\n" {
		t.Fatalf("glob inside: %+v %q", res, out)
	}
	// An approval that showed the directory covers its listing.
	res, out := run(t, w, ShellRequest{Command: "echo " + e.outside + "/*", Approved: true, ApprovedPaths: []string{e.outside}})
	if !strings.Contains(out, "canary.txt") {
		t.Fatalf("approved glob: %+v %q", res, out)
	}
}

func TestWriteSizeLimits(t *testing.T) {
	e := newTestEnv(t)
	w := newWS(t, e, PresetCoding, SandboxOff)
	big := strings.Repeat("x", MaxWriteBytes+1)
	if _, err := w.WriteFile("big.txt", big, false, false); err == nil || !strings.Contains(err.Error(), "10.0 MiB") || !strings.Contains(err.Error(), "shell") {
		t.Fatalf("write_file over the limit: %v", err)
	}
	if fileExists(e.root + "/big.txt") {
		t.Fatal("an oversized write_file wrote")
	}
	write(t, e.root+"/huge.txt", big)
	if _, err := w.EditFile("huge.txt", "x", "y", false, false); err == nil || !strings.Contains(err.Error(), "10.0 MiB") || !strings.Contains(err.Error(), "shell command") {
		t.Fatalf("edit_file of a file over the limit: %v", err)
	}
	if _, err := w.WriteFile("huge.txt", "small\n", false, false); err == nil || !strings.Contains(err.Error(), "limit") && !strings.Contains(err.Error(), "10.0 MiB") {
		t.Fatalf("write_file over a file over the limit: %v", err)
	}
	// An edit that would grow past the limit is refused before it is built.
	write(t, e.root+"/many.txt", strings.Repeat("a\n", 100_000))
	if _, err := w.ReadFile("many.txt", 0, 1, false); err != nil {
		t.Fatal(err)
	}
	if _, err := w.EditFile("many.txt", "a", strings.Repeat("b", 200), true, false); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("growing edit: %v", err)
	}
	// Within the limits all is as before.
	if _, err := w.EditFile("many.txt", "a\na\n", "c\n", false, false); err == nil {
		t.Fatal("ambiguous edit accepted")
	}
	if out, err := w.WriteFile("ok.txt", "fine\n", false, false); err != nil || !strings.Contains(out, "created") {
		t.Fatalf("%q %v", out, err)
	}
}

// Writes replace the file atomically in the judged directory: a hard link to the
// old file (which could point anywhere on the file system) is not written through,
// and the mode is kept.
func TestWriteReplacesAtomically(t *testing.T) {
	e := newEscapeEnv(t)
	w := newWS(t, e.testEnv, PresetCoding, SandboxOff)
	if err := os.Link(e.canary, e.root+"/hard.txt"); err != nil {
		t.Skip("no hard links here:", err)
	}
	if err := os.Chmod(e.root+"/hard.txt", 0o640); err != nil {
		t.Fatal(err)
	}
	// A redirect does not write (or truncate) through the hard link either.
	for _, c := range []string{"echo PWNED > hard.txt", "echo PWNED >> hard.txt", "echo PWNED 2> hard.txt 1>&2"} {
		res, out := run(t, w, ShellRequest{Command: c, Approved: true})
		if res.ExitCode == 0 || !strings.Contains(out, "hard link") {
			t.Errorf("%s: %+v %q", c, res, out)
		}
		e.checkCanary(t)
	}
	if _, err := w.ReadFile("hard.txt", 0, 0, false); err != nil {
		t.Fatal(err)
	}
	if _, err := w.EditFile("hard.txt", "CANARY", "EDITED", false, false); err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteFile("hard.txt", "REPLACED\n", false, false); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(e.root + "/hard.txt")
	if err != nil || fi.Mode().Perm() != 0o640 || readStr(t, e.root+"/hard.txt") != "REPLACED\n" {
		t.Fatalf("replaced file: %v %v", fi, err)
	}
	e.checkCanary(t)
	if ents, _ := os.ReadDir(e.root); len(ents) == 0 {
		t.Fatal("root empty")
	} else {
		for _, de := range ents {
			if strings.Contains(de.Name(), ".lovia-") {
				t.Fatalf("temporary file left: %s", de.Name())
			}
		}
	}
}

// A file tool's run is bound to its approval: an "ask" passes only for the path
// the approval showed, so a link changed between the approval and the run cannot
// carry the approved call to another file.
func TestApprovalBindsThePathShown(t *testing.T) {
	e := newEscapeEnv(t)
	other := filepath.Join(e.base, "other.txt")
	write(t, other, "OTHER-OUTSIDE\n")
	w := newWS(t, e.testEnv, PresetCoding, SandboxOff)
	tools := map[string]tool.Tool{}
	for _, tl := range w.Tools() {
		tools[tl.Spec().Name] = tl
	}
	rt := tools["read_file"]
	args := json.RawMessage(`{"path":"sw"}`)
	link := func(target string) {
		t.Helper()
		os.Remove(e.root + "/sw")
		if err := os.Symlink(target, e.root+"/sw"); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	// Approved as the canary, then the link moves: the run does not read the other file.
	link(e.canary)
	a, err := rt.Spec().Approval(ctx, nil, args)
	if err != nil || a == nil || a.Path != e.canary {
		t.Fatalf("approval: %+v %v", a, err)
	}
	link(other)
	res, _ := rt.Invoke(ctx, nil, args)
	if !res.IsError || strings.Contains(res.Text, "OTHER") {
		t.Fatalf("the approval carried over to another file: %q", res.Text)
	}
	// Unchanged, the approved path is read.
	link(e.canary)
	if a, _ := rt.Spec().Approval(ctx, nil, args); a == nil {
		t.Fatal("no approval")
	}
	if res, _ := rt.Invoke(ctx, nil, args); res.IsError || !strings.Contains(res.Text, "CANARY") {
		t.Fatalf("approved read: %q", res.Text)
	}
	// No approval was needed (inside), then the link moves outside: asked again.
	link("src/main.go")
	if a, _ := rt.Spec().Approval(ctx, nil, args); a != nil {
		t.Fatalf("inside asked: %+v", a)
	}
	link(other)
	var asked string
	rc := &tool.RunContext{Ask: func(_ context.Context, a *event.Approval) (tool.Decision, error) {
		asked = a.Path
		return tool.Decision{}, nil
	}}
	if res, _ := rt.Invoke(ctx, rc, args); !res.IsError || strings.Contains(res.Text, "OTHER") || asked != other {
		t.Fatalf("run-time ask: %q asked %q", res.Text, asked)
	}
	// The same for writes (trusted: writing outside asks).
	wt := newWS(t, e.testEnv, PresetTrusted, SandboxOff)
	for _, tl := range wt.Tools() {
		tools[tl.Spec().Name] = tl
	}
	wargs := json.RawMessage(`{"path":"sw","content":"PWNED\n"}`)
	link(e.outside + "/new.txt")
	if a, _ := tools["write_file"].Spec().Approval(ctx, nil, wargs); a == nil {
		t.Fatal("no approval for a write outside")
	}
	link(e.canary)
	if res, _ := tools["write_file"].Invoke(ctx, nil, wargs); !res.IsError {
		t.Fatalf("write carried over: %q", res.Text)
	}
	e.checkCanary(t)
}

// Writes through the safe opener still create what they should: new directories
// inside the root, in a writable grant outside it, and in the temp directory.
func TestWritesCreateDirectories(t *testing.T) {
	e := newTestEnv(t)
	w := newWS(t, e, PresetCoding, SandboxOff)
	for p, want := range map[string]string{
		"a/b/c/new.txt":            e.root + "/a/b/c/new.txt",
		"link_in/sub/new.go":       e.root + "/src/sub/new.go",
		"~/cache/x/y/z.txt":        e.home + "/cache/x/y/z.txt",
		e.tmp + "/scratch/out.txt": e.tmp + "/scratch/out.txt",
	} {
		if out, err := w.WriteFile(p, "hi\n", false, false); err != nil {
			t.Errorf("write_file %s: %v", p, err)
		} else if readStr(t, want) != "hi\n" {
			t.Errorf("write_file %s: %q not written (%s)", p, want, out)
		}
	}
	if _, err := w.EditFile("~/cache/x/y/z.txt", "hi", "ho", false, false); err != nil || readStr(t, e.home+"/cache/x/y/z.txt") != "ho\n" {
		t.Fatalf("edit in a writable grant: %v", err)
	}
	if _, err := w.EditFile("missing/dir/f.txt", "a", "b", false, false); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("edit of a missing file: %v", err)
	}
}

// A .git/commondir that appears while lovia runs (a program wrote it; the sandbox
// cannot mount a missing file read-only) is removed when a command ends and when the
// workspace closes: left in place it points git at a config of the command's own.
func TestPlantedCommondirRemoved(t *testing.T) {
	e := newTestEnv(t)
	if err := os.MkdirAll(e.root+"/.git", 0o755); err != nil {
		t.Fatal(err)
	}
	w := newWS(t, e, PresetTrusted, SandboxOff)
	cd := e.root + "/.git/commondir"
	write(t, cd, "../evil\n")
	res, out := run(t, w, ShellRequest{Command: "true"})
	if _, err := os.Lstat(cd); err == nil {
		t.Fatalf("commondir is still there after a command (%+v %q)", res, out)
	}
	if !strings.Contains(out, "removed "+cd) {
		t.Errorf("the command's output does not say so: %q", out)
	}
	write(t, cd, "../evil\n")
	w.Close()
	if _, err := os.Lstat(cd); err == nil {
		t.Fatal("commondir is still there after Close")
	}
}

// The sandbox keeps nested repositories' config and hooks read-only too: they are
// found a few levels deep (not in node_modules, not through links).
func TestProtectedPathsNested(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{".git/hooks", "a/.git/hooks", "a/b/c/.git", "node_modules/x/.git", "d1/d2/d3/d4/d5/.git"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got := strings.Join(protectedPaths(root, nestedGitDirs(root)), "\n")
	for _, want := range []string{"/a/.git/config", "/a/.git/hooks", "/a/b/c/.git/config", "/a/b/c/.git/hooks"} {
		if !strings.Contains(got, root+want+"\n") && !strings.HasSuffix(got, root+want) {
			t.Errorf("%s is not protected:\n%s", want, got)
		}
	}
	// Judge the paths below root: the temporary root's own name is random and can
	// contain "d5" ("…Nested5…").
	below := strings.ReplaceAll(got, root, "")
	for _, not := range []string{"/node_modules/", "/d5/"} {
		if strings.Contains(below, not) {
			t.Errorf("%s should not be scanned:\n%s", not, got)
		}
	}
}
