package yamlfile

import (
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/errs"
)

type doc struct {
	Name  string        `yaml:"name"`
	Wait  time.Duration `yaml:"wait"`
	Inner struct {
		Count int `yaml:"count"`
	} `yaml:"inner"`
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct{ src, want, hint string }{
		{"nmae: x\n", "f.yaml:1:1: unknown key \"nmae\"", `did you mean "name"?`},
		{"inner:\n  cont: 1\n", "f.yaml:2:3: unknown key \"cont\"", `did you mean "count"?`},
		{"inner:\n  count: many\n", "f.yaml:2:", "an integer"},
		{"wait: forever\n", "f.yaml:1:", ""},
		{"name: [x\n", "f.yaml:", "fix the YAML syntax"},
		{"zzzzzzzz: 1\n", "unknown key", "remove it"},
	}
	for _, tt := range tests {
		var d doc
		err := Decode("f.yaml", []byte(tt.src), &d)
		if err == nil || errs.KindOf(err) != errs.KindConfig {
			t.Errorf("%q: err %v", tt.src, err)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) || !strings.Contains(errs.HintOf(err), tt.hint) {
			t.Errorf("%q: %v (hint %q), want %q / %q", tt.src, err, errs.HintOf(err), tt.want, tt.hint)
		}
	}
	var d doc
	if err := Decode("f.yaml", []byte("name: a\nwait: 2s\ninner: {count: 3}\n"), &d); err != nil || d.Wait != 2*time.Second || d.Inner.Count != 3 {
		t.Errorf("valid: %v %+v", err, d)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte("name: a\nwait: 2s\ninner: {count: 3}\n"))
	f.Add([]byte("inner:\n  cont: 1\n"))
	f.Add([]byte("- [a, {b: c}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var d doc
		if err := Decode("f.yaml", data, &d); err != nil && errs.KindOf(err) != errs.KindConfig {
			t.Fatalf("kind %s: %v", errs.KindOf(err), err)
		}
	})
}
