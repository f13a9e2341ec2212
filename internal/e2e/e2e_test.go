// Package e2e tests the lovia binary as a user runs it: built once, run in temporary
// directories with a private home, checked on exit codes, stdout, stderr and the
// database it leaves.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/store/sqlite"
)

var update = flag.Bool("update", false, "rewrite golden files")

// bin is the lovia binary built by TestMain.
var bin string

// repoRoot is the module root.
var repoRoot string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "lovia-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	repoRoot, _ = filepath.Abs("../..")
	// E2E_BIN tests a binary built elsewhere: CI builds once as root and runs the
	// sandbox tests again as an unprivileged user, who has no warm build cache.
	bin = os.Getenv("E2E_BIN")
	if bin == "" {
		bin = filepath.Join(dir, "lovia")
		build := exec.Command("go", "build", "-o", bin, ".")
		build.Dir = repoRoot
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building lovia:", err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// env is one test's private machine: a workspace directory and a home.
type env struct {
	t    testing.TB
	dir  string // the workspace (-C)
	home string
	vars []string
}

func newEnv(t testing.TB) *env {
	t.Helper()
	base := t.TempDir()
	e := &env{t: t, dir: filepath.Join(base, "work"), home: filepath.Join(base, "home")}
	for _, d := range []string{e.dir, e.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.vars = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + e.home,
		"XDG_CONFIG_HOME=" + filepath.Join(e.home, ".config"),
		"LOVIA_HOME=" + filepath.Join(e.home, "data"),
	}
	return e
}

func (e *env) write(rel, body string) string {
	e.t.Helper()
	p := filepath.Join(e.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

type result struct {
	code           int
	stdout, stderr string
}

// run runs lovia with args in the workspace; stdin nil means no standard input.
func (e *env) run(stdin []byte, args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = e.dir
	cmd.Env = e.vars
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("running lovia: %v", err)
	}
	return result{code, out.String(), errb.String()}
}

const helloScript = `
turns:
  - reasoning: "The user wants a plan."
    text: "Let me note that."
    tool_calls:
      - name: todo_write
        args: {todos: [{content: "say hello", status: in_progress}]}
    usage: {input_tokens: 1000, output_tokens: 20, cached_input_tokens: 400}
  - text: "Hello! I noted the task and I am done."
    usage: {input_tokens: 1100, output_tokens: 12, cached_input_tokens: 900}
`

var (
	reRun    = regexp.MustCompile(`run_[0-9a-f]{16}`)
	reSes    = regexp.MustCompile(`ses_[0-9a-f]{16}`)
	reCall   = regexp.MustCompile(`call_[0-9a-f]{8}_`)
	reTime   = regexp.MustCompile(`"time":"[^"]+"`)
	reDur    = regexp.MustCompile(`,"duration_ms":\d+`)
	reMillis = regexp.MustCompile(`\(\d+ ms\)`)
)

func (e *env) normalize(s string) string {
	s = strings.ReplaceAll(s, e.dir, "$WORK")
	s = strings.ReplaceAll(s, e.home, "$HOME")
	s = reRun.ReplaceAllString(s, "RUN_ID")
	s = reSes.ReplaceAllString(s, "SESSION_ID")
	s = reCall.ReplaceAllString(s, "call_RUN_")
	s = reTime.ReplaceAllString(s, `"time":"TIME"`)
	s = reDur.ReplaceAllString(s, "")
	s = reMillis.ReplaceAllString(s, "(N ms)")
	return s
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/e2e -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (go test ./internal/e2e -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestGoldenOutputs(t *testing.T) {
	for _, format := range []string{"text", "json", "stream-json"} {
		t.Run(format, func(t *testing.T) {
			e := newEnv(t)
			e.write("script.yaml", helloScript)
			r := e.run(nil, "run", "-m", "script:script.yaml", "--output", format, "say hello")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			golden(t, "hello."+format, e.normalize(r.stdout))
			// Not a terminal and no -v: nothing on stderr; the log goes to a file.
			if r.stderr != "" {
				t.Errorf("stderr not empty: %q", r.stderr)
			}
			log, err := os.ReadFile(filepath.Join(e.home, "data", "logs", "lovia.log"))
			if err != nil || !strings.Contains(string(log), `"msg":"run started"`) || !strings.Contains(string(log), `"msg":"run ended"`) {
				t.Errorf("log file: %v\n%s", err, log)
			}
		})
	}
	t.Run("text -v progress on stderr", func(t *testing.T) {
		e := newEnv(t)
		e.write("script.yaml", helloScript)
		r := e.run(nil, "run", "-v", "-m", "script:script.yaml", "say hello")
		if r.code != 0 || r.stdout != "Hello! I noted the task and I am done.\n" {
			t.Fatalf("exit %d stdout %q", r.code, r.stdout)
		}
		golden(t, "hello.text-verbose-stderr", e.normalize(r.stderr))
	})
}

// TestStreamJSONMatchesSchema validates real output, line by line, against
// docs/stream-json.schema.json, over runs that produce every event type a headless run
// can emit (approval_required needs a front end that can answer, so only the
// documented example of it is validated, in TestDocExamplesMatchSchema).
func TestStreamJSONMatchesSchema(t *testing.T) {
	validate := loadSchema(t)
	big := strings.Repeat("a line of a big file with some words in it\n", 300)
	scripts := map[string]struct {
		script string
		args   []string
		code   int
		files  map[string]string
	}{
		"tools and reasoning": {helloScript, nil, 0, nil},
		"retry, bad args, handoff": {`
turns:
  - error: {cut: true}
    text: "this partial reply is discarded"
  - text: "Planning."
    tool_calls:
      - {name: todo_write, raw_args: '{"todos": 5}'}
  - tool_calls:
      - {name: transfer_to_coder, args: {}}
  - text: "Coder here, done."
`, []string{"--preset", "planner"}, 0, nil},
		"limit": {`
turns:
  - tool_calls: [{name: todo_write, args: {todos: []}}]
`, []string{"--max-turns", "1"}, 3, nil},
		"provider failure": {"turns:\n  - error: {status: 401, message: bad key}\n", nil, 1, nil},
		"compaction": {`
context_window: 9000
turns:
  - tool_calls: [{name: read_file, args: {path: big0.txt}}]
  - tool_calls: [{name: read_file, args: {path: big1.txt}}]
  - tool_calls: [{name: read_file, args: {path: big2.txt}}]
  - tool_calls: [{name: read_file, args: {path: big3.txt}}]
  - text: done
`, nil, 0, map[string]string{"big0.txt": big, "big1.txt": big + "1", "big2.txt": big + "2", "big3.txt": big + "3"}},
		"steering from a hook": {`
turns:
  - tool_calls: [{name: todo_write, args: {todos: []}}]
  - text: "ok, I will check the tests too"
`, []string{"--trust"}, 0, map[string]string{".lovia/config.yaml": "hooks:\n  - event: post_tool_use\n    command: \"echo please also run the tests >&2; exit 2\"\n"}},
	}
	seen := map[string]bool{}
	for name, tc := range scripts {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.write("script.yaml", tc.script)
			for name, body := range tc.files {
				e.write(name, body)
			}
			args := append([]string{"run", "-m", "script:script.yaml", "--output", "stream-json"}, tc.args...)
			r := e.run(nil, append(args, "go")...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", r.code, tc.code, r.stderr)
			}
			lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
			terminals := 0
			var last map[string]any
			for i, line := range lines {
				var v map[string]any
				if err := json.Unmarshal([]byte(line), &v); err != nil {
					t.Fatalf("line %d is not JSON: %v\n%s", i+1, err, line)
				}
				if err := validate(v); err != nil {
					t.Errorf("line %d does not match the schema: %v\n%s", i+1, err, line)
				}
				typ, _ := v["type"].(string)
				seen[typ] = true
				if typ == "run_completed" || typ == "run_failed" {
					terminals++
				}
				if seq, _ := v["seq"].(float64); int(seq) != i+1 {
					t.Errorf("line %d has seq %v", i+1, v["seq"])
				}
				last = v
			}
			if terminals != 1 || (last["type"] != "run_completed" && last["type"] != "run_failed") {
				t.Errorf("want exactly one terminal event, last; got %d, last %v", terminals, last["type"])
			}
			if (tc.code == 0) != (last["type"] == "run_completed") {
				t.Errorf("exit %d disagrees with the final event %v", r.code, last["type"])
			}
		})
	}
	for _, typ := range []string{"run_started", "turn_started", "text_delta", "reasoning_delta", "output_discarded",
		"message_completed", "tool_call_started", "tool_call_completed", "tool_call_failed", "handoff_occurred",
		"context_compacted", "user_message_injected", "turn_ended", "run_completed", "run_failed"} {
		if !seen[typ] {
			t.Errorf("no %s event was produced (the schema test should cover it)", typ)
		}
	}
}

func TestExitCodes(t *testing.T) {
	tests := []struct {
		name   string
		script string
		config string
		args   []string
		code   int
		stderr string
	}{
		{"completed", helloScript, "", nil, 0, ""},
		{"provider error", "turns:\n  - error: {status: 400, message: model not found}\n", "", nil, 1, "model not found"},
		{"script runs out", "turns:\n  - tool_calls: [{name: todo_write, args: {todos: []}}]\n", "", nil, 1, "has 1 turns; the run asked for turn 2 — add a turn"},
		{"unknown flag", helloScript, "", []string{"--frobnicate"}, 2, "unknown flag: --frobnicate"},
		{"bad output format", helloScript, "", []string{"--output", "xml"}, 2, `unknown output format "xml"`},
		{"bad approve", helloScript, "", []string{"--approve", "some"}, 2, "--approve"},
		{"unknown model provider", "", "", []string{"-m", "acme:big"}, 2, `unknown model provider "acme"`},
		{"missing script", "", "", []string{"-m", "script:nope.yaml"}, 2, "nope.yaml"},
		{"unreadable schema", helloScript, "", []string{"--output-schema", "missing.json"}, 2, "cannot read --output-schema"},
		{"unknown preset", helloScript, "", []string{"--preset", "wizard"}, 2, `unknown preset "wizard"`},
		{"bad config", helloScript, "max_turn: 3\n", nil, 2, `.lovia/config.yaml:1:1: unknown key "max_turn"`},
		{"max turns", "turns:\n  - tool_calls: [{name: todo_write, args: {todos: []}}]\n  - tool_calls: [{name: todo_write, args: {todos: []}}]\n", "", []string{"--max-turns", "1"}, 3, "max turns reached"},
		{"budget", helloScript, "", []string{"--budget-tokens", "500"}, 3, "budget"},
		{"guardrail (hook)", helloScript, "hooks:\n  - event: user_prompt_submit\n    command: \"echo no deploys today >&2; exit 2\"\n", []string{"--trust"}, 4, "no deploys today"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			if tt.script != "" {
				e.write("script.yaml", tt.script)
			}
			if tt.config != "" {
				e.write(".lovia/config.yaml", tt.config)
			}
			for _, format := range []string{"text", "json"} {
				args := []string{"run", "-m", "script:script.yaml", "--output", format}
				args = append(args, tt.args...)
				r := e.run(nil, append(args, "do it")...)
				if r.code != tt.code {
					t.Fatalf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", format, r.code, tt.code, r.stdout, r.stderr)
				}
				if !strings.Contains(r.stderr, tt.stderr) {
					t.Errorf("%s: stderr %q lacks %q", format, r.stderr, tt.stderr)
				}
				if format == "json" && r.stdout != "" {
					var s struct {
						Status string `json:"status"`
						Error  *struct {
							Kind string `json:"kind"`
						} `json:"error"`
					}
					if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
						t.Fatalf("json output: %v\n%s", err, r.stdout)
					}
					if (s.Status == "completed") != (tt.code == 0) || (tt.code != 0 && s.Error == nil) {
						t.Errorf("json status %q error %v disagree with exit %d", s.Status, s.Error, tt.code)
					}
				}
			}
		})
	}
}

func TestStdin(t *testing.T) {
	big := bytes.Repeat([]byte("a"), 1<<20+1)
	tests := []struct {
		name   string
		stdin  []byte
		args   []string
		code   int
		prompt string // what the model got as the user's input
		stderr string
	}{
		{"prompt from stdin", []byte("fix the bug\n"), nil, 0, "fix the bug", ""},
		{"dash reads stdin", []byte("from stdin"), []string{"-"}, 0, "from stdin", ""},
		{"both: stdin fenced", []byte("diff --git a b\n+x\n"), []string{"review this"}, 0, "review this\n\n```\ndiff --git a b\n+x\n```", ""},
		{"fence longer than content's", []byte("```go\nx\n```"), []string{"look"}, 0, "look\n\n````\n```go\nx\n```\n````", ""},
		{"empty", []byte(""), nil, 2, "", "empty prompt"},
		{"blank", []byte("  \n\n"), nil, 2, "", "empty prompt"},
		{"binary", []byte{0x7f, 'E', 'L', 'F', 0, 0, 1}, nil, 2, "", "looks binary"},
		{"invalid utf-8", []byte{'a', 0xff, 0xfe}, []string{"-"}, 2, "", "looks binary"},
		{"over the cap", big, nil, 2, "", "larger than 1024 KiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.write("script.yaml", "turns:\n  - text: ok\n")
			args := append([]string{"run", "-m", "script:script.yaml", "--output", "stream-json"}, tt.args...)
			r := e.run(tt.stdin, args...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d: %s", r.code, tt.code, r.stderr)
			}
			if !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("stderr %q lacks %q", r.stderr, tt.stderr)
			}
			if tt.code != 0 {
				return
			}
			// The input reaches the session as the run's user entry.
			got := sessionInput(t, e)
			if got != tt.prompt {
				t.Errorf("prompt %q, want %q", got, tt.prompt)
			}
		})
	}
}

// sessionInput returns the first user input stored in the test's database.
func sessionInput(t *testing.T, e *env) string {
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
	snap, err := db.Checkpoints().Load(context.Background(), runs[0].ID)
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

func TestStructuredOutput(t *testing.T) {
	schema := `{"type":"object","properties":{"verdict":{"type":"string","enum":["pass","fail"]},"count":{"type":"integer"}},"required":["verdict","count"],"additionalProperties":false}`
	tests := []struct {
		name   string
		script string
		code   int
		want   string
	}{
		{"valid at once", "turns:\n  - text: '{\"verdict\": \"pass\", \"count\": 3}'\n", 0, `{"verdict":"pass","count":3}`},
		{"repaired once", "turns:\n  - text: 'It passed, 3 tests.'\n  - text: '{\"verdict\": \"pass\", \"count\": 3}'\n", 0, `{"verdict":"pass","count":3}`},
		{"still invalid after repair", "turns:\n  - text: 'nope'\n  - text: '{\"verdict\": \"maybe\"}'\n", 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.write("script.yaml", tt.script)
			e.write("schema.json", schema)
			r := e.run(nil, "run", "-m", "script:script.yaml", "--output-schema", "schema.json", "--output", "json", "check")
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d: %s\n%s", r.code, tt.code, r.stderr, r.stdout)
			}
			var s struct {
				Status           string          `json:"status"`
				StructuredOutput json.RawMessage `json:"structured_output"`
				Turns            int             `json:"turns"`
				Error            *struct{ Kind, Message string }
			}
			if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
				t.Fatalf("%v: %s", err, r.stdout)
			}
			if tt.code == 0 {
				var got, want any
				json.Unmarshal(s.StructuredOutput, &got)
				json.Unmarshal([]byte(tt.want), &want)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("structured_output %s, want %s", s.StructuredOutput, tt.want)
				}
			} else if s.Error == nil || s.Error.Kind != "output" {
				t.Errorf("error %+v, want kind output", s.Error)
			}
		})
	}
	t.Run("invalid schema file", func(t *testing.T) {
		e := newEnv(t)
		e.write("script.yaml", "turns:\n  - text: x\n")
		e.write("schema.json", `{"type": 12}`)
		r := e.run(nil, "run", "-m", "script:script.yaml", "--output-schema", "schema.json", "check")
		if r.code != 2 || !strings.Contains(r.stderr, "is not a valid JSON Schema") {
			t.Errorf("exit %d: %s", r.code, r.stderr)
		}
	})
}

func TestBadConfigFiles(t *testing.T) {
	tests := []struct {
		name, where, body, want string
	}{
		{"syntax error", "project", "model: script:s.yaml\ncompaction:\n  compact_at: [0.5\n", ".lovia/config.yaml:3:"},
		{"unknown key", "project", "modle: script:s.yaml\n", `.lovia/config.yaml:1:1: unknown key "modle"`},
		{"wrong type", "user", "max_turns: lots\n", ".config/lovia/config.yaml:1:"},
		{"bad preset file", "preset", "name: mine\ninstructionz: x\n", `.lovia/presets/mine.yaml:2:1: unknown key "instructionz"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.write("s.yaml", "turns:\n  - text: ok\n")
			switch tt.where {
			case "project":
				e.write(".lovia/config.yaml", tt.body)
			case "preset":
				e.write(".lovia/presets/mine.yaml", tt.body)
			case "user":
				p := filepath.Join(e.home, ".config", "lovia", "config.yaml")
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, []byte(tt.body), 0o644)
			}
			for _, args := range [][]string{{"run", "-m", "script:s.yaml", "x"}, {"config"}} {
				if tt.where == "preset" && args[0] == "config" {
					args = []string{"presets"}
				}
				r := e.run(nil, args...)
				if r.code != 2 || !strings.Contains(r.stderr, tt.want) || !strings.Contains(r.stderr, "hint:") {
					t.Errorf("%s: exit %d, stderr %q, want %q and a hint", args[0], r.code, r.stderr, tt.want)
				}
			}
		})
	}
}

func TestConfigAndPresetsCommands(t *testing.T) {
	e := newEnv(t)
	e.write(".lovia/config.yaml", "model: script:s.yaml\nmax_turns: 7\n")
	e.vars = append(e.vars, "LOVIA_PRESET=reviewer")
	r := e.run(nil, "config", "--policy", "trusted")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`model\s+script:s.yaml\s+project .*\.lovia/config.yaml:1`),
		regexp.MustCompile(`max_turns\s+7\s+project .*\.lovia/config.yaml:2`),
		regexp.MustCompile(`preset\s+reviewer\s+env LOVIA_PRESET`),
		regexp.MustCompile(`policy\s+trusted\s+flag --policy`),
	} {
		if !want.MatchString(r.stdout) {
			t.Errorf("config output lacks %s:\n%s", want, r.stdout)
		}
	}
	e.write(".lovia/presets/docs.yaml", "description: Writes documentation.\ninstructions: Write docs.\n")
	r = e.run(nil, "presets")
	for _, want := range []string{"coder", "reviewer *", "planner", "docs", "Writes documentation.", filepath.Join(".lovia", "presets", "docs.yaml"), "bundled"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("presets output lacks %q:\n%s", want, r.stdout)
		}
	}
	if r = e.run(nil, "version"); r.code != 0 || !strings.HasPrefix(r.stdout, "lovia ") {
		t.Errorf("version: %d %q", r.code, r.stdout)
	}
	if r = e.run(nil, "--help"); r.code != 0 || !strings.Contains(r.stdout, "lovia run") || !strings.Contains(r.stdout, "--model") {
		t.Errorf("help: %d %q", r.code, r.stdout)
	}
}

func TestRunIDReplay(t *testing.T) {
	e := newEnv(t)
	e.write("script.yaml", "turns:\n  - text: first answer\n")
	r1 := e.run(nil, "run", "-m", "script:script.yaml", "--run-id", "job-42", "--output", "json", "go")
	// The script has one turn: a second model call would fail, so a replay must not call it.
	r2 := e.run(nil, "run", "-m", "script:script.yaml", "--run-id", "job-42", "--output", "json", "go")
	if r1.code != 0 || r2.code != 0 {
		t.Fatalf("exit %d / %d: %s %s", r1.code, r2.code, r1.stderr, r2.stderr)
	}
	for _, r := range []result{r1, r2} {
		if !strings.Contains(r.stdout, `"output": "first answer"`) || !strings.Contains(r.stdout, `"run_id": "job-42"`) {
			t.Errorf("output %s", r.stdout)
		}
	}
}

func TestSignals(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
		kind string
	}{{syscall.SIGINT, 130, "cancelled"}, {syscall.SIGTERM, 143, "terminated"}} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			e := newEnv(t)
			e.write("script.yaml", "turns:\n  - text: too slow\n    delay: 30s\n")
			cmd := exec.Command(bin, "run", "-m", "script:script.yaml", "--output", "stream-json", "wait")
			cmd.Dir, cmd.Env = e.dir, e.vars
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Wait for the model call to be under way, then signal.
			dec := json.NewDecoder(out)
			var lines []map[string]any
			for {
				var v map[string]any
				if err := dec.Decode(&v); err != nil {
					t.Fatalf("reading events: %v (stderr %s)", err, stderr.String())
				}
				lines = append(lines, v)
				if v["type"] == "turn_started" {
					break
				}
			}
			start := time.Now()
			cmd.Process.Signal(tc.sig)
			for {
				var v map[string]any
				if err := dec.Decode(&v); err != nil {
					break
				}
				lines = append(lines, v)
			}
			err = cmd.Wait()
			code := cmd.ProcessState.ExitCode()
			if code != tc.code || time.Since(start) > 10*time.Second {
				t.Fatalf("exit %d after %v, want %d (err %v)", code, time.Since(start), tc.code, err)
			}
			last := lines[len(lines)-1]
			runID, _ := last["run_id"].(string)
			if last["type"] != "run_failed" || last["status"] != "interrupted" {
				t.Errorf("last event %v", last)
			}
			if ev, _ := last["error"].(map[string]any); ev["kind"] != tc.kind {
				t.Errorf("error %v, want kind %s", last["error"], tc.kind)
			}
			if !strings.Contains(stderr.String(), "interrupted — continue with: lovia resume "+runID) {
				t.Errorf("stderr %q lacks the resume command", stderr.String())
			}
			db, err := sqlite.Open(context.Background(), filepath.Join(e.home, "data", "lovia.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			info, err := db.Checkpoints().GetRun(context.Background(), runID)
			if err != nil || info.Status != store.StatusInterrupted {
				t.Errorf("checkpoint status %v err %v, want interrupted", info.Status, err)
			}
		})
	}
}

// TestDemo runs README's first command: the scripted demo fixes a real bug in a copy
// of testdata/demo/repo, running the real tools (read, edit, go test).
func TestDemo(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not on PATH")
	}
	e := newEnv(t)
	if err := os.CopyFS(e.dir, os.DirFS(filepath.Join(repoRoot, "testdata", "demo", "repo"))); err != nil {
		t.Fatal(err)
	}
	// Commands run with HOME set to the test's home: point its Go build cache at the
	// host's (a cold cache would compile the standard library). The sandbox lets
	// builds write the cache lovia's GOCACHE names (commands do not inherit it).
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Skip("no Go build cache")
	}
	if err := os.MkdirAll(filepath.Join(e.home, ".cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(strings.TrimSpace(string(out)), filepath.Join(e.home, ".cache", "go-build")); err != nil {
		t.Fatal(err)
	}
	e.vars = append(e.vars, "GOCACHE="+strings.TrimSpace(string(out)))
	// A unique comment forces a fresh compile, so the sandbox must let go write its cache.
	f, err := os.OpenFile(filepath.Join(e.dir, "wordcount.go"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "\n// copy %s\n", e.dir)
	f.Close()
	script := filepath.Join(repoRoot, "testdata", "demo", "script.yaml")
	r := e.run(nil, "run", "-v", "-C", e.dir, "--approve", "all", "-m", "script:"+script, "fix the failing test")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "strings.Fields") {
		t.Errorf("stdout %q", r.stdout)
	}
	// The first test run failed, the edit landed, the second run passed.
	for _, want := range []string{"✗ shell failed: --- FAIL: TestCount", "✓ edit_file", "✓ shell", "ok"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("progress lacks %q:\n%s", want, r.stderr)
		}
	}
	src, _ := os.ReadFile(filepath.Join(e.dir, "wordcount.go"))
	if !strings.Contains(string(src), "strings.Fields(s)") {
		t.Errorf("wordcount.go was not fixed:\n%s", src)
	}
	// Without --approve all the shell calls are denied and reported, and the run still
	// completes (the model is told).
	e2 := newEnv(t)
	e2.home, e2.vars = e.home, e.vars
	os.CopyFS(e2.dir, os.DirFS(filepath.Join(repoRoot, "testdata", "demo", "repo")))
	r = e2.run(nil, "run", "-v", "-m", "script:"+script, "fix the failing test")
	if r.code != 0 || !strings.Contains(r.stderr, "✗ denied: run the tests: go test ./...") {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	// Same again with --output json: the denials are listed (the edit already landed,
	// so this run's edit fails; the shell calls are denied again).
	r = e2.run(nil, "run", "--output", "json", "-m", "script:"+script, "fix the failing test")
	var sum struct {
		Denied []struct{ Name, Summary string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil || len(sum.Denied) != 2 || sum.Denied[0].Name != "shell" {
		t.Errorf("json denials %+v (%v):\n%s", sum.Denied, err, r.stdout)
	}
	// Plain text without -v still says what was denied, in one line.
	r = e2.run(nil, "run", "-m", "script:"+script, "fix the failing test")
	if !strings.Contains(r.stderr, "lovia: denied 2 action(s) that needed approval (rerun with --approve all to allow): run the tests: go test ./...") {
		t.Errorf("text denials: %q", r.stderr)
	}
}

func TestEval(t *testing.T) {
	e := newEnv(t)
	e.write("evals/hello.yaml", "turns:\n  - tool_calls: [{name: todo_write, args: {todos: []}}]\n  - text: Hello there\n")
	e.write("evals/bye.yaml", "turns:\n  - text: Goodbye\n")
	e.write("evals/cases.yaml", `
defaults:
  model: script:hello.yaml
cases:
  - name: greets
    input: say hello
    checks:
      - contains: Hello
      - tool_called: {name: todo_write}
      - no_error: true
  - name: says-bye
    input: say bye
    model: script:bye.yaml
    checks:
      - contains: Goodbye
`)
	r := e.run(nil, "eval", "evals/cases.yaml", "--save", "base.json")
	if r.code != 0 || !strings.Contains(r.stdout, "greets") || !strings.Contains(r.stdout, "says-bye") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "base.json")); err != nil {
		t.Fatal(err)
	}
	// The farewell script changes: that case now fails and regresses against the baseline.
	e.write("evals/bye.yaml", "turns:\n  - text: See you\n")
	r = e.run(nil, "eval", "evals/cases.yaml", "--baseline", "base.json", "--json")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var rep struct {
		Passed, Failed int
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.Passed != 1 || rep.Failed != 1 {
		t.Errorf("report %+v (%v):\n%s", rep, err, r.stdout)
	}
	if !strings.Contains(r.stderr, "says-bye") {
		t.Errorf("the diff does not name the regressed case:\n%s", r.stderr)
	}
	if r = e.run(nil, "eval", "evals/missing.yaml"); r.code != 2 {
		t.Errorf("missing file: exit %d", r.code)
	}
}

// TestCwdFlag: -C moves the workspace (tools, config, instructions) but script: paths
// stay relative to where the command was typed.
func TestCwdFlag(t *testing.T) {
	e := newEnv(t)
	e.write("script.yaml", "turns:\n  - tool_calls: [{name: read_file, args: {path: note.txt}}]\n  - text: read it\n")
	e.write("sub/note.txt", "inside sub\n")
	r := e.run(nil, "run", "-C", "sub", "-m", "script:script.yaml", "--output", "stream-json", "read the note")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "inside sub") {
		t.Errorf("the tool did not read sub/note.txt:\n%s", r.stdout)
	}
	if r = e.run(nil, "run", "-C", "missing", "-m", "script:script.yaml", "x"); r.code != 2 || !strings.Contains(r.stderr, "does not exist") {
		t.Errorf("missing -C dir: exit %d %s", r.code, r.stderr)
	}
}
