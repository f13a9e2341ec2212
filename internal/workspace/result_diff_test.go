package workspace

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/tool"
)

// TestToolResultCarriesDiff: write_file and edit_file return the diff they computed
// in tool.Result.Diff (front ends show it; none rebuilds it from the arguments).
func TestToolResultCarriesDiff(t *testing.T) {
	e := newTestEnv(t)
	w := newWS(t, e, PresetTrusted, SandboxOff)
	byName := map[string]tool.Tool{}
	for _, tl := range w.Tools() {
		byName[tl.Spec().Name] = tl
	}
	call := func(name, args string) tool.Result {
		t.Helper()
		res, err := byName[name].Invoke(context.Background(), &tool.RunContext{}, json.RawMessage(args))
		if err != nil || res.IsError {
			t.Fatalf("%s: %+v %v", name, res, err)
		}
		return res
	}
	res := call("write_file", `{"path":"n.txt","content":"one\ntwo\n"}`)
	if !strings.HasPrefix(res.Diff, "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+one\n+two") {
		t.Errorf("created: diff %q", res.Diff)
	}
	res = call("write_file", `{"path":"n.txt","content":"one\nTWO\n"}`)
	if !strings.Contains(res.Diff, "-two\n+TWO") || strings.Contains(res.Text, "@@") {
		t.Errorf("overwrote: diff %q, text %q", res.Diff, res.Text)
	}
	res = call("edit_file", `{"path":"n.txt","old_string":"one","new_string":"ONE"}`)
	if !strings.Contains(res.Diff, "-one\n+ONE") || !strings.HasSuffix(res.Text, res.Diff) {
		t.Errorf("edited: diff %q, text %q", res.Diff, res.Text)
	}
	bad, _ := byName["edit_file"].Invoke(context.Background(), &tool.RunContext{}, json.RawMessage(`{"path":"n.txt","old_string":"absent","new_string":"x"}`))
	if !bad.IsError || bad.Diff != "" {
		t.Errorf("failed edit: %+v", bad)
	}
}

// TestToolSchemasCompile: the workspace tools compile their argument schemas on the
// first call (tool.NewResult); each one must compile, so that a bad schema is found
// here and not by a model's first call.
func TestToolSchemasCompile(t *testing.T) {
	e := newTestEnv(t)
	w := newWS(t, e, PresetTrusted, SandboxOff)
	for _, tl := range w.Tools() {
		s := tl.Spec()
		if s.Validate == nil {
			continue
		}
		if err := s.Validate(json.RawMessage(`{}`)); err != nil && strings.Contains(err.Error(), "schema: ") && !strings.Contains(err.Error(), "do not match") {
			t.Errorf("%s: %v", s.Name, err)
		}
	}
}
