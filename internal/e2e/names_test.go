package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestControlCharacterNames: list_files and grep_files show names with control
// characters or bytes that are not UTF-8 quoted (no raw escape reaches the model or
// the terminal), and the model reads such a file back by the name it was shown.
func TestControlCharacterNames(t *testing.T) {
	e := newEnv(t)
	evil := "title\x1b]0;pwned\x07.txt"
	latin := "caf\xe9.txt"
	for name, body := range map[string]string{evil: "evil-body\n", latin: "latin-body\n"} {
		if err := os.WriteFile(filepath.Join(e.dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := func(v map[string]string) string { b, _ := json.Marshal(v); return string(b) }
	script := "turns:\n  - tool_calls:\n" +
		"      - {name: list_files, args: " + args(map[string]string{"path": "."}) + "}\n" +
		"      - {name: grep_files, args: " + args(map[string]string{"pattern": "-body"}) + "}\n" +
		"      - {name: read_file, args: " + args(map[string]string{"path": strconv.Quote(evil)}) + "}\n" +
		"      - {name: read_file, args: " + args(map[string]string{"path": strconv.Quote(latin)}) + "}\n" +
		"  - text: done\n"
	e.write("s.yaml", script)
	r := e.run(nil, "run", "-m", "script:s.yaml", "--output", "stream-json", "go")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	// Results arrive in completion order: sort them by tool.
	byTool := map[string][]string{}
	for _, line := range strings.Split(r.stdout, "\n") {
		var ev map[string]any
		if json.Unmarshal([]byte(line), &ev) != nil || ev["type"] != "tool_call_completed" {
			continue
		}
		name, _ := ev["name"].(string)
		out, _ := ev["output"].(string)
		byTool[name] = append(byTool[name], out)
	}
	listings := append(byTool["list_files"], byTool["grep_files"]...)
	if len(listings) != 2 || len(byTool["read_file"]) != 2 {
		t.Fatalf("tool results %v\n%s", byTool, r.stdout)
	}
	for _, out := range listings {
		if strings.ContainsAny(out, "\x1b\x07") || !strings.Contains(out, strconv.Quote(evil)) || !strings.Contains(out, strconv.Quote(latin)) {
			t.Errorf("listing does not quote the names: %q", out)
		}
	}
	reads := strings.Join(byTool["read_file"], "\n")
	if !strings.Contains(reads, "evil-body") || !strings.Contains(reads, "latin-body") {
		t.Errorf("reading back by the listed name failed: %q", reads)
	}
}

// TestMCPCallTimeout: an MCP tool that never answers is cut off at the server's
// call_timeout; the model gets an error result naming the setting and the run goes on.
func TestMCPCallTimeout(t *testing.T) {
	e := newEnv(t)
	e.userConfig("mcp:\n  servers:\n    ts:\n      command: " + mcpTestServer(t) + "\n      call_timeout: 500ms\n")
	e.write("script.yaml", "turns:\n  - tool_calls: [{name: ts__slow, args: {ms: 600000}}]\n  - text: done\n")
	r := e.run(nil, "run", "-m", "script:script.yaml", "--output", "stream-json", "--approve", "all", "go")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var out string
	for _, line := range strings.Split(r.stdout, "\n") {
		var ev struct{ Type, Name, Output string }
		if json.Unmarshal([]byte(line), &ev) == nil && (ev.Type == "tool_call_completed" || ev.Type == "tool_call_failed") && ev.Name == "ts__slow" {
			out = ev.Output
		}
	}
	if !strings.Contains(out, "did not answer") || !strings.Contains(out, "call_timeout") {
		t.Fatalf("slow call result %q\n%s", out, r.stdout)
	}
}
