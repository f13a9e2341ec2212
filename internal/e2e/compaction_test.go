package e2e

// Issue 7 end to end: long tool-heavy sessions through the built binary against a
// fake server with a 64k window. Every request must fit, compaction must happen,
// and between bursts each request must extend the previous one verbatim (that is
// what keeps provider prompt caches warm).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/compaction"
	"github.com/lovia-dev/lovia/internal/provider/providertest"
)

const (
	cmpWindow   = 65536
	cmpModel    = "fake-64k"
	cmpLineLen  = 100 // bytes per line of big.txt, newline included
	cmpBigLines = 299 // lines per 30 KB slice: 29,900 bytes, under the shell's 30,000-char cap
)

// cmpCase is one long session: how many agent turns, and which turns read a 30 KB
// slice (the others run a small command).
type cmpCase struct {
	name  string
	turns int
	big   func(turn int) bool
	// mustCompact: the session outgrows the window, so bursts must happen.
	mustCompact bool
}

// cmpReport is what a run measured.
type cmpReport struct {
	requests, bursts, summaries  int
	maxTokens, usable            int
	stability, bodyStability     float64
	calmTransitions, prefixBreak int
	stages                       map[string]int
	wall, cpu                    time.Duration
}

func (r cmpReport) String() string {
	return fmt.Sprintf("requests=%d bursts=%d summaries=%d stages=%v max_tokens=%d/%d prefix_stability=%.4f (request bodies %.4f) calm_transitions=%d prefix_breaks=%d wall=%s cpu=%s",
		r.requests, r.bursts, r.summaries, r.stages, r.maxTokens, r.usable, r.stability, r.bodyStability,
		r.calmTransitions, r.prefixBreak, r.wall.Round(time.Millisecond), r.cpu.Round(time.Millisecond))
}

// cmpBigFile is big.txt: numbered lines of pseudo-random words, every slice unique.
func cmpBigFile(lines int) string {
	rng := rand.New(rand.NewPCG(7, 7))
	words := []string{"alpha", "beta", "gamma", "delta", "kappa", "lambda", "sigma", "omega", "func", "return", "error", "value"}
	var b strings.Builder
	b.Grow(lines * cmpLineLen)
	for i := 1; i <= lines; i++ {
		line := fmt.Sprintf("%06d", i)
		for len(line) < cmpLineLen-1 {
			line += " " + words[rng.IntN(len(words))]
		}
		b.WriteString(line[:cmpLineLen-1])
		b.WriteByte('\n')
	}
	return b.String()
}

// cmpScript: one shell call per turn, then a final answer.
func cmpScript(c cmpCase) []providertest.Turn {
	var turns []providertest.Turn
	for i := 1; i <= c.turns; i++ {
		cmd := fmt.Sprintf("echo step %d: nothing to see", i)
		if c.big(i) {
			from := (i-1)*cmpBigLines + 1
			cmd = fmt.Sprintf("sed -n '%d,%dp' big.txt", from, from+cmpBigLines-1)
		}
		args, _ := json.Marshal(map[string]string{"command": cmd})
		turns = append(turns, providertest.Turn{Text: fmt.Sprintf("Step %d.", i), Chunk: 64,
			Calls: []providertest.Call{{ID: fmt.Sprintf("call_%04d", i), Name: "shell", Args: string(args)}}})
	}
	return append(turns, providertest.Turn{Text: "Read everything; done."})
}

func runCompactionCase(t *testing.T, c cmpCase) cmpReport {
	t.Helper()
	srv := newCmpServer(t, cmpWindow, cmpScript(c))
	e := provEnv(t, nil)
	e.vars = append(e.vars, "OPENAI_BASE_URL="+srv.URL+"/v1", "OPENAI_API_KEY="+providertest.APIKey)
	e.write(".lovia/config.yaml", fmt.Sprintf("models:\n  openai:%s:\n    context_window: %d\n", cmpModel, cmpWindow))
	e.write("big.txt", cmpBigFile(c.turns*cmpBigLines))

	p := provRun(e, 5*time.Minute, "run", "--model", "openai:"+cmpModel, "--output", "stream-json", "--approve", "all",
		"--policy", "trusted", "--max-turns", fmt.Sprint(c.turns+5), "page through big.txt with the shell, one slice per step")
	rep := cmpReport{wall: time.Since(p.started), cpu: p.cpu(), stages: map[string]int{}}
	reqs, summaries, overflows := srv.snapshot()
	rep.requests, rep.summaries = len(reqs), summaries
	if p.code != 0 {
		t.Fatalf("exit %d after %d requests (overflows %v)\nstderr: %s\nlast events: %s", p.code, len(reqs), overflows, provTail(p.stderr, 2000), provTail(p.stdout, 2000))
	}
	p.terminal(t, "run_completed")
	if len(overflows) > 0 {
		t.Errorf("the server refused %d requests as over the %d-token window: %v", len(overflows), cmpWindow, overflows)
	}
	if len(reqs) != c.turns+1 {
		t.Fatalf("%d agent requests, want %d (one per turn)", len(reqs), c.turns+1)
	}
	if n := len(p.ofType("tool_call_completed")); n != c.turns {
		t.Errorf("%d tool calls completed, want %d", n, c.turns)
		for _, ev := range p.ofType("tool_call_failed") {
			out := provStr(ev["output"])
			t.Logf("failed call %v (turn %v): %d bytes: %.300q ... %q", ev["call_id"], ev["turn"], len(out), out, provTail(out, 300))
		}
	}

	// Which turns compacted (request i is turn i+1).
	burst := map[int]bool{}
	for _, ev := range p.ofType("context_compacted") {
		turn := int(ev["turn"].(float64))
		burst[turn] = true
		info, _ := ev["compaction"].(map[string]any)
		stages, _ := info["stages"].([]any)
		for _, s := range stages {
			rep.stages[provStr(s)]++
		}
		before, after := info["tokens_before"].(float64), info["tokens_after"].(float64)
		if after >= before {
			t.Errorf("turn %d: compaction went from %v to %v tokens", turn, before, after)
		}
	}
	rep.bursts = len(burst)

	// Fit: the server's estimate (body bytes/4, tool schemas included) stays within
	// the usable window: the context window minus the output lovia reserves.
	rep.usable = compaction.Config{}.BudgetFor(cmpWindow).Usable
	var st, bodySt compaction.Stability
	for i, r := range reqs {
		rep.maxTokens = max(rep.maxTokens, r.tokens)
		if r.tokens > rep.usable {
			t.Errorf("request %d (turn %d): %d tokens estimated, over the usable %d", i, i+1, r.tokens, rep.usable)
		}
		st.Add(r.prompt())
		bodySt.Add(r.body)
		if i == 0 {
			continue
		}
		// Between bursts the request extends the previous one verbatim.
		prev := reqs[i-1]
		if burst[i+1] {
			continue
		}
		rep.calmTransitions++
		if why := cmpExtends(prev, r); why != "" {
			rep.prefixBreak++
			if rep.prefixBreak <= 3 {
				t.Errorf("turn %d did not compact, yet its request does not extend turn %d's: %s", i+1, i, why)
			}
		}
	}
	rep.stability, rep.bodyStability = st.Ratio(), bodySt.Ratio()
	// A summary the server wrote is what later requests carry instead of the prefix.
	if summaries > 0 {
		last := reqs[len(reqs)-1]
		if !bytes.Contains(last.prompt(), []byte("Summary update ")) {
			t.Errorf("the server wrote %d summaries, but the last request carries none of them", summaries)
		}
		if rep.stages["summarize_history"] == 0 {
			t.Errorf("%d summary requests, but no context_compacted event names summarize_history", summaries)
		}
	}
	if rep.bursts == 0 && c.mustCompact {
		t.Errorf("no context_compacted event in %d turns of a 64k window", c.turns)
	}
	if leaks := secretLeaks(t, e, "Step 1.", map[string]string{"stdout": p.stdout, "stderr": p.stderr}); len(leaks) > 0 {
		t.Errorf("the API key leaked into %v", leaks)
	}
	return rep
}

// cmpExtends says why next does not carry prev verbatim as its prefix ("" if it
// does): same tool schemas, and prev's messages are next's first messages, byte
// for byte.
func cmpExtends(prev, next cmpRequest) string {
	if !bytes.Equal(prev.tools, next.tools) {
		return "the tool schemas changed"
	}
	if len(next.messages) < len(prev.messages) {
		return fmt.Sprintf("it has %d messages, the previous %d", len(next.messages), len(prev.messages))
	}
	for j, m := range prev.messages {
		if !bytes.Equal(m, next.messages[j]) {
			return fmt.Sprintf("message %d differs:\n  was %s\n  now %s", j, provTail(string(m), 300), provTail(string(next.messages[j]), 300))
		}
	}
	return ""
}

// TestCompactionLongRun: 200 turns each reading 30 KB (40 with -short), then a
// mixed session where only every 10th turn reads 30 KB.
func TestCompactionLongRun(t *testing.T) {
	turns := 200
	if testing.Short() {
		turns = 40
	}
	for _, c := range []struct {
		cmpCase
		minStability float64
	}{
		// The design's bound for a 30 KB result every turn is about 0.6: every few
		// turns a burst rewrites the older results.
		{cmpCase{name: "30KB every turn", turns: turns, big: func(int) bool { return true }, mustCompact: true}, 0.5},
		{cmpCase{name: "30KB every 10th turn", turns: turns, big: func(i int) bool { return i%10 == 0 }, mustCompact: turns >= 100}, 0.5},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := runCompactionCase(t, c.cmpCase)
			t.Logf("%d turns, %s: %s", c.turns, c.name, rep)
			if rep.stability < c.minStability {
				t.Errorf("prefix stability %.4f, want >= %.2f", rep.stability, c.minStability)
			}
		})
	}
}
