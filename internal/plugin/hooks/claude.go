package hooks

import (
	"encoding/json"
	"path/filepath"
	"strings"
)

// Claude Code's hook contract speaks of its own tools (Bash, Edit, …) and their
// argument names (file_path, old_string, …). Hooks read from Claude Code's settings
// files (Hook.Claude) see lovia's calls in those terms, so public hook scripts work
// unchanged; what they send back (updatedInput) is translated the other way.

// claudeNames maps lovia's tool names to Claude Code's.
var claudeNames = map[string]string{
	"shell":               "Bash",
	"read_file":           "Read",
	"write_file":          "Write",
	"edit_file":           "Edit",
	"list_files":          "Glob",
	"grep_files":          "Grep",
	"read_page":           "WebFetch",
	"http_request":        "WebFetch",
	"web_search":          "WebSearch",
	"spawn_subagent":      "Task",
	"todo_write":          "TodoWrite",
	"read_process_output": "BashOutput",
	"kill_process":        "KillShell",
	"load_skill":          "Skill",
	"ask_human":           "AskUserQuestion",
}

// ClaudeToolName is Claude Code's name for lovia's tool: a mapped built-in, an MCP
// tool <server>__<tool> as mcp__<server>__<tool>, else the name itself.
func ClaudeToolName(name string) string {
	if n, ok := claudeNames[name]; ok {
		return n
	}
	if strings.Contains(name, "__") && !strings.HasPrefix(name, "mcp__") {
		return "mcp__" + name
	}
	return name
}

// LoviaToolNames are lovia's tools that Claude Code's name stands for (the name
// itself when nothing maps).
func LoviaToolNames(claude string) []string {
	var out []string
	for l, c := range claudeNames {
		if c == claude {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		if s, ok := strings.CutPrefix(claude, "mcp__"); ok {
			return []string{s}
		}
		return []string{claude}
	}
	return out
}

// argRenames are lovia's argument names that Claude Code spells differently, per tool.
var argRenames = map[string]map[string]string{
	"read_file":           {"path": "file_path"},
	"write_file":          {"path": "file_path"},
	"edit_file":           {"path": "file_path"},
	"grep_files":          {"ignore_case": "-i", "max_results": "head_limit"},
	"shell":               {"background": "run_in_background"},
	"kill_process":        {"id": "shell_id"},
	"read_process_output": {"id": "bash_id"},
}

// absArgs are arguments Claude Code gives as absolute paths.
var absArgs = map[string]bool{"file_path": true, "path": true}

// claudeInput rewrites lovia's arguments of tool name into Claude Code's shape:
// renamed fields, absolute paths (relative to root), shell timeouts in milliseconds.
func claudeInput(name string, args json.RawMessage, root string) json.RawMessage {
	var m map[string]any
	if len(args) == 0 || json.Unmarshal(args, &m) != nil || m == nil {
		return args
	}
	out := make(map[string]any, len(m))
	ren := argRenames[name]
	for k, v := range m {
		if n, ok := ren[k]; ok {
			k = n
		}
		out[k] = v
	}
	if name == "shell" {
		if t, ok := out["timeout"].(float64); ok {
			out["timeout"] = t * 1000
		}
	}
	if _, builtin := claudeNames[name]; builtin && root != "" {
		for k := range absArgs {
			if p, ok := out[k].(string); ok && p != "" && !filepath.IsAbs(p) && !strings.HasPrefix(p, "~") {
				out[k] = filepath.Join(root, p)
			}
		}
	}
	if name == "list_files" || name == "grep_files" {
		if _, ok := out["path"]; !ok && root != "" {
			out["path"] = root
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return args
	}
	return b
}

// loviaInput is the reverse of claudeInput for a hook's updatedInput: Claude Code's
// field names become lovia's (unknown fields are kept and the tool's schema judges).
func loviaInput(name string, in json.RawMessage) json.RawMessage {
	var m map[string]any
	if json.Unmarshal(in, &m) != nil || m == nil {
		return in
	}
	back := map[string]string{}
	for l, c := range argRenames[name] {
		back[c] = l
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if n, ok := back[k]; ok {
			k = n
		}
		out[k] = v
	}
	if name == "shell" {
		if t, ok := out["timeout"].(float64); ok {
			out["timeout"] = int((t + 999) / 1000)
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return in
	}
	return b
}

// claudeEventNames are Claude Code's spellings of the events.
var claudeEventNames = map[Event]string{
	PreToolUse:       "PreToolUse",
	PostToolUse:      "PostToolUse",
	UserPromptSubmit: "UserPromptSubmit",
	SessionStart:     "SessionStart",
	SessionEnd:       "SessionEnd",
	Stop:             "Stop",
	SubagentStop:     "SubagentStop",
	PreCompact:       "PreCompact",
	Notification:     "Notification",
}

// ParseEvent accepts lovia's event names and Claude Code's.
func ParseEvent(s string) (Event, bool) {
	for e, c := range claudeEventNames {
		if s == string(e) || s == c {
			return e, true
		}
	}
	return "", false
}

// ClaudeEventName is Claude Code's name for ev.
func ClaudeEventName(ev Event) string {
	if c, ok := claudeEventNames[ev]; ok {
		return c
	}
	return string(ev)
}

// claudePayload is the stdin document of a Claude Code hook.
func claudePayload(in Input, root string) ([]byte, error) {
	m := map[string]any{
		"session_id":      in.SessionID,
		"transcript_path": "",
		"cwd":             in.Cwd,
		"permission_mode": "default",
		"hook_event_name": ClaudeEventName(in.HookEventName),
	}
	if in.ToolName != "" {
		m["tool_name"] = ClaudeToolName(in.ToolName)
		in := claudeInput(in.ToolName, in.ToolInput, root)
		if len(in) == 0 {
			in = json.RawMessage("{}")
		}
		m["tool_input"] = in
	}
	if in.ToolUseID != "" {
		m["tool_use_id"] = in.ToolUseID
	}
	if in.ToolResponse != nil {
		resp := map[string]any{"output": in.ToolResponse.Output, "success": !in.ToolResponse.IsError}
		if in.ToolName == "shell" {
			resp["stdout"] = in.ToolResponse.Output
			resp["stderr"] = ""
			resp["interrupted"] = false
		}
		var args map[string]any
		if json.Unmarshal(claudeInput(in.ToolName, in.ToolInput, root), &args) == nil {
			if p, ok := args["file_path"]; ok {
				resp["filePath"] = p
			}
		}
		m["tool_response"] = resp
	}
	switch in.HookEventName {
	case UserPromptSubmit:
		m["prompt"] = in.Prompt
	case Stop, SubagentStop:
		m["stop_hook_active"] = in.StopHookActive
	case SessionStart:
		m["source"] = orDefault(in.Source, "startup")
	case SessionEnd:
		m["reason"] = orDefault(in.Reason, "other")
	case PreCompact:
		m["trigger"] = "auto"
		m["custom_instructions"] = ""
	case Notification:
		m["message"] = in.Message
	}
	return json.Marshal(m)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// LoviaTools maps allowed-tools entries (Claude Code's names such as Bash(git add:*),
// Edit, mcp__github__create_issue, or lovia's own) to lovia's tool names. Argument
// patterns in parentheses are dropped: the policy still judges every call.
func LoviaTools(list []string) []string {
	var out []string
	add := func(n string) {
		for _, o := range out {
			if o == n {
				return
			}
		}
		out = append(out, n)
	}
	for _, t := range list {
		name, _, _ := strings.Cut(t, "(")
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if name == "MultiEdit" {
			name = "Edit"
		}
		for _, n := range LoviaToolNames(name) {
			add(n)
		}
	}
	return out
}
