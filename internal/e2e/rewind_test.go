package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/store/sqlite"
)

// rewindScript edits a file with edit_file, creates one with write_file, changes a
// third with sed -i and deletes a fourth with rm through the shell tool.
const rewindScript = `turns:
  - tool_calls:
      - {name: read_file, args: {path: a.txt}}
  - tool_calls:
      - {name: edit_file, args: {path: a.txt, old_string: "hello", new_string: "goodbye"}}
      - {name: write_file, args: {path: sub/new.txt, content: "brand new\n"}}
      - {name: shell, args: {command: "sed -i 's/x/y/' tool.sh"}}
      - {name: shell, args: {command: "rm secret.txt"}}
  - text: "done"
`

// snapshotDir maps every path under dir to its mode and content (links: target).
func snapshotDir(t *testing.T, dir string, skip ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if slices.Contains(skip, rel) {
			return filepath.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			out[rel] = "link " + l
		case fi.IsDir():
			out[rel+"/"] = fi.Mode().String()
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = fi.Mode().String() + " " + string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// hashDir is one hash of a whole directory: paths, modes, contents, mtimes.
func hashDir(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	m := snapshotDir(t, dir)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fi, _ := os.Lstat(filepath.Join(dir, k))
		h.Write([]byte(k + "\x00" + m[k] + "\x00" + fi.ModTime().String() + "\x00"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func diffSnap(t *testing.T, got, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q, want %q", k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: left over (%q)", k, v)
		}
	}
}

// newRewindRepo is a git repository (when git is installed) with four files.
func newRewindRepo(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	e.write("a.txt", "hello world\n")
	e.write("tool.sh", "#!/bin/sh\necho x marks\n")
	os.Chmod(filepath.Join(e.dir, "tool.sh"), 0o755)
	e.write("secret.txt", "delete me\n")
	os.Chmod(filepath.Join(e.dir, "secret.txt"), 0o600)
	e.write("keep.txt", "untouched\n")
	e.write(".gitignore", "build/\n")
	e.write("build/out.bin", "built\n")
	if git, err := exec.LookPath("git"); err == nil {
		for _, args := range [][]string{{"init", "-q", "."}, {"add", "-A"}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init"}} {
			c := exec.Command(git, args...)
			c.Dir, c.Env = e.dir, e.vars
			if out, err := c.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
	} else {
		e.write(".git/HEAD", "ref: refs/heads/main\n")
		e.write(".git/index", "index")
	}
	e.write("script.yaml", rewindScript)
	return e
}

func runID(t *testing.T, r result) string {
	t.Helper()
	var out struct {
		RunID  string `json:"run_id"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Status != "completed" {
		t.Fatalf("run: code %d status %q err %v\nstdout %s\nstderr %s", r.code, out.Status, err, r.stdout, r.stderr)
	}
	return out.RunID
}

func TestRewindRestoresFileToolAndShellChanges(t *testing.T) {
	e := newRewindRepo(t)
	before := snapshotDir(t, e.dir, ".git")
	gitBefore := hashDir(t, filepath.Join(e.dir, ".git"))

	id := runID(t, e.run(nil, "run", "-m", "script:script.yaml", "--approve", "all", "--output", "json", "change things"))
	mid := snapshotDir(t, e.dir, ".git")
	if mid["a.txt"] != "-rw-r--r-- goodbye world\n" || mid["sub/new.txt"] == "" || !strings.Contains(mid["tool.sh"], "y marks") || mid["secret.txt"] != "" {
		t.Fatalf("the run did not make its changes: %v", mid)
	}

	r := e.run(nil, "checkpoints", id)
	for _, f := range []string{"a.txt", "sub/new.txt", "tool.sh", "secret.txt"} {
		if !strings.Contains(r.stdout, f) {
			t.Errorf("checkpoints %s does not name %s:\n%s", id, f, r.stdout)
		}
	}
	if r := e.run(nil, "rewind", id); r.code == 0 || !strings.Contains(r.stderr, "--yes") {
		t.Errorf("rewind without a terminal nor --yes: code %d, stderr %s", r.code, r.stderr)
	}
	r = e.run(nil, "rewind", id, "--yes")
	if r.code != 0 {
		t.Fatalf("rewind: %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"restore  a.txt", "delete   sub/new.txt", "recreate secret.txt", "restore  tool.sh"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("rewind does not show %q:\n%s", want, r.stderr)
		}
	}
	diffSnap(t, snapshotDir(t, e.dir, ".git"), before)
	if got := hashDir(t, filepath.Join(e.dir, ".git")); got != gitBefore {
		t.Errorf(".git changed")
	}
	if r := e.run(nil, "rewind", id, "--yes"); r.code == 0 {
		t.Errorf("a second rewind of the same run succeeded:\n%s", r.stderr)
	}
}

func TestRewindRefusesFilesChangedOutside(t *testing.T) {
	e := newRewindRepo(t)
	id := runID(t, e.run(nil, "run", "-m", "script:script.yaml", "--approve", "all", "--output", "json", "change things"))
	e.write("a.txt", "the user's own edit\n")
	r := e.run(nil, "rewind", id, "--yes")
	if r.code == 0 || !strings.Contains(r.stderr, "a.txt") || !strings.Contains(r.stderr, "--force") {
		t.Fatalf("rewind over a user's edit: code %d\n%s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(e.dir, "a.txt")); string(b) != "the user's own edit\n" {
		t.Fatalf("a refused rewind changed a.txt: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(e.dir, "sub/new.txt")); string(b) != "brand new\n" {
		t.Fatalf("a refused rewind changed sub/new.txt: %q", b)
	}
	if r := e.run(nil, "rewind", id, "--yes", "--force"); r.code != 0 {
		t.Fatalf("rewind --force: %d\n%s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(e.dir, "a.txt")); string(b) != "hello world\n" {
		t.Fatalf("after --force a.txt = %q", b)
	}
}

// A run replaces a file and a directory by links pointing outside the root (and the
// repository already holds one); the rewind restores them and writes nothing outside.
func TestRewindNeverWritesOutsideTheRoot(t *testing.T) {
	e := newRewindRepo(t)
	outside := filepath.Join(filepath.Dir(e.dir), "outside")
	os.MkdirAll(outside, 0o755)
	os.WriteFile(filepath.Join(outside, "victim.txt"), []byte("victim\n"), 0o644)
	os.Symlink(outside, filepath.Join(e.dir, "planted"))
	e.write("dir/x.txt", "x\n")
	e.write("script.yaml", `turns:
  - tool_calls:
      - {name: shell, args: {command: "rm a.txt && ln -s `+outside+`/victim.txt a.txt && rm -r dir && ln -s `+outside+` dir"}}
  - text: "done"
`)
	before := snapshotDir(t, e.dir, ".git")
	outBefore := hashDir(t, outside)
	id := runID(t, e.run(nil, "run", "-m", "script:script.yaml", "--approve", "all", "--output", "json", "plant links"))
	if fi, err := os.Lstat(filepath.Join(e.dir, "dir")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the run did not plant its link: %v %v", fi, err)
	}
	if r := e.run(nil, "rewind", id, "--yes"); r.code != 0 {
		t.Fatalf("rewind: %d\n%s", r.code, r.stderr)
	}
	if hashDir(t, outside) != outBefore {
		t.Errorf("the rewind wrote outside the root: %v", snapshotDir(t, outside))
	}
	diffSnap(t, snapshotDir(t, e.dir, ".git"), before)
}

// sessionInputs lists the user inputs of a session, in order.
func sessionInputs(t *testing.T, e *env, sessionID string) []string {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(e.home, "data", "lovia.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	entries, err := db.Sessions().Load(context.Background(), sessionID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, en := range entries {
		if en.IsUser() {
			out = append(out, en.Text)
		}
	}
	return out
}

func TestRewindConversationContinuesFromBefore(t *testing.T) {
	e := newEnv(t)
	e.write("s.yaml", "scope: session\nturns:\n  - text: one\n  - text: two\n  - text: three\n  - text: four\n")
	run := func(args ...string) (id, session string) {
		r := e.run(nil, append([]string{"run", "-m", "script:s.yaml", "--output", "json"}, args...)...)
		var out struct{ RunID, SessionID string }
		json.Unmarshal([]byte(strings.NewReplacer(`"run_id"`, `"RunID"`, `"session_id"`, `"SessionID"`).Replace(r.stdout)), &out)
		if r.code != 0 || out.RunID == "" {
			t.Fatalf("run %v: %d\n%s\n%s", args, r.code, r.stdout, r.stderr)
		}
		return out.RunID, out.SessionID
	}
	_, ses := run("first")
	second, _ := run("-c", "second")
	run("-c", "third")
	r := e.run(nil, "rewind", second, "--conversation", "--yes")
	if r.code != 0 || !strings.Contains(r.stderr, "2 run(s) dropped") {
		t.Fatalf("rewind --conversation: %d\n%s", r.code, r.stderr)
	}
	if got := sessionInputs(t, e, ses); !slices.Equal(got, []string{"first"}) {
		t.Fatalf("after the rewind the session holds %q", got)
	}
	_, ses2 := run("-c", "again")
	if ses2 != ses {
		t.Fatalf("-c continued session %s, want %s", ses2, ses)
	}
	if got := sessionInputs(t, e, ses); !slices.Equal(got, []string{"first", "again"}) {
		t.Fatalf("the next -c run continued from %q, want [first again]", got)
	}
}

func TestSessionsRmRemovesCheckpoints(t *testing.T) {
	e := newRewindRepo(t)
	r := e.run(nil, "run", "-m", "script:script.yaml", "--approve", "all", "--output", "json", "change things")
	runID(t, r)
	var out struct {
		SessionID string `json:"session_id"`
	}
	json.Unmarshal([]byte(r.stdout), &out)
	logs, _ := filepath.Glob(filepath.Join(e.home, "data", "rewind", "sessions", out.SessionID, "*.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("checkpoint logs %v", logs)
	}
	if r := e.run(nil, "sessions", "rm", out.SessionID, "--yes"); r.code != 0 {
		t.Fatalf("sessions rm: %d %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.home, "data", "rewind", "sessions", out.SessionID)); !os.IsNotExist(err) {
		t.Errorf("the session's checkpoints are still there: %v", err)
	}
}
