package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	jsv "github.com/santhosh-tekuri/jsonschema/v6"
)

// loadSchema compiles docs/stream-json.schema.json.
func loadSchema(t *testing.T) func(any) error {
	t.Helper()
	path := filepath.Join(repoRoot, "docs", "stream-json.schema.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsv.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	c := jsv.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("file:///stream-json.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("file:///stream-json.schema.json")
	if err != nil {
		t.Fatalf("compiling %s: %v", path, err)
	}
	return func(v any) error {
		// Round-trip through the validator's own decoder so numbers are json.Number.
		b, _ := json.Marshal(v)
		inst, err := jsv.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return err
		}
		return sch.Validate(inst)
	}
}

// TestDocExamplesMatchSchema checks that docs/stream-json.md shows a valid example of
// every event type.
func TestDocExamplesMatchSchema(t *testing.T) {
	validate := loadSchema(t)
	f, err := os.Open(filepath.Join(repoRoot, "docs", "stream-json.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]bool{}
	inBlock := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			inBlock = strings.TrimPrefix(line, "```") == "json"
			continue
		}
		if !inBlock || strings.TrimSpace(line) == "" {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Errorf("stream-json.md:%d: not one JSON object per line: %v", n, err)
			continue
		}
		if err := validate(v); err != nil {
			t.Errorf("stream-json.md:%d: %v", n, err)
		}
		seen[v["type"].(string)] = true
	}
	for _, typ := range []string{"run_started", "turn_started", "text_delta", "reasoning_delta", "output_discarded",
		"message_completed", "user_message_injected", "tool_call_started", "approval_required", "tool_call_progress", "tool_call_completed",
		"tool_call_failed", "handoff_occurred", "context_compacted", "turn_ended", "run_completed", "run_failed"} {
		if !seen[typ] {
			t.Errorf("stream-json.md has no example of %s", typ)
		}
	}
}
