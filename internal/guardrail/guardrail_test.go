package guardrail

import (
	"strings"
	"testing"
)

func TestParseVerdict(t *testing.T) {
	tests := []struct {
		reply   string
		tripped bool
		reason  string
		err     bool
	}{
		{"PASS", false, "", false},
		{"pass\nbecause it is fine", false, "", false},
		{"FAIL: leaks a key", true, "g: leaks a key", false},
		{"FAIL", true, "g: the output does not follow the rule", false},
		{"I think it is fine", false, "", true},
		{"", false, "", true},
	}
	for _, tt := range tests {
		res, err := parseVerdict("g", tt.reply)
		if (err != nil) != tt.err || res.Tripped != tt.tripped || res.Message != tt.reason {
			t.Errorf("parseVerdict(%q) = %+v, %v", tt.reply, res, err)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, s := range []Spec{{}, {Command: "x", Prompt: "y"}, {Command: "x", Timeout: -1}} {
		if err := s.Validate("w"); err == nil || !strings.Contains(err.Error(), "w") {
			t.Errorf("Validate(%+v) = %v", s, err)
		}
	}
	for _, s := range []Spec{{Command: "x"}, {Prompt: "y", Model: "script:j.yaml"}} {
		if err := s.Validate("w"); err != nil {
			t.Errorf("Validate(%+v) = %v", s, err)
		}
	}
}
