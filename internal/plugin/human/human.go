// Package human is the built-in ask_human plugin: the model asks the person a
// question through the run's approval channel (rc.Ask). The front end shows an
// approval of kind "question" and answers with Decision{Allow: true, Message: answer};
// headless runs deny it, and the model is told to go on with its best judgment.
package human

import (
	"context"
	"fmt"
	"strings"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/tool"
)

// ToolName is the tool this plugin contributes.
const ToolName = "ask_human"

// Kind is the approval kind front ends render as a question with a free-text answer.
const Kind = "question"

// Plugin is the ask_human plugin.
type Plugin struct{}

// New returns the plugin.
func New() *Plugin { return &Plugin{} }

// Name implements plugin.Plugin.
func (*Plugin) Name() string { return "human" }

// Setup implements plugin.Plugin.
func (*Plugin) Setup(context.Context, *tool.RunContext) (*plugin.Contribution, error) {
	return &plugin.Contribution{Tools: []tool.Tool{Tool()}}, nil
}

type args struct {
	Question string   `json:"question" jsonschema:"description=One clear question for the user"`
	Options  []string `json:"options,omitempty" jsonschema:"description=Optional suggested answers"`
}

const noAnswer = "The user did not answer (this run may be non-interactive, or they declined). Do not ask again; continue with your best judgment and state the assumptions you made."

// Tool returns ask_human.
func Tool() tool.Tool {
	return tool.NewResult(ToolName, "Ask the user a question and wait for the answer. Use it only when you cannot proceed sensibly without their decision (ambiguous requirements, risky choices); do not ask for things you can find out yourself.",
		func(ctx context.Context, rc *tool.RunContext, a args) (tool.Result, error) {
			q := strings.TrimSpace(a.Question)
			if q == "" {
				return tool.Result{Text: "question is empty", IsError: true}, nil
			}
			if rc == nil || rc.Ask == nil {
				return tool.Result{Text: noAnswer, IsError: true}, nil
			}
			summary := q
			if len(a.Options) > 0 {
				summary += "\nOptions: " + strings.Join(a.Options, " | ")
			}
			d, err := rc.Ask(ctx, &event.Approval{Kind: Kind, Summary: summary, Subcommands: a.Options})
			if err != nil {
				if ctx.Err() != nil {
					return tool.Result{}, ctx.Err()
				}
				return tool.Result{Text: noAnswer, IsError: true}, nil
			}
			answer := strings.TrimSpace(d.Message)
			if !d.Allow {
				if answer != "" {
					return tool.Result{Text: "The user declined to answer: " + answer}, nil
				}
				return tool.Result{Text: noAnswer, IsError: true}, nil
			}
			if answer == "" {
				return tool.Result{Text: "The user acknowledged without further detail (answer: yes)."}, nil
			}
			return tool.Result{Text: fmt.Sprintf("The user answered: %s", answer)}, nil
		}, tool.Parallel(false))
}
