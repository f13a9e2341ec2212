package e2e

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/provider/providertest"
	"github.com/lovia-dev/lovia/internal/usage"
)

// costCase is one wire format with a model of the built-in pricing table (a dated
// snapshot, priced like its base id) and two turns whose usage the test prices by
// hand from the provider's list prices.
type costCase struct {
	kind, model string
	serve       func(testing.TB, ...providertest.Turn) *providertest.Server
	// turnCost are the hand-computed costs (USD) of the two turns below.
	turnCost [2]float64
}

var costTurns = [2]usage.Usage{
	{InputTokens: 20_000, CachedInputTokens: 8_000, OutputTokens: 1_000},
	{InputTokens: 21_000, CachedInputTokens: 20_000, OutputTokens: 300},
}

var costCases = []costCase{
	// gpt-4.1-mini: input 0.40, cached 0.10, output 1.60 per million.
	// turn 1: 12000*0.4 + 8000*0.1 + 1000*1.6 = 4800+800+1600 = 7200 µ$ → 0.0072
	// turn 2: 1000*0.4 + 20000*0.1 + 300*1.6 = 400+2000+480 = 2880 µ$ → 0.00288
	{"openai", "gpt-4.1-mini-2025-04-14", providertest.NewOpenAIServer, [2]float64{0.0072, 0.00288}},
	// gpt-5: input 1.25, cached 0.125, output 10.
	// turn 1: 12000*1.25 + 8000*0.125 + 1000*10 = 15000+1000+10000 → 0.026
	// turn 2: 1000*1.25 + 20000*0.125 + 300*10 = 1250+2500+3000 → 0.00675
	{"openai-responses", "gpt-5", providertest.NewResponsesServer, [2]float64{0.026, 0.00675}},
	// claude-sonnet-4-5: input 3, cache read 0.30, cache write 3.75, output 15;
	// turn 1 writes 2000 tokens to the cache (part of its 20000 input tokens).
	// turn 1: 10000*3 + 8000*0.3 + 2000*3.75 + 1000*15 = 30000+2400+7500+15000 → 0.0549
	// turn 2: 1000*3 + 20000*0.3 + 300*15 = 3000+6000+4500 → 0.0135
	{"anthropic", "claude-sonnet-4-5-20250929", providertest.NewAnthropicServer, [2]float64{0.0549, 0.0135}},
}

func (c costCase) turns() []providertest.Turn {
	u1, u2 := costTurns[0], costTurns[1]
	if c.kind == "anthropic" {
		u1.CacheWriteTokens = 2_000
	}
	return []providertest.Turn{
		{Calls: []providertest.Call{{ID: "call_1", Name: "read_file", Args: `{"path":"notes.txt"}`}}, Usage: u1},
		{Text: "The notes say hello.", Usage: u2},
	}
}

// near compares dollar figures that went through JSON.
func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func costOf(t *testing.T, v any) (float64, bool) {
	t.Helper()
	switch x := v.(type) {
	case float64:
		return x, true
	case nil:
		return 0, false
	}
	t.Fatalf("cost_usd is %T %v, want a number or null", v, v)
	return 0, false
}

func usageCost(t *testing.T, ev map[string]any) (float64, bool) {
	t.Helper()
	u, _ := ev["usage"].(map[string]any)
	if u == nil {
		t.Fatalf("event without usage: %v", ev)
	}
	return costOf(t, u["cost_usd"])
}

func writeUserConfig(t *testing.T, e *env, body string) {
	t.Helper()
	p := filepath.Join(e.home, ".config", "lovia", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCostMatchesPricingTable: on every wire format, cost_usd in --output json is
// the pricing table applied to the usage the provider reported (cached and
// cache-write tokens at their own rates); stream-json carries the same figures per
// turn and per run, and `lovia runs`, `runs show` and `sessions show` show them
// later from the database.
func TestCostMatchesPricingTable(t *testing.T) {
	for _, c := range costCases {
		t.Run(c.kind, func(t *testing.T) {
			want := c.turnCost[0] + c.turnCost[1]

			srv := c.serve(t, c.turns()...)
			e := provEnv(t, srv)
			e.write("notes.txt", "hello\n")
			p := provRun(e, 60*time.Second, "run", "--model", c.kind+":"+c.model, "--output", "json", "read notes.txt")
			if p.code != 0 {
				t.Fatalf("exit %d\nstderr: %s\nstdout: %s", p.code, p.stderr, p.stdout)
			}
			var sum struct {
				RunID     string   `json:"run_id"`
				SessionID string   `json:"session_id"`
				CostUSD   *float64 `json:"cost_usd"`
			}
			if err := json.Unmarshal([]byte(p.stdout), &sum); err != nil {
				t.Fatalf("%v: %s", err, p.stdout)
			}
			if sum.CostUSD == nil || !near(*sum.CostUSD, want) {
				t.Fatalf("cost_usd = %v, want %v\n%s", sum.CostUSD, want, p.stdout)
			}
			if strings.Contains(p.stderr, "pricing:") {
				t.Errorf("a priced model got the unknown-price hint: %s", p.stderr)
			}

			// stream-json: each message_completed carries its call's cost, turn_ended
			// and the terminal event the run's.
			srv2 := c.serve(t, c.turns()...)
			pointAt(e, c.kind, srv2.URL)
			s := provRun(e, 60*time.Second, "run", "--model", c.kind+":"+c.model, "--output", "stream-json", "read notes.txt")
			done := s.terminal(t, "run_completed")
			msgs := s.ofType("message_completed")
			if len(msgs) != 2 {
				t.Fatalf("%d message_completed events, want 2", len(msgs))
			}
			for i, m := range msgs {
				if got, ok := usageCost(t, m); !ok || !near(got, c.turnCost[i]) {
					t.Errorf("turn %d cost_usd = %v (known %v), want %v", i+1, got, ok, c.turnCost[i])
				}
			}
			ends := s.ofType("turn_ended")
			if got, ok := usageCost(t, ends[0]); !ok || !near(got, c.turnCost[0]) {
				t.Errorf("turn_ended 1 cost_usd = %v, want the run's so far %v", got, c.turnCost[0])
			}
			if got, ok := usageCost(t, done); !ok || !near(got, want) {
				t.Errorf("run_completed cost_usd = %v, want %v", got, want)
			}

			// lovia runs: COST is the last tab-separated column.
			r := e.run(nil, "runs")
			if r.code != 0 {
				t.Fatalf("runs: exit %d: %s", r.code, r.stderr)
			}
			for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
				cols := strings.Split(line, "\t")
				if got := cols[len(cols)-1]; got != usdText(want) {
					t.Errorf("runs: COST %q, want %q in %q", got, usdText(want), line)
				}
			}
			r = e.run(nil, "runs", "show", sum.RunID)
			if !strings.Contains(r.stdout, "$"+usage.FormatUSD(want)) {
				t.Errorf("runs show lacks $%s:\n%s", usage.FormatUSD(want), r.stdout)
			}
			r = e.run(nil, "sessions", "show", sum.SessionID)
			if strings.Count(r.stdout, "$"+usage.FormatUSD(want)) < 2 { // the run's heading and the session total
				t.Errorf("sessions show lacks the run's and the total cost $%s:\n%s", usage.FormatUSD(want), r.stdout)
			}
			r = e.run(nil, "sessions", "show", "--json", sum.SessionID)
			var sd struct {
				Session struct {
					Usage struct {
						CostUSD *float64 `json:"cost_usd"`
					} `json:"usage"`
				} `json:"session"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &sd); err != nil || sd.Session.Usage.CostUSD == nil || !near(*sd.Session.Usage.CostUSD, want) {
				t.Errorf("sessions show --json: cost %v (%v)\n%s", sd.Session.Usage.CostUSD, err, r.stdout)
			}
		})
	}
}

func usdText(c float64) string {
	b, _ := json.Marshal(c)
	return string(b)
}

// TestCostConfigOverride: pricing: in the user's config replaces the built-in price
// (keyed by the base id, it covers the dated snapshot the run used).
func TestCostConfigOverride(t *testing.T) {
	c := costCases[0]
	srv := c.serve(t, c.turns()...)
	e := provEnv(t, srv)
	e.write("notes.txt", "hello\n")
	writeUserConfig(t, e, "pricing:\n  \"openai:gpt-4.1-mini\": {input: 1, cached_input: 0.5, output: 2}\n")
	p := provRun(e, 60*time.Second, "run", "--model", c.kind+":"+c.model, "--output", "json", "read notes.txt")
	if p.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", p.code, p.stderr)
	}
	var sum struct {
		CostUSD *float64 `json:"cost_usd"`
	}
	_ = json.Unmarshal([]byte(p.stdout), &sum)
	// turn 1: 12000*1 + 8000*0.5 + 1000*2 = 18000; turn 2: 1000*1 + 20000*0.5 + 300*2 = 11600.
	if want := 0.0296; sum.CostUSD == nil || !near(*sum.CostUSD, want) {
		t.Fatalf("cost_usd = %v, want %v\n%s", sum.CostUSD, want, p.stdout)
	}

	// A bad price is refused, naming the key and the fix.
	writeUserConfig(t, e, "pricing:\n  \"openai:gpt-4.1-mini\": {input: -1, output: 2}\n")
	r := e.run(nil, "run", "--model", c.kind+":"+c.model, "hi")
	if r.code != 2 || !strings.Contains(r.stderr, `pricing."openai:gpt-4.1-mini".input`) || !strings.Contains(r.stderr, ">= 0") {
		t.Errorf("negative price: exit %d\n%s", r.code, r.stderr)
	}
	writeUserConfig(t, e, "pricing:\n  \"openai:gpt-4.1-mini\": {input: 1, output: 2, cached_inputs: 0.5}\n")
	r = e.run(nil, "run", "--model", c.kind+":"+c.model, "hi")
	if r.code != 2 || !strings.Contains(r.stderr, `unknown key "cached_inputs"`) || !strings.Contains(r.stderr, `did you mean "cached_input"`) {
		t.Errorf("unknown price key: exit %d\n%s", r.code, r.stderr)
	}
}

// TestCostUnknownModel: a model without a price has cost_usd null (never 0), and
// the user is told once how to price it.
func TestCostUnknownModel(t *testing.T) {
	srv := providertest.NewOpenAIServer(t, providertest.Turn{Text: "hi", Usage: usage.Usage{InputTokens: 100, OutputTokens: 10}})
	e := provEnv(t, srv)
	p := provRun(e, 60*time.Second, "run", "--model", "openai:acme-coder-7b", "--output", "json", "hi")
	if p.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", p.code, p.stderr)
	}
	var sum map[string]any
	if err := json.Unmarshal([]byte(p.stdout), &sum); err != nil {
		t.Fatal(err)
	}
	if v, ok := sum["cost_usd"]; !ok || v != nil {
		t.Errorf("cost_usd = %v (present %v), want null", v, ok)
	}
	if strings.Count(p.stderr, "pricing:") != 1 || !strings.Contains(p.stderr, "openai:acme-coder-7b") {
		t.Errorf("want one hint naming the model and pricing:, got:\n%s", p.stderr)
	}
	r := e.run(nil, "runs")
	if cols := strings.Split(strings.TrimRight(r.stdout, "\n"), "\t"); cols[len(cols)-1] != "" {
		t.Errorf("runs: COST of an unpriced run should be empty: %q", r.stdout)
	}
}

// costScript is a scripted run of four tool-calling turns and an answer, each
// turn reporting 1000 input tokens.
const costScript = `turns:
  - tool_calls: [{name: read_file, args: {path: notes.txt}}]
    usage: {input_tokens: 1000, output_tokens: 0}
  - tool_calls: [{name: read_file, args: {path: notes.txt}}]
    usage: {input_tokens: 1000, output_tokens: 0}
  - tool_calls: [{name: read_file, args: {path: notes.txt}}]
    usage: {input_tokens: 1000, output_tokens: 0}
  - tool_calls: [{name: read_file, args: {path: notes.txt}}]
    usage: {input_tokens: 1000, output_tokens: 0}
  - text: done
    usage: {input_tokens: 1000, output_tokens: 0}
`

// TestMaxBudgetUSD: --max-budget-usd stops a multi-turn run once its cost reaches
// the budget (exit 3, finish reason budget, a hint naming the flag); a model
// without a price is refused before any request.
func TestMaxBudgetUSD(t *testing.T) {
	e := provEnv(t, nil)
	e.write("notes.txt", "hello\n")
	e.write("cost.yaml", costScript)
	// Scripted models are free unless priced: $1 per 1000 input tokens here.
	writeUserConfig(t, e, "pricing:\n  \"script:*\": {input: 1000, output: 1000}\n")

	p := provRun(e, 60*time.Second, "run", "--model", "script:cost.yaml", "--output", "stream-json", "--max-budget-usd", "2.5", "go")
	if p.code != 3 {
		t.Fatalf("exit %d, want 3\nstderr: %s\nstdout: %s", p.code, p.stderr, provTail(p.stdout, 2000))
	}
	term := p.terminal(t, "run_failed")
	if term["finish_reason"] != "budget" {
		t.Errorf("finish_reason %v, want budget", term["finish_reason"])
	}
	errv, _ := term["error"].(map[string]any)
	if msg := provStr(errv["message"]); !strings.Contains(msg, "cost budget exhausted: $3.00 of $2.50") {
		t.Errorf("error message %q", msg)
	}
	if hint := provStr(errv["hint"]); !strings.Contains(hint, "--max-budget-usd") {
		t.Errorf("hint %q does not name --max-budget-usd", hint)
	}
	if n := len(p.ofType("message_completed")); n != 3 {
		t.Errorf("%d model calls, want 3 (stopped once $3 >= $2.50)", n)
	}
	if got, ok := usageCost(t, term); !ok || !near(got, 3) {
		t.Errorf("run cost %v, want 3", got)
	}

	// resume keeps the recorded budget; a typed one replaces it, counting the whole run.
	runID := provStr(term["run_id"])
	if r := e.run(nil, "resume", runID); r.code != 3 {
		t.Errorf("resume under the same budget: exit %d, want 3\n%s", r.code, r.stderr)
	}
	if r := e.run(nil, "resume", runID, "--max-budget-usd", "10", "--output", "json"); r.code != 0 || !strings.Contains(r.stdout, `"cost_usd": 5`) {
		t.Errorf("resume with a raised budget: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	// Without a budget the same script completes ($5).
	r := provRun(e, 60*time.Second, "run", "--model", "script:cost.yaml", "--output", "json", "go")
	if r.code != 0 || !strings.Contains(r.stdout, `"cost_usd": 5`) {
		t.Errorf("unbudgeted run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	// An unknown price with a budget: refused at the start, nothing sent.
	srv := providertest.NewOpenAIServer(t, providertest.Turn{Text: "hi"})
	e2 := provEnv(t, srv)
	r = provRun(e2, 60*time.Second, "run", "--model", "openai:acme-coder-7b", "--max-budget-usd", "1", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "pricing:") || !strings.Contains(r.stderr, "acme-coder-7b") {
		t.Errorf("unknown price with a budget: exit %d\n%s", r.code, r.stderr)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent with an unknowable budget", n)
	}
	r = provRun(e2, 60*time.Second, "run", "--model", "openai:acme-coder-7b", "--max-budget-usd", "-1", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "--max-budget-usd") {
		t.Errorf("negative budget: exit %d\n%s", r.code, r.stderr)
	}
}
