package app

import (
	"os"
	"strings"

	"github.com/lovia-dev/lovia/internal/config"
	"github.com/lovia-dev/lovia/internal/secret"
)

// providerKeys are the credentials lovia itself reads; their values are scrubbed even
// when getenv is not the process environment (tests).
var providerKeys = []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OLLAMA_API_KEY", "TAVILY_API_KEY"}

// secretScrubber collects the secret values lovia holds: provider keys, every
// variable of the environment whose name says it is a credential, the variables
// config's secrets: names, and the credential-named env/headers of MCP servers, hooks and
// workspace.env (after ${VAR} expansion). Tool results pass through it before they
// reach the model, the transcript, the database or the logs.
func secretScrubber(cfg *config.Config, getenv func(string) string) *secret.Scrubber {
	var vals []string
	for _, k := range append(append([]string(nil), providerKeys...), cfg.Secrets...) {
		vals = append(vals, getenv(k))
	}
	vals = append(vals, secret.FromEnviron(os.Environ(), cfg.Secrets)...)
	named := func(m map[string]string) {
		for k, v := range m {
			if secret.SecretName(k) {
				v = os.Expand(v, getenv)
				vals = append(vals, v)
				// "Bearer TOKEN": the token alone is the secret too.
				if _, tok, ok := strings.Cut(v, " "); ok {
					vals = append(vals, strings.TrimSpace(tok))
				}
			}
		}
	}
	for _, s := range cfg.MCP.Servers {
		named(s.Env)
		named(s.Headers)
	}
	for _, h := range cfg.Hooks {
		named(h.Env)
	}
	named(cfg.Workspace.Env)
	return secret.NewScrubber(vals...)
}
