package headless

import (
	"errors"
	"strings"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/runtime"
)

// The runtime reports what happened (an error kind and its data); the command line
// words how to go on, in terms that work in a shell.

// Hint is the shell-side next step for a run that ended with kind ("" when the core's
// own hint, if any, is enough).
func Hint(kind errs.Kind, runID string) string {
	switch kind {
	case errs.KindCancelled, errs.KindTerminated:
		if runID != "" {
			return "continue with `lovia resume " + runID + "`"
		}
	case errs.KindMaxTurns:
		if runID != "" {
			return "raise the limit with --max-turns or narrow the task; `lovia resume " + runID + " --max-turns N` continues this run"
		}
		return "raise the limit with --max-turns or narrow the task"
	case errs.KindBudget:
		return "raise --budget-tokens or narrow the task"
	case errs.KindProvider:
		if runID != "" {
			return "check the provider's status and your network, then `lovia resume " + runID + "`"
		}
	}
	return ""
}

// WithHint gives err the shell-side hint for its kind when it has none of its own.
func WithHint(err error, runID string) error {
	if err == nil || errs.HintOf(err) != "" {
		return err
	}
	h := Hint(errs.KindOf(err), runID)
	if errors.Is(err, runtime.ErrDifferentInput) {
		h = "pass a new --run-id for a new prompt, or continue that run with `lovia resume RUN_ID`"
		if runID != "" {
			h = "pass a new --run-id for a new prompt, or continue that run with `lovia resume " + runID + "`"
		}
	}
	if h == "" {
		return err
	}
	var e *errs.Error
	if errors.As(err, &e) {
		return &errs.Error{Kind: e.Kind, Msg: err.Error(), Hint: h, Err: err}
	}
	return err
}

// hinting fills the shell-side hint into terminal events and the final error.
type hinting struct{ w Writer }

func (h hinting) Event(ev event.Event) error {
	if ev.Type.Terminal() && ev.Error != nil && strings.TrimSpace(ev.Error.Hint) == "" {
		e := *ev.Error
		e.Hint = Hint(errs.Kind(e.Kind), ev.RunID)
		ev.Error = &e
	}
	return h.w.Event(ev)
}

func (h hinting) Finish(res *runtime.Result, err error) error {
	id := ""
	if res != nil {
		id = res.RunID
	}
	return h.w.Finish(res, WithHint(err, id))
}
