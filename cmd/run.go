package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/lovia-dev/lovia/internal/app"
	"github.com/lovia-dev/lovia/internal/config"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/headless"
	"github.com/lovia-dev/lovia/internal/safefile"
	"github.com/lovia-dev/lovia/internal/tool"
)

// MaxStdin caps what `lovia run` reads from standard input.
const MaxStdin = 1 << 20

// RunOptions are the inputs of `lovia run`.
type RunOptions struct {
	F *Factory
	// Args are the prompt words ("-" reads stdin).
	Args         []string
	Output       string
	OutputSchema string
	Approve      string
	RunID        string
	BudgetTokens int
	// Images are --image files attached to the prompt.
	Images []string
	// budgetSet reports --budget-tokens was given.
	budgetSet bool
	// MaxBudgetUSD stops the run once it cost this many dollars (0: no limit).
	MaxBudgetUSD float64
	// Signals delivers SIGINT/SIGTERM (nil: the process's).
	Signals <-chan os.Signal
}

// NewCmdRun builds `lovia run`. runF replaces the behaviour in flag tests.
func NewCmdRun(f *Factory, runF func(*RunOptions) error) *cobra.Command {
	opts := &RunOptions{F: f}
	c := &cobra.Command{
		Use:   "run [PROMPT | -]",
		Short: "Run the agent once, non-interactively",
		Long: `Run the agent on one prompt and exit. The prompt comes from the arguments, from
standard input ("-", or nothing with piped input), or both: piped input is appended
to the prompt as a fenced block.

The final answer goes to stdout; progress (tool calls, denials) to stderr when it is
a terminal or with -v. Exit codes: 0 completed, 1 run failed, 2 usage or
configuration error, 3 limit reached (max turns, budget), 4 guardrail tripped,
130 interrupted (SIGINT), 143 terminated (SIGTERM). An interrupted run is resumable
with lovia resume RUN_ID.`,
		Example: `  lovia run "add a --json flag to the list command"
  git diff | lovia run --preset reviewer "review this change"
  lovia run --output json --output-schema answer.schema.json "is the build green?"
  lovia run --output stream-json -m script:testdata/demo/script.yaml "fix the bug"
  lovia run --image screenshot.png "why is this dialog cut off?"`,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Args = args
			opts.budgetSet = c.Flags().Changed("budget-tokens")
			if runF != nil {
				return runF(opts)
			}
			return runRun(c.Context(), opts)
		},
	}
	fl := c.Flags()
	addTrustFlag(fl, f)
	fl.StringVar(&opts.Output, "output", "text", "output format: text, json or stream-json")
	fl.StringVar(&opts.OutputSchema, "output-schema", "", "JSON Schema `FILE` the final answer must match (structured output)")
	fl.StringVar(&opts.Approve, "approve", "none", "answer for actions that need approval: none (deny) or all (allow)")
	fl.StringVar(&opts.RunID, "run-id", "", "run `ID`: letters, digits, '.', '_', '-', ':' (idempotency key: re-issuing a completed id with the same prompt replays its result)")
	fl.IntVar(&opts.BudgetTokens, "budget-tokens", 0, "stop once the run used `N` tokens (input + output)")
	fl.StringArrayVar(&opts.Images, "image", nil, "attach the image `FILE` (PNG, JPEG, GIF, WebP) to the prompt; repeatable")
	_ = c.MarkFlagFilename("image", "png", "jpg", "jpeg", "gif", "webp")
	fl.Float64Var(&opts.MaxBudgetUSD, "max-budget-usd", 0, "stop once the run cost `USD` dollars at the model's prices (exit 3; see docs/cost.md)")
	return c
}

func runRun(ctx context.Context, opts *RunOptions) error {
	f := opts.F
	format, err := headless.ParseFormat(opts.Output)
	if err != nil {
		return err
	}
	approvals, err := approvalMode(opts.Approve)
	if err != nil {
		return err
	}
	if opts.BudgetTokens < 0 {
		return errs.New(errs.KindUsage, "--budget-tokens must not be negative", "use a token count such as 200000")
	}
	if err := validBudgetUSD(opts.MaxBudgetUSD); err != nil {
		return err
	}
	if err := validRunID(opts.RunID); err != nil {
		return err
	}
	prompt, err := readPrompt(f.IO, opts.Args)
	if err != nil {
		return err
	}
	schema, err := readSchema(opts.OutputSchema)
	if err != nil {
		return err
	}

	aopts := f.AppOptions()
	if opts.budgetSet {
		aopts.Flags = append(aopts.Flags, config.Override{Key: "budget_tokens", Value: fmt.Sprint(opts.BudgetTokens), Flag: "--budget-tokens"})
	}
	a, err := f.NewApp(ctx, aopts)
	if err != nil {
		return err
	}
	defer a.Close()
	printTrustNotice(f, a)

	ctx, stop := context.WithCancel(ctx)
	defer stop()
	sigs := opts.Signals
	if sigs == nil {
		ch := make(chan os.Signal, 2)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(ch)
		sigs = ch
	}

	ro := app.RunOptions{
		RunID:        opts.RunID,
		SessionID:    f.Common.Session,
		Continue:     f.Common.Continue,
		Approvals:    approvals,
		OutputSchema: schema,
		Flags:        map[string]any{"output": string(format), "approve": opts.Approve},
		MaxBudgetUSD: opts.MaxBudgetUSD,
	}
	if opts.MaxBudgetUSD > 0 {
		// Recorded so `lovia resume` keeps the budget.
		ro.Flags["max_budget_usd"] = opts.MaxBudgetUSD
	}
	// "/name args" runs a custom command or a skill (.claude/commands, .lovia/commands).
	if prompt, err = slashPrompt(ctx, f, a, prompt, &ro); err != nil {
		return err
	}
	// Images are found in what was typed, before @server:uri mentions add a
	// resource's text (whose words must not attach files).
	atts, err := runImages(f, a, prompt, opts.Images) // run_images.go
	if err != nil {
		return err
	}
	if prompt, err = mcpMentions(ctx, f, a, opts.Args, prompt); err != nil { // mcp_mentions.go
		return err
	}
	h, pr, err := a.Start(ctx, runInput(prompt, atts), ro)
	if err != nil {
		return err
	}
	a.Log.Info("run started", "run", h.RunID(), "model", pr.Settings.Model, "preset", pr.Settings.Preset, "policy", pr.Settings.Policy)

	return followRun(f, a, h, format, sigs)
}

// readPrompt assembles the prompt from the arguments and standard input.
func readPrompt(ios *IOStreams, args []string) (string, error) {
	readStdin := false
	var words []string
	for _, a := range args {
		if a == "-" {
			readStdin = true
			continue
		}
		words = append(words, a)
	}
	prompt := strings.TrimSpace(strings.Join(words, " "))
	if !readStdin && ios.StdinPiped {
		readStdin = true
	}
	if readStdin && ios.StdinTTY && len(words) == 0 {
		fmt.Fprintln(ios.ErrOut, "lovia: reading the prompt from the terminal; end it with Ctrl-D")
	}
	var input string
	if readStdin {
		data, err := io.ReadAll(io.LimitReader(ios.In, MaxStdin+1))
		if err != nil {
			return "", errs.Wrap(errs.KindUsage, err, "reading standard input", "")
		}
		if len(data) > MaxStdin {
			return "", errs.Newf(errs.KindUsage, "write large inputs to a file in the repository and name it in the prompt; the agent can read files",
				"standard input is larger than %d KiB", MaxStdin>>10)
		}
		if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
			return "", errs.New(errs.KindUsage, "standard input looks binary (it is not UTF-8 text)",
				"pipe text only; for binary files, save them in the repository and describe them in the prompt")
		}
		input = strings.TrimRight(string(data), "\n")
	}
	switch {
	case prompt == "" && strings.TrimSpace(input) == "":
		return "", errs.New(errs.KindUsage, "empty prompt",
			`pass the prompt as an argument (lovia run "fix the tests") or on standard input (echo "fix the tests" | lovia run)`)
	case prompt == "":
		return input, nil
	case strings.TrimSpace(input) == "":
		return prompt, nil
	}
	fence := "```"
	for strings.Contains(input, fence) {
		fence += "`"
	}
	return prompt + "\n\n" + fence + "\n" + input + "\n" + fence, nil
}

// readSchema reads and compiles --output-schema.
func readSchema(path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	data, err := safefile.ReadNamed(path, safefile.MaxOutputSchema)
	if err != nil {
		hint := errs.HintOf(err)
		if hint == "" {
			hint = "pass a readable JSON Schema file"
		}
		return nil, errs.Wrap(errs.KindUsage, err, "cannot read --output-schema "+path, hint)
	}
	if _, err := tool.CompileSchema(data); err != nil {
		return nil, errs.Wrap(errs.KindUsage, err, "--output-schema "+path+" is not a valid JSON Schema", "fix the schema (it must be a JSON object schema)")
	}
	var probe map[string]any
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, errs.Wrap(errs.KindUsage, err, "--output-schema "+path+" must be a JSON object", "")
	}
	return data, nil
}

// validBudgetUSD refuses a --max-budget-usd that is not a dollar amount >= 0.
func validBudgetUSD(b float64) error {
	if b < 0 || math.IsNaN(b) || math.IsInf(b, 0) {
		return errs.New(errs.KindUsage, "--max-budget-usd must be a dollar amount >= 0", "use an amount such as --max-budget-usd 2.50 (0 = no limit)")
	}
	return nil
}

// validRunID accepts ids that survive a shell, a log line and a file name: 1–128 of
// letters, digits and . _ - : (no whitespace or control characters).
func validRunID(id string) error {
	if id == "" {
		return nil
	}
	ok := len(id) <= 128
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' || r == ':') {
			ok = false
			break
		}
	}
	if !ok || id == "." || id == ".." {
		return errs.Newf(errs.KindUsage, "use up to 128 letters, digits, '.', '_', '-' or ':', e.g. --run-id ci-1234", "--run-id %q is not a valid run id", id)
	}
	return nil
}
