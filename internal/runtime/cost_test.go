package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/usage"
)

// TestCostBudget: every call is priced at the model's price; the run stops once its
// cost reaches MaxBudgetUSD (exit 3, finish reason budget), and the call asked for
// after that is not run.
func TestCostBudget(t *testing.T) {
	loopy := fnTool("again", func(context.Context, *tool.RunContext) (string, error) { return "more", nil })
	p := newFake()
	p.next = func(n int, _ provider.Request) reply {
		r := calls(mkcall("", "again", `{}`))
		r.usage.InputTokens, r.usage.OutputTokens = 1000, 100
		return r
	}
	o := opts1(p)
	// $1 per 1000 input tokens, $2 per 100 output tokens: $3 a turn.
	o.Prices = usage.NewPrices(map[string]usage.Price{"fake:m": {Input: 1000, Output: 20000}})
	o.MaxBudgetUSD = 5
	res, err, evs := collect(t, Start(context.Background(), newAgent("a", loopy), Text("x"), o))
	if errs.KindOf(err) != errs.KindBudget || errs.ExitCode(err) != 3 || !strings.Contains(err.Error(), "cost budget exhausted: $6.00 of $5.00") {
		t.Fatalf("err %v", err)
	}
	if c, ok := res.Usage.Cost(); res.Turns != 2 || !ok || c != 6 || res.FinishReason != "budget" {
		t.Fatalf("result %+v", res)
	}
	last := res.Entries[len(res.Entries)-1]
	if !last.IsError || !strings.Contains(last.Text, "cost budget exhausted") {
		t.Fatalf("last entry %+v", last)
	}
	var perCall []float64
	for _, ev := range evs {
		if ev.Type == event.MessageCompleted {
			c, _ := ev.Usage.Cost()
			perCall = append(perCall, c)
		}
	}
	if len(perCall) != 2 || perCall[0] != 3 || perCall[1] != 3 {
		t.Errorf("per-call costs %v, want [3 3]", perCall)
	}
}

// TestCostBudgetNeedsAPrice: a budget on a model without a price refuses to start
// (no model call), naming pricing:.
func TestCostBudgetNeedsAPrice(t *testing.T) {
	p := newFake(reply{text: "hi"})
	o := opts1(p)
	o.MaxBudgetUSD = 1
	_, err, _ := collect(t, Start(context.Background(), newAgent("a"), Text("x"), o))
	if errs.KindOf(err) != errs.KindConfig || !strings.Contains(errs.HintOf(err), "pricing:") || !strings.Contains(err.Error(), "fake:m") {
		t.Fatalf("err %v (hint %q)", err, errs.HintOf(err))
	}
	if n := len(p.requests()); n != 0 {
		t.Errorf("%d model calls with an unmeasurable budget", n)
	}

	// Without a budget the run goes on, its cost unknown.
	p = newFake(reply{text: "hi"})
	res, err, _ := collect(t, Start(context.Background(), newAgent("a"), Text("x"), opts1(p)))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Usage.Cost(); ok && res.Usage.Total() > 0 {
		t.Errorf("an unpriced model's run has a cost: %+v", res.Usage)
	}
}
