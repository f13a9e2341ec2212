package hooks

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/secret"
	"github.com/lovia-dev/lovia/internal/workspace"
	"github.com/lovia-dev/lovia/internal/workspace/sandbox"
)

// TestMain doubles as the sandbox helper, as lovia re-executes itself.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.Subcommand {
		os.Exit(sandbox.Main(os.Args[2:], os.Stderr))
	}
	os.Exit(m.Run())
}

func helperArgv(t *testing.T) []string {
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	return []string{exe, sandbox.Subcommand}
}

func TestHookGetsMinimalEnv(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-hook-must-not-see-this-1234")
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-hook-must-not-see-1234")
	t.Setenv("LOVIA_HOOK_TEST_TOKEN", "named-token-value")
	r, err := NewRunner(Config{Hooks: []Hook{{Event: SessionStart, Command: "env", Env: map[string]string{"PASSED": "${LOVIA_HOOK_TEST_TOKEN}"}}}, Dir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := r.Run(context.Background(), Input{HookEventName: SessionStart}).Stdout
	if strings.Contains(out, "must-not-see") || strings.Contains(out, "API_KEY") {
		t.Fatalf("the hook sees provider keys:\n%s", out)
	}
	if !strings.Contains(out, "LOVIA_HOOK_EVENT=session_start") || !strings.Contains(out, "PATH=") || !strings.Contains(out, "PASSED=named-token-value") {
		t.Fatalf("hook env lacks its own variables:\n%s", out)
	}
}

func TestHookOutputCappedAndScrubbed(t *testing.T) {
	const key = "sk-secret-value-for-scrub-test"
	t.Setenv("LOVIA_SCRUB_TEST_KEY", key)
	sc := secret.NewScrubber(key)
	r, err := NewRunner(Config{Hooks: []Hook{
		// The hook learns the key some other way (here: its command line) and prints it
		// with a flood of output.
		{Event: PreToolUse, Command: "echo " + key + " >&2; head -c 1000000 /dev/zero | tr '\\0' x >&2; exit 2"},
		{Event: SessionStart, Command: "head -c 1000000 /dev/zero | tr '\\0' y"},
	}, Dir: t.TempDir(), Scrub: sc.Scrub}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := r.Run(context.Background(), Input{HookEventName: PreToolUse, ToolName: "shell"})
	if !out.Blocked || strings.Contains(out.Message, key) || !strings.Contains(out.Message, secret.Redacted) {
		t.Fatalf("block message not scrubbed: %.200q", out.Message)
	}
	if len(out.Message) > maxMessage+200 || !strings.Contains(out.Message, "truncated") {
		t.Fatalf("block message not capped: %d bytes", len(out.Message))
	}
	so := r.Run(context.Background(), Input{HookEventName: SessionStart}).Stdout
	if len(so) > maxCapture+200 || !strings.Contains(so, "[hook output truncated at 64 KiB") {
		t.Fatalf("stdout not capped: %d bytes, tail %q", len(so), so[max(0, len(so)-120):])
	}
}

// recordingCommand is a CommandFunc that notes each argv and runs it plainly.
type recordingCommand struct{ argvs [][]string }

func (c *recordingCommand) command(ctx context.Context, argv []string, dir string, env []string) (*exec.Cmd, error) {
	c.argvs = append(c.argvs, argv)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	return cmd, nil
}

func TestHooksUseTheRunsExecutor(t *testing.T) {
	p, _ := setup(t, Hook{Event: SessionStart, Command: "echo via executor"})
	rec := &recordingCommand{}
	c, err := p.WithCommand(rec.command).Setup(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.argvs) != 1 || rec.argvs[0][2] != "echo via executor" || !strings.Contains(c.Instructions, "via executor") {
		t.Fatalf("argvs %v, instructions %q", rec.argvs, c.Instructions)
	}
}

// TestHooksSandboxedUnderReadonly runs a hook through a readonly workspace with the
// Landlock sandbox: it cannot write, not even inside the root.
func TestHooksSandboxedUnderReadonly(t *testing.T) {
	root := t.TempDir()
	w, err := workspace.New(workspace.Config{Root: root, Policy: "readonly", Sandbox: "required", SandboxHelper: helperArgv(t)})
	if err != nil {
		t.Skipf("Landlock sandbox unavailable: %v", err)
	}
	defer w.Close()
	target := filepath.Join(root, "written-by-hook")
	p, _ := setup(t, Hook{Event: SessionStart, Command: "echo hi > " + target + " && echo wrote"})
	c, err := p.WithCommand(w.Command).Setup(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(c.Instructions, "wrote") {
		t.Fatal("a hook wrote into the root under readonly")
	}
	// The same hook under coding writes inside the root (so the refusal above is the
	// sandbox, not a broken hook), but not outside it. TMPDIR points elsewhere in
	// case the checkout itself is under /tmp.
	t.Setenv("TMPDIR", t.TempDir())
	cw, err := workspace.New(workspace.Config{Root: root, Policy: "coding", Sandbox: "required", SandboxHelper: helperArgv(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer cw.Close()
	// Not under the temp dir, which coding lets commands write: the package directory.
	od, err := os.MkdirTemp(".", "outside-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(od)
	outside, _ := filepath.Abs(filepath.Join(od, "outside"))
	p, _ = setup(t, Hook{Event: SessionStart, Command: "echo hi > " + target + " && echo wrote; echo hi > " + outside + " && echo escaped; true"})
	c, err = p.WithCommand(cw.Command).Setup(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.Instructions, "wrote") || strings.Contains(c.Instructions, "escaped") {
		t.Fatalf("coding hook: %q", c.Instructions)
	}
}
