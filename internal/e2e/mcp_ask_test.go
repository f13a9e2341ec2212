package e2e

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/provider/providertest"
	"github.com/lovia-dev/lovia/internal/usage"
)

// everythingConfig is the user config of server-everything (globally installed, as
// .ci/run does) with its tools allowed, plus extra rules.
func everythingConfig(t *testing.T, rules string) string {
	t.Helper()
	p, err := exec.LookPath("mcp-server-everything")
	if err != nil {
		t.Skip("mcp-server-everything not installed (npm install -g @modelcontextprotocol/server-everything)")
	}
	return "mcp:\n  servers:\n    everything:\n      command: " + p + "\n      startup_timeout: 60s\n" +
		"mcp_rules:\n  - {server: everything, decision: allow}\n" + rules
}

func samplingCall() providertest.Turn {
	return providertest.Turn{Calls: []providertest.Call{{ID: "c1", Name: "everything__trigger-sampling-request", Args: `{"prompt":"what is six times seven?","maxTokens":50}`}},
		Usage: usage.Usage{InputTokens: 100, OutputTokens: 10}}
}

func TestMCPSamplingHeadless(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		rules   string
		answers bool
	}{
		{"approve all", []string{"--approve", "all"}, "", true},
		{"rule allows", nil, "  - {sampling: everything, decision: allow}\n", true},
		{"not approved", nil, "", false},
		{"rule denies under approve all", []string{"--approve", "all"}, "  - {sampling: \"*\", decision: deny}\n", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			turns := []providertest.Turn{samplingCall()}
			if tc.answers {
				turns = append(turns, providertest.Turn{Text: "SAMPLED-42", Usage: usage.Usage{InputTokens: 30, OutputTokens: 7}})
			}
			turns = append(turns, providertest.Turn{Text: "done", Usage: usage.Usage{InputTokens: 200, OutputTokens: 5}})
			srv := providertest.NewOpenAIServer(t, turns...)
			e := provEnv(t, srv)
			e.userConfig(everythingConfig(t, tc.rules))
			r := e.run(nil, append([]string{"run", "-m", "openai:gpt-test", "--output", "json"}, append(tc.args, "sample it")...)...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			reqs := srv.Requests()
			want := 2
			if tc.answers {
				want = 3
			}
			if len(reqs) != want {
				t.Fatalf("%d model requests, want %d\n%s", len(reqs), want, r.stdout)
			}
			last := string(reqs[len(reqs)-1].Body)
			if tc.answers {
				if !strings.Contains(string(reqs[1].Body), "six times seven") || !strings.Contains(string(reqs[1].Body), "You are a helpful test server.") {
					t.Fatalf("sampling request = %s", reqs[1].Body)
				}
				if !strings.Contains(last, "SAMPLED-42") {
					t.Fatalf("the sampled text is not in the tool result: %s", last)
				}
				var out struct {
					Usage usage.Usage `json:"usage"`
				}
				if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
					t.Fatal(err)
				}
				if out.Usage.InputTokens != 330 || out.Usage.OutputTokens != 22 {
					t.Fatalf("run usage %+v does not count the sampling tokens\n%s", out.Usage, r.stdout)
				}
			} else if !strings.Contains(last, "sampling request") {
				t.Fatalf("the refusal is not in the tool result: %s", last)
			}
			if strings.Contains(last, providertest.APIKey) {
				t.Fatal("the provider key reached the tool result")
			}
		})
	}
}

func TestMCPElicitationHeadless(t *testing.T) {
	for _, args := range [][]string{nil, {"--approve", "all"}} {
		t.Run(strings.Join(append([]string{"approve"}, args...), " "), func(t *testing.T) {
			srv := providertest.NewOpenAIServer(t,
				providertest.Turn{Calls: []providertest.Call{{ID: "c1", Name: "everything__trigger-elicitation-request", Args: `{}`}}},
				providertest.Turn{Text: "done"})
			e := provEnv(t, srv)
			e.userConfig(everythingConfig(t, ""))
			r := e.run(nil, append([]string{"run", "-m", "openai:gpt-test", "--output", "json"}, append(args, "ask me")...)...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "User declined") {
				t.Fatalf("requests: %d; last: %s", len(reqs), reqs[len(reqs)-1].Body)
			}
		})
	}
}
