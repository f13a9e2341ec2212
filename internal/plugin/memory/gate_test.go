package memory

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/tool"
)

// policyGate is a stand-in for the workspace's decision: project writes allowed,
// global ones ask, everything denied when readonly.
func policyGate(readonly bool, seen *[]Write) WriteGate {
	return func(_ context.Context, w Write) (*event.Approval, error) {
		*seen = append(*seen, w)
		switch {
		case readonly:
			return nil, errors.New("the readonly policy changes no memory")
		case w.Scope == GlobalScope:
			return &event.Approval{Kind: "path", Summary: w.What, Path: w.Path}, nil
		}
		return nil, nil
	}
}

func gatedTools(t *testing.T, pl plugin.Plugin) map[string]tool.Tool {
	t.Helper()
	c, err := pl.Setup(context.Background(), &tool.RunContext{RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]tool.Tool{}
	for _, tl := range c.Tools {
		out[tl.Spec().Name] = tl
	}
	return out
}

func approve(t *testing.T, tl tool.Tool, args string) (*event.Approval, error) {
	t.Helper()
	ap := tl.Spec().Approval
	if ap == nil {
		t.Fatalf("%s has no approval predicate", tl.Spec().Name)
	}
	return ap(context.Background(), &tool.RunContext{RunID: "r1"}, json.RawMessage(args))
}

func invoke(t *testing.T, tl tool.Tool, args string) tool.Result {
	t.Helper()
	res, err := tl.Invoke(context.Background(), &tool.RunContext{RunID: "r1"}, json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestGateDecidesEveryWrite(t *testing.T) {
	p, cfg := newTest(t, nil)
	var seen []Write
	tools := gatedTools(t, p.WithGate(policyGate(false, &seen)))

	// A project pin needs nobody; a global one asks, naming the file and the text.
	if a, err := approve(t, tools["remember"], `{"content":"use tabs","pin":true}`); a != nil || err != nil {
		t.Fatalf("project pin: %+v, %v", a, err)
	}
	a, err := approve(t, tools["remember"], `{"content":"curl x | sh","scope":"global","pin":true}`)
	if err != nil || a == nil || a.Path != cfg.GlobalNotes || !strings.Contains(a.Summary, "curl x | sh") {
		t.Fatalf("global pin: %+v, %v", a, err)
	}
	// Unpinned global memories go to the archive every repository searches: ask too.
	if a, _ := approve(t, tools["remember"], `{"content":"fact","scope":"global"}`); a == nil {
		t.Fatal("an unpinned global memory did not ask")
	}
	// search_memory reads only: no gate.
	if tools["search_memory"].Spec().Approval != nil {
		t.Fatal("search_memory is gated")
	}
}

func TestReadonlyGateRefusesAtInvokeToo(t *testing.T) {
	p, cfg := newTest(t, nil)
	var seen []Write
	tools := gatedTools(t, p.WithGate(policyGate(true, &seen)))
	if _, err := approve(t, tools["remember"], `{"content":"x","pin":true}`); err == nil {
		t.Fatal("readonly approved a pin")
	}
	// Even when the predicate is skipped (a tool allowed for the session), the write
	// is checked again and refused.
	res := invoke(t, tools["remember"], `{"content":"x","pin":true}`)
	if !res.IsError || !strings.Contains(res.Text, "readonly") {
		t.Fatalf("invoke under readonly = %+v", res)
	}
	if _, err := os.Stat(cfg.ProjectNotes); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the project notes were written: %v", err)
	}
	os.MkdirAll(filepath.Dir(cfg.ProjectNotes), 0o755)
	os.WriteFile(cfg.ProjectNotes, []byte("- keep me\n"), 0o644)
	if res := invoke(t, tools["forget"], `{"note":"keep me"}`); !res.IsError {
		t.Fatalf("forget under readonly = %+v", res)
	}
	if b, _ := os.ReadFile(cfg.ProjectNotes); string(b) != "- keep me\n" {
		t.Fatalf("notes = %q", b)
	}
}

// TestForgetCannotReachAnUnapprovedScope: a note that appears in the global notes
// between the approval (which saw it only in the project's) and the write is not
// removed from them.
func TestForgetCannotReachAnUnapprovedScope(t *testing.T) {
	p, cfg := newTest(t, nil)
	var seen []Write
	tools := gatedTools(t, p.WithGate(policyGate(false, &seen)))
	for _, f := range []string{cfg.ProjectNotes, cfg.GlobalNotes} {
		os.MkdirAll(filepath.Dir(f), 0o755)
	}
	os.WriteFile(cfg.ProjectNotes, []byte("- stale\n"), 0o644)
	args := `{"note":"stale"}`
	if a, err := approve(t, tools["forget"], args); a != nil || err != nil {
		t.Fatalf("forget of a project note: %+v, %v", a, err)
	}
	os.WriteFile(cfg.GlobalNotes, []byte("- stale\n"), 0o644)
	if res := invoke(t, tools["forget"], args); !res.IsError || !strings.Contains(res.Text, "changed since") {
		t.Fatalf("forget reached the global notes: %+v", res)
	}
	if b, _ := os.ReadFile(cfg.GlobalNotes); string(b) != "- stale\n" {
		t.Fatalf("global notes = %q", b)
	}
	// Asked again, it covers both and goes through once approved.
	if a, err := approve(t, tools["forget"], args); a == nil || err != nil {
		t.Fatalf("forget of a global note: %+v, %v", a, err)
	}
	if res := invoke(t, tools["forget"], args); res.IsError {
		t.Fatalf("approved forget = %+v", res)
	}
	if b, _ := os.ReadFile(cfg.GlobalNotes); strings.Contains(string(b), "stale") {
		t.Fatalf("global notes = %q", b)
	}
}
