package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const guardAnswerScript = `
turns:
  - text: "Hello! The secret plan is ready."
`

// guardUserConfig writes the user's config file.
func guardUserConfig(t *testing.T, e *env, body string) {
	t.Helper()
	dir := filepath.Join(e.home, ".config", "lovia")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestOutputGuardrailCommands: a command guardrail reads the final output as JSON on
// stdin with a minimal environment; exit 0 passes, exit 2 ends the run with exit 4
// and the reason, any other status fails closed (exit 4 too).
func TestOutputGuardrailCommands(t *testing.T) {
	e := newEnv(t)
	e.vars = append(e.vars, "OPENAI_API_KEY=sk-guardrail-must-not-see", "GUARD_TOKEN=passed-on-request")
	e.write("a.yaml", guardAnswerScript)
	e.write("pass.sh", "cat > seen.json\nenv > env.txt\nexit 0\n")
	e.write("trip.sh", `input=$(cat)
case "$input" in *secret*) echo "the answer mentions a secret" >&2; exit 2;; esac
exit 0
`)
	e.write("broken.sh", "exit 1\n")

	guardUserConfig(t, e, `guardrails:
  output:
    - {name: recorder, command: "sh pass.sh", env: {GUARD_TOKEN: "${GUARD_TOKEN}"}}
`)
	r := e.run(nil, "run", "-m", "script:a.yaml", "plan it")
	if r.code != 0 || !strings.Contains(r.stdout, "secret plan") {
		t.Fatalf("passing guardrail: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var in struct {
		Guardrail   string `json:"guardrail"`
		FinalOutput string `json:"final_output"`
		RunID       string `json:"run_id"`
		SessionID   string `json:"session_id"`
	}
	data, err := os.ReadFile(filepath.Join(e.dir, "seen.json"))
	if err != nil || json.Unmarshal(data, &in) != nil {
		t.Fatalf("guardrail input: %v %s", err, data)
	}
	if in.FinalOutput != "Hello! The secret plan is ready." || in.Guardrail != "recorder" || !strings.HasPrefix(in.RunID, "run_") || in.SessionID == "" {
		t.Errorf("guardrail input: %+v", in)
	}
	envText, _ := os.ReadFile(filepath.Join(e.dir, "env.txt"))
	if strings.Contains(string(envText), "sk-guardrail-must-not-see") || !strings.Contains(string(envText), "GUARD_TOKEN=passed-on-request") {
		t.Errorf("guardrail environment not minimal (or the named variable missing):\n%s", envText)
	}

	guardUserConfig(t, e, `guardrails:
  output:
    - {command: "sh trip.sh"}
`)
	r = e.run(nil, "run", "-m", "script:a.yaml", "plan it")
	if r.code != 4 || !strings.Contains(r.stderr, "output guardrail tripped") || !strings.Contains(r.stderr, "the answer mentions a secret") {
		t.Fatalf("tripping guardrail: exit %d\n%s", r.code, r.stderr)
	}
	// --output json reports the guardrail as the finish reason.
	r = e.run(nil, "run", "-m", "script:a.yaml", "--output", "json", "plan it")
	if r.code != 4 || !strings.Contains(r.stdout, `"guardrail"`) {
		t.Errorf("json output of a trip: exit %d\n%s", r.code, r.stdout)
	}

	guardUserConfig(t, e, `guardrails:
  output:
    - {command: "sh broken.sh"}
`)
	if r = e.run(nil, "run", "-m", "script:a.yaml", "plan it"); r.code != 4 || !strings.Contains(r.stderr, "output guardrail failed") {
		t.Errorf("broken guardrail does not fail closed: exit %d\n%s", r.code, r.stderr)
	}

	guardUserConfig(t, e, `guardrails:
  output:
    - {command: "sh x.sh", prompt: "both"}
`)
	if r = e.run(nil, "run", "-m", "script:a.yaml", "plan it"); r.code == 0 || !strings.Contains(r.stderr, "exactly one of command and prompt") {
		t.Errorf("bad guardrail config: exit %d\n%s", r.code, r.stderr)
	}
}

// TestOutputGuardrailLLM: an LLM check asks a (scripted) model; FAIL trips with its
// reason, PASS lets the answer through.
func TestOutputGuardrailLLM(t *testing.T) {
	e := newEnv(t)
	e.write("a.yaml", guardAnswerScript)
	e.write("judge-fail.yaml", "turns:\n  - text: \"FAIL: it reveals the secret plan\"\n")
	e.write("judge-pass.yaml", "turns:\n  - text: \"PASS\"\n")
	e.write("judge-vague.yaml", "turns:\n  - text: \"Looks fine I guess\"\n")
	for _, tt := range []struct {
		judge, want string
		code        int
	}{
		{"judge-fail.yaml", "it reveals the secret plan", 4},
		{"judge-pass.yaml", "", 0},
		{"judge-vague.yaml", "no verdict", 4},
	} {
		guardUserConfig(t, e, `guardrails:
  output:
    - {name: no-secrets, prompt: "Never reveal plans.", model: "script:`+tt.judge+`"}
`)
		r := e.run(nil, "run", "-m", "script:a.yaml", "plan it")
		if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%s: exit %d (want %d)\n%s", tt.judge, r.code, tt.code, r.stderr)
		}
		if tt.code == 4 && !strings.Contains(r.stderr, "no-secrets") {
			t.Errorf("%s: the guardrail is not named:\n%s", tt.judge, r.stderr)
		}
	}
}

// TestOutputGuardrailTrust: a project's command guardrails (config or preset) run
// only in a trusted folder; its LLM checks apply without trust (they only stop runs).
func TestOutputGuardrailTrust(t *testing.T) {
	e := newEnv(t)
	e.write("a.yaml", guardAnswerScript)
	e.write("judge-fail.yaml", "turns:\n  - text: \"FAIL: project rule\"\n")
	e.write(".lovia/config.yaml", `guardrails:
  output:
    - {command: "touch project_guard_ran"}
`)
	e.write(".lovia/presets/guarded.yaml", `name: guarded
instructions: "Answer."
output_guardrails:
  - {command: "touch preset_guard_ran"}
`)
	r := e.run(nil, "run", "-m", "script:a.yaml", "--preset", "guarded", "plan it")
	if r.code != 0 || !strings.Contains(r.stderr, "is not trusted") || !strings.Contains(r.stderr, "guardrails.output[0]") {
		t.Fatalf("untrusted: exit %d\n%s", r.code, r.stderr)
	}
	for _, m := range []string{"project_guard_ran", "preset_guard_ran"} {
		if guardExists(filepath.Join(e.dir, m)) {
			t.Errorf("%s: an untrusted project's guardrail command ran", m)
		}
	}
	if r := e.run(nil, "trust", "--yes"); r.code != 0 {
		t.Fatalf("trust: %d\n%s", r.code, r.stderr)
	}
	if r := e.run(nil, "run", "-m", "script:a.yaml", "--preset", "guarded", "plan it"); r.code != 0 {
		t.Fatalf("trusted: exit %d\n%s", r.code, r.stderr)
	}
	for _, m := range []string{"project_guard_ran", "preset_guard_ran"} {
		if !guardExists(filepath.Join(e.dir, m)) {
			t.Errorf("%s: a trusted project's guardrail command did not run", m)
		}
	}

	// An LLM check needs no trust.
	e2 := newEnv(t)
	e2.write("a.yaml", guardAnswerScript)
	e2.write("judge-fail.yaml", "turns:\n  - text: \"FAIL: project rule\"\n")
	e2.write(".lovia/config.yaml", `guardrails:
  output:
    - {prompt: "No plans.", model: "script:judge-fail.yaml"}
`)
	if r := e2.run(nil, "run", "-m", "script:a.yaml", "plan it"); r.code != 4 || !strings.Contains(r.stderr, "project rule") {
		t.Errorf("untrusted LLM check: exit %d\n%s", r.code, r.stderr)
	}
}

func guardExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
