package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

// Outcome is what one sample of a case produced.
type Outcome struct {
	Output     string
	Structured json.RawMessage
	Entries    []transcript.Entry
	Turns      int
	Usage      usage.Usage
	Err        error
	Duration   time.Duration
}

// Verdict is a check's judgement of one outcome. Score is in [0,1].
type Verdict struct {
	Pass   bool    `json:"pass"`
	Score  float64 `json:"score"`
	Detail string  `json:"detail,omitempty"`
}

func passIf(ok bool, detail string) Verdict {
	if ok {
		return Verdict{Pass: true, Score: 1}
	}
	return Verdict{Detail: detail}
}

// JudgeFunc scores output against criteria in [0,1] (llm_judge).
type JudgeFunc func(ctx context.Context, model, criteria, input, output string) (score float64, reason string, err error)

// Env is what checks may use besides the outcome.
type Env struct {
	Input          string
	Judge          JudgeFunc
	JudgeModel     string
	JudgeThreshold float64
}

// Check judges an outcome.
type Check interface {
	Name() string
	Evaluate(ctx context.Context, env *Env, o Outcome) Verdict
}

// CheckSpec is one check as written in YAML: exactly one of the fields is set.
type CheckSpec struct {
	Contains    *string        `yaml:"contains"`
	NotContains *string        `yaml:"not_contains"`
	Regex       *string        `yaml:"regex"`
	Equals      *string        `yaml:"equals"`
	Matches     map[string]any `yaml:"matches"`
	ToolCalled  *ToolCalled    `yaml:"tool_called"`
	MaxTurns    *int           `yaml:"max_turns"`
	NoError     *bool          `yaml:"no_error"`
	LLMJudge    *JudgeSpec     `yaml:"llm_judge"`
	AllOf       []CheckSpec    `yaml:"all_of"`
	AnyOf       []CheckSpec    `yaml:"any_of"`
	Weighted    *WeightedSpec  `yaml:"weighted"`
}

// ToolCalled passes when a call of Name happened (at least Min times, default 1) whose
// arguments match Args (JSON-equal values) and ArgsRegex (regexes over the string form).
type ToolCalled struct {
	Name      string            `yaml:"name"`
	Args      map[string]any    `yaml:"args"`
	ArgsRegex map[string]string `yaml:"args_regex"`
	Min       int               `yaml:"min"`
}

// JudgeSpec configures one llm_judge check.
type JudgeSpec struct {
	Criteria  string  `yaml:"criteria"`
	Threshold float64 `yaml:"threshold"`
	Model     string  `yaml:"model"`
}

// WeightedSpec passes when the weighted mean score reaches Threshold (default 0.7).
type WeightedSpec struct {
	Threshold float64        `yaml:"threshold"`
	Checks    []WeightedItem `yaml:"checks"`
}

// WeightedItem is one weighted check.
type WeightedItem struct {
	Weight float64   `yaml:"weight"`
	Check  CheckSpec `yaml:"check"`
}

// Build turns the spec into a Check, validating it.
func (s CheckSpec) Build() (Check, error) {
	var built []Check
	add := func(c Check, err error) {
		if err == nil {
			built = append(built, c)
			return
		}
		built = append(built, errCheck{err})
	}
	if s.Contains != nil {
		add(containsCheck{*s.Contains, true}, nil)
	}
	if s.NotContains != nil {
		add(containsCheck{*s.NotContains, false}, nil)
	}
	if s.Regex != nil {
		re, err := regexp.Compile(*s.Regex)
		if err != nil {
			return nil, fmt.Errorf("regex %q: %w", *s.Regex, err)
		}
		add(regexCheck{re}, nil)
	}
	if s.Equals != nil {
		add(equalsCheck{*s.Equals}, nil)
	}
	if s.Matches != nil {
		b, err := json.Marshal(s.Matches)
		if err != nil {
			return nil, fmt.Errorf("matches: %w", err)
		}
		v, err := tool.CompileSchema(b)
		if err != nil {
			return nil, fmt.Errorf("matches: invalid JSON Schema: %w", err)
		}
		add(matchesCheck{v}, nil)
	}
	if s.ToolCalled != nil {
		c, err := newToolCalled(*s.ToolCalled)
		if err != nil {
			return nil, err
		}
		add(c, nil)
	}
	if s.MaxTurns != nil {
		add(maxTurnsCheck{*s.MaxTurns}, nil)
	}
	if s.NoError != nil {
		add(noErrorCheck{*s.NoError}, nil)
	}
	if s.LLMJudge != nil {
		if strings.TrimSpace(s.LLMJudge.Criteria) == "" {
			return nil, fmt.Errorf("llm_judge needs criteria")
		}
		add(judgeCheck{*s.LLMJudge}, nil)
	}
	if s.AllOf != nil || s.AnyOf != nil {
		for _, group := range []struct {
			specs []CheckSpec
			all   bool
		}{{s.AllOf, true}, {s.AnyOf, false}} {
			if group.specs == nil {
				continue
			}
			if len(group.specs) == 0 {
				return nil, fmt.Errorf("all_of/any_of needs at least one check")
			}
			var cs []Check
			for i, sub := range group.specs {
				c, err := sub.Build()
				if err != nil {
					return nil, fmt.Errorf("check %d: %w", i+1, err)
				}
				cs = append(cs, c)
			}
			add(groupCheck{cs, group.all}, nil)
		}
	}
	if s.Weighted != nil {
		if len(s.Weighted.Checks) == 0 {
			return nil, fmt.Errorf("weighted needs checks")
		}
		w := weightedCheck{threshold: s.Weighted.Threshold}
		if w.threshold <= 0 {
			w.threshold = DefaultJudgeThreshold
		}
		for i, it := range s.Weighted.Checks {
			c, err := it.Check.Build()
			if err != nil {
				return nil, fmt.Errorf("weighted check %d: %w", i+1, err)
			}
			wt := it.Weight
			if wt <= 0 {
				wt = 1
			}
			w.items = append(w.items, c)
			w.weights = append(w.weights, wt)
		}
		add(w, nil)
	}
	switch len(built) {
	case 0:
		return nil, fmt.Errorf("empty check: use one of contains, not_contains, regex, equals, matches, tool_called, max_turns, no_error, llm_judge, all_of, any_of, weighted")
	case 1:
		return built[0], nil
	}
	return nil, fmt.Errorf("a check item sets %d kinds at once; write one per list item (or group them with all_of)", len(built))
}

type errCheck struct{ err error }

func (c errCheck) Name() string { return "invalid" }
func (c errCheck) Evaluate(context.Context, *Env, Outcome) Verdict {
	return Verdict{Detail: c.err.Error()}
}

type containsCheck struct {
	s    string
	want bool
}

func (c containsCheck) Name() string {
	if c.want {
		return fmt.Sprintf("contains %q", c.s)
	}
	return fmt.Sprintf("not_contains %q", c.s)
}

func (c containsCheck) Evaluate(_ context.Context, _ *Env, o Outcome) Verdict {
	has := strings.Contains(o.Output, c.s)
	if c.want {
		return passIf(has, fmt.Sprintf("output does not contain %q", c.s))
	}
	return passIf(!has, fmt.Sprintf("output contains %q", c.s))
}

type regexCheck struct{ re *regexp.Regexp }

func (c regexCheck) Name() string { return fmt.Sprintf("regex %q", c.re) }
func (c regexCheck) Evaluate(_ context.Context, _ *Env, o Outcome) Verdict {
	return passIf(c.re.MatchString(o.Output), fmt.Sprintf("output does not match /%s/", c.re))
}

type equalsCheck struct{ s string }

func (c equalsCheck) Name() string { return fmt.Sprintf("equals %q", clip(c.s, 30)) }
func (c equalsCheck) Evaluate(_ context.Context, _ *Env, o Outcome) Verdict {
	return passIf(strings.TrimSpace(o.Output) == strings.TrimSpace(c.s),
		fmt.Sprintf("output %q differs from %q", clip(o.Output, 60), clip(c.s, 60)))
}

type matchesCheck struct{ validate func(json.RawMessage) error }

func (matchesCheck) Name() string { return "matches schema" }
func (c matchesCheck) Evaluate(_ context.Context, _ *Env, o Outcome) Verdict {
	doc := o.Structured
	if len(doc) == 0 {
		doc = json.RawMessage(strings.TrimSpace(o.Output))
	}
	if !json.Valid(doc) {
		return Verdict{Detail: "output is not JSON"}
	}
	if err := c.validate(doc); err != nil {
		return Verdict{Detail: err.Error()}
	}
	return Verdict{Pass: true, Score: 1}
}

type toolCalledCheck struct {
	spec ToolCalled
	args map[string]json.RawMessage
	res  map[string]*regexp.Regexp
}

func newToolCalled(s ToolCalled) (Check, error) {
	if s.Name == "" {
		return nil, fmt.Errorf("tool_called needs a name")
	}
	c := toolCalledCheck{spec: s, args: map[string]json.RawMessage{}, res: map[string]*regexp.Regexp{}}
	for k, v := range s.Args {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("tool_called args.%s: %w", k, err)
		}
		c.args[k] = b
	}
	for k, v := range s.ArgsRegex {
		re, err := regexp.Compile(v)
		if err != nil {
			return nil, fmt.Errorf("tool_called args_regex.%s: %w", k, err)
		}
		c.res[k] = re
	}
	if c.spec.Min <= 0 {
		c.spec.Min = 1
	}
	return c, nil
}

func (c toolCalledCheck) Name() string { return "tool_called " + c.spec.Name }

func (c toolCalledCheck) Evaluate(_ context.Context, _ *Env, o Outcome) Verdict {
	n, named := 0, 0
	for _, e := range o.Entries {
		if e.Type != transcript.TypeToolCall || e.Name != c.spec.Name {
			continue
		}
		named++
		if c.argsMatch(e.Args) {
			n++
		}
	}
	if n >= c.spec.Min {
		return Verdict{Pass: true, Score: 1}
	}
	if named > 0 {
		return Verdict{Detail: fmt.Sprintf("%s was called %d time(s) but not with the expected arguments", c.spec.Name, named)}
	}
	return Verdict{Detail: fmt.Sprintf("%s was not called", c.spec.Name)}
}

func (c toolCalledCheck) argsMatch(raw json.RawMessage) bool {
	var got map[string]json.RawMessage
	if err := json.Unmarshal(raw, &got); err != nil {
		return len(c.args) == 0 && len(c.res) == 0
	}
	for k, want := range c.args {
		if !jsonEqual(got[k], want) {
			return false
		}
	}
	for k, re := range c.res {
		v, ok := got[k]
		if !ok {
			return false
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			s = string(v)
		}
		if !re.MatchString(s) {
			return false
		}
	}
	return true
}

func jsonEqual(a, b json.RawMessage) bool {
	if a == nil {
		return false
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(x, y)
}

type maxTurnsCheck struct{ n int }

func (c maxTurnsCheck) Name() string { return fmt.Sprintf("max_turns %d", c.n) }
func (c maxTurnsCheck) Evaluate(_ context.Context, _ *Env, o Outcome) Verdict {
	return passIf(o.Turns <= c.n, fmt.Sprintf("took %d turns (max %d)", o.Turns, c.n))
}

type noErrorCheck struct{ want bool }

func (noErrorCheck) Name() string { return "no_error" }
func (c noErrorCheck) Evaluate(_ context.Context, _ *Env, o Outcome) Verdict {
	if !c.want {
		return passIf(o.Err != nil, "the run succeeded but an error was expected")
	}
	if o.Err != nil {
		return Verdict{Detail: o.Err.Error()}
	}
	return Verdict{Pass: true, Score: 1}
}

type judgeCheck struct{ spec JudgeSpec }

func (c judgeCheck) Name() string { return "llm_judge " + clip(c.spec.Criteria, 30) }
func (c judgeCheck) Evaluate(ctx context.Context, env *Env, o Outcome) Verdict {
	if env == nil || env.Judge == nil {
		return Verdict{Detail: "llm_judge needs a judge model: set judge.model in the cases file"}
	}
	model := c.spec.Model
	if model == "" {
		model = env.JudgeModel
	}
	if model == "" {
		return Verdict{Detail: "llm_judge needs a judge model: set judge.model in the cases file"}
	}
	th := c.spec.Threshold
	if th <= 0 {
		th = env.JudgeThreshold
	}
	if th <= 0 {
		th = DefaultJudgeThreshold
	}
	score, reason, err := env.Judge(ctx, model, c.spec.Criteria, env.Input, o.Output)
	if err != nil {
		return Verdict{Detail: "judge failed: " + err.Error()}
	}
	score = min(max(score, 0), 1)
	v := Verdict{Pass: score >= th, Score: score, Detail: reason}
	if !v.Pass && v.Detail == "" {
		v.Detail = fmt.Sprintf("judge score %.2f below %.2f", score, th)
	}
	return v
}

type groupCheck struct {
	items []Check
	all   bool
}

func (c groupCheck) Name() string {
	names := make([]string, len(c.items))
	for i, it := range c.items {
		names[i] = it.Name()
	}
	op := "any_of"
	if c.all {
		op = "all_of"
	}
	return op + "(" + strings.Join(names, ", ") + ")"
}

func (c groupCheck) Evaluate(ctx context.Context, env *Env, o Outcome) Verdict {
	var details []string
	best, sum := 0.0, 0.0
	for _, it := range c.items {
		v := it.Evaluate(ctx, env, o)
		sum += v.Score
		best = max(best, v.Score)
		if v.Pass && !c.all {
			return Verdict{Pass: true, Score: v.Score}
		}
		if !v.Pass {
			details = append(details, it.Name()+": "+v.Detail)
			if c.all {
				return Verdict{Score: sum / float64(len(c.items)), Detail: strings.Join(details, "; ")}
			}
		}
	}
	if c.all {
		return Verdict{Pass: true, Score: 1}
	}
	return Verdict{Score: best, Detail: strings.Join(details, "; ")}
}

type weightedCheck struct {
	items     []Check
	weights   []float64
	threshold float64
}

func (c weightedCheck) Name() string { return fmt.Sprintf("weighted(%d checks)", len(c.items)) }

func (c weightedCheck) Evaluate(ctx context.Context, env *Env, o Outcome) Verdict {
	var total, got float64
	var details []string
	for i, it := range c.items {
		v := it.Evaluate(ctx, env, o)
		total += c.weights[i]
		got += c.weights[i] * v.Score
		if !v.Pass {
			details = append(details, it.Name()+": "+v.Detail)
		}
	}
	score := got / total
	v := Verdict{Pass: score >= c.threshold, Score: score}
	if !v.Pass {
		v.Detail = fmt.Sprintf("weighted score %.2f below %.2f (%s)", score, c.threshold, strings.Join(details, "; "))
	}
	return v
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
