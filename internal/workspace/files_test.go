package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/tool"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadFile(t *testing.T) {
	e := newTestEnv(t)
	w := newWS(t, e, PresetCoding, SandboxOff)
	var lines []string
	for i := 1; i <= 30; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	write(t, e.root+"/big.txt", strings.Join(lines, "\n")+"\n")
	out, err := w.ReadFile("big.txt", 10, 3, false)
	if err != nil {
		t.Fatal(err)
	}
	want := "    10\tline 10\n    11\tline 11\n    12\tline 12\n[showing lines 10-12 of 30; continue with offset=13]\n"
	if out != want {
		t.Fatalf("got %q", out)
	}
	if out, _ := w.ReadFile("big.txt", 29, 0, false); !strings.HasPrefix(out, "    29\tline 29\n    30\tline 30\n") || strings.Contains(out, "showing") {
		t.Fatalf("tail %q", out)
	}
	if _, err := w.ReadFile("big.txt", 31, 0, false); err == nil || !strings.Contains(err.Error(), "30 lines") {
		t.Fatalf("past end: %v", err)
	}
	write(t, e.root+"/bin.dat", "abc\x00def")
	if _, err := w.ReadFile("bin.dat", 0, 0, false); err == nil || !strings.Contains(err.Error(), "binary") {
		t.Fatalf("binary: %v", err)
	}
	write(t, e.root+"/latin1.txt", "caf\xe9\n")
	if _, err := w.ReadFile("latin1.txt", 0, 0, false); err == nil || !strings.Contains(err.Error(), "UTF-8") {
		t.Fatalf("latin1: %v", err)
	}
	// 50,000-character cap with a continuation hint.
	write(t, e.root+"/wide.txt", strings.Repeat(strings.Repeat("x", 1000)+"\n", 200))
	out, _ = w.ReadFile("wide.txt", 0, 0, false)
	if len(out) > MaxReadChars+200 || !strings.Contains(out, "capped at 50000") {
		t.Fatalf("cap: %d chars, tail %q", len(out), out[len(out)-120:])
	}
	if _, err := w.ReadFile("/dev/zero", 0, 0, true); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("device: %v", err)
	}
	if _, err := w.ReadFile("src", 0, 0, false); err == nil || !strings.Contains(err.Error(), "list_files") {
		t.Fatalf("dir: %v", err)
	}
	// Policy: outside asks (refused unless approved), denied paths never.
	if _, err := w.ReadFile("/etc/hostname", 0, 0, false); err == nil {
		t.Fatal("outside read without approval")
	}
	if _, err := w.ReadFile("/etc/hostname", 0, 0, true); err != nil {
		t.Fatalf("approved outside read: %v", err)
	}
	if _, err := w.ReadFile(".env", 0, 0, true); err == nil || !strings.Contains(err.Error(), "denied_paths") {
		t.Fatalf(".env: %v", err)
	}
	if _, err := w.ReadFile("link_out/hostname", 0, 0, false); err == nil {
		t.Fatal("symlink escape read without approval")
	}
}

func TestEditFile(t *testing.T) {
	e := newTestEnv(t)
	w := newWS(t, e, PresetCoding, SandboxOff)
	p := e.root + "/a.go"
	write(t, p, "package a\n\nfunc A() int {\n\treturn 1\n}\n\nfunc B() int {\n\treturn 1\n}\n")
	if _, err := w.ReadFile("a.go", 0, 0, false); err != nil {
		t.Fatal(err)
	}
	if _, err := w.EditFile("a.go", "return 1", "return 2", false, false); err == nil || !strings.Contains(err.Error(), "occurs 2 times") {
		t.Fatalf("ambiguous: %v", err)
	}
	if _, err := w.EditFile("a.go", "return 3", "return 2", false, false); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("missing: %v", err)
	}
	out, err := w.EditFile("a.go", "func A() int {\n\treturn 1", "func A() int {\n\treturn 2", false, false)
	if err != nil {
		t.Fatal(err)
	}
	wantDiff := "--- a/a.go\n+++ b/a.go\n@@ -1,7 +1,7 @@\n package a\n \n func A() int {\n-\treturn 1\n+\treturn 2\n }\n \n func B() int {\n"
	if !strings.Contains(out, wantDiff) {
		t.Fatalf("diff:\n%s", out)
	}
	// Our own edit does not make the file stale; someone else's does.
	if _, err := w.EditFile("a.go", "func B", "func C", false, false); err != nil {
		t.Fatal(err)
	}
	write(t, p, "package a\n// changed behind our back\n")
	// A different modification time whatever the file system's clock granularity.
	if err := os.Chtimes(p, time.Now(), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.EditFile("a.go", "package a", "package b", false, false); err == nil || !strings.Contains(err.Error(), "modified since you last read") {
		t.Fatalf("stale edit: %v", err)
	}
	if _, err := w.WriteFile("a.go", "x", false, false); err == nil || !strings.Contains(err.Error(), "modified since") {
		t.Fatalf("stale write: %v", err)
	}
	w.ReadFile("a.go", 0, 0, false)
	if _, err := w.EditFile("a.go", "package a", "package b", false, false); err != nil {
		t.Fatalf("after re-read: %v", err)
	}
	// replace_all
	write(t, e.root+"/r.txt", "x x x\n")
	out, err = w.EditFile("r.txt", "x", "y", true, false)
	if err != nil || !strings.Contains(out, "3 replacements") || readStr(t, e.root+"/r.txt") != "y y y\n" {
		t.Fatalf("replace_all: %v %q", err, out)
	}
	// CRLF files match LF old_string and keep CRLF.
	write(t, e.root+"/crlf.txt", "one\r\ntwo\r\nthree\r\n")
	if _, err := w.EditFile("crlf.txt", "one\ntwo", "uno\ndos", false, false); err != nil {
		t.Fatal(err)
	}
	if got := readStr(t, e.root+"/crlf.txt"); got != "uno\r\ndos\r\nthree\r\n" {
		t.Fatalf("crlf: %q", got)
	}
	// Policy.
	if _, err := w.EditFile("../x", "a", "b", false, true); err == nil || !strings.Contains(err.Error(), "denied") {
		t.Fatalf("outside: %v", err)
	}
}

func readStr(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteFile(t *testing.T) {
	e := newTestEnv(t)
	w := newWS(t, e, PresetCoding, SandboxOff)
	if out, err := w.WriteFile("new/dir/f.txt", "hi\n", true, false); err != nil || !strings.Contains(out, "created new/dir/f.txt") {
		t.Fatalf("%q %v", out, err)
	}
	if _, err := w.WriteFile("new/dir/f.txt", "again", true, false); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("create_only: %v", err)
	}
	if _, err := w.WriteFile("new/dir/f.txt", "again", false, false); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"../escape.txt", "link_out/x", "/etc/x", ".env.new", "~/x"} {
		if _, err := w.WriteFile(bad, "x", false, true); err == nil {
			t.Errorf("write %s allowed", bad)
		}
	}
	ro := newWS(t, e, PresetReadonly, SandboxOff)
	if _, err := ro.WriteFile("x.txt", "x", false, true); err == nil {
		t.Fatal("readonly wrote")
	}
}

func TestListAndGrep(t *testing.T) {
	e := newTestEnv(t)
	w := newWS(t, e, PresetCoding, SandboxOff)
	write(t, e.root+"/.gitignore", "build/\n*.log\n!keep.log\n")
	write(t, e.root+"/build/out.go", "package build // needle\n")
	write(t, e.root+"/app.log", "needle\n")
	write(t, e.root+"/keep.log", "needle\n")
	write(t, e.root+"/pkg/.gitignore", "gen_*.go\n")
	write(t, e.root+"/pkg/gen_x.go", "needle\n")
	write(t, e.root+"/pkg/real.go", "package pkg\n\n// Needle here\nvar needle = 1\n")
	write(t, e.root+"/.hidden/h.go", "needle\n")
	write(t, e.root+"/pkg/blob.bin", "needle\x00\x01")
	write(t, e.root+"/.git/info/exclude", "local-notes.txt\n")
	write(t, e.root+"/local-notes.txt", "needle\n")
	out, err := w.ListFiles(ListOptions{}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"keep.log", "pkg/real.go", "src/main.go", "link_in/", "pkg/blob.bin"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("list lacks %s:\n%s", want, out)
		}
	}
	for _, not := range []string{"local-notes.txt", "build/", "app.log", "gen_x.go", ".hidden", ".env", "link_out", "secrets/a.pem"} {
		if strings.Contains(out, not) {
			t.Errorf("list shows %s:\n%s", not, out)
		}
	}
	out, _ = w.ListFiles(ListOptions{Pattern: "**/*.go"}, false)
	if out != "pkg/real.go\nsrc/main.go\n" {
		t.Errorf("glob: %q", out)
	}
	out, _ = w.ListFiles(ListOptions{Hidden: true, Pattern: "**/*.go"}, false)
	if !strings.Contains(out, ".hidden/h.go") || strings.Contains(out, ".env") {
		t.Errorf("hidden: %q", out)
	}
	out, err = w.GrepFiles(context.Background(), GrepOptions{Pattern: "needle"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if out != "keep.log:1:needle\npkg/real.go:4:var needle = 1\n" {
		t.Errorf("grep: %q", out)
	}
	out, _ = w.GrepFiles(context.Background(), GrepOptions{Pattern: "NEEDLE", IgnoreCase: true, Glob: "**/*.go"}, false)
	if out != "pkg/real.go:3:// Needle here\npkg/real.go:4:var needle = 1\n" {
		t.Errorf("grep -i: %q", out)
	}
	out, _ = w.GrepFiles(context.Background(), GrepOptions{Pattern: "^var \\w+", Path: "pkg"}, false)
	if out != "pkg/real.go:4:var needle = 1\n" {
		t.Errorf("grep anchored in subdir: %q", out)
	}
	out, _ = w.GrepFiles(context.Background(), GrepOptions{Pattern: "a.b", Literal: true}, false)
	if !strings.HasPrefix(out, "no matches") {
		t.Errorf("literal: %q", out)
	}
	if _, err := w.GrepFiles(context.Background(), GrepOptions{Pattern: "("}, false); err == nil {
		t.Error("bad regexp accepted")
	}
	if _, err := w.GrepFiles(context.Background(), GrepOptions{Pattern: "x", Path: "~/.ssh"}, true); err == nil {
		t.Error("grep in denied dir")
	}
	if _, err := w.GrepFiles(context.Background(), GrepOptions{Pattern: "SECRET", Path: ".env"}, true); err == nil {
		t.Error("grep .env")
	}
	for i := 0; i < 300; i++ {
		write(t, fmt.Sprintf("%s/many/f%03d.txt", e.root, i), "hit\n")
	}
	out, _ = w.GrepFiles(context.Background(), GrepOptions{Pattern: "hit", MaxResults: 10}, false)
	if strings.Count(out, ":1:hit") != 10 || !strings.Contains(out, "stopped at 10") {
		t.Errorf("cap: %q", out)
	}
}

func TestToolsAndApprovals(t *testing.T) {
	e := newTestEnv(t)
	w := newWS(t, e, PresetCoding, SandboxOff)
	byName := map[string]tool.Tool{}
	for _, tl := range w.Tools() {
		byName[tl.Spec().Name] = tl
	}
	for _, n := range []string{"read_file", "list_files", "grep_files", "write_file", "edit_file", "shell", "read_process_output", "kill_process"} {
		if byName[n] == nil {
			t.Fatalf("missing tool %s", n)
		}
	}
	for _, n := range []string{"write_file", "edit_file", "shell"} {
		if byName[n].Spec().Parallel {
			t.Errorf("%s is not a barrier", n)
		}
	}
	approve := func(name, args string) (string, []string, error) {
		a, err := byName[name].Spec().Approval(context.Background(), nil, json.RawMessage(args))
		if a == nil {
			return "", nil, err
		}
		return a.Kind + ":" + a.Summary + "|" + a.Diff, a.Rules, err
	}
	if s, _, err := approve("read_file", `{"path":"src/main.go"}`); s != "" || err != nil {
		t.Errorf("inside read asks: %q %v", s, err)
	}
	if s, _, _ := approve("read_file", `{"path":"/etc/hostname"}`); !strings.HasPrefix(s, "path:read /etc/hostname") {
		t.Errorf("outside read: %q", s)
	}
	if _, _, err := approve("read_file", `{"path":".env"}`); err == nil {
		t.Error(".env approval did not deny")
	}
	if _, _, err := approve("write_file", `{"path":"../x","content":"x"}`); err == nil || !strings.Contains(err.Error(), "workspace.writable") {
		t.Errorf("outside write: %v", err)
	}
	s, rules, err := approve("shell", `{"command":"make build && git push origin main","description":"build and push"}`)
	if err != nil || !strings.HasPrefix(s, "command:build and push: make build") || strings.Join(rules, ",") != "make build,git push" {
		t.Errorf("shell approval: %q %q %v", s, rules, err)
	}
	if _, _, err := approve("shell", `{"command":"rm -rf /"}`); err == nil || !strings.Contains(err.Error(), "not allowed") {
		t.Errorf("rm -rf /: %v", err)
	}
	if s, _, _ := approve("shell", `{"command":"ls src"}`); s != "" {
		t.Errorf("ls asks: %q", s)
	}
	// Allow for session stores the prefix rules.
	a, _ := byName["shell"].Spec().Approval(context.Background(), nil, json.RawMessage(`{"command":"make build"}`))
	byName["shell"].Spec().Grant(a)
	if s, _, _ := approve("shell", `{"command":"make build -j4"}`); s != "" {
		t.Errorf("grant not applied: %q", s)
	}
	// Invoke a shell call end to end.
	res, err := byName["shell"].Invoke(context.Background(), &tool.RunContext{}, json.RawMessage(`{"command":"echo hi; exit 4"}`))
	if err != nil || !res.IsError || !strings.Contains(res.Text, "hi\n[exit status 4") {
		t.Errorf("shell invoke: %+v %v", res, err)
	}
	res, _ = byName["shell"].Invoke(context.Background(), &tool.RunContext{}, json.RawMessage(`{"command":"echo x > /etc/x"}`))
	if !res.IsError || !strings.Contains(res.Text, "denied") {
		t.Errorf("denied invoke: %+v", res)
	}
	res, _ = byName["shell"].Invoke(context.Background(), &tool.RunContext{}, json.RawMessage(`{"command":"sleep 5","timeout":1}`))
	if !res.IsError || !strings.Contains(res.Text, "timed out after 1s") {
		t.Errorf("timeout invoke: %+v", res)
	}
	// Edit approval in trusted mode outside the root carries a diff.
	tw := newWS(t, e, PresetTrusted, SandboxOff)
	write(t, e.base+"/outside.txt", "old\n")
	for _, tl := range tw.Tools() {
		if tl.Spec().Name == "edit_file" {
			a, err := tl.Spec().Approval(context.Background(), nil, json.RawMessage(`{"path":"../outside.txt","old_string":"old","new_string":"new"}`))
			if err != nil || a == nil || !strings.Contains(a.Diff, "-old\n+new\n") || a.Path != e.base+"/outside.txt" {
				t.Errorf("edit approval: %+v %v", a, err)
			}
		}
	}
	// readonly: no mutators, no shell.
	roCfg := e.config(PresetReadonly)
	roCfg.Writable = nil
	ro, err := New(roCfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range ro.Tools() {
		switch tl.Spec().Name {
		case "write_file", "edit_file", "shell":
			t.Errorf("readonly exposes %s", tl.Spec().Name)
		}
	}
}

func TestInstructionsFollowPolicy(t *testing.T) {
	e := newTestEnv(t)
	ro := newWS(t, e, PresetReadonly, SandboxOff).Instructions()
	if !strings.Contains(ro, "cannot run shell commands") || !strings.Contains(ro, "Writing inside the workspace: not allowed") {
		t.Errorf("readonly:\n%s", ro)
	}
	co := newWS(t, e, PresetCoding, SandboxOff).Instructions()
	for _, want := range []string{"Outside it: allowed after the user approves", "Outside it: not allowed", ".env*", "\"git push\" ask"} {
		if !strings.Contains(co, want) {
			t.Errorf("coding lacks %q:\n%s", want, co)
		}
	}
	if strings.Contains(co, "sandbox") {
		t.Errorf("unsandboxed workspace claims a sandbox:\n%s", co)
	}
}

// A file the rules let the agent write but not read is not edited: the diff would
// show its lines and a missing old_string tells what it holds. write_file still
// replaces it whole.
func TestEditFileReadDenied(t *testing.T) {
	e := newTestEnv(t)
	cfg := e.config(PresetCoding)
	cfg.Sandbox = SandboxOff
	cfg.PathRules = []PathRule{{Pattern: "*.pem", Read: "deny"}}
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	write(t, e.root+"/k.pem", "one\nCANARY\ntwo\n")
	out, err := w.EditFile("k.pem", "one", "ONE", false, false)
	if err == nil || strings.Contains(out+err.Error(), "CANARY") || !strings.Contains(err.Error(), "denies reading") {
		t.Fatalf("edit = %q, %v", out, err)
	}
	if data, _ := os.ReadFile(e.root + "/k.pem"); string(data) != "one\nCANARY\ntwo\n" {
		t.Fatalf("edited: %q", data)
	}
	if out, err := w.WriteFile("k.pem", "new\n", false, false); err != nil || strings.Contains(out, "CANARY") {
		t.Fatalf("write = %q, %v", out, err)
	}
}
