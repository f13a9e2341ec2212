// Package errs defines lovia's error kinds. Every error a user can act on carries a
// Hint naming the next action; callers branch on Kind with errors.As / KindOf.
package errs

import (
	"errors"
	"fmt"
	"strings"
)

// Kind classifies a failure. Front ends map kinds to exit codes.
type Kind string

const (
	KindUsage       Kind = "usage"        // bad flag or argument (exit 2)
	KindConfig      Kind = "config"       // bad configuration, unknown model, unreadable file (exit 2)
	KindProvider    Kind = "provider"     // model provider failed after retries (exit 1)
	KindAuth        Kind = "auth"         // credentials refused by the provider (exit 1); a missing key is KindConfig
	KindOverflow    Kind = "overflow"     // context window exceeded (compaction may retry)
	KindMaxTurns    Kind = "max_turns"    // max turns reached (exit 3)
	KindBudget      Kind = "budget"       // token budget exhausted (exit 3)
	KindGuardrail   Kind = "guardrail"    // input/output guardrail tripped (exit 4)
	KindCancelled   Kind = "cancelled"    // cancelled by the caller (exit 130)
	KindTerminated  Kind = "terminated"   // SIGTERM (exit 143)
	KindOutput      Kind = "output"       // structured output invalid after repair (exit 1)
	KindRefusal     Kind = "refusal"      // the model refused the request (exit 1)
	KindTool        Kind = "tool"         // tool infrastructure failure (exit 1)
	KindStore       Kind = "store"        // persistence failure (exit 1)
	KindInternal    Kind = "internal"     // a bug (exit 1)
	KindNotFound    Kind = "not_found"    // unknown run/session id (exit 2)
	KindRunConflict Kind = "run_conflict" // run id exists and policy forbids reuse (exit 2)
)

// Error is a classified error with an optional hint (the next action to try).
type Error struct {
	Kind Kind
	Msg  string
	Hint string
	Err  error
}

func (e *Error) Error() string {
	switch {
	case e.Msg != "" && e.Err != nil:
		// A sentinel kept for errors.Is ("not found") adds nothing when the message
		// already says it.
		if inner := e.Err.Error(); !strings.Contains(e.Msg, inner) {
			return e.Msg + ": " + inner
		}
		return e.Msg
	case e.Msg != "":
		return e.Msg
	case e.Err != nil:
		return e.Err.Error()
	}
	return string(e.Kind)
}

func (e *Error) Unwrap() error { return e.Err }

// New returns a classified error.
func New(kind Kind, msg, hint string) *Error { return &Error{Kind: kind, Msg: msg, Hint: hint} }

// Newf formats the message.
func Newf(kind Kind, hint, format string, args ...any) *Error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...), Hint: hint}
}

// Wrap classifies err, keeping it in the chain.
func Wrap(kind Kind, err error, msg, hint string) *Error {
	return &Error{Kind: kind, Msg: msg, Hint: hint, Err: err}
}

// KindOf returns the kind of the outermost classified error in err's chain, or
// KindInternal when there is none (nil for nil).
func KindOf(err error) Kind {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}

// HintOf returns the first hint found in err's chain.
func HintOf(err error) string {
	for err != nil {
		var e *Error
		if !errors.As(err, &e) {
			return ""
		}
		if e.Hint != "" {
			return e.Hint
		}
		err = e.Err
	}
	return ""
}

// ExitCode maps an error to the exit codes of `lovia run` (SPEC §1).
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	switch KindOf(err) {
	case KindUsage, KindConfig, KindNotFound, KindRunConflict:
		return 2
	case KindMaxTurns, KindBudget:
		return 3
	case KindGuardrail:
		return 4
	case KindCancelled:
		return 130
	case KindTerminated:
		return 143
	}
	return 1
}
