package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/tool"
)

// Tool argument types: their fields and tags are the JSON Schema the model sees.

type ReadFileArgs struct {
	Path   string `json:"path" jsonschema:"description=File to read: relative to the workspace root or absolute (~ allowed)"`
	Offset int    `json:"offset,omitempty" jsonschema:"description=1-based line to start at (default 1)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"description=Number of lines to return (default 2000)"`
}

type ListFilesArgs struct {
	Path    string `json:"path,omitempty" jsonschema:"description=Directory to list (default: the workspace root)"`
	Pattern string `json:"pattern,omitempty" jsonschema:"description=Glob relative to path, e.g. **/*.go or src/*.ts (default: all files)"`
	Hidden  bool   `json:"hidden,omitempty" jsonschema:"description=Include dotfiles and dot-directories"`
	Limit   int    `json:"limit,omitempty" jsonschema:"description=Maximum entries (default 1000)"`
}

type GrepFilesArgs struct {
	Pattern    string `json:"pattern" jsonschema:"description=Regular expression (RE2 syntax) to search for"`
	Path       string `json:"path,omitempty" jsonschema:"description=File or directory to search (default: the workspace root)"`
	Glob       string `json:"glob,omitempty" jsonschema:"description=Only files whose path relative to path matches this glob, e.g. **/*.go"`
	IgnoreCase bool   `json:"ignore_case,omitempty" jsonschema:"description=Case-insensitive search"`
	Literal    bool   `json:"literal,omitempty" jsonschema:"description=Treat pattern as a fixed string"`
	Hidden     bool   `json:"hidden,omitempty" jsonschema:"description=Also search dotfiles"`
	MaxResults int    `json:"max_results,omitempty" jsonschema:"description=Maximum matching lines (default 200, at most 2000)"`
}

type WriteFileArgs struct {
	Path       string `json:"path" jsonschema:"description=File to write (parent directories are created)"`
	Content    string `json:"content" jsonschema:"description=The complete new content of the file"`
	CreateOnly bool   `json:"create_only,omitempty" jsonschema:"description=Fail if the file already exists"`
}

type EditFileArgs struct {
	Path       string `json:"path" jsonschema:"description=File to edit"`
	OldString  string `json:"old_string" jsonschema:"description=Exact text to replace, including indentation; must occur exactly once unless replace_all"`
	NewString  string `json:"new_string" jsonschema:"description=Replacement text"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"description=Replace every occurrence"`
}

type ShellArgs struct {
	Command     string `json:"command" jsonschema:"description=Shell command (bash syntax)"`
	Description string `json:"description,omitempty" jsonschema:"description=A few words on what the command does and why (shown to the user)"`
	Cwd         string `json:"cwd,omitempty" jsonschema:"description=Working directory (default: the workspace root)"`
	Timeout     int    `json:"timeout,omitempty" jsonschema:"description=Timeout in seconds (default 300)"`
	Background  bool   `json:"background,omitempty" jsonschema:"description=Run in the background and return a process id (for servers and watchers); read with read_process_output"`
}

type ReadProcessOutputArgs struct {
	ID   string `json:"id" jsonschema:"description=Process id returned by shell with background=true"`
	Wait int    `json:"wait,omitempty" jsonschema:"description=Seconds to wait for the process to finish before reading (default 0, at most 60)"`
}

type KillProcessArgs struct {
	ID string `json:"id" jsonschema:"description=Process id returned by shell with background=true"`
}

// Plugin returns the workspace as a plugin: its tools and its system-prompt section.
// The Workspace (and its session state) outlives runs; Close it when the front end exits.
func (w *Workspace) Plugin() plugin.Plugin {
	return plugin.Func{ID: "workspace", Fn: func(ctx context.Context, rc *tool.RunContext) (*plugin.Contribution, error) {
		return &plugin.Contribution{Tools: w.Tools(), Instructions: w.Instructions()}, nil
	}}
}

// result turns (text, err) into a tool result: model-fixable errors and denials are
// error results, not tool failures.
func result(s string, err error) (tool.Result, error) {
	if err == nil {
		return tool.Result{Text: s}, nil
	}
	// Every failure here is the model's to act on (bad path, denial, no match).
	return tool.Result{Text: err.Error(), IsError: true}, nil
}

// withDiff is result for a tool that changed a file: the diff it computed rides
// along for front ends (tool.Result.Diff), so none has to rebuild it.
func withDiff(s, diff string, err error) (tool.Result, error) {
	r, rerr := result(s, err)
	if err == nil {
		r.Diff = diff
	}
	return r, rerr
}

// pathApproval is the approval predicate of a file tool.
func (w *Workspace) pathApproval(path string, op Op, diff func() string) (*event.Approval, error) {
	if path == "" && op == OpRead {
		path = "."
	}
	abs, d, why := w.policy.Judge(path, "", op)
	w.recordShown(op.String()+"\x00"+path, d == Ask, abs)
	switch d {
	case Deny:
		// The run loop prefixes "denied:".
		return nil, fmt.Errorf("%s %s: %s. %s", op, path, why, w.policy.AllowHint(op, abs))
	case Ask:
		a := &event.Approval{Kind: "path", Summary: fmt.Sprintf("%s %s (%s)", op, abs, why), Path: abs, Rules: []string{op.String() + ":" + abs}}
		if diff != nil {
			a.Diff = diff()
		}
		return a, nil
	}
	return nil, nil
}

// grantPath stores "allow for this session" for a path approval.
func (w *Workspace) grant(a *event.Approval) {
	if a == nil {
		return
	}
	switch a.Kind {
	case "command":
		w.policy.Grant(a.Rules)
	case "path":
		for _, r := range a.Rules {
			op, p, ok := strings.Cut(r, ":")
			if !ok {
				continue
			}
			if op == "write" {
				w.policy.GrantPath(p, OpWrite)
			} else {
				w.policy.GrantPath(p, OpRead)
			}
		}
	}
}

func decode[A any](raw json.RawMessage) (A, error) {
	var a A
	if len(raw) == 0 {
		return a, nil
	}
	err := json.Unmarshal(raw, &a)
	return a, err
}

// Tools returns the workspace tools.
func (w *Workspace) Tools() []tool.Tool {
	grant := tool.OnGrant(w.grant)
	readOnly := w.policy.preset.WriteInside == Deny && len(w.policy.writable) == 0
	tools := []tool.Tool{
		tool.NewResult("read_file", "Read a text file with line numbers (1-based). Large files are paged: pass offset and limit. Binary files are refused.",
			func(ctx context.Context, rc *tool.RunContext, a ReadFileArgs) (tool.Result, error) {
				return result(w.readFile(a.Path, a.Offset, a.Limit, w.toolGate(ctx, rc, OpRead, a.Path)))
			},
			tool.ApprovalWhen(func(ctx context.Context, rc *tool.RunContext, raw json.RawMessage) (*event.Approval, error) {
				a, err := decode[ReadFileArgs](raw)
				if err != nil {
					return nil, nil
				}
				return w.pathApproval(a.Path, OpRead, nil)
			}), grant),
		tool.NewResult("list_files", "List files under a directory (recursively), optionally filtered by a glob such as **/*.go. Respects .gitignore; dotfiles only with hidden=true.",
			func(ctx context.Context, rc *tool.RunContext, a ListFilesArgs) (tool.Result, error) {
				return result(w.listFiles(ListOptions{Path: a.Path, Pattern: a.Pattern, Hidden: a.Hidden, Limit: a.Limit}, w.toolGate(ctx, rc, OpRead, orDot(a.Path))))
			},
			tool.ApprovalWhen(func(ctx context.Context, rc *tool.RunContext, raw json.RawMessage) (*event.Approval, error) {
				a, err := decode[ListFilesArgs](raw)
				if err != nil {
					return nil, nil
				}
				return w.pathApproval(a.Path, OpRead, nil)
			}), grant),
		tool.NewResult("grep_files", "Search file contents with a regular expression; prints path:line:text. Respects .gitignore, skips binary files.",
			func(ctx context.Context, rc *tool.RunContext, a GrepFilesArgs) (tool.Result, error) {
				return result(w.grepFiles(ctx, GrepOptions{Pattern: a.Pattern, Path: a.Path, Glob: a.Glob, IgnoreCase: a.IgnoreCase, Literal: a.Literal, Hidden: a.Hidden, MaxResults: a.MaxResults}, w.toolGate(ctx, rc, OpRead, orDot(a.Path))))
			},
			tool.ApprovalWhen(func(ctx context.Context, rc *tool.RunContext, raw json.RawMessage) (*event.Approval, error) {
				a, err := decode[GrepFilesArgs](raw)
				if err != nil {
					return nil, nil
				}
				return w.pathApproval(a.Path, OpRead, nil)
			}), grant),
	}
	if readOnly {
		return tools
	}
	tools = append(tools,
		tool.NewResult("write_file", "Create a file or replace its whole content. Prefer edit_file for changes to existing files. create_only refuses to overwrite.",
			func(ctx context.Context, rc *tool.RunContext, a WriteFileArgs) (tool.Result, error) {
				return withDiff(w.writeFile(a.Path, a.Content, a.CreateOnly, w.toolGate(ctx, rc, OpWrite, a.Path)))
			},
			tool.Parallel(false),
			tool.ApprovalWhen(func(ctx context.Context, rc *tool.RunContext, raw json.RawMessage) (*event.Approval, error) {
				a, err := decode[WriteFileArgs](raw)
				if err != nil {
					return nil, nil
				}
				return w.pathApproval(a.Path, OpWrite, func() string { return w.PreviewWrite(a.Path, a.Content) })
			}), grant),
		tool.NewResult("edit_file", "Replace an exact string in a file (it must occur exactly once unless replace_all). Read the file first; an edit of a file changed since you read it is refused. Returns a unified diff.",
			func(ctx context.Context, rc *tool.RunContext, a EditFileArgs) (tool.Result, error) {
				return withDiff(w.editFile(a.Path, a.OldString, a.NewString, a.ReplaceAll, w.toolGate(ctx, rc, OpWrite, a.Path)))
			},
			tool.Parallel(false),
			tool.ApprovalWhen(func(ctx context.Context, rc *tool.RunContext, raw json.RawMessage) (*event.Approval, error) {
				a, err := decode[EditFileArgs](raw)
				if err != nil {
					return nil, nil
				}
				return w.pathApproval(a.Path, OpWrite, func() string { return w.PreviewEdit(a.Path, a.OldString, a.NewString, a.ReplaceAll) })
			}), grant),
	)
	if w.policy.name == PresetReadonly {
		return tools
	}
	tools = append(tools,
		tool.NewResult("shell", "Run a bash command in the workspace (own process group, minimal environment, output capped at 30,000 characters head+tail, default timeout 300 s). Use background=true for servers and watchers.",
			func(ctx context.Context, rc *tool.RunContext, a ShellArgs) (tool.Result, error) {
				return w.shellTool(ctx, rc, a)
			},
			tool.Parallel(false),
			tool.MaxOutput(MaxShellOutput+500),
			tool.ApprovalWhen(func(ctx context.Context, rc *tool.RunContext, raw json.RawMessage) (*event.Approval, error) {
				a, err := decode[ShellArgs](raw)
				if err != nil {
					return nil, nil
				}
				return w.commandApproval(a)
			}), grant),
		tool.New("read_process_output", "Read new output of a background process and its status.",
			func(ctx context.Context, rc *tool.RunContext, a ReadProcessOutputArgs) (string, error) {
				s, err := w.ReadProcessOutput(ctx, a.ID, time.Duration(min(max(a.Wait, 0), 60))*time.Second)
				if err != nil {
					return "error: " + err.Error(), nil
				}
				out, _ := tool.Truncate(s, MaxShellOutput)
				return out, nil
			}),
		tool.New("kill_process", "Kill a background process (and its process group).",
			func(ctx context.Context, rc *tool.RunContext, a KillProcessArgs) (string, error) {
				s, err := w.KillProcess(a.ID)
				if err != nil {
					return "error: " + err.Error(), nil
				}
				return s, nil
			}, tool.Parallel(false)),
	)
	return tools
}

// commandApproval: deny is an error (the call is refused), ask is an approval.
func (w *Workspace) commandApproval(a ShellArgs) (*event.Approval, error) {
	cwd, err := w.dir(a.Cwd)
	if err != nil {
		return nil, err
	}
	an := w.policy.AnalyzeCommand(a.Command, cwd)
	w.recordShownCommand(a, an)
	switch an.Decision {
	case Deny:
		return nil, errors.New(an.Explain() + ". " + w.commandHint(an))
	case Ask:
		sum := a.Command
		if a.Description != "" {
			sum = a.Description + ": " + a.Command
		}
		return &event.Approval{Kind: "command", Summary: sum, Subcommands: an.Texts(), Rules: an.Rules()}, nil
	}
	return nil, nil
}

func (w *Workspace) commandHint(an *Analysis) string {
	for _, c := range an.Claims {
		if c.Verdict == Deny && c.Abs != "" {
			return w.policy.AllowHint(c.Op, c.Abs)
		}
	}
	if w.policy.name == PresetReadonly {
		return "The readonly policy runs no commands; the user can switch with --policy coding."
	}
	return "A command rule in workspace.command_rules (.lovia/config.yaml) decides this."
}

func (w *Workspace) shellTool(ctx context.Context, rc *tool.RunContext, a ShellArgs) (tool.Result, error) {
	if strings.TrimSpace(a.Command) == "" {
		return tool.Result{Text: "command is empty", IsError: true}, nil
	}
	cwd, err := w.dir(a.Cwd)
	if err != nil {
		return result("", err)
	}
	an := w.policy.AnalyzeCommand(a.Command, cwd)
	if an.Decision == Deny {
		return tool.Result{Text: "denied: " + an.Explain() + ". " + w.commandHint(an), IsError: true}, nil
	}
	// The run loop invokes only after an "ask" was approved, so the person has seen
	// this command: its run-time asks pass, and approved writes open in the sandbox —
	// but only for the paths the approval showed (a link changed since resolves to a
	// path that is asked again at run time).
	shown, approved := w.takeShownCommand(a)
	approved = approved && an.Decision == Ask
	var writable, paths []string
	if approved {
		for _, c := range an.Claims {
			if c.Verdict != Ask || c.Abs == "" || !shown[c.Op.String()+":"+c.Abs] {
				continue
			}
			paths = append(paths, c.Abs)
			if c.Op == OpWrite {
				writable = append(writable, existingAncestor(c.Abs))
			}
		}
	}
	req := ShellRequest{Command: a.Command, Cwd: cwd, Approved: approved, ApprovedPaths: paths, Writable: writable}
	if a.Timeout > 0 {
		req.Timeout = time.Duration(min(a.Timeout, maxTimeoutSeconds)) * time.Second
		if !a.Background {
			// The model chooses the timeout, and `sleep 99999999` runs without
			// approval: uncapped, one call would hold the run (a CI job) for years.
			// A foreground call may ask for more than the configured default, but
			// not without bound.
			req.Timeout = min(req.Timeout, w.maxShellTimeout())
		}
	}
	if rc != nil && rc.Ask != nil {
		req.Ask = func(ctx context.Context, what, reason string) bool {
			d, err := rc.Ask(ctx, &event.Approval{Kind: "command", Summary: "at run time: " + what + " (" + reason + ")", Subcommands: []string{what}})
			return err == nil && d.Allow
		}
	}
	if a.Background {
		id := w.StartBackground(req)
		return tool.Result{Text: fmt.Sprintf("started background process %s; read its output with read_process_output (id %q), stop it with kill_process", id, id)}, nil
	}
	buf := newCapBuffer(MaxShellOutput)
	req.Output = buf
	start := time.Now()
	res := w.RunShell(ctx, req)
	out := buf.String()
	var b strings.Builder
	b.WriteString(out)
	if out != "" && !strings.HasSuffix(out, "\n") {
		b.WriteByte('\n')
	}
	isErr := false
	switch {
	case res.Denied != nil:
		isErr = true
		fmt.Fprintf(&b, "[stopped: %s]", res.Denied.Error())
	case res.TimedOut:
		isErr = true
		fmt.Fprintf(&b, "[timed out after %s; the process group was killed]", req.timeoutOr(w.shellTimeout))
	case res.Err != nil:
		isErr = true
		fmt.Fprintf(&b, "[error: %v]", res.Err)
	default:
		fmt.Fprintf(&b, "[exit status %d, %s]", res.ExitCode, time.Since(start).Round(time.Millisecond))
		isErr = res.ExitCode != 0
	}
	return tool.Result{Text: b.String(), IsError: isErr}, nil
}

// maxTimeoutSeconds keeps a requested timeout clear of time.Duration's overflow.
const maxTimeoutSeconds = 1 << 30

// ShellTimeoutFactor is how many times the configured shell timeout (the default of
// a call) a foreground call may ask for.
const ShellTimeoutFactor = 4

// maxShellTimeout is the longest timeout a foreground shell call gets.
func (w *Workspace) maxShellTimeout() time.Duration {
	return ShellTimeoutFactor * w.shellTimeout
}

func (r ShellRequest) timeoutOr(d time.Duration) time.Duration {
	if r.Timeout > 0 {
		return r.Timeout
	}
	return d
}

// existingAncestor is the path itself when it exists, else its parent directory
// (Landlock rules need an existing file).
func existingAncestor(p string) string {
	if fileExists(p) {
		return p
	}
	return filepath.Dir(p)
}

// Instructions is the workspace's system-prompt section, generated from the policy so
// it never promises more than is enforced.
func (w *Workspace) Instructions() string {
	p := w.policy
	var b strings.Builder
	fmt.Fprintf(&b, "## Workspace\nYou work in %s (policy: %s). Paths may be relative to it.\n", p.root, p.name)
	word := map[Decision]string{Allow: "allowed", Ask: "allowed after the user approves", Deny: "not allowed"}
	fmt.Fprintf(&b, "- Reading files inside the workspace: allowed. Outside it: %s.\n", word[p.preset.ReadOutside])
	fmt.Fprintf(&b, "- Writing inside the workspace: %s. Outside it: %s.\n", word[p.preset.WriteInside], word[p.preset.WriteOutside])
	if p.preset.WriteInside == Allow {
		b.WriteString("- Writing under .git/ (config, hooks): allowed after the user approves.\n")
	}
	var extra []string
	if p.tmp != "" {
		extra = append(extra, p.tmp+" (temp)")
	}
	extra = append(extra, p.writable...)
	if len(extra) > 0 {
		fmt.Fprintf(&b, "- Also writable: %s.\n", strings.Join(extra, ", "))
	}
	if len(p.readable) > 0 {
		fmt.Fprintf(&b, "- Also readable: %s.\n", strings.Join(p.readable, ", "))
	}
	var ds []string
	for _, d := range p.denied {
		ds = append(ds, d.raw)
	}
	if len(ds) > 0 {
		fmt.Fprintf(&b, "- Never readable or writable: %s.\n", strings.Join(ds, ", "))
	}
	b.WriteString("- Credential stores (~/.ssh, ~/.aws, ~/.gnupg, ~/.netrc, ~/.npmrc, ...) are off limits to your file operations and commands' arguments.\n")
	switch {
	case p.name == PresetReadonly:
		b.WriteString("- You cannot run shell commands.\n")
	default:
		fmt.Fprintf(&b, "- Shell commands: %s by default", word[p.preset.Shell])
		if p.preset.Shell != Allow {
			b.WriteString(" (read-only commands such as ls, cat, grep and find run without asking)")
		}
		b.WriteString("; each simple command and every file a redirect opens is checked against this policy when it runs, and a denied one stops the command.\n")
		var rules []string
		for _, r := range p.cmdRules {
			rules = append(rules, fmt.Sprintf("%q %s", strings.Join(r.words, " "), r.decision))
		}
		sort.Strings(rules)
		if len(rules) > 0 {
			fmt.Fprintf(&b, "- Command rules: %s.\n", strings.Join(rules, ", "))
		}
		if w.Sandboxed() {
			b.WriteString("- " + w.executor.Describe() + "\n")
		} else if w.sandboxNote != "" {
			b.WriteString("- Note: " + w.sandboxNote + ".\n")
		}
		b.WriteString("- Commands get a minimal environment (PATH, HOME, locale, TERM); the default timeout is " + w.shellTimeout.String() + " (at most " + w.maxShellTimeout().String() + " when a call asks for more). Use background=true for servers, then read_process_output.\n")
	}
	b.WriteString("- Read a file before editing it: edit_file refuses files changed since you last read them. A denied operation returns an error that says why; do not try to work around it.\n")
	return b.String()
}

// recordShown remembers the resolved path an approval showed for op on path (the
// call's key), or forgets it when no approval was needed.
func (w *Workspace) recordShown(key string, asked bool, abs string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if asked {
		w.shown[key] = abs
	} else {
		delete(w.shown, key)
	}
}

// toolGate binds a file tool's run to its approval: an "ask" at run time passes
// only for the very path the approval showed. A path that resolves elsewhere now
// (a link changed since) is asked again, or denied when nobody can answer.
func (w *Workspace) toolGate(ctx context.Context, rc *tool.RunContext, op Op, path string) gate {
	key := op.String() + "\x00" + path
	w.mu.Lock()
	shown, ok := w.shown[key]
	delete(w.shown, key)
	w.mu.Unlock()
	return func(abs, why string) bool {
		if ok && abs == shown {
			return true
		}
		if rc == nil || rc.Ask == nil {
			return false
		}
		d, err := rc.Ask(ctx, &event.Approval{Kind: "path", Summary: fmt.Sprintf("%s %s (%s; at run time: it was not the path shown before)", op, abs, why), Path: abs})
		return err == nil && d.Allow
	}
}

func orDot(p string) string {
	if p == "" {
		return "."
	}
	return p
}

func commandKey(a ShellArgs) string { return "shell\x00" + a.Cwd + "\x00" + a.Command }

// recordShownCommand remembers the paths an approval of a command showed.
func (w *Workspace) recordShownCommand(a ShellArgs, an *Analysis) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if an.Decision != Ask {
		delete(w.shownCmd, commandKey(a))
		return
	}
	set := map[string]bool{}
	for _, c := range an.Claims {
		if c.Verdict == Ask && c.Abs != "" {
			set[c.Op.String()+":"+c.Abs] = true
		}
	}
	w.shownCmd[commandKey(a)] = set
}

// takeShownCommand returns (and forgets) what the approval of the command showed;
// false when no approval was shown.
func (w *Workspace) takeShownCommand(a ShellArgs) (map[string]bool, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	set, ok := w.shownCmd[commandKey(a)]
	delete(w.shownCmd, commandKey(a))
	return set, ok
}
