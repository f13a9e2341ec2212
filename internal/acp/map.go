package acp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/lovia-dev/lovia/internal/plugin/mcp"
	"github.com/lovia-dev/lovia/internal/plugin/todo"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// Modes are lovia's workspace policies, offered as ACP session modes.
var modeInfo = []struct{ id, name, desc string }{
	{"readonly", "Read only", "Reads and searches; no edits, no commands"},
	{"coding", "Coding", "Edits inside the workspace; commands and network ask"},
	{"trusted", "Trusted", "Edits and commands run without asking (lovia's hard denials still apply)"},
}

// modeState lists the modes with current as the selected one.
func modeState(current string) *sdk.SessionModeState {
	st := &sdk.SessionModeState{CurrentModeId: sdk.SessionModeId(current)}
	for _, m := range modeInfo {
		st.AvailableModes = append(st.AvailableModes, sdk.SessionMode{Id: sdk.SessionModeId(m.id), Name: m.name, Description: sdk.Ptr(m.desc)})
	}
	return st
}

func validMode(id string) bool {
	for _, m := range modeInfo {
		if m.id == id {
			return true
		}
	}
	return false
}

// toolKind classifies a lovia tool for the client's icons and grouping.
func toolKind(name string) sdk.ToolKind {
	switch name {
	case "read_file", "read_process_output":
		return sdk.ToolKindRead
	case "write_file", "edit_file":
		return sdk.ToolKindEdit
	case "shell", "kill_process":
		return sdk.ToolKindExecute
	case "list_files", "grep_files", "search_memory", "web_search":
		return sdk.ToolKindSearch
	case "http_request", "read_page":
		return sdk.ToolKindFetch
	case todo.ToolName:
		return sdk.ToolKindThink
	}
	return sdk.ToolKindOther
}

// toolArgs are the argument fields the mapping reads (a union of the tools').
type toolArgs struct {
	Path        string `json:"path"`
	Offset      int    `json:"offset"`
	Pattern     string `json:"pattern"`
	Command     string `json:"command"`
	Description string `json:"description"`
	Content     string `json:"content"`
	OldString   string `json:"old_string"`
	NewString   string `json:"new_string"`
	ReplaceAll  bool   `json:"replace_all"`
	URL         string `json:"url"`
	Query       string `json:"query"`
}

func parseArgs(raw json.RawMessage) toolArgs {
	var a toolArgs
	_ = json.Unmarshal(raw, &a) // a tool's own validation reports bad arguments
	return a
}

// toolTitle is the one line the client shows for a call.
func toolTitle(name string, a toolArgs) string {
	var t string
	switch name {
	case "read_file":
		t = "Read " + a.Path
	case "write_file":
		t = "Write " + a.Path
	case "edit_file":
		t = "Edit " + a.Path
	case "list_files":
		t = strings.TrimSpace("List " + a.Path + " " + a.Pattern)
	case "grep_files":
		t = "Search " + a.Pattern
		if a.Path != "" {
			t += " in " + a.Path
		}
	case "shell":
		t = a.Command
	case "http_request", "read_page":
		t = "Fetch " + a.URL
	case "web_search":
		t = "Search the web: " + a.Query
	case todo.ToolName:
		t = "Update plan"
	}
	t = strings.Join(strings.Fields(t), " ")
	if t == "" || t == "List" {
		t = name
	}
	if utf8.RuneCountInString(t) > 200 {
		t = string([]rune(t)[:199]) + "…"
	}
	return t
}

// absPath resolves a tool's path argument against the workspace root ("" when the
// tool has none or it cannot be resolved here, e.g. "~/x").
func absPath(root, p string) string {
	if p == "" || strings.HasPrefix(p, "~") {
		return ""
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	return filepath.Clean(p)
}

// toolLocations are the files a call touches, for the client's follow-along.
func toolLocations(root, name string, a toolArgs) []sdk.ToolCallLocation {
	switch name {
	case "read_file", "write_file", "edit_file", "list_files", "grep_files":
	default:
		return nil
	}
	p := absPath(root, a.Path)
	if p == "" {
		if name == "list_files" || name == "grep_files" {
			p = root
		} else {
			return nil
		}
	}
	loc := sdk.ToolCallLocation{Path: p}
	if name == "read_file" && a.Offset > 0 {
		loc.Line = sdk.Ptr(a.Offset)
	}
	return []sdk.ToolCallLocation{loc}
}

// maxDiffFile bounds a file read to show a diff; larger files get no diff.
const maxDiffFile = 1 << 20

// readForDiff returns the text of path for a diff: only a regular file (not a
// symlink: the repository is untrusted and may point it anywhere) inside root whose
// directory resolves inside root, at most maxDiffFile bytes of UTF-8. exists is
// false when there is no file; ok is false when the file cannot be shown.
func readForDiff(root, path string) (text string, exists, ok bool) {
	if path == "" {
		return "", false, false
	}
	rr, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", false, false
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		// A new file in a new directory: nothing to compare against.
		return "", false, within(root, path)
	}
	if !within(rr, dir) {
		return "", false, false
	}
	real := filepath.Join(dir, filepath.Base(path))
	st, err := os.Lstat(real)
	if os.IsNotExist(err) {
		return "", false, true
	}
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxDiffFile {
		return "", true, false
	}
	f, err := os.OpenFile(real, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return "", true, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxDiffFile+1))
	if err != nil || len(b) > maxDiffFile || !utf8.Valid(b) {
		return "", true, false
	}
	return string(b), true, true
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// proposed is the content an edit would leave (ok false when it cannot be told).
func proposed(name string, a toolArgs, old string, exists bool) (string, bool) {
	switch name {
	case "write_file":
		return a.Content, true
	case "edit_file":
		if !exists || a.OldString == "" || !strings.Contains(old, a.OldString) {
			return "", false
		}
		if a.ReplaceAll {
			return strings.ReplaceAll(old, a.OldString, a.NewString), true
		}
		return strings.Replace(old, a.OldString, a.NewString, 1), true
	}
	return "", false
}

// diffContent is an ACP diff (oldText omitted for a new file).
func diffContent(path, oldText string, existed bool, newText string) sdk.ToolCallContent {
	if existed {
		return sdk.ToolDiffContent(path, newText, oldText)
	}
	return sdk.ToolDiffContent(path, newText)
}

// maxToolText bounds a tool's output echoed to the client (the model saw the
// tool's own bounded result; the client needs a glance, not the whole log).
const maxToolText = 64 << 10

func textContent(s string) []sdk.ToolCallContent {
	if s == "" {
		return nil
	}
	if len(s) > maxToolText {
		cut := maxToolText
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "\n… (truncated)"
	}
	return []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(s))}
}

// planEntries maps a todo_write list to an ACP plan.
func planEntries(items []todo.Item) []sdk.PlanEntry {
	out := make([]sdk.PlanEntry, 0, len(items))
	for _, it := range items {
		st := sdk.PlanEntryStatusPending
		switch it.Status {
		case "in_progress":
			st = sdk.PlanEntryStatusInProgress
		case "completed":
			st = sdk.PlanEntryStatusCompleted
		}
		out = append(out, sdk.PlanEntry{Content: it.Content, Priority: sdk.PlanEntryPriorityMedium, Status: st})
	}
	return out
}

// stopReason maps a run's finish reason to ACP's (ok false: the run failed, which
// is reported as an error rather than a stop reason).
func stopReason(finish string) (sdk.StopReason, bool) {
	switch finish {
	case "stop":
		return sdk.StopReasonEndTurn, true
	case "max_turns":
		return sdk.StopReasonMaxTurnRequests, true
	case "budget":
		return sdk.StopReasonMaxTokens, true
	case "cancelled":
		return sdk.StopReasonCancelled, true
	case "refusal", "guardrail":
		return sdk.StopReasonRefusal, true
	}
	return "", false
}

// maxPromptBytes bounds one prompt's decoded content (text and attachments).
const maxPromptBytes = 32 << 20

// promptInput turns an ACP prompt into lovia's user input: text blocks in order,
// embedded text resources as fenced blocks, resource links as mentions, images as
// attachments.
func promptInput(blocks []sdk.ContentBlock) (transcript.Entry, error) {
	var b strings.Builder
	var atts []transcript.Attachment
	size := 0
	sep := func() {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
	}
	for _, c := range blocks {
		switch {
		case c.Text != nil:
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(c.Text.Text)
		case c.ResourceLink != nil:
			sep()
			fmt.Fprintf(&b, "[@%s](%s)", c.ResourceLink.Name, c.ResourceLink.Uri)
		case c.Resource != nil:
			r := c.Resource.Resource
			switch {
			case r.TextResourceContents != nil:
				sep()
				fence := "```"
				for strings.Contains(r.TextResourceContents.Text, fence) {
					fence += "`"
				}
				fmt.Fprintf(&b, "%s\n%s\n%s\n%s", r.TextResourceContents.Uri, fence, strings.TrimRight(r.TextResourceContents.Text, "\n"), fence)
			case r.BlobResourceContents != nil:
				data, err := base64.StdEncoding.DecodeString(r.BlobResourceContents.Blob)
				if err != nil {
					return transcript.Entry{}, fmt.Errorf("resource %s: %w", r.BlobResourceContents.Uri, err)
				}
				size += len(data)
				mime := ""
				if r.BlobResourceContents.MimeType != nil {
					mime = *r.BlobResourceContents.MimeType
				}
				atts = append(atts, transcript.Attachment{MIME: mime, Name: filepath.Base(r.BlobResourceContents.Uri), Data: data, URI: r.BlobResourceContents.Uri})
			}
		case c.Image != nil:
			a := transcript.Attachment{MIME: c.Image.MimeType}
			if c.Image.Uri != nil {
				a.URI = *c.Image.Uri
			}
			if c.Image.Data != "" {
				data, err := base64.StdEncoding.DecodeString(c.Image.Data)
				if err != nil {
					return transcript.Entry{}, fmt.Errorf("image: %w", err)
				}
				a.Data = data
				size += len(data)
			}
			atts = append(atts, a)
		case c.Audio != nil:
			return transcript.Entry{}, fmt.Errorf("audio prompts are not supported")
		}
		if size+b.Len() > maxPromptBytes {
			return transcript.Entry{}, fmt.Errorf("prompt larger than %d MiB", maxPromptBytes>>20)
		}
	}
	e := transcript.UserInput(b.String())
	e.Attachments = atts
	if e.Text == "" && len(atts) == 0 {
		return e, fmt.Errorf("empty prompt")
	}
	return e, nil
}

var mcpNameBad = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// mcpName makes a client's server name a valid lovia one (tool names become
// <server>__<tool>).
func mcpName(name string, taken map[string]mcp.ServerConfig) string {
	n := mcpNameBad.ReplaceAllString(name, "-")
	for strings.Contains(n, "__") {
		n = strings.ReplaceAll(n, "__", "_")
	}
	n = strings.TrimLeft(n, "_-")
	if n == "" {
		n = "editor"
	}
	if len(n) > 28 {
		n = n[:28]
	}
	base := n
	for i := 2; ; i++ {
		if _, ok := taken[n]; !ok {
			return n
		}
		n = fmt.Sprintf("%s-%d", base, i)
	}
}

// mcpServers converts the servers an ACP client passed to lovia's configuration:
// stdio, HTTP (streamable) and legacy SSE servers.
func mcpServers(in []sdk.McpServer) (map[string]mcp.ServerConfig, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := map[string]mcp.ServerConfig{}
	for _, s := range in {
		switch {
		case s.Stdio != nil:
			env := map[string]string{}
			for _, e := range s.Stdio.Env {
				env[e.Name] = e.Value
			}
			out[mcpName(s.Stdio.Name, out)] = mcp.ServerConfig{Command: s.Stdio.Command, Args: s.Stdio.Args, Env: env}
		case s.Http != nil:
			h := map[string]string{}
			for _, e := range s.Http.Headers {
				h[e.Name] = e.Value
			}
			out[mcpName(s.Http.Name, out)] = mcp.ServerConfig{URL: s.Http.Url, Headers: h, Transport: "http"}
		case s.Sse != nil:
			h := map[string]string{}
			for _, e := range s.Sse.Headers {
				h[e.Name] = e.Value
			}
			out[mcpName(s.Sse.Name, out)] = mcp.ServerConfig{URL: s.Sse.Url, Headers: h, Transport: "sse"}
		default:
			return nil, fmt.Errorf("only stdio, http and sse MCP servers are supported")
		}
	}
	return out, nil
}
