package hooks

import (
	"testing"

	"github.com/goccy/go-yaml"
)

func TestConfigYAML(t *testing.T) {
	src := `
hooks:
  - event: pre_tool_use
    matcher: write_file|edit_file
    command: ./scripts/check.sh
    timeout: 5
  - event: stop
    command: notify-send done
    timeout: 0.5
`
	var cfg Config
	if err := yaml.UnmarshalWithOptions([]byte(src), &cfg, yaml.DisallowUnknownField()); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Hooks) != 2 || cfg.Hooks[0].Event != PreToolUse || cfg.Hooks[0].Timeout != 5 || cfg.Hooks[1].Timeout != 0.5 {
		t.Fatalf("cfg = %+v", cfg)
	}
	if _, err := NewRunner(cfg, nil); err != nil {
		t.Fatal(err)
	}
}
