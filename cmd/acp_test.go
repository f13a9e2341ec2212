package cmd

import (
	"testing"
)

func TestACPTakesNoArguments(t *testing.T) {
	f, _, _ := testFactory("", false)
	called := false
	c := NewCmdACP(f, func(*ACPOptions) error { called = true; return nil })
	c.SetArgs([]string{"hello"})
	c.SilenceUsage, c.SilenceErrors = true, true
	if err := c.Execute(); err == nil || called {
		t.Fatalf("lovia acp hello: err %v, ran %v", err, called)
	}
	c = NewCmdACP(f, func(*ACPOptions) error { called = true; return nil })
	c.SetArgs(nil)
	if err := c.Execute(); err != nil || !called {
		t.Fatalf("lovia acp: err %v, ran %v", err, called)
	}
}
