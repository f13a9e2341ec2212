package agent

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/lovia-dev/lovia/internal/tool"
)

func TestCloneSharesNoMutableState(t *testing.T) {
	noop := tool.New("noop", "does nothing", func(context.Context, *tool.RunContext, struct{}) (string, error) { return "", nil })
	a := &Agent{Name: "a", Model: "x:y", Tools: []tool.Tool{noop}, OutputSchema: json.RawMessage(`{"type":"object"}`)}
	c := a.Clone()
	c.Tools = append(c.Tools, noop)
	c.Tools[0] = nil
	c.OutputSchema[2] = 'X'
	c.Name = "c"
	if a.Name != "a" || len(a.Tools) != 1 || a.Tools[0] == nil || string(a.OutputSchema) != `{"type":"object"}` {
		t.Fatalf("clone mutated the original: %+v", a)
	}
	w := a.With(func(x *Agent) { x.Model = "other:m" })
	if a.Model != "x:y" || w.Model != "other:m" {
		t.Fatal("With changed the original")
	}
}

func TestMaxTurnsDefault(t *testing.T) {
	for _, c := range []struct{ set, want int }{{0, DefaultMaxTurns}, {-1, DefaultMaxTurns}, {7, 7}} {
		a := &Agent{Limits: Limits{MaxTurns: c.set}}
		if got := a.MaxTurns(); got != c.want {
			t.Errorf("MaxTurns(%d) = %d, want %d", c.set, got, c.want)
		}
	}
}

func TestFindWalksHandoffGraphWithCycles(t *testing.T) {
	a := &Agent{Name: "a"}
	b := &Agent{Name: "b"}
	c := &Agent{Name: "c"}
	a.Handoffs = []*Agent{b}
	b.Handoffs = []*Agent{a, c, nil}
	c.Handoffs = []*Agent{a}
	for _, n := range []string{"a", "b", "c"} {
		if got := a.Find(n); got == nil || got.Name != n {
			t.Fatalf("Find(%q) = %v", n, got)
		}
	}
	if a.Find("zz") != nil {
		t.Fatal("found an agent that is not in the graph")
	}
	if c.Find("b") != b {
		t.Fatal("Find from another entry point")
	}
}
