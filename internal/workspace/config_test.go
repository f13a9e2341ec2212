package workspace

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

func TestConfigYAML(t *testing.T) {
	data, err := os.ReadFile("../../testdata/workspace/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Workspace Config `yaml:"workspace"`
	}
	if err := yaml.UnmarshalWithOptions(data, &file, yaml.DisallowUnknownField()); err != nil {
		t.Fatal(err)
	}
	want := Config{
		Policy: "trusted", Sandbox: "required", ShellTimeout: 120,
		Readable:     []string{"~/go/pkg/mod"},
		Writable:     []string{"~/.cache/go-build"},
		DeniedPaths:  []string{".env*", "~/.ssh"},
		PathRules:    []PathRule{{Pattern: "secrets/**", Read: "deny", Write: "deny"}, {Pattern: "/opt/shared", Write: "allow"}},
		CommandRules: []CommandRule{{Prefix: "git push", Decision: "ask"}, {Prefix: "npm publish", Decision: "deny"}},
		Env:          map[string]string{"GOFLAGS": "-mod=mod"},
	}
	if !reflect.DeepEqual(file.Workspace, want) {
		t.Fatalf("got %+v\nwant %+v", file.Workspace, want)
	}
	e := newTestEnv(t)
	cfg := file.Workspace
	cfg.Root = e.root
	cfg.Sandbox = SandboxOff
	p, err := NewPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := p.DecideArgv(strings.Fields("npm publish --tag x")); d != Deny {
		t.Fatalf("npm publish: %s", d)
	}
	// A typo is a config error naming the field, not a silent default.
	bad := []byte("workspace:\n  polcy: trusted\n")
	if err := yaml.UnmarshalWithOptions(bad, &file, yaml.DisallowUnknownField()); err == nil || !strings.Contains(err.Error(), "polcy") {
		t.Fatalf("unknown field: %v", err)
	}
}
