//go:build linux

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/provider/providertest"
)

// These tests hand lovia what a hostile repository or a careless command line can:
// alias bombs, links to secrets, FIFOs, /dev/zero, endless devices. Each must fail
// fast with a message naming the file, the limit and the fix — or, for files lovia
// only reads for context, be left out with a warning while the run goes on.

// aliasBomb is the "billion laughs" shape: 9 levels of 9 aliases (9^9 values).
func aliasBomb() string {
	var b strings.Builder
	b.WriteString(`a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n")
	for i := 1; i <= 9; i++ {
		refs := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 9), ",")
		fmt.Fprintf(&b, "a%d: &a%d [%s]\n", i, i, refs)
	}
	return b.String()
}

// maxRSS is the peak resident memory of a finished process.
func maxRSS(p provProc) int64 {
	ru, ok := p.state.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	return ru.Maxrss << 10 // KiB on Linux
}

func TestAliasBombIsRefused(t *testing.T) {
	for _, file := range []string{".lovia/presets/x.yaml", ".lovia/config.yaml"} {
		t.Run(file, func(t *testing.T) {
			e := provEnv(t, nil)
			e.write("script.yaml", "turns:\n  - text: hi\n")
			e.write(file, aliasBomb())
			p := provRun(e, 60*time.Second, "run", "-m", "script:script.yaml", "hello")
			if p.code != 2 {
				t.Fatalf("exit %d, want 2 (configuration error)\nstderr: %s", p.code, provTail(p.stderr, 2000))
			}
			for _, want := range []string{filepath.Join(e.dir, file), "aliases expand to more than 100000 nodes", "write the values out"} {
				if !strings.Contains(p.stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, p.stderr)
				}
			}
			if rss := maxRSS(p); rss > 100<<20 {
				t.Errorf("peak memory %d MiB, want under 100 MiB", rss>>20)
			}
		})
	}
}

func TestOutputSchemaFromAnEndlessDevice(t *testing.T) {
	e := provEnv(t, nil)
	e.write("script.yaml", "turns:\n  - text: hi\n")
	p := provRun(e, 60*time.Second, "run", "-m", "script:script.yaml", "--output-schema", "/dev/urandom", "hello")
	if p.code != 2 {
		t.Fatalf("exit %d, want 2\nstderr: %s", p.code, provTail(p.stderr, 2000))
	}
	for _, want := range []string{"--output-schema /dev/urandom", "/dev/urandom is over the size limit (1 MiB)", "name a file smaller than 1 MiB"} {
		if !strings.Contains(p.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, p.stderr)
		}
	}
	if rss := maxRSS(p); rss > 100<<20 {
		t.Errorf("peak memory %d MiB", rss>>20)
	}
}

// TestFilesLoviaReadsForItself: AGENTS.md links to a fake ~/.ssh/id_rsa, MEMORY.md
// to /dev/zero, a project skill's SKILL.md out of the repository. The model request
// (seen by a fake OpenAI server) holds none of it, the user is warned about each, and
// the run completes.
func TestFilesLoviaReadsForItself(t *testing.T) {
	const canary = "CANARY-PRIVATE-KEY-5b1e"
	srv := providertest.NewOpenAIServer(t, providertest.Turn{Text: "done"})
	e := provEnv(t, srv)
	key := filepath.Join(e.home, ".ssh", "id_rsa")
	if err := os.MkdirAll(filepath.Dir(key), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, []byte("-----BEGIN OPENSSH PRIVATE KEY-----\n"+canary+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	skill := filepath.Join(e.home, "elsewhere", "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(skill), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(skill, []byte("---\nname: stolen\ndescription: "+canary+"\n---\nbody\n"), 0o644)
	e.write(".git/HEAD", "ref: refs/heads/main\n")
	links := map[string]string{
		"AGENTS.md":                      key,
		".lovia/MEMORY.md":               "/dev/zero",
		".lovia/skills/stolen/SKILL.md":  skill,
		"sub/CLAUDE.md":                  "../../home/.ssh/id_rsa",
		".lovia/skills/ok/reference.txt": key,
	}
	for rel, target := range links {
		p := filepath.Join(e.dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	e.write(".lovia/skills/ok/SKILL.md", "---\nname: ok\ndescription: a fine skill\n---\nbody\n")

	p := provRun(e, 60*time.Second, "run", "-C", filepath.Join(e.dir, "sub"), "-m", "openai:test-model", "hello")
	if p.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", p.code, provTail(p.stderr, 3000))
	}
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no model request")
	}
	for _, r := range reqs {
		if strings.Contains(string(r.Body), canary) || strings.Contains(string(r.Body), "PRIVATE KEY") {
			t.Fatalf("the key reached the model request")
		}
		if !strings.Contains(string(r.Body), "a fine skill") {
			t.Errorf("the good skill is missing from the request")
		}
	}
	for _, want := range []string{
		"lovia: warning: instructions left out: " + filepath.Join(e.dir, "AGENTS.md") + " links outside",
		filepath.Join(e.dir, "sub", "CLAUDE.md") + " links outside",
		"lovia: warning: memory notes left out: " + filepath.Join(e.dir, ".lovia", "MEMORY.md") + " links outside",
		"lovia: warning: skill not loaded: " + filepath.Join(e.dir, ".lovia", "skills", "stolen", "SKILL.md") + " links outside",
	} {
		if !strings.Contains(p.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, p.stderr)
		}
	}
	if strings.Contains(p.stderr, canary) {
		t.Error("the key reached stderr")
	}
	if rss := maxRSS(p); rss > 200<<20 {
		t.Errorf("peak memory %d MiB", rss>>20)
	}
}

// A FIFO nobody writes to, as AGENTS.md or MEMORY.md, must not hang the run.
func TestInstructionsFIFODoesNotHang(t *testing.T) {
	e := provEnv(t, nil)
	e.write("script.yaml", "turns:\n  - text: finished\n")
	e.write(".git/HEAD", "ref: refs/heads/main\n")
	for _, rel := range []string{"AGENTS.md", ".lovia/MEMORY.md"} {
		p := filepath.Join(e.dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := provRun(e, 60*time.Second, "run", "-m", "script:script.yaml", "hello")
	if p.code != 0 || strings.TrimSpace(p.stdout) != "finished" {
		t.Fatalf("exit %d stdout %q\nstderr: %s", p.code, p.stdout, p.stderr)
	}
	for _, want := range []string{"AGENTS.md is a FIFO (named pipe), not a regular file", "MEMORY.md is a FIFO"} {
		if !strings.Contains(p.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, p.stderr)
		}
	}
}

// After a run, what lovia keeps in its data directory is private: files 0600,
// directories 0700 — also when an older lovia left them world-readable.
func TestDataDirFilesArePrivate(t *testing.T) {
	e := provEnv(t, nil)
	e.write("script.yaml", "turns:\n  - tool_calls: [{name: remember, args: {content: the tests use go test}}]\n  - text: done\n")
	data := filepath.Join(e.home, "data")
	// A database and a log from before, world-readable.
	for _, p := range []string{filepath.Join(data, "memory.db"), filepath.Join(data, "logs", "lovia.log")} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := provRun(e, 60*time.Second, "run", "-m", "script:script.yaml", "--approve", "all", "remember this")
	if p.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", p.code, p.stderr)
	}
	want := map[string]os.FileMode{
		data:                                  0o700,
		filepath.Join(data, "logs"):           0o700,
		filepath.Join(data, "logs/lovia.log"): 0o600,
		filepath.Join(data, "lovia.db"):       0o600,
		filepath.Join(data, "memory.db"):      0o600,
	}
	for path, mode := range want {
		st, err := os.Stat(path)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if st.Mode().Perm() != mode {
			t.Errorf("%s: mode %v, want %v", path, st.Mode().Perm(), mode)
		}
	}
	// Whatever else is there (-wal, -shm, offloaded results) is private too.
	filepath.WalkDir(data, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := d.Info()
		if err == nil && st.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: mode %v is readable by others", path, st.Mode().Perm())
		}
		return nil
	})
}
