package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// The provider key every test here plants in lovia's environment: it must reach no
// MCP server, no hook, no tool result and no byte of the database.
const plantedKey = "sk-e2e-planted-provider-key-0123456789"

var (
	testServerOnce sync.Once
	testServerBin  string
	testServerErr  error
)

// mcpTestServer builds the in-repo MCP test server once.
func mcpTestServer(t *testing.T) string {
	t.Helper()
	testServerOnce.Do(func() {
		testServerBin = filepath.Join(filepath.Dir(bin), "mcp-testserver")
		build := exec.Command("go", "build", "-o", testServerBin, "./internal/plugin/mcp/testserver")
		build.Dir = repoRoot
		out, err := build.CombinedOutput()
		if err != nil {
			testServerErr = err
			testServerBin = string(out)
		}
	})
	if testServerErr != nil {
		t.Fatalf("building the MCP test server: %v\n%s", testServerErr, testServerBin)
	}
	return testServerBin
}

// userConfig writes ~/.config/lovia/config.yaml: the user's own config, which needs no
// folder trust (a repository's MCP servers and hooks do).
func (e *env) userConfig(body string) {
	e.t.Helper()
	p := filepath.Join(e.home, ".config", "lovia", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// dbBytes is the database with its WAL and shared memory, as left on disk.
func (e *env) dbBytes() string {
	e.t.Helper()
	var b strings.Builder
	for _, suffix := range []string{"", "-wal", "-shm"} {
		data, err := os.ReadFile(filepath.Join(e.home, "data", "lovia.db") + suffix)
		if err == nil {
			b.Write(data)
		} else if suffix == "" {
			e.t.Fatalf("no database: %v", err)
		}
	}
	return b.String()
}

func (e *env) assertKeyNowhere() {
	e.t.Helper()
	if strings.Contains(e.dbBytes(), plantedKey) {
		e.t.Fatal("the provider key is in the database")
	}
	log, _ := os.ReadFile(filepath.Join(e.home, "data", "logs", "lovia.log"))
	if strings.Contains(string(log), plantedKey) {
		e.t.Fatal("the provider key is in the log")
	}
}

type jsonSummary struct {
	Status string `json:"status"`
	Denied []struct {
		Name    string `json:"name"`
		Summary string `json:"summary"`
	} `json:"denied"`
}

func TestMCPWriteOutsideRootFollowsThePolicy(t *testing.T) {
	type server struct {
		name, tool string
		config     func(outside string) string
	}
	ts := mcpTestServer(t)
	servers := []server{{
		name: "ts", tool: "ts__write_file",
		config: func(string) string {
			return "mcp:\n  servers:\n    ts:\n      command: " + ts + "\n"
		},
	}}
	if p, err := exec.LookPath("mcp-server-filesystem"); err == nil {
		servers = append(servers, server{name: "fs", tool: "fs__write_file", config: func(outside string) string {
			// roots: false, or the server would serve lovia's root instead of outside.
			return "mcp:\n  servers:\n    fs:\n      command: " + p + "\n      args: [" + outside + "]\n      startup_timeout: 60s\n      roots: false\n"
		}})
	} else {
		t.Log("mcp-server-filesystem not installed (npm install -g @modelcontextprotocol/server-filesystem); only the in-repo server is used")
	}
	cases := []struct {
		name    string
		args    []string
		rules   string
		written bool
		denied  bool // reported in "denied" (an ask nobody could answer)
	}{
		{"readonly --approve all", []string{"--policy", "readonly", "--approve", "all"}, "", false, false},
		{"readonly --approve none", []string{"--policy", "readonly"}, "", false, false},
		{"coding --approve none", []string{"--policy", "coding"}, "", false, true},
		{"coding --approve all", []string{"--policy", "coding", "--approve", "all"}, "", true, false},
		{"coding with an mcp_rules allow", []string{"--policy", "coding"}, "mcp_rules:\n  - {tool: \"SERVER__write_*\", decision: allow}\n", true, false},
		{"trusted with a server deny", []string{"--policy", "trusted", "--approve", "all"}, "mcp_rules:\n  - {server: SERVER, decision: deny}\n", false, false},
	}
	for _, srv := range servers {
		for _, tc := range cases {
			t.Run(srv.name+"/"+tc.name, func(t *testing.T) {
				e := newEnv(t)
				e.vars = append(e.vars, "OPENAI_API_KEY="+plantedKey)
				outside, err := filepath.EvalSymlinks(t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				target := filepath.Join(outside, "planted.txt")
				e.userConfig(srv.config(outside) + strings.ReplaceAll(tc.rules, "SERVER", srv.name))
				e.write("script.yaml", "turns:\n  - tool_calls: [{name: "+srv.tool+", args: {path: "+target+", content: planted}}]\n  - text: done\n")
				r := e.run(nil, append([]string{"run", "-m", "script:script.yaml", "--output", "json"}, append(tc.args, "write it")...)...)
				if r.code != 0 {
					t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
				}
				_, statErr := os.Stat(target)
				if written := statErr == nil; written != tc.written {
					t.Fatalf("written = %v, want %v\n%s", written, tc.written, r.stdout)
				}
				var s jsonSummary
				if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
					t.Fatalf("%v\n%s", err, r.stdout)
				}
				reported := len(s.Denied) == 1 && s.Denied[0].Name == srv.tool && strings.Contains(s.Denied[0].Summary, "MCP server "+srv.name)
				if reported != tc.denied {
					t.Fatalf("denied = %+v, want reported=%v", s.Denied, tc.denied)
				}
				e.assertKeyNowhere()
			})
		}
	}
}

func TestMCPServerSeesNoProviderKey(t *testing.T) {
	type server struct{ name, tool, config string }
	servers := []server{{"ts", "ts__get_env", "mcp:\n  servers:\n    ts:\n      command: " + mcpTestServer(t) + "\n"}}
	if p, err := exec.LookPath("mcp-server-everything"); err == nil {
		servers = append(servers, server{"everything", "everything__get-env", "mcp:\n  servers:\n    everything:\n      command: " + p + "\n      startup_timeout: 60s\n"})
	} else {
		t.Log("mcp-server-everything not installed (npm install -g @modelcontextprotocol/server-everything); only the in-repo server is used")
	}
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			e := newEnv(t)
			e.vars = append(e.vars, "OPENAI_API_KEY="+plantedKey, "ANTHROPIC_API_KEY="+plantedKey+"-ant")
			e.userConfig(srv.config)
			e.write("script.yaml", "turns:\n  - tool_calls: [{name: "+srv.tool+", args: {}}]\n  - text: done\n")
			// get-env says it only reads (readOnlyHint): that grants nothing.
			r := e.run(nil, "run", "-m", "script:script.yaml", "--output", "json", "show env")
			var s jsonSummary
			if err := json.Unmarshal([]byte(r.stdout), &s); err != nil || len(s.Denied) != 1 {
				t.Fatalf("readOnlyHint tool was not asked for: %v\n%s", err, r.stdout)
			}
			r = e.run(nil, "run", "-m", "script:script.yaml", "--output", "stream-json", "--approve", "all", "show env")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			var out string
			for _, line := range strings.Split(r.stdout, "\n") {
				var ev struct {
					Type, Name, Output string
				}
				if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "tool_call_completed" && ev.Name == srv.tool {
					out = ev.Output
				}
			}
			if !strings.Contains(out, "PATH") {
				t.Fatalf("get-env printed no environment:\n%s", r.stdout)
			}
			if strings.Contains(out, plantedKey) || strings.Contains(out, "OPENAI_API_KEY") || strings.Contains(out, "ANTHROPIC_API_KEY") {
				t.Fatalf("the server sees a provider key:\n%s", out)
			}
			e.assertKeyNowhere()
		})
	}
}

func TestHookSeesNoProviderKey(t *testing.T) {
	e := newEnv(t)
	e.vars = append(e.vars, "OPENAI_API_KEY="+plantedKey)
	// The hook's env reaches the model (and so the database) as post_tool_use feedback.
	e.userConfig("hooks:\n  - event: post_tool_use\n    command: \"env >&2; exit 2\"\n")
	e.write("script.yaml", "turns:\n  - tool_calls: [{name: todo_write, args: {todos: []}}]\n  - text: done\n")
	r := e.run(nil, "run", "-m", "script:script.yaml", "go")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	db := e.dbBytes()
	if !strings.Contains(db, "LOVIA_HOOK_EVENT=post_tool_use") {
		t.Fatal("the hook's environment did not reach the transcript (the test proves nothing)")
	}
	if strings.Contains(db, "OPENAI_API_KEY") {
		t.Fatal("the hook saw OPENAI_API_KEY")
	}
	e.assertKeyNowhere()
}

func TestToolResultsAreScrubbed(t *testing.T) {
	e := newEnv(t)
	e.vars = append(e.vars, "OPENAI_API_KEY="+plantedKey, "MY_DEPLOY_PASS=deploy-pass-value-999")
	// The user hands commands the whole environment on purpose; the key still never
	// reaches the model or the database. secrets: names a variable no pattern catches.
	e.userConfig("workspace:\n  inherit_env: true\nsecrets: [MY_DEPLOY_PASS]\n")
	// Commands never get the provider key in their environment (the sandbox strips it
	// even with inherit_env), so the key reaches the command the way a hostile
	// repository would hand it over: in a file.
	e.write("key.txt", plantedKey)
	e.write("script.yaml", "turns:\n  - tool_calls: [{name: shell, args: {command: \"echo key=$(cat key.txt) env=$OPENAI_API_KEY deploy=$MY_DEPLOY_PASS\"}}]\n  - text: done\n")
	r := e.run(nil, "run", "-m", "script:script.yaml", "--output", "stream-json", "--approve", "all", "go")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stdout, plantedKey) || strings.Contains(r.stdout, "deploy-pass-value") || !strings.Contains(r.stdout, "key=[redacted] env= deploy=[redacted]") {
		t.Fatalf("stream-json:\n%s", r.stdout)
	}
	if !strings.Contains(e.dbBytes(), "key=[redacted]") {
		t.Fatal("the scrubbed result is not in the database")
	}
	e.assertKeyNowhere()
}

// TestMCPListAndLazyStart: `lovia mcp list` (an explicit request) starts the server,
// shows each tool's decision and remembers the tools; a run then starts the server
// only when the model calls one of them.
func TestMCPListAndLazyStart(t *testing.T) {
	e := newEnv(t)
	marks := filepath.Join(e.home, "starts")
	e.userConfig("mcp:\n  servers:\n    ts:\n      command: " + mcpTestServer(t) + "\n      args: [-mark, " + marks + "]\n" +
		"mcp_rules:\n  - {tool: ts__echo, decision: allow}\n  - {tool: \"ts__write_*\", decision: deny}\n")
	starts := func() int {
		data, _ := os.ReadFile(marks)
		return strings.Count(string(data), "started")
	}
	r := e.run(nil, "mcp", "list")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, re := range []string{`ts__echo\s+allow`, `ts__write_file\s+deny`, `ts__get_env\s+ask`} {
		if !regexp.MustCompile(re).MatchString(r.stdout) {
			t.Errorf("mcp list lacks %s:\n%s", re, r.stdout)
		}
	}
	if n := starts(); n != 1 {
		t.Fatalf("mcp list started the server %d times", n)
	}
	e.write("noop.yaml", "turns:\n  - text: nothing to do\n")
	if r := e.run(nil, "run", "-m", "script:noop.yaml", "hi"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if n := starts(); n != 1 {
		t.Fatal("a run that called no MCP tool started the server")
	}
	e.write("echo.yaml", "turns:\n  - tool_calls: [{name: ts__echo, args: {text: lazy}}]\n  - text: done\n")
	r = e.run(nil, "run", "-m", "script:echo.yaml", "--output", "stream-json", "hi")
	if r.code != 0 || !strings.Contains(r.stdout, "echo: lazy") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if n := starts(); n != 2 {
		t.Fatalf("the call did not start the server once (%d starts)", n)
	}
}
