package config

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/lovia-dev/lovia/internal/plugin/mcp"
	"github.com/lovia-dev/lovia/internal/safefile"
)

// codexServer is one [mcp_servers.NAME] table of Codex's ~/.codex/config.toml.
type codexServer struct {
	Command           string            `toml:"command"`
	Args              []string          `toml:"args"`
	Env               map[string]string `toml:"env"`
	EnvVars           []string          `toml:"env_vars"`
	Cwd               string            `toml:"cwd"`
	URL               string            `toml:"url"`
	BearerTokenEnvVar string            `toml:"bearer_token_env_var"`
	HTTPHeaders       map[string]string `toml:"http_headers"`
	EnvHTTPHeaders    map[string]string `toml:"env_http_headers"`
	Enabled           *bool             `toml:"enabled"`
	StartupTimeoutSec float64           `toml:"startup_timeout_sec"`
	ToolTimeoutSec    float64           `toml:"tool_timeout_sec"`
}

// readCodex adds the MCP servers of the user's ~/.codex/config.toml (the user's own
// file: applied like ~/.claude.json). Variables named by env_vars,
// bearer_token_env_var and env_http_headers are passed as ${VAR} references, so the
// values are read from the environment when the server starts.
func (c *Compat) readCodex(home string) {
	if home == "" {
		return
	}
	p := filepath.Join(home, ".codex", "config.toml")
	data, err := safefile.ReadNamed(p, safefile.MaxConfig)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		c.Notes = append(c.Notes, fmt.Sprintf("%s left out: %v", p, err))
		return
	}
	var f struct {
		MCPServers map[string]codexServer `toml:"mcp_servers"`
	}
	if _, err := toml.Decode(string(data), &f); err != nil {
		c.Notes = append(c.Notes, fmt.Sprintf("%s: mcp_servers left out: %v", p, err))
		return
	}
	c.Files = append(c.Files, p)
	for _, name := range keysOf(f.MCPServers) {
		s := f.MCPServers[name]
		if s.Enabled != nil && !*s.Enabled {
			continue
		}
		sc := mcp.ServerConfig{Command: s.Command, Args: s.Args, Dir: s.Cwd, URL: s.URL,
			StartupTimeout: time.Duration(s.StartupTimeoutSec * float64(time.Second)),
			CallTimeout:    time.Duration(s.ToolTimeoutSec * float64(time.Second))}
		env := map[string]string{}
		for k, v := range s.Env {
			env[k] = v
		}
		for _, k := range s.EnvVars {
			env[k] = "${" + k + "}"
		}
		if len(env) > 0 {
			sc.Env = env
		}
		headers := map[string]string{}
		for k, v := range s.HTTPHeaders {
			headers[k] = v
		}
		for k, v := range s.EnvHTTPHeaders {
			headers[k] = "${" + v + "}"
		}
		if s.BearerTokenEnvVar != "" {
			headers["Authorization"] = "Bearer ${" + s.BearerTokenEnvVar + "}"
		}
		if len(headers) > 0 {
			sc.Headers = headers
		}
		one := mcp.Config{Servers: map[string]mcp.ServerConfig{name: sc}}
		if err := one.Validate(); err != nil {
			c.Notes = append(c.Notes, fmt.Sprintf("%s: MCP server %q left out: %v", p, name, err))
			continue
		}
		if c.userMCP == nil {
			c.userMCP = map[string]mcp.ServerConfig{}
		}
		if _, taken := c.userMCP[name]; !taken {
			c.userMCP[name] = sc
		}
	}
}
