package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/config"
	"github.com/lovia-dev/lovia/internal/errs"
)

func testFactory(stdin string, piped bool) (*Factory, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	f := &Factory{
		IO:     &IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errb, StdinPiped: piped},
		Getenv: func(string) string { return "" },
		Common: &CommonFlags{},
		Exit:   func(int) {},
	}
	return f, &out, &errb
}

func TestRunFlags(t *testing.T) {
	tests := []struct {
		args      []string
		want      RunOptions
		overrides []config.Override
		common    CommonFlags
	}{
		{
			args: []string{"run", "fix", "it"},
			want: RunOptions{Args: []string{"fix", "it"}, Output: "text", Approve: "none"},
		},
		{
			args: []string{"run", "--output", "stream-json", "--approve", "all", "--run-id", "j1", "--budget-tokens", "900", "--output-schema", "s.json", "-"},
			want: RunOptions{Args: []string{"-"}, Output: "stream-json", Approve: "all", RunID: "j1", BudgetTokens: 900, OutputSchema: "s.json", budgetSet: true},
		},
		{
			args:      []string{"-m", "openai:gpt-4.1", "run", "--preset", "reviewer", "--policy", "readonly", "-s", "ses_1", "-c", "--max-turns", "7", "-C", "/tmp", "--db", "x.db", "-v", "-q", "go"},
			want:      RunOptions{Args: []string{"go"}, Output: "text", Approve: "none"},
			overrides: []config.Override{{Key: "model", Value: "openai:gpt-4.1", Flag: "--model"}, {Key: "preset", Value: "reviewer", Flag: "--preset"}, {Key: "policy", Value: "readonly", Flag: "--policy"}, {Key: "max_turns", Value: "7", Flag: "--max-turns"}, {Key: "db", Value: "x.db", Flag: "--db"}},
			common:    CommonFlags{Model: "openai:gpt-4.1", Preset: "reviewer", Policy: "readonly", Session: "ses_1", Continue: true, MaxTurns: 7, Cwd: "/tmp", DB: "x.db", Verbose: true, Quiet: true},
		},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			f, _, _ := testFactory("", false)
			var got *RunOptions
			root := NewRootCmd(f)
			// Swap the run command for one whose runF records the options.
			for _, c := range root.Commands() {
				if c.Name() == "run" {
					root.RemoveCommand(c)
				}
			}
			root.AddCommand(NewCmdRun(f, func(o *RunOptions) error { got = o; return nil }))
			root.SetArgs(tt.args)
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			got.F = nil
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("options %+v, want %+v", *got, tt.want)
			}
			if ov := f.Common.Overrides(); !reflect.DeepEqual(ov, tt.overrides) {
				t.Errorf("overrides %+v, want %+v", ov, tt.overrides)
			}
			c := *f.Common
			c.flags = nil
			if !reflect.DeepEqual(c, tt.common) {
				t.Errorf("common %+v, want %+v", c, tt.common)
			}
		})
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--nope"},
		{"run", "--max-turns", "many", "x"},
		{"frobnicate"},
		{"version", "extra"},
		{"run", "--output", "yaml", "x"},
		{"run", "--approve", "maybe", "x"},
		{"run", "--budget-tokens", "-5", "x"},
		{"run", "--output-schema", "/does/not/exist.json", "x"},
		{"run"},
	} {
		f, _, errb := testFactory("", false)
		if code := Run(context.Background(), f, args); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errb)
		}
		if !strings.HasPrefix(errb.String(), "lovia: ") || !strings.Contains(errb.String(), "hint:") {
			t.Errorf("%v: stderr %q lacks the error and a hint", args, errb)
		}
	}
}

func TestReadPrompt(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		stdin string
		piped bool
		want  string
		err   string
	}{
		{"args only", []string{"fix", "the", "bug"}, "", false, "fix the bug", ""},
		{"args, unpiped stdin ignored", []string{"fix"}, "not read", false, "fix", ""},
		{"piped stdin alone", nil, "from a pipe\n", true, "from a pipe", ""},
		{"dash", []string{"-"}, "dash input", false, "dash input", ""},
		{"both", []string{"review"}, "+a\n-b\n", true, "review\n\n```\n+a\n-b\n```", ""},
		{"both with dash", []string{"review", "-"}, "x", false, "review\n\n```\nx\n```", ""},
		{"empty", nil, "", true, "", "empty prompt"},
		{"whitespace args", []string{"  "}, "", false, "", "empty prompt"},
		{"binary", nil, "\x00\x01ELF", true, "", "looks binary"},
		{"too big", nil, strings.Repeat("x", MaxStdin+1), true, "", "larger than 1024 KiB"},
		{"exactly the cap", nil, strings.Repeat("x", MaxStdin), true, strings.Repeat("x", MaxStdin), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, _ := testFactory(tt.stdin, tt.piped)
			got, err := readPrompt(f.IO, tt.args)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || errs.ExitCode(err) != 2 {
					t.Fatalf("err %v, want %q (exit 2)", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestReadSchema(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	os.WriteFile(good, []byte(`{"type":"object","required":["a"]}`), 0o644)
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"type":`), 0o644)
	invalid := filepath.Join(dir, "invalid.json")
	os.WriteFile(invalid, []byte(`{"type":"objekt"}`), 0o644)
	if s, err := readSchema(good); err != nil || len(s) == 0 {
		t.Errorf("good: %v", err)
	}
	for _, p := range []string{bad, invalid, filepath.Join(dir, "missing.json")} {
		if _, err := readSchema(p); errs.ExitCode(err) != 2 || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v", p, err)
		}
	}
}

func TestConfigCommand(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".lovia"), 0o755)
	os.WriteFile(filepath.Join(dir, ".lovia", "config.yaml"), []byte("model: script:x.yaml\n"), 0o644)
	f, out, errb := testFactory("", false)
	env := map[string]string{"HOME": dir, "XDG_CONFIG_HOME": filepath.Join(dir, "cfg"), "LOVIA_MAX_TURNS": "9"}
	f.Getenv = func(k string) string { return env[k] }
	if code := Run(context.Background(), f, []string{"config", "-C", dir, "--preset", "planner"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	for _, want := range []string{"model", "script:x.yaml", ".lovia/config.yaml:1", "env LOVIA_MAX_TURNS", "flag --preset"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
