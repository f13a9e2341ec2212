package workspace

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMCPPolicyDecisions(t *testing.T) {
	rules := []MCPRule{
		{Server: "github", Decision: "ask"},
		{Tool: "github__get_*", Decision: "allow"},
		{Tool: "github__get_secret*", Decision: "deny"},
		{Tool: "fs__*", Decision: "deny"},
		{Tool: "fs__read_*", Decision: "allow"},
	}
	tests := []struct {
		preset, name string
		want         Decision
	}{
		{"coding", "other__tool", Ask},
		{"trusted", "other__tool", Ask},
		{"readonly", "other__tool", Deny},
		{"coding", "github__create_issue", Ask},
		{"coding", "github__get_issue", Allow},
		{"readonly", "github__get_issue", Allow}, // an explicit rule overrides the preset
		{"coding", "github__get_secret_value", Deny},
		{"trusted", "fs__write_file", Deny},
		{"coding", "fs__read_text_file", Allow},
	}
	for _, tt := range tests {
		p, err := NewMCPPolicy(tt.preset, rules)
		if err != nil {
			t.Fatal(err)
		}
		server, tool, _ := strings.Cut(tt.name, "__")
		if got, why := p.Decide(server, tool, tt.name); got != tt.want {
			t.Errorf("%s %s = %v (%s), want %v", tt.preset, tt.name, got, why, tt.want)
		}
	}
}

func TestMCPPolicyEqualLengthMostRestrictive(t *testing.T) {
	p, err := NewMCPPolicy("coding", []MCPRule{{Tool: "a__x*", Decision: "allow"}, {Tool: "a__*y", Decision: "deny"}})
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := p.Decide("a", "xy", "a__xy"); d != Deny {
		t.Fatalf("got %v", d)
	}
}

func TestMCPPolicyApprovalAndGrant(t *testing.T) {
	p, _ := NewMCPPolicy("coding", nil)
	c := MCPCall{Server: "fs", Tool: "write_file", Name: "fs__write_file", Args: json.RawMessage(`{"path":"/etc/x"}`), ReadOnlyHint: true}
	a, err := p.Approval(c)
	if err != nil || a == nil {
		t.Fatalf("approval %v %v", a, err)
	}
	for _, want := range []string{"MCP server fs", "tool write_file", `{"path":"/etc/x"}`, "not verified"} {
		if !strings.Contains(a.Summary, want) {
			t.Errorf("summary %q lacks %q", a.Summary, want)
		}
	}
	p.Grant(a)
	if a, err := p.Approval(c); a != nil || err != nil {
		t.Fatalf("after the session grant: %v %v", a, err)
	}
	// The grant is for that tool only.
	if a, _ := p.Approval(MCPCall{Server: "fs", Tool: "delete", Name: "fs__delete"}); a == nil {
		t.Fatal("a grant of one tool allowed another")
	}
	// A grant never lifts a deny.
	ro, _ := NewMCPPolicy("readonly", nil)
	ro.Grant(a)
	if _, err := ro.Approval(MCPCall{Server: "fs", Tool: "delete", Name: "fs__delete"}); err == nil || !strings.Contains(err.Error(), "readonly") {
		t.Fatalf("readonly: %v", err)
	}
}

func TestMCPPolicyDeniesServer(t *testing.T) {
	ro, _ := NewMCPPolicy("readonly", []MCPRule{{Tool: "github__get_*", Decision: "allow"}, {Server: "fs", Decision: "deny"}})
	for server, want := range map[string]bool{"github": false, "fs": true, "other": true, "git": true} {
		if got := ro.DeniesServer(server); got != want {
			t.Errorf("readonly DeniesServer(%s) = %v", server, got)
		}
	}
	co, _ := NewMCPPolicy("coding", []MCPRule{{Server: "fs", Decision: "deny"}})
	if co.DeniesServer("fs") {
		t.Error("coding: DeniesServer is only a shortcut for readonly's default")
	}
	wild, _ := NewMCPPolicy("readonly", []MCPRule{{Tool: "*__read*", Decision: "allow"}})
	if wild.DeniesServer("fs") {
		t.Error("a leading wildcard may match any server")
	}
}

func TestMCPRulesValidate(t *testing.T) {
	for _, bad := range [][]MCPRule{
		{{Decision: "allow"}},
		{{Tool: "a__*", Server: "a", Decision: "allow"}},
		{{Tool: "a__*", Decision: "maybe"}},
		{{Tool: "a__[", Decision: "allow"}},
	} {
		if err := ValidateMCPRules(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestMinimalEnv(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-should-not-pass-1234")
	t.Setenv("LC_ALL", "C.UTF-8")
	env := strings.Join(MinimalEnv("EXTRA=1"), "\n")
	if strings.Contains(env, "OPENAI_API_KEY") || !strings.Contains(env, "LC_ALL=C.UTF-8") || !strings.Contains(env, "EXTRA=1") || !strings.Contains(env, "PATH=") {
		t.Fatalf("env:\n%s", env)
	}
}
