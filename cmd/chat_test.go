package cmd

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/errs"
)

func TestChatArgsBecomeThePrompt(t *testing.T) {
	f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, Common: &CommonFlags{}}
	var got *ChatOptions
	c := NewCmdChat(f, func(o *ChatOptions) error { got = o; return nil })
	c.SetArgs([]string{"why", "is", "it", "slow?"})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Args, " ") != "why is it slow?" {
		t.Fatalf("args = %q", got.Args)
	}
}

func TestChatRefusesWithoutTerminal(t *testing.T) {
	var out bytes.Buffer
	f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out}, Common: &CommonFlags{}}
	err := runChat(context.Background(), &ChatOptions{F: f})
	if errs.KindOf(err) != errs.KindUsage || !strings.Contains(err.Error(), "not a TTY") {
		t.Fatalf("err = %v", err)
	}
	if h := errs.HintOf(err); !strings.Contains(h, "lovia run") {
		t.Fatalf("hint = %q", h)
	}
	if errs.ExitCode(err) != 2 {
		t.Fatalf("exit code %d", errs.ExitCode(err))
	}
}
