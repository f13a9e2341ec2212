// Package hooks runs user-configured commands on run events, in the spirit of Claude
// Code's hooks: each matching command gets a JSON description of the event on stdin;
// exit code 0 lets things proceed, exit code 2 blocks (its stderr is shown to the
// model), any other exit code or a timeout is logged as a warning and ignored.
//
// Where each event plugs into the run (all through plugin slots, no loop changes):
//   - session_start: runs at run setup; stdout is added to the instructions.
//   - user_prompt_submit: an input guardrail; blocking aborts the run with the message.
//   - pre_tool_use: a tool gate; blocking turns the call into an error result.
//   - post_tool_use: after a call completes or fails; blocking sends the stderr to the
//     model as a steering message at the next turn (the result is already recorded).
//   - pre_compact: when the context policy compacted the view (observe only).
//   - stop: at a top-level run's final answer (a stop gate: blocking keeps the run
//     going with the message, at most 8 times), else when the run ends (observe).
package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/hostshell"
	"github.com/lovia-dev/lovia/internal/workspace"
)

// Event names a hook point.
type Event string

// Hook points.
const (
	PreToolUse       Event = "pre_tool_use"
	PostToolUse      Event = "post_tool_use"
	UserPromptSubmit Event = "user_prompt_submit"
	SessionStart     Event = "session_start"
	Stop             Event = "stop"
	PreCompact       Event = "pre_compact"
	SubagentStop     Event = "subagent_stop"
	SessionEnd       Event = "session_end"
	Notification     Event = "notification"
)

var knownEvents = []Event{PreToolUse, PostToolUse, UserPromptSubmit, SessionStart, Stop, PreCompact, SubagentStop, SessionEnd, Notification}

// DefaultTimeout bounds a hook command when its config gives none.
const DefaultTimeout = 60 * time.Second

// maxCapture bounds what is kept of a command's stdout and stderr.
const maxCapture = 64 << 10

// maxMessage bounds a blocking hook's message (its stderr or reason), which reaches
// the model: a hook must not become a way to pour file contents into the context.
const maxMessage = 8 << 10

// BlockExitCode is the exit status that blocks.
const BlockExitCode = 2

// Hook is one configured command.
type Hook struct {
	Event Event `yaml:"event" json:"event"`
	// Matcher is a regular expression matched against the whole tool name (it is
	// anchored: "write_file|edit_file"); empty or "*" matches every tool. Only tool
	// events use it.
	Matcher string `yaml:"matcher,omitempty" json:"matcher,omitempty"`
	// Command runs with `sh -c` in Config.Dir.
	Command string `yaml:"command" json:"command"`
	// Timeout in seconds (0 = 60).
	Timeout float64 `yaml:"timeout,omitempty" json:"timeout,omitempty"`
	// Env is added to the hook's minimal environment; values expand ${VAR} from
	// lovia's environment, so a token reaches a hook only when named here.
	Env map[string]string `yaml:"env,omitempty" json:"env,omitempty"`
	// Claude marks a hook read from Claude Code's settings files: it gets Claude
	// Code's input document (tool names like Bash, fields like file_path) and
	// CLAUDE_PROJECT_DIR, and its Stop hooks may keep the run going.
	Claude bool `yaml:"-" json:"-"`
	// Source is the file the hook came from ("" = lovia's config), for messages.
	Source string `yaml:"-" json:"-"`
}

// Config is the hooks section of the configuration.
type Config struct {
	Hooks []Hook `yaml:"hooks" json:"hooks"`
	// Dir is the commands' working directory and the input's cwd ("" = process cwd).
	Dir string `yaml:"-" json:"-"`
	// Env is added to every command's environment, which is otherwise minimal
	// (workspace.MinimalEnv: no provider keys, nothing of workspace.inherit_env).
	Env []string `yaml:"-" json:"-"`
	// Command prepares a hook's process (nil: a plain exec). The application passes
	// the workspace's (Workspace.Command), so hooks run sandboxed like commands.
	Command CommandFunc `yaml:"-" json:"-"`
	// Scrub is applied to what a hook hands the model (its stdout, its block message).
	Scrub func(string) string `yaml:"-" json:"-"`
	// ProjectDir is the project root given to hooks as CLAUDE_PROJECT_DIR and
	// LOVIA_PROJECT_DIR ("" = Dir).
	ProjectDir string `yaml:"-" json:"-"`
}

// CommandFunc prepares (does not start) argv with the given working directory and
// whole environment.
type CommandFunc func(ctx context.Context, argv []string, dir string, env []string) (*exec.Cmd, error)

// Input is the JSON document a hook command reads on stdin.
type Input struct {
	HookEventName Event  `json:"hook_event_name"`
	SessionID     string `json:"session_id,omitempty"`
	RunID         string `json:"run_id,omitempty"`
	ParentRunID   string `json:"parent_run_id,omitempty"`
	Cwd           string `json:"cwd"`
	Agent         string `json:"agent,omitempty"`
	Turn          int    `json:"turn,omitempty"`

	ToolName     string          `json:"tool_name,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	ToolInput    json.RawMessage `json:"tool_input,omitempty"`
	ToolResponse *ToolResponse   `json:"tool_response,omitempty"`

	Prompt string `json:"prompt,omitempty"`

	// stop
	Status      string `json:"status,omitempty"`
	FinalOutput string `json:"final_output,omitempty"`
	Error       string `json:"error,omitempty"`

	// pre_compact
	Compaction any `json:"compaction,omitempty"`

	// stop / subagent_stop: an earlier stop of this run was refused by a hook.
	StopHookActive bool `json:"stop_hook_active,omitempty"`
	// session_start: startup or resume; session_end: why.
	Source string `json:"source,omitempty"`
	Reason string `json:"reason,omitempty"`
	// notification
	Message string `json:"message,omitempty"`

	// match is what matchers are tried on when there is no tool (a session
	// start's source).
	match string
}

// ToolResponse is a finished tool call as post_tool_use hooks see it.
type ToolResponse struct {
	Output  string `json:"output"`
	IsError bool   `json:"is_error,omitempty"`
}

// Outcome is the combined result of every hook run for one event.
type Outcome struct {
	// Blocked is true when a hook exited with status 2 (or printed a block decision).
	Blocked bool
	// Message is what the blocking hooks said (stderr, or the decision's reason).
	Message string
	// Stdout is the concatenated standard output of the hooks that succeeded (plain
	// text, not a JSON reply, and not suppressed with suppressOutput).
	Stdout string
	// Ask: a hook answered permissionDecision "ask" (AskReason says why).
	Ask       bool
	AskReason string
	// UpdatedInput is a hook's replacement of the tool's arguments, in lovia's
	// field names (the last hook that gave one wins).
	UpdatedInput json.RawMessage
	// Context is what hooks added with additionalContext.
	Context string
	// Stop: a hook answered continue:false; StopReason says why.
	Stop       bool
	StopReason string
}

type compiled struct {
	Hook
	re *regexp.Regexp // nil: matches everything
}

// Runner runs the configured hooks. It is safe for concurrent use.
type Runner struct {
	dir     string
	env     []string
	command CommandFunc
	scrub   func(string) string
	hooks   map[Event][]compiled
	logger  *slog.Logger
	// project is CLAUDE_PROJECT_DIR / LOVIA_PROJECT_DIR (default dir).
	project string
}

// WithCommand returns a copy of r whose hooks are prepared by command (the run's
// workspace executor).
func (r *Runner) WithCommand(command CommandFunc) *Runner {
	c := *r
	c.command = command
	return &c
}

// NewRunner validates cfg. Errors name the offending hook and the fix.
func NewRunner(cfg Config, logger *slog.Logger) (*Runner, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	r := &Runner{dir: cfg.Dir, env: cfg.Env, command: cfg.Command, scrub: cfg.Scrub, hooks: map[Event][]compiled{}, logger: logger, project: cfg.ProjectDir}
	if r.project == "" {
		r.project = cfg.Dir
	}
	for i, h := range cfg.Hooks {
		where := fmt.Sprintf("hooks[%d] (%s)", i, h.Event)
		if h.Source != "" {
			where = fmt.Sprintf("%s: %s hook %d", h.Source, h.Event, i)
		}
		ev, known := ParseEvent(string(h.Event))
		if !known {
			return nil, errs.Newf(errs.KindConfig, "use one of: pre_tool_use, post_tool_use, user_prompt_submit, session_start, session_end, stop, subagent_stop, pre_compact, notification (or Claude Code's PreToolUse, …)", "%s: unknown hook event %q", where, h.Event)
		}
		h.Event = ev
		if strings.TrimSpace(h.Command) == "" {
			return nil, errs.Newf(errs.KindConfig, "set command: to the shell command to run", "%s: command is empty", where)
		}
		if h.Timeout < 0 {
			return nil, errs.Newf(errs.KindConfig, "give the timeout in seconds, e.g. timeout: 30", "%s: negative timeout %v", where, h.Timeout)
		}
		c := compiled{Hook: h}
		if m := strings.TrimSpace(h.Matcher); m != "" && m != "*" {
			re, err := regexp.Compile("^(?:" + m + ")$")
			if err != nil {
				return nil, errs.Wrap(errs.KindConfig, err, fmt.Sprintf("%s: matcher %q is not a valid regular expression", where, h.Matcher), "write a Go regexp over tool names, e.g. write_file|edit_file")
			}
			c.re = re
		}
		r.hooks[h.Event] = append(r.hooks[h.Event], c)
	}
	return r, nil
}

// Has reports whether any hook is configured for ev.
func (r *Runner) Has(ev Event) bool { return len(r.hooks[ev]) > 0 }

// hasClaude reports whether a Claude Code hook is configured for ev.
func (r *Runner) hasClaude(ev Event) bool {
	for _, h := range r.hooks[ev] {
		if h.Claude {
			return true
		}
	}
	return false
}

// hasNative reports whether a hook of lovia's own config is configured for ev.
func (r *Runner) hasNative(ev Event) bool {
	for _, h := range r.hooks[ev] {
		if !h.Claude {
			return true
		}
	}
	return false
}

// only returns r restricted to the hooks of one dialect.
func (r *Runner) only(claude bool) *Runner {
	c := *r
	c.hooks = map[Event][]compiled{}
	for ev, hs := range r.hooks {
		for _, h := range hs {
			if h.Claude == claude {
				c.hooks[ev] = append(c.hooks[ev], h)
			}
		}
	}
	return &c
}

// runClaude and runNative run only the hooks of one dialect.
func (r *Runner) runClaude(ctx context.Context, in Input) Outcome { return r.only(true).Run(ctx, in) }
func (r *Runner) runNative(ctx context.Context, in Input) Outcome { return r.only(false).Run(ctx, in) }

// Run runs every hook of in.HookEventName whose matcher accepts the tool (by lovia's
// name or Claude Code's), one after another in configuration order, and combines
// their outcomes. It never fails: broken hooks are logged as warnings.
func (r *Runner) Run(ctx context.Context, in Input) Outcome {
	var out Outcome
	if in.Cwd == "" {
		in.Cwd = r.dir
		if in.Cwd == "" {
			in.Cwd, _ = os.Getwd()
		}
	}
	var native, claude []byte
	var msgs, stdouts, contexts, asks []string
	for _, h := range r.hooks[in.HookEventName] {
		if !h.matches(in) {
			continue
		}
		var payload []byte
		var err error
		if h.Claude {
			if claude == nil {
				claude, err = claudePayload(in, r.project)
			}
			payload = claude
		} else {
			if native == nil {
				native, err = json.Marshal(in)
			}
			payload = native
		}
		if err != nil {
			r.logger.Warn("hook input not encodable", "event", in.HookEventName, "err", err)
			return out
		}
		res := r.exec(ctx, h.Hook, payload)
		if res.reply.SystemMessage != "" {
			r.logger.Info("hook message", "event", h.Event, "command", h.Command, "message", res.reply.SystemMessage)
		}
		if res.reply.Continue != nil && !*res.reply.Continue {
			out.Stop = true
			out.StopReason = joinNonEmpty(out.StopReason, res.reply.StopReason)
		}
		spec := res.reply.Specific
		if c := strings.TrimSpace(spec.AdditionalContext); c != "" {
			contexts = append(contexts, c)
		}
		if len(spec.UpdatedInput) > 0 && string(spec.UpdatedInput) != "null" {
			if h.Claude {
				out.UpdatedInput = loviaInput(in.ToolName, spec.UpdatedInput)
			} else {
				out.UpdatedInput = spec.UpdatedInput
			}
		}
		if spec.PermissionDecision == "ask" {
			out.Ask = true
			if spec.PermissionDecisionReason != "" {
				asks = append(asks, spec.PermissionDecisionReason)
			}
		}
		if res.blocked {
			out.Blocked = true
			msg := res.message
			if msg == "" {
				msg = fmt.Sprintf("blocked by the %s hook %q", h.Event, h.Command)
			}
			msgs = append(msgs, msg)
			continue
		}
		if res.stdout != "" {
			stdouts = append(stdouts, res.stdout)
		}
	}
	out.Message = r.clean(strings.Join(msgs, "\n"), maxMessage)
	out.Stdout = r.clean(strings.Join(stdouts, "\n"), maxCapture+1024) // room for one hook's own note
	out.Context = r.clean(strings.Join(contexts, "\n"), maxCapture)
	out.AskReason = r.clean(strings.Join(asks, "; "), maxMessage)
	out.StopReason = r.clean(out.StopReason, maxMessage)
	return out
}

func joinNonEmpty(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// matches reports whether h applies to in: tool events match the tool's lovia and
// Claude Code names, a session start its source; no matcher matches everything.
func (h compiled) matches(in Input) bool {
	if h.re == nil {
		return true
	}
	switch {
	case in.ToolName != "":
		if h.re.MatchString(in.ToolName) || h.re.MatchString(ClaudeToolName(in.ToolName)) {
			return true
		}
		// lovia's edit_file also does what Claude Code's MultiEdit does.
		return in.ToolName == "edit_file" && h.re.MatchString("MultiEdit")
	case in.match != "":
		return h.re.MatchString(in.match)
	}
	return true
}

// clean scrubs secrets from text meant for the model and caps it, saying so.
func (r *Runner) clean(s string, max int) string {
	if r.scrub != nil {
		s = r.scrub(s)
	}
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[hook output truncated: showing the first %d of %d bytes]", cut, len(s))
}

type execResult struct {
	blocked bool
	message string
	stdout  string
	reply   reply
}

// reply is a hook's JSON answer on stdout (Claude Code's common and event-specific
// fields; lovia hooks may use the same).
type reply struct {
	Continue       *bool  `json:"continue"`
	StopReason     string `json:"stopReason"`
	SuppressOutput bool   `json:"suppressOutput"`
	SystemMessage  string `json:"systemMessage"`
	Decision       string `json:"decision"`
	Reason         string `json:"reason"`
	Specific       struct {
		PermissionDecision       string          `json:"permissionDecision"`
		PermissionDecisionReason string          `json:"permissionDecisionReason"`
		UpdatedInput             json.RawMessage `json:"updatedInput"`
		AdditionalContext        string          `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// cappedBuffer keeps the first maxCapture bytes and counts the rest.
type cappedBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	dropped int64
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	room := maxCapture - b.buf.Len()
	switch {
	case room <= 0:
		b.dropped += int64(len(p))
	case len(p) > room:
		b.buf.Write(p[:room])
		b.dropped += int64(len(p) - room)
	default:
		b.buf.Write(p)
	}
	return len(p), nil
}

// String is what was kept, with a note when output was dropped.
func (b *cappedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := strings.TrimSpace(b.buf.String())
	if b.dropped > 0 {
		s += fmt.Sprintf("\n[hook output truncated at %d KiB; %d more bytes dropped]", maxCapture>>10, b.dropped)
	}
	return s
}

// prepare builds the process of a hook or check: through the workspace executor
// when there is one (sandboxed), payload on stdin, output capped, its own process
// group.
func (r *Runner) prepare(ctx context.Context, argv, env []string, payload []byte) (*exec.Cmd, *cappedBuffer, *cappedBuffer, error) {
	var cmd *exec.Cmd
	if r.command != nil {
		var err error
		if cmd, err = r.command(ctx, argv, r.dir, env); err != nil {
			return nil, nil, nil, err
		}
	} else {
		cmd = exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = r.dir, env
	}
	cmd.Stdin = bytes.NewReader(payload)
	stdout, stderr := &cappedBuffer{}, &cappedBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	setProcessGroup(cmd)
	// Do not wait forever for grandchildren holding the pipes open after a kill.
	cmd.WaitDelay = 2 * time.Second
	return cmd, stdout, stderr, nil
}

func (r *Runner) exec(ctx context.Context, h Hook, payload []byte) execResult {
	timeout := DefaultTimeout
	if h.Timeout > 0 {
		timeout = time.Duration(h.Timeout * float64(time.Second))
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	extra := append([]string(nil), r.env...)
	for k, v := range h.Env {
		extra = append(extra, k+"="+os.ExpandEnv(v))
	}
	extra = append(extra, "LOVIA_HOOK_EVENT="+string(h.Event))
	if r.project != "" {
		// Claude Code's name too: public hook scripts say "$CLAUDE_PROJECT_DIR"/....
		extra = append(extra, "LOVIA_PROJECT_DIR="+r.project, "CLAUDE_PROJECT_DIR="+r.project)
	}
	// A minimal environment, as MCP servers get: a hook is repository or user code,
	// and lovia's provider keys are not its to read.
	env := workspace.MinimalEnv(extra...)
	// sh on Unix; Git Bash, else PowerShell, else cmd on Windows (docs/platforms.md).
	argv := hostshell.Host().Argv(h.Command)
	cmd, stdout, stderr, err := r.prepare(cctx, argv, env, payload)
	if err != nil {
		r.logger.Warn("hook not started; ignored", "event", h.Event, "command", h.Command, "err", err)
		return execResult{}
	}
	start := time.Now()
	err = cmd.Run()
	log := r.logger.With("event", h.Event, "command", h.Command, "duration", time.Since(start))
	switch {
	case errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		log.Warn("hook timed out; ignored", "timeout", timeout)
		return execResult{}
	case ctx.Err() != nil:
		return execResult{}
	case err == nil:
		out := stdout.String()
		rp, isJSON := parseReply(out)
		if !isJSON {
			return execResult{stdout: out}
		}
		res := execResult{reply: rp}
		switch {
		case rp.Decision == "block":
			res.blocked, res.message = true, rp.Reason
		case rp.Specific.PermissionDecision == "deny":
			res.blocked, res.message = true, rp.Specific.PermissionDecisionReason
		case rp.Continue != nil && !*rp.Continue && h.Event == PreToolUse:
			// Stopping everything includes not running this call.
			res.blocked, res.message = true, rp.StopReason
		}
		return res
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == BlockExitCode {
		return execResult{blocked: true, message: stderr.String()}
	}
	log.Warn("hook failed; ignored", "err", err, "stderr", r.clean(stderr.String(), maxMessage))
	return execResult{}
}

// parseReply reads a JSON answer on stdout. ok=false: plain text (or invalid JSON,
// which is then plain text too).
func parseReply(out string) (reply, bool) {
	var rp reply
	t := strings.TrimSpace(out)
	if !strings.HasPrefix(t, "{") {
		return rp, false
	}
	if json.Unmarshal([]byte(t), &rp) != nil {
		return reply{}, false
	}
	return rp, true
}
