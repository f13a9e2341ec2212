package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/store/sqlite"
)

// copyTree copies testdata/compat/<name> into dst (dotfiles included).
func copyTree(t *testing.T, name, dst string) {
	t.Helper()
	src := filepath.Join("testdata", "compat", name)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

type streamEvent struct {
	Type        string          `json:"type"`
	CallID      string          `json:"call_id"`
	Name        string          `json:"name"`
	Args        json.RawMessage `json:"args"`
	Output      string          `json:"output"`
	IsError     bool            `json:"is_error"`
	Text        string          `json:"text"`
	Status      string          `json:"status"`
	FinalOutput string          `json:"final_output"`
}

func parseStream(t *testing.T, out string) []streamEvent {
	t.Helper()
	var evs []streamEvent
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var ev streamEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("bad event line %q: %v", line, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

const claudeHooksScript = `
turns:
  - tool_calls:
      - name: shell
        args: {command: "grep -r TODO .", description: "find TODOs"}
  - tool_calls:
      - name: write_file
        args: {path: .env, content: "API_KEY=leaked\n"}
  - tool_calls:
      - name: write_file
        args: {path: main.go, content: "package main\nfunc main(){\nprintln(  \"hi\" )\n}\n"}
  - text: "All done."
  - text: "Tests pass; done now."
`

// TestClaudeCodeHooks: the hooks of Claude Code's documentation examples, in
// .claude/settings.json, run unchanged: a Bash validator blocks grep in favour of rg
// (exit 2, stderr to the model), a .env guard on Edit|Write blocks the write, a
// PostToolUse formatter formats the Go file written, and a Stop hook that blocks once
// keeps the run going with its reason.
func TestClaudeCodeHooks(t *testing.T) {
	e := newEnv(t)
	copyTree(t, "hooks", e.dir)
	e.write("s.yaml", claudeHooksScript)

	// Untrusted: the project's hooks do not run, and the notice names them.
	r := e.run(nil, "run", "--approve", "all", "--output", "stream-json", "-m", "script:s.yaml", "fix it")
	if !strings.Contains(r.stderr, ".claude/settings.json") || !strings.Contains(r.stderr, "is not trusted") {
		t.Fatalf("untrusted run: want a notice naming .claude/settings.json; stderr:\n%s", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.dir, ".env")); err != nil {
		t.Fatalf("untrusted: the .env guard should not have run, so .env should exist: %v", err)
	}
	os.Remove(filepath.Join(e.dir, ".env"))
	os.Remove(filepath.Join(e.dir, "main.go"))

	r = e.run(nil, "run", "--trust", "--approve", "all", "--output", "stream-json", "-m", "script:s.yaml", "fix it")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	evs := parseStream(t, r.stdout)
	var grepOut, envOut, stopMsg, final string
	envCall := ""
	for _, ev := range evs {
		switch {
		case ev.Type == "tool_call_started" && strings.Contains(string(ev.Args), ".env"):
			envCall = ev.CallID
		case ev.Name == "shell" && (ev.Type == "tool_call_failed" || ev.Type == "tool_call_completed"):
			grepOut = ev.Output
		case ev.CallID == envCall && (ev.Type == "tool_call_failed" || ev.Type == "tool_call_completed"):
			envOut = ev.Output
		case ev.Type == "user_message_injected" && strings.Contains(ev.Text, "Stop hook"):
			stopMsg = ev.Text
		case ev.Type == "run_completed":
			final = ev.FinalOutput
		}
	}
	if !strings.Contains(grepOut, "blocked by a pre-tool hook") || !strings.Contains(grepOut, "Use 'rg'") {
		t.Errorf("grep call: want blocked with the validator's message, got %q", grepOut)
	}
	if !strings.Contains(envOut, "blocked by a pre-tool hook") {
		t.Errorf(".env write: want blocked, got %q", envOut)
	}
	if _, err := os.Stat(filepath.Join(e.dir, ".env")); err == nil {
		t.Error(".env was written despite the guard")
	}
	got, err := os.ReadFile(filepath.Join(e.dir, "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"; string(got) != want {
		t.Errorf("the PostToolUse formatter did not format main.go:\n%s", got)
	}
	if !strings.Contains(stopMsg, "Run the tests before you stop.") {
		t.Errorf("want the Stop hook's reason injected once, got %q", stopMsg)
	}
	if final != "Tests pass; done now." {
		t.Errorf("final output = %q, want the answer after the Stop hook's block", final)
	}
}

// TestClaudeCommandHeadless: .claude/commands/review.md runs as `lovia run
// "/review ARGS"`: $ARGUMENTS is filled, @CONVENTIONS.md attached, and its
// allowed-tools narrow the run's tools (write_file is not offered).
func TestClaudeCommandHeadless(t *testing.T) {
	e := newEnv(t)
	copyTree(t, "commands", e.dir)
	e.write("s.yaml", `
turns:
  - tool_calls:
      - name: write_file
        args: {path: x.txt, content: "x"}
  - text: "Reviewed: looks fine."
`)
	r := e.run(nil, "run", "--output", "stream-json", "-m", "script:s.yaml", "/review internal/store")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	in := sessionInput(t, e)
	for _, want := range []string{"Review internal/store carefully.", "Contents of CONVENTIONS.md:", "Errors are wrapped with %w"} {
		if !strings.Contains(in, want) {
			t.Errorf("prompt lacks %q:\n%s", want, in)
		}
	}
	if !strings.Contains(r.stdout, `unknown tool \"write_file\"`) {
		t.Errorf("write_file should not be offered while /review (allowed-tools: Read, Grep, Glob) runs:\n%s", r.stdout)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "x.txt")); err == nil {
		t.Error("x.txt was written")
	}

	// A skill without a name is invoked by its folder's name.
	e.write("s2.yaml", "turns:\n  - text: \"Entry added.\"\n")
	r = e.run(nil, "run", "-m", "script:s2.yaml", "/changelog for the store fix")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if in := lastInput(t, e); !strings.Contains(in, `Use the skill "changelog"`) || !strings.Contains(in, "Add an entry under") || !strings.Contains(in, "The task: for the store fix") {
		t.Errorf("/changelog prompt:\n%s", in)
	}
}

// lastInput is the first user input of the newest run in the test's database.
func lastInput(t *testing.T, e *env) string {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(e.home, "data", "lovia.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	runs, err := db.Checkpoints().ListRuns(context.Background(), sqlite.RunFilter{})
	if err != nil || len(runs) == 0 {
		t.Fatalf("runs %v err %v", runs, err)
	}
	newest := runs[0]
	for _, r := range runs {
		if r.UpdatedAt.After(newest.UpdatedAt) {
			newest = r
		}
	}
	snap, err := db.Checkpoints().Load(context.Background(), newest.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range snap.Entries {
		if en.IsUser() {
			return en.Text
		}
	}
	return ""
}

// TestClaudeSkillsListed: a skill folder without name and one whose description is
// over 1,024 characters both load (the second truncated, with a warning).
func TestClaudeSkillsListed(t *testing.T) {
	e := newEnv(t)
	copyTree(t, "commands", e.dir)
	r := e.run(nil, "skills", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var rows []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, row := range rows {
		got[row.Name] = row.Description
	}
	if !strings.HasPrefix(got["changelog"], "Write a CHANGELOG entry") {
		t.Errorf("skill without name not listed as its folder: %v", got)
	}
	if d := got["claude-api"]; !strings.HasPrefix(d, "Build apps with the Claude API") {
		t.Errorf("long-description skill not listed: %v", got)
	}
	if !strings.Contains(r.stderr, "claude-api") || !strings.Contains(r.stderr, "truncated") {
		t.Errorf("want a warning about the truncated description; stderr:\n%s", r.stderr)
	}
}

// TestClaudeCommandInChat: in `lovia chat` (tmux), typing /rev completes the
// project's /review command with its description, and /review ARGS runs it.
func TestClaudeCommandInChat(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	if testing.Short() {
		t.Skip("drives tmux")
	}
	e := newEnv(t)
	copyTree(t, "commands", e.dir)
	e.write("chat.yaml", "turns:\n  - text: \"Reviewed the store: two missing tests.\"\n")
	s := &tmuxSession{t: t, socket: fmt.Sprintf("lovia-compat-%d", os.Getpid())}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", s.socket, "kill-server").Run() })
	command := fmt.Sprintf("env HOME=%s XDG_CONFIG_HOME=%s/.config LOVIA_HOME=%s/data TERM=xterm-256color %s chat -m script:chat.yaml; echo LOVIA-EXITED; sleep 600",
		e.home, e.home, e.home, bin)
	s.run("new-session", "-d", "-s", "main", "-x", "100", "-y", "30", "-c", e.dir, command)
	s.waitFor("new session", 10*time.Second)

	s.text("/rev")
	s.waitVisible("Review a change for bugs and style", 5*time.Second)
	s.text("iew internal/store")
	s.keys("Enter")
	s.waitFor("Reviewed the store: two missing tests.", 10*time.Second)
	if in := lastInput(t, e); !strings.Contains(in, "Review internal/store carefully.") || !strings.Contains(in, "Errors are wrapped with %w") {
		t.Errorf("the chat sent:\n%s", in)
	}
}

// TestClaudeImportsRespectPolicy: a repository with CLAUDE.md importing AGENTS.md and a
// nested CLAUDE.md loads each once (`lovia instructions` says why), and an import of
// a path the policy denies (.env under denied_paths) is not read.
func TestClaudeImportsRespectPolicy(t *testing.T) {
	e := newEnv(t)
	e.write("CLAUDE.md", "# Project\n\n@AGENTS.md\n@.env\n")
	e.write("AGENTS.md", "Build with make.\n")
	e.write("pkg/api/CLAUDE.md", "Handlers never panic.\n")
	e.write(".env", "API_KEY=CANARY-SECRET\n")
	e.write(".lovia/config.yaml", "workspace:\n  denied_paths: [\".env\"]\n")
	os.MkdirAll(filepath.Join(e.dir, ".git"), 0o755)
	r := e.run(nil, "-C", "pkg/api", "instructions")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"AGENTS.md  (project root", "CLAUDE.md  (project root", "CLAUDE.md  (directory pkg/api", "@.env not followed: the policy denies reading it"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("lovia instructions lacks %q:\n%s", want, r.stdout)
		}
	}
	r = e.run(nil, "-C", "pkg/api", "instructions", "--text")
	if strings.Contains(r.stdout, "CANARY") || strings.Count(r.stdout, "Build with make.") != 1 || !strings.Contains(r.stdout, "Handlers never panic.") {
		t.Errorf("instructions text:\n%s", r.stdout)
	}
}
