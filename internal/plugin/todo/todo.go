// Package todo is the built-in task-list plugin: a todo_write tool with full-list
// replace semantics and a per-turn reminder injected into the model's view only.
//
// The list has no state of its own: it is the arguments of the last successful
// todo_write call in the transcript. That keeps it correct across resume and
// compaction (the transcript is canonical) and lets front ends read it from the
// tool_call events they already receive (see Parse).
package todo

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// ToolName is the name of the tool this plugin contributes.
const ToolName = "todo_write"

// Status values of an item.
const (
	Pending    = "pending"
	InProgress = "in_progress"
	Completed  = "completed"
)

// Item is one entry of the list.
type Item struct {
	Content string `json:"content" jsonschema:"description=What to do, imperative and specific (e.g. 'Run the tests')"`
	Status  string `json:"status" jsonschema:"enum=pending,enum=in_progress,enum=completed,description=pending | in_progress | completed"`
}

// Args are todo_write's arguments.
type Args struct {
	Todos []Item `json:"todos" jsonschema:"description=The complete list; it replaces the previous one"`
}

const description = `Create or update your task list for the current work. Send the COMPLETE list every time: it replaces the previous one.
Use it for multi-step tasks (3+ steps) to plan and to show progress. Keep exactly one item in_progress while you work; mark an item completed as soon as it is done, before starting the next. Do not use it for trivial single-step requests.`

const instructions = `You have a todo_write tool. For multi-step work, write a short task list first and keep it current: one item in_progress at a time, mark items completed as you finish them.`

// MaxItems bounds the list so a runaway call cannot flood every later view.
const MaxItems = 100

// Plugin is the todo plugin. The zero value is ready to use.
type Plugin struct{}

// New returns the todo plugin.
func New() *Plugin { return &Plugin{} }

// Name implements plugin.Plugin.
func (*Plugin) Name() string { return "todo" }

// Setup implements plugin.Plugin.
func (*Plugin) Setup(_ context.Context, _ *tool.RunContext) (*plugin.Contribution, error) {
	return &plugin.Contribution{
		Tools:         []tool.Tool{Tool()},
		Instructions:  instructions,
		ViewInjectors: []plugin.ViewInjector{Reminder},
	}, nil
}

// Tool returns the todo_write tool.
func Tool() tool.Tool {
	return tool.NewResult(ToolName, description, func(_ context.Context, _ *tool.RunContext, a Args) (tool.Result, error) {
		if err := Validate(a.Todos); err != nil {
			return tool.Result{Text: "todo list not updated: " + err.Error(), IsError: true}, nil
		}
		return tool.Result{Text: "Todo list updated.\n" + Format(a.Todos)}, nil
	}, tool.Parallel(false))
}

// Validate checks a list: known statuses, non-empty content, at most one in_progress.
func Validate(items []Item) error {
	if len(items) > MaxItems {
		return fmt.Errorf("the list has %d items; keep it to at most %d", len(items), MaxItems)
	}
	inProgress := 0
	for i, it := range items {
		if strings.TrimSpace(it.Content) == "" {
			return fmt.Errorf("item %d has empty content; describe the task", i+1)
		}
		switch it.Status {
		case Pending, Completed:
		case InProgress:
			inProgress++
		default:
			return fmt.Errorf("item %d (%q) has status %q; use pending, in_progress or completed", i+1, it.Content, it.Status)
		}
	}
	if inProgress > 1 {
		return fmt.Errorf("%d items are in_progress; keep exactly one in_progress and mark the others pending or completed", inProgress)
	}
	return nil
}

// Format renders a list as checkbox lines ("[x]" done, "[>]" in progress, "[ ]" pending).
func Format(items []Item) string {
	if len(items) == 0 {
		return "(empty list)"
	}
	var b strings.Builder
	for i, it := range items {
		if i > 0 {
			b.WriteByte('\n')
		}
		mark := "[ ]"
		switch it.Status {
		case Completed:
			mark = "[x]"
		case InProgress:
			mark = "[>]"
		}
		fmt.Fprintf(&b, "%s %s", mark, it.Content)
	}
	return b.String()
}

// Parse decodes todo_write arguments (e.g. from a tool_call_started event) into the
// list, validated. Front ends use it to show the list.
func Parse(args json.RawMessage) ([]Item, error) {
	var a Args
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, fmt.Errorf("todo_write arguments: %w", err)
	}
	if err := Validate(a.Todos); err != nil {
		return nil, err
	}
	return a.Todos, nil
}

// Current returns the list as of entries: the arguments of the last todo_write call
// whose paired result is not an error. ok is false when no list was ever written.
func Current(entries []transcript.Entry) (items []Item, ok bool) {
	failed := map[string]bool{}
	answered := map[string]bool{}
	for _, e := range entries {
		if e.Type == transcript.TypeToolResult && e.Name == ToolName {
			answered[e.CallID] = true
			if e.IsError {
				failed[e.CallID] = true
			}
		}
	}
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e.Type != transcript.TypeToolCall || e.Name != ToolName || !answered[e.CallID] || failed[e.CallID] {
			continue
		}
		list, err := Parse(e.Args)
		if err != nil {
			continue
		}
		return list, true
	}
	return nil, false
}

// Items returns the run's current list (nil when none was written).
func Items(rc *tool.RunContext) []Item {
	if rc == nil || rc.Entries == nil {
		return nil
	}
	items, _ := Current(rc.Entries())
	return items
}

// Reminder is the view injector: while the list has open items it appends a short
// synthetic note with the list to the tail of the view. It is a user-role entry (the
// form Claude Code uses) because system entries are folded into the cached system head.
func Reminder(_ context.Context, rc *tool.RunContext) ([]transcript.Entry, error) {
	if rc == nil || rc.Entries == nil {
		return nil, nil
	}
	items, ok := Current(rc.Entries())
	if !ok || len(items) == 0 {
		return nil, nil
	}
	open := 0
	for _, it := range items {
		if it.Status != Completed {
			open++
		}
	}
	if open == 0 {
		return nil, nil
	}
	e := transcript.UserInput("<system-reminder>\nYour todo list (update it with todo_write as you progress; do not mention this reminder):\n" + Format(items) + "\n</system-reminder>")
	e.Synthetic = true
	return []transcript.Entry{e}, nil
}
