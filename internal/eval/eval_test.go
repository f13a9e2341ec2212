package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lovia-dev/lovia/internal/transcript"
)

func build(t *testing.T, y string) Check {
	t.Helper()
	f, err := Parse([]byte("cases:\n  - name: c\n    input: hi\n    checks:\n" + y))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	c, err := f.Cases[0].Checks[0].Build()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestChecks(t *testing.T) {
	out := Outcome{
		Output: "The answer is 42.",
		Turns:  3,
		Entries: []transcript.Entry{
			transcript.ToolCall("c1", "read_file", json.RawMessage(`{"path":"main.go","limit":10}`)),
			transcript.ToolResult("c1", "read_file", "package main", false),
		},
	}
	judge := func(_ context.Context, model, criteria, input, output string) (float64, string, error) {
		if strings.Contains(criteria, "good") {
			return 0.9, "fine", nil
		}
		return 0.2, "poor", nil
	}
	tests := []struct {
		name string
		yaml string
		want bool
	}{
		{"contains", "      - contains: \"42\"\n", true},
		{"contains miss", "      - contains: \"43\"\n", false},
		{"not_contains", "      - not_contains: \"43\"\n", true},
		{"regex", "      - regex: 'answer is \\d+'\n", true},
		{"equals trims", "      - equals: \"  The answer is 42. \"\n", true},
		{"equals miss", "      - equals: \"42\"\n", false},
		{"tool_called", "      - tool_called: {name: read_file}\n", true},
		{"tool_called args", "      - tool_called: {name: read_file, args: {path: main.go, limit: 10}}\n", true},
		{"tool_called wrong args", "      - tool_called: {name: read_file, args: {path: other.go}}\n", false},
		{"tool_called regex", "      - tool_called: {name: read_file, args_regex: {path: '\\.go$'}}\n", true},
		{"tool_called min", "      - tool_called: {name: read_file, min: 2}\n", false},
		{"tool not called", "      - tool_called: {name: shell}\n", false},
		{"max_turns ok", "      - max_turns: 3\n", true},
		{"max_turns over", "      - max_turns: 2\n", false},
		{"no_error", "      - no_error: true\n", true},
		{"judge pass", "      - llm_judge: {criteria: good answer}\n", true},
		{"judge fail", "      - llm_judge: {criteria: bad}\n", false},
		{"all_of", "      - all_of: [{contains: answer}, {max_turns: 5}]\n", true},
		{"all_of one fails", "      - all_of: [{contains: answer}, {max_turns: 1}]\n", false},
		{"any_of", "      - any_of: [{contains: nope}, {contains: '42'}]\n", true},
		{"any_of none", "      - any_of: [{contains: nope}, {contains: nada}]\n", false},
		{"weighted pass", "      - weighted: {threshold: 0.6, checks: [{weight: 3, check: {contains: '42'}}, {weight: 1, check: {contains: nope}}]}\n", true},
		{"weighted fail", "      - weighted: {threshold: 0.8, checks: [{weight: 3, check: {contains: '42'}}, {weight: 1, check: {contains: nope}}]}\n", false},
	}
	env := &Env{Input: "hi", Judge: judge, JudgeModel: "script:x", JudgeThreshold: 0.7}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := build(t, tc.yaml).Evaluate(context.Background(), env, out)
			if v.Pass != tc.want {
				t.Fatalf("pass = %v, want %v (%s)", v.Pass, tc.want, v.Detail)
			}
			if !v.Pass && v.Detail == "" {
				t.Fatal("a failing check must say why")
			}
		})
	}
}

func TestMatchesAndNoErrorFailure(t *testing.T) {
	c := build(t, "      - matches: {type: object, required: [n], properties: {n: {type: integer}}}\n")
	ctx := context.Background()
	if v := c.Evaluate(ctx, nil, Outcome{Structured: json.RawMessage(`{"n":3}`)}); !v.Pass {
		t.Fatalf("valid object failed: %s", v.Detail)
	}
	if v := c.Evaluate(ctx, nil, Outcome{Output: `{"n":"x"}`}); v.Pass {
		t.Fatal("wrong type passed")
	}
	if v := c.Evaluate(ctx, nil, Outcome{Output: "not json"}); v.Pass || !strings.Contains(v.Detail, "not JSON") {
		t.Fatalf("non-JSON: %+v", v)
	}
	ne := build(t, "      - no_error: true\n")
	if v := ne.Evaluate(ctx, nil, Outcome{Err: errors.New("boom")}); v.Pass || v.Detail != "boom" {
		t.Fatalf("no_error: %+v", v)
	}
	j := build(t, "      - llm_judge: {criteria: x}\n")
	if v := j.Evaluate(ctx, &Env{}, Outcome{}); v.Pass || !strings.Contains(v.Detail, "judge.model") {
		t.Fatalf("judge without model: %+v", v)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{"cases: []\n", "no cases"},
		{"cases:\n  - name: a\n    checks: [{contains: x}]\n", "no input"},
		{"cases:\n  - name: a\n    input: x\n", "no checks"},
		{"cases:\n  - name: a\n    input: x\n    checks: [{regex: '('}]\n", "regex"},
		{"cases:\n  - name: a\n    input: x\n    checks: [{contains: x, regex: y}]\n", "one per list item"},
		{"cases:\n  - name: a\n    input: x\n    checks: [{}]\n", "empty check"},
		{"cases:\n  - name: a\n    input: x\n    checks: [{contain: x}]\n", "contain"},
		{"cases:\n  - name: a\n    input: x\n    checks: [{contains: x}]\n  - name: a\n    input: y\n    checks: [{contains: x}]\n", "twice"},
		{"cases:\n  - name: a\n    inptu: x\n", "inptu"},
	}
	for _, tc := range tests {
		_, err := Parse([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.yaml, err, tc.want)
		}
	}
	_, err := Parse([]byte("cases:\n  - name: a\n    input: x\n    checks:\n      - bogus: 1\n"))
	if err == nil || !strings.Contains(err.Error(), "5:") {
		t.Errorf("unknown key error should carry the line: %v", err)
	}
}

func TestRunConcurrencyFailFastAndDiff(t *testing.T) {
	f, err := Parse([]byte(`
defaults: {samples: 2, model: "script:s.yaml"}
cases:
  - name: good
    input: say ok
    checks: [{contains: ok}]
  - name: bad
    input: say no
    checks: [{contains: ok}]
`))
	if err != nil {
		t.Fatal(err)
	}
	f.Path = "/tmp/evals/cases.yaml"
	var inflight, peak atomic.Int32
	run := func(_ context.Context, c Case, _ int) Outcome {
		n := inflight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		defer inflight.Add(-1)
		if c.Model != "script:/tmp/evals/s.yaml" {
			t.Errorf("model not resolved against the cases file: %s", c.Model)
		}
		if c.Name == "good" {
			return Outcome{Output: "ok", Turns: 1}
		}
		return Outcome{Output: "no", Turns: 1}
	}
	var progress int
	rep := Run(context.Background(), f, run, Options{Concurrency: 2, Progress: func(done, total int, _ SampleResult) {
		progress = done
		if total != 4 {
			t.Errorf("total = %d", total)
		}
	}})
	if progress != 4 || rep.Passed != 1 || rep.Failed != 1 || rep.OK() {
		t.Fatalf("report: progress=%d %+v", progress, rep)
	}
	if peak.Load() > 2 {
		t.Fatalf("concurrency exceeded: %d", peak.Load())
	}
	var buf bytes.Buffer
	if err := rep.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"good", "pass", "bad", "FAIL", `output does not contain "ok"`, "1 passed, 1 failed"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, buf.String())
		}
	}
	// JSON round trip and baseline diff.
	buf.Reset()
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var base Report
	if err := json.Unmarshal(buf.Bytes(), &base); err != nil {
		t.Fatal(err)
	}
	if ch := Diff(&base, rep); len(ch) != 0 {
		t.Fatalf("self diff: %+v", ch)
	}
	base.Cases[1].PassRate = 0 // bad was 0 already; make good regress instead
	base.Cases[0].PassRate = 1
	rep.Cases[0].PassRate = 0.5
	ch := Diff(&base, rep)
	if !Regressed(ch) || ch[0].Case != "good" {
		t.Fatalf("diff: %+v", ch)
	}

	// Fail fast: with concurrency 1 the failing case stops the rest.
	var calls atomic.Int32
	f.Cases[0], f.Cases[1] = f.Cases[1], f.Cases[0]
	rep = Run(context.Background(), f, func(ctx context.Context, c Case, s int) Outcome {
		calls.Add(1)
		return run(ctx, c, s)
	}, Options{Concurrency: 1, FailFast: true})
	if calls.Load() != 1 || rep.Failed != 1 || rep.Skipped != 1 {
		t.Fatalf("fail fast ran %d samples: %+v", calls.Load(), rep)
	}
}

func TestParseVerdict(t *testing.T) {
	s, r, err := parseVerdict("Sure!\n```json\n{\"score\": 0.8, \"reason\": \"ok\"}\n```")
	if err != nil || s != 0.8 || r != "ok" {
		t.Fatalf("%v %v %v", s, r, err)
	}
	if _, _, err := parseVerdict("I think it's fine"); err == nil {
		t.Fatal("want error")
	}
	if s, _, _ := parseVerdict(`{"score": 7}`); s != 1 {
		t.Fatal("score not clamped")
	}
}
