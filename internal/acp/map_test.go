package acp

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/plugin/human"
	"github.com/lovia-dev/lovia/internal/plugin/mcp"
	"github.com/lovia-dev/lovia/internal/plugin/todo"
)

func TestToolKind(t *testing.T) {
	for name, want := range map[string]sdk.ToolKind{
		"read_file": sdk.ToolKindRead, "write_file": sdk.ToolKindEdit, "edit_file": sdk.ToolKindEdit,
		"shell": sdk.ToolKindExecute, "grep_files": sdk.ToolKindSearch, "list_files": sdk.ToolKindSearch,
		"http_request": sdk.ToolKindFetch, "read_page": sdk.ToolKindFetch, "todo_write": sdk.ToolKindThink,
		"github__create_issue": sdk.ToolKindOther, "spawn_subagent": sdk.ToolKindOther,
	} {
		if got := toolKind(name); got != want {
			t.Errorf("toolKind(%s) = %s, want %s", name, got, want)
		}
	}
}

func TestToolTitleAndLocations(t *testing.T) {
	root := t.TempDir()
	a := parseArgs([]byte(`{"path":"src/main.go","offset":12}`))
	if got := toolTitle("read_file", a); got != "Read src/main.go" {
		t.Errorf("title %q", got)
	}
	loc := toolLocations(root, "read_file", a)
	if len(loc) != 1 || loc[0].Path != filepath.Join(root, "src/main.go") || loc[0].Line == nil || *loc[0].Line != 12 {
		t.Errorf("locations %+v", loc)
	}
	// A multi-line command is one line of title; a shell call has no location.
	sh := parseArgs([]byte(`{"command":"go test\n  ./..."}`))
	if got := toolTitle("shell", sh); got != "go test ./..." {
		t.Errorf("shell title %q", got)
	}
	if loc := toolLocations(root, "shell", sh); loc != nil {
		t.Errorf("shell locations %+v", loc)
	}
	if got := toolTitle("mystery", toolArgs{}); got != "mystery" {
		t.Errorf("unknown tool title %q", got)
	}
	if got := toolTitle("shell", toolArgs{Command: strings.Repeat("x", 500)}); len([]rune(got)) != 200 {
		t.Errorf("long title not cut: %d runes", len([]rune(got)))
	}
}

func TestStopReason(t *testing.T) {
	for finish, want := range map[string]sdk.StopReason{
		"stop": sdk.StopReasonEndTurn, "max_turns": sdk.StopReasonMaxTurnRequests, "budget": sdk.StopReasonMaxTokens,
		"cancelled": sdk.StopReasonCancelled, "refusal": sdk.StopReasonRefusal, "guardrail": sdk.StopReasonRefusal,
	} {
		if got, ok := stopReason(finish); !ok || got != want {
			t.Errorf("stopReason(%s) = %s, %v; want %s", finish, got, ok, want)
		}
	}
	if _, ok := stopReason("error"); ok {
		t.Error("a failed run has a stop reason; it must be an error")
	}
}

func selected(id string) sdk.RequestPermissionResponse {
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Selected: &sdk.RequestPermissionOutcomeSelected{OptionId: sdk.PermissionOptionId(id)}}}
}

func TestDecision(t *testing.T) {
	if d := decision(selected(optAllow), nil); !d.Allow || d.Session {
		t.Errorf("allow once: %+v", d)
	}
	if d := decision(selected(optAllowAlways), nil); !d.Allow || !d.Session {
		t.Errorf("allow always: %+v", d)
	}
	for name, d := range map[string]struct {
		r   sdk.RequestPermissionResponse
		err error
	}{
		"reject":    {selected(optReject), nil},
		"unknown":   {selected("whatever"), nil},
		"cancelled": {sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{}}}, nil},
		"error":     {selected(optAllow), errors.New("connection closed")},
	} {
		if got := decision(d.r, d.err); got.Allow || got.Message == "" {
			t.Errorf("%s: %+v, want a denial with a message", name, got)
		}
	}
}

func TestPromptInput(t *testing.T) {
	png := []byte("\x89PNG fake")
	e, err := promptInput([]sdk.ContentBlock{
		sdk.TextBlock("fix this"),
		sdk.ResourceBlock(sdk.EmbeddedResourceResource{TextResourceContents: &sdk.TextResourceContents{Uri: "file:///w/a.go", Text: "package a\n```\n"}}),
		sdk.ResourceLinkBlock("b.go", "file:///w/b.go"),
		sdk.ImageBlock(base64.StdEncoding.EncodeToString(png), "image/png"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(e.Text, "fix this\n\nfile:///w/a.go\n````\npackage a\n```\n````") || !strings.HasSuffix(e.Text, "[@b.go](file:///w/b.go)") {
		t.Errorf("text %q", e.Text)
	}
	if len(e.Attachments) != 1 || e.Attachments[0].MIME != "image/png" || string(e.Attachments[0].Data) != string(png) {
		t.Errorf("attachments %+v", e.Attachments)
	}
	if _, err := promptInput([]sdk.ContentBlock{sdk.AudioBlock("AAAA", "audio/wav")}); err == nil {
		t.Error("audio accepted")
	}
	if _, err := promptInput(nil); err == nil {
		t.Error("empty prompt accepted")
	}
	if _, err := promptInput([]sdk.ContentBlock{sdk.ImageBlock("not base64!", "image/png")}); err == nil {
		t.Error("bad image data accepted")
	}
}

func TestMCPServers(t *testing.T) {
	got, err := mcpServers([]sdk.McpServer{
		{Stdio: &sdk.McpServerStdio{Name: "my files", Command: "mcp-files", Args: []string{"--root", "/w"}, Env: []sdk.EnvVariable{{Name: "TOKEN", Value: "x"}}}},
		{Http: &sdk.McpServerHttpInline{Name: "my__files", Url: "https://example.invalid/mcp", Headers: []sdk.HttpHeader{{Name: "Authorization", Value: "Bearer y"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	st, ok := got["my-files"]
	if !ok || st.Command != "mcp-files" || st.Env["TOKEN"] != "x" || len(st.Args) != 2 {
		t.Errorf("stdio server: %+v (all: %v)", st, got)
	}
	h, ok := got["my_files"]
	if !ok || h.URL != "https://example.invalid/mcp" || h.Headers["Authorization"] != "Bearer y" {
		t.Errorf("http server: %+v (all: %v)", h, got)
	}
	if got, err := mcpServers([]sdk.McpServer{{Sse: &sdk.McpServerSseInline{Name: "old", Url: "http://127.0.0.1:3001/sse"}}}); err != nil || got["old"].Transport != "sse" || got["old"].URL != "http://127.0.0.1:3001/sse" {
		t.Errorf("SSE server: %+v %v", got, err)
	}
	if n := mcpName("a", map[string]mcp.ServerConfig{"a": {}}); n != "a-2" {
		t.Errorf("duplicate name -> %q", n)
	}
	if n := mcpName("__", nil); n != "editor" {
		t.Errorf("empty name -> %q", n)
	}
}

func TestReadForDiff(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "a.txt"), "A\n")
	write(filepath.Join(outside, "secret"), "s3cret")
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "dirlink")); err != nil {
		t.Fatal(err)
	}
	if s, ex, ok := readForDiff(root, filepath.Join(root, "a.txt")); !ok || !ex || s != "A\n" {
		t.Errorf("a.txt: %q %v %v", s, ex, ok)
	}
	if _, ex, ok := readForDiff(root, filepath.Join(root, "new.txt")); !ok || ex {
		t.Errorf("new file: exists %v ok %v", ex, ok)
	}
	// The repository is untrusted: a symlink (to a file or through a directory) out
	// of the root is never read into a diff.
	for _, p := range []string{filepath.Join(root, "link"), filepath.Join(root, "dirlink", "secret"), filepath.Join(outside, "secret")} {
		if s, _, ok := readForDiff(root, p); ok || s != "" {
			t.Errorf("%s read: %q", p, s)
		}
	}
}

func TestPlanEntries(t *testing.T) {
	got := planEntries([]todo.Item{{Content: "a", Status: "completed"}, {Content: "b", Status: "in_progress"}, {Content: "c", Status: "pending"}})
	want := []sdk.PlanEntryStatus{sdk.PlanEntryStatusCompleted, sdk.PlanEntryStatusInProgress, sdk.PlanEntryStatusPending}
	for i, e := range got {
		if e.Status != want[i] || e.Priority != sdk.PlanEntryPriorityMedium {
			t.Errorf("entry %d: %+v", i, e)
		}
	}
}

func TestModes(t *testing.T) {
	st := modeState("readonly")
	if st.CurrentModeId != "readonly" || len(st.AvailableModes) != 3 {
		t.Fatalf("%+v", st)
	}
	for _, m := range st.AvailableModes {
		if !validMode(string(m.Id)) {
			t.Errorf("mode %s not valid", m.Id)
		}
	}
	if validMode("yolo") {
		t.Error("unknown mode valid")
	}
}

func TestQuestionApproval(t *testing.T) {
	tr := newTranslator(&recorder{}, "ses_1", t.TempDir(), nil)
	ap := tr.event(context.Background(), event.Event{Type: event.ApprovalRequired, CallID: "q1", Name: "ask_human",
		Approval: &event.Approval{Kind: human.Kind, Summary: "Which database?\nOptions: sqlite | postgres", Subcommands: []string{"sqlite", "postgres"}}})
	if ap == nil || !ap.question {
		t.Fatalf("question approval: %+v", ap)
	}
	opts := permissionOptions(*ap)
	if len(opts) != 3 || opts[0].Name != "sqlite" || opts[1].Name != "postgres" || opts[2].Kind != sdk.PermissionOptionKindRejectOnce {
		t.Fatalf("options: %+v", opts)
	}
	if d := questionDecision(*ap, selected(string(opts[1].OptionId)), nil); !d.Allow || d.Message != "postgres" {
		t.Errorf("picked postgres: %+v", d)
	}
	for _, id := range []string{optReject, "answer_9", "answer_x"} {
		if d := questionDecision(*ap, selected(id), nil); d.Allow {
			t.Errorf("%s answered: %+v", id, d)
		}
	}
	// No options: "Yes" or "Decline"; a plain approval keeps its three options.
	if opts := permissionOptions(approvalReq{question: true}); len(opts) != 2 || opts[0].OptionId != optAllow {
		t.Errorf("options without answers: %+v", opts)
	}
	if opts := permissionOptions(approvalReq{}); len(opts) != 3 || opts[1].Kind != sdk.PermissionOptionKindAllowAlways {
		t.Errorf("approval options: %+v", opts)
	}
}
