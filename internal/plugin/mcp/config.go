// Package mcp is the built-in MCP plugin: tools of Model Context Protocol servers
// (stdio and streamable HTTP, via the official Go SDK), namespaced <server>__<tool>.
// Servers start lazily at the first run that needs them, each bounded by a startup
// timeout, and are shared by later runs of the same Plugin. A server that fails or
// dies turns its calls into clear error results and a notice to the model; it is
// restarted at the next call.
package mcp

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"time"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/provider"
)

// Defaults.
const (
	DefaultStartupTimeout = 30 * time.Second
	DefaultCallTimeout    = 10 * time.Minute
)

// ServerConfig is one entry of mcp.servers. Command (stdio) and URL (streamable HTTP)
// are mutually exclusive. Env and Headers values expand ${VAR} from the environment.
// A stdio server starts with a minimal environment (workspace.MinimalEnv) plus Env:
// a variable of lovia's (a token) reaches it only when Env names it, as
// GITHUB_TOKEN: ${GITHUB_TOKEN}.
type ServerConfig struct {
	Command string            `yaml:"command,omitempty" json:"command,omitempty"`
	Args    []string          `yaml:"args,omitempty" json:"args,omitempty"`
	Env     map[string]string `yaml:"env,omitempty" json:"env,omitempty"`
	// Dir is the stdio server's working directory ("" = lovia's).
	Dir     string            `yaml:"dir,omitempty" json:"dir,omitempty"`
	URL     string            `yaml:"url,omitempty" json:"url,omitempty"`
	Headers map[string]string `yaml:"headers,omitempty" json:"headers,omitempty"`
	// StartupTimeout bounds start + initialize + tools/list (0 = 30s).
	StartupTimeout time.Duration `yaml:"startup_timeout,omitempty" json:"startup_timeout,omitempty"`
	// CallTimeout bounds one tool call (0 = 10m).
	CallTimeout time.Duration `yaml:"call_timeout,omitempty" json:"call_timeout,omitempty"`
	Disabled    bool          `yaml:"disabled,omitempty" json:"disabled,omitempty"`

	// Transport of a url: server: "http" (streamable HTTP), "sse" (the legacy
	// HTTP+SSE transport of protocol 2024-11-05) or "" (streamable HTTP, falling back
	// to SSE when the server refuses the initialize POST with 400, 404 or 405).
	Transport string `yaml:"transport,omitempty" json:"transport,omitempty"`
	// OAuth of a url: server (see remote_oauth.go): ClientID and ClientSecret are a
	// pre-registered client (${VAR} expands; "" = dynamic client registration),
	// Scopes replace the scopes the server advertises, and OAuth false turns the
	// authorization support off (a 401 is then the server's plain error).
	ClientID     string   `yaml:"client_id,omitempty" json:"client_id,omitempty"`
	ClientSecret string   `yaml:"client_secret,omitempty" json:"client_secret,omitempty"`
	Scopes       []string `yaml:"scopes,omitempty" json:"scopes,omitempty"`
	OAuth        *bool    `yaml:"oauth,omitempty" json:"oauth,omitempty"`
	// Roots false offers the server no roots (by default it gets the workspace root;
	// a filesystem server then serves that instead of the directories in its args).
	Roots *bool `yaml:"roots,omitempty" json:"roots,omitempty"`
}

// Config is the mcp section of the configuration.
type Config struct {
	Servers map[string]ServerConfig `yaml:"servers" json:"servers"`
	// CacheDir keeps each server's tool list between processes, so a server starts
	// only when one of its tools is called ("" = no cache: servers start at setup to
	// list their tools). Set by the application, not read from YAML.
	CacheDir string `yaml:"-" json:"-"`
	// AuthDir holds the OAuth tokens of url: servers, one 0600 file per server
	// ("" = no stored logins). Set by the application, not read from YAML.
	AuthDir string `yaml:"-" json:"-"`
	// Scrub is applied to what the plugin tells the model outside tool results (a
	// failed server's stderr in the instructions) and to its log lines. Tool results
	// are scrubbed by the run loop.
	Scrub func(string) string `yaml:"-" json:"-"`
	// SamplingMaxTokens caps the reply of one sampling request a server sends
	// (0 = DefaultSamplingMaxTokens).
	SamplingMaxTokens int `yaml:"sampling_max_tokens,omitempty" json:"sampling_max_tokens,omitempty"`
	// Resolve returns the provider of a run's model, to answer sampling requests
	// (nil = sampling requests are refused). Set by the application.
	Resolve func(ctx context.Context, spec string) (provider.Provider, error) `yaml:"-" json:"-"`
	// Root is the workspace root, offered to every server as its one root (roots/list);
	// "" offers none. Set by the application.
	Root string `yaml:"-" json:"-"`
}

var serverNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$`)

// Validate checks every server entry; the error names the server and the fix.
func (c Config) Validate() error {
	for _, name := range c.names() {
		s := c.Servers[name]
		where := "mcp.servers." + name
		if !serverNameRE.MatchString(name) || containsDoubleUnderscore(name) {
			return errs.Newf(errs.KindConfig, "use letters, digits, '-' and single '_' (at most 32 characters): tool names become <server>__<tool>", "%s: invalid server name", where)
		}
		switch {
		case s.Command == "" && s.URL == "":
			return errs.Newf(errs.KindConfig, "set command: (and args:) for a stdio server, or url: for a streamable HTTP server", "%s: neither command nor url is set", where)
		case s.Command != "" && s.URL != "":
			return errs.Newf(errs.KindConfig, "keep command: for a stdio server or url: for an HTTP server, not both", "%s: both command and url are set", where)
		case s.URL == "" && len(s.Headers) > 0:
			return errs.Newf(errs.KindConfig, "headers: apply to url: servers only; pass settings to a stdio server with env:", "%s: headers without url", where)
		case s.URL == "" && (s.Transport != "" || s.ClientID != "" || s.ClientSecret != "" || len(s.Scopes) > 0 || s.OAuth != nil):
			return errs.Newf(errs.KindConfig, "transport:, client_id:, client_secret:, scopes: and oauth: apply to url: servers only", "%s: remote settings without url", where)
		case s.Transport != "" && s.Transport != "http" && s.Transport != "sse" && s.Transport != "streamable-http":
			return errs.Newf(errs.KindConfig, "use transport: http (streamable HTTP) or sse (legacy HTTP+SSE), or leave it out to detect it", "%s: unknown transport %q", where, s.Transport)
		case s.StartupTimeout < 0 || s.CallTimeout < 0:
			return errs.Newf(errs.KindConfig, "use a positive duration such as 30s", "%s: negative timeout", where)
		}
	}
	return nil
}

func containsDoubleUnderscore(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '_' && s[i+1] == '_' {
			return true
		}
	}
	return false
}

func (c Config) names() []string {
	names := make([]string, 0, len(c.Servers))
	for n := range c.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// transport is "stdio", "http" or "sse" (as configured; an undetected url: server
// counts as http).
func (s ServerConfig) transport() string {
	switch {
	case s.URL == "":
		return "stdio"
	case s.Transport == "sse":
		return "sse"
	}
	return "http"
}

// oauthEnabled reports whether lovia handles a 401 of this server with OAuth: a url:
// server without oauth: false and without its own Authorization header.
func (s ServerConfig) oauthEnabled() bool {
	if s.URL == "" || (s.OAuth != nil && !*s.OAuth) {
		return false
	}
	for k := range s.Headers {
		if http.CanonicalHeaderKey(k) == "Authorization" {
			return false
		}
	}
	return true
}

func (s ServerConfig) startupTimeout() time.Duration {
	if s.StartupTimeout > 0 {
		return s.StartupTimeout
	}
	return DefaultStartupTimeout
}

func (s ServerConfig) callTimeout() time.Duration {
	if s.CallTimeout > 0 {
		return s.CallTimeout
	}
	return DefaultCallTimeout
}

func (s ServerConfig) String() string {
	if s.URL != "" {
		return s.URL
	}
	return fmt.Sprint(append([]string{s.Command}, s.Args...))
}

// TransportOf is how server cfg is reached: "stdio", "http" or "sse" (a url: server
// without transport: is tried as "http" first).
func TransportOf(cfg ServerConfig) string { return cfg.transport() }
