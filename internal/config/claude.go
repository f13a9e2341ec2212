package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/lovia-dev/lovia/internal/config/trust"
	"github.com/lovia-dev/lovia/internal/plugin/hooks"
	"github.com/lovia-dev/lovia/internal/plugin/mcp"
	"github.com/lovia-dev/lovia/internal/safefile"
)

// People arrive with Claude Code's files: hooks in .claude/settings.json (and
// settings.local.json, and ~/.claude/settings.json), MCP servers in .mcp.json and
// ~/.claude.json. lovia reads them in Claude Code's schema. The project's files are
// repository content: what they would run (every hook, every server) needs folder
// trust, like .lovia/config.yaml's hooks and servers; the user's own apply as lovia's
// user config does.

// Compat is what was read from Claude Code's files.
type Compat struct {
	// Files are the files read, for `lovia config` and doctor.
	Files []string
	// Notes are problems that did not stop lovia (a malformed file, an unknown hook
	// type), to show the user.
	Notes []string

	userHooks    []hooks.Hook
	projectHooks []hooks.Hook
	userMCP      map[string]mcp.ServerConfig
	projectMCP   map[string]mcp.ServerConfig
	loose        []trust.Entry
}

// claudeSettings is the part of Claude Code's settings.json lovia reads.
type claudeSettings struct {
	Hooks map[string][]struct {
		Matcher string `json:"matcher"`
		Hooks   []struct {
			Type    string  `json:"type"`
			Command string  `json:"command"`
			Timeout float64 `json:"timeout"`
		} `json:"hooks"`
	} `json:"hooks"`
}

// claudeServer is one mcpServers entry in Claude Code's schema.
type claudeServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

// readClaude reads Claude Code's files for root (the project) and home (the user).
func readClaude(root, home string, getenv func(string) string) *Compat {
	c := &Compat{}
	read := func(path string, project bool) []byte {
		var data []byte
		var err error
		if project {
			data, err = safefile.ReadBeneath(root, path, safefile.MaxConfig)
		} else {
			data, err = safefile.ReadNamed(path, safefile.MaxConfig)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			c.Notes = append(c.Notes, fmt.Sprintf("%s left out: %v", path, err))
			return nil
		}
		c.Files = append(c.Files, path)
		return data
	}
	if home != "" {
		p := filepath.Join(home, ".claude", "settings.json")
		if data := read(p, false); data != nil {
			c.userHooks = c.settingsHooks(p, data)
		}
		p = filepath.Join(home, ".claude.json")
		if data := read(p, false); data != nil {
			c.userMCP = c.claudeJSONServers(p, data, root, getenv)
		}
		c.readCodex(home)
	}
	if root != "" {
		for _, name := range []string{"settings.json", "settings.local.json"} {
			p := filepath.Join(root, ".claude", name)
			if data := read(p, true); data != nil {
				hs := c.settingsHooks(p, data)
				for i, h := range hs {
					c.loose = append(c.loose, trust.Entry{File: p, Key: fmt.Sprintf("hooks.%s[%d]", hooks.ClaudeEventName(h.Event), i),
						Value: map[string]any{"matcher": h.Matcher, "command": h.Command}, Why: "runs a command on agent events (Claude Code hook)"})
				}
				c.projectHooks = append(c.projectHooks, hs...)
			}
		}
		p := filepath.Join(root, ".mcp.json")
		if data := read(p, true); data != nil {
			var f struct {
				MCPServers map[string]claudeServer `json:"mcpServers"`
			}
			if err := json.Unmarshal(data, &f); err != nil {
				c.Notes = append(c.Notes, fmt.Sprintf("%s left out: not valid JSON: %v", p, err))
			} else {
				c.projectMCP = c.servers(p, f.MCPServers, getenv)
				for _, name := range keysOf(c.projectMCP) {
					s := c.projectMCP[name]
					v := map[string]any{"command": s.Command, "args": s.Args, "url": s.URL}
					c.loose = append(c.loose, trust.Entry{File: p, Key: "mcpServers." + name, Value: v, Why: "starts an MCP server (Claude Code .mcp.json)"})
				}
			}
		}
	}
	return c
}

// settingsHooks turns a settings file's hooks into lovia's, marked as Claude Code's.
func (c *Compat) settingsHooks(path string, data []byte) []hooks.Hook {
	var s claudeSettings
	if err := json.Unmarshal(data, &s); err != nil {
		c.Notes = append(c.Notes, fmt.Sprintf("%s: hooks left out: not valid JSON: %v", path, err))
		return nil
	}
	var out []hooks.Hook
	for _, name := range keysOf(s.Hooks) {
		ev, ok := hooks.ParseEvent(name)
		if !ok {
			c.Notes = append(c.Notes, fmt.Sprintf("%s: hooks for %s left out: lovia has no such event (see docs/compat.md)", path, name))
			continue
		}
		for _, group := range s.Hooks[name] {
			m := group.Matcher
			if _, err := regexp.Compile("^(?:" + m + ")$"); err != nil {
				c.Notes = append(c.Notes, fmt.Sprintf("%s: %s hooks with matcher %q left out: not a valid regular expression", path, name, m))
				continue
			}
			for _, h := range group.Hooks {
				if h.Type != "" && h.Type != "command" {
					c.Notes = append(c.Notes, fmt.Sprintf("%s: a %s hook of type %q left out: lovia runs command hooks only", path, name, h.Type))
					continue
				}
				if strings.TrimSpace(h.Command) == "" || h.Timeout < 0 {
					c.Notes = append(c.Notes, fmt.Sprintf("%s: a %s hook without a command (or with a negative timeout) left out", path, name))
					continue
				}
				out = append(out, hooks.Hook{Event: ev, Matcher: m, Command: h.Command, Timeout: h.Timeout, Claude: true, Source: path})
			}
		}
	}
	return out
}

// claudeJSONServers reads ~/.claude.json: its top-level mcpServers (user scope) and
// those of the project entry for root (local scope). Both are the user's own.
func (c *Compat) claudeJSONServers(path string, data []byte, root string, getenv func(string) string) map[string]mcp.ServerConfig {
	var f struct {
		MCPServers map[string]claudeServer `json:"mcpServers"`
		Projects   map[string]struct {
			MCPServers map[string]claudeServer `json:"mcpServers"`
		} `json:"projects"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		c.Notes = append(c.Notes, fmt.Sprintf("%s: mcpServers left out: not valid JSON: %v", path, err))
		return nil
	}
	all := map[string]claudeServer{}
	for k, v := range f.MCPServers {
		all[k] = v
	}
	if p, ok := f.Projects[root]; ok {
		for k, v := range p.MCPServers {
			all[k] = v
		}
	}
	return c.servers(path, all, getenv)
}

// servers converts Claude Code server entries, expanding ${VAR} and ${VAR:-default}
// in command, args, env, url and headers as Claude Code does.
func (c *Compat) servers(path string, in map[string]claudeServer, getenv func(string) string) map[string]mcp.ServerConfig {
	out := map[string]mcp.ServerConfig{}
	for _, name := range keysOf(in) {
		s := in[name]
		x := func(v string) string { return ExpandVars(v, getenv) }
		sc := mcp.ServerConfig{}
		switch s.Type {
		case "", "stdio":
			if s.Command == "" && s.URL != "" {
				sc.URL = x(s.URL)
				break
			}
			sc.Command = x(s.Command)
			for _, a := range s.Args {
				sc.Args = append(sc.Args, x(a))
			}
		case "http", "sse":
			sc.URL = x(s.URL)
			sc.Transport = s.Type
		default:
			c.Notes = append(c.Notes, fmt.Sprintf("%s: MCP server %q left out: unknown type %q (use stdio, http or sse)", path, name, s.Type))
			continue
		}
		if len(s.Env) > 0 {
			sc.Env = map[string]string{}
			for k, v := range s.Env {
				sc.Env[k] = x(v)
			}
		}
		if len(s.Headers) > 0 {
			sc.Headers = map[string]string{}
			for k, v := range s.Headers {
				sc.Headers[k] = x(v)
			}
		}
		one := mcp.Config{Servers: map[string]mcp.ServerConfig{name: sc}}
		if err := one.Validate(); err != nil {
			c.Notes = append(c.Notes, fmt.Sprintf("%s: MCP server %q left out: %v", path, name, err))
			continue
		}
		out[name] = sc
	}
	return out
}

var varRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`)

// ExpandVars expands ${VAR} and ${VAR:-default} (Claude Code's .mcp.json syntax);
// an unset variable without a default becomes "".
func ExpandVars(s string, getenv func(string) string) string {
	return varRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := varRE.FindStringSubmatch(m)
		if v := getenv(sub[1]); v != "" {
			return v
		}
		return sub[2]
	})
}

// apply adds what applies to c: the user's hooks and servers always, the
// project's only in a trusted folder. lovia's own servers win a name clash.
func (cc *Compat) apply(c *Config) {
	c.Hooks = append(c.Hooks, cc.userHooks...)
	servers := []map[string]mcp.ServerConfig{cc.userMCP}
	if c.Trust.Trusted {
		c.Hooks = append(c.Hooks, cc.projectHooks...)
		servers = append(servers, cc.projectMCP)
	}
	for _, m := range servers {
		for name, s := range m {
			if _, taken := c.MCP.Servers[name]; taken {
				continue
			}
			if c.MCP.Servers == nil {
				c.MCP.Servers = map[string]mcp.ServerConfig{}
			}
			c.MCP.Servers[name] = s
		}
	}
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// claudeHome is the user's home for ~/.claude ("" when unknown).
func claudeHome(getenv func(string) string) string {
	if h := getenv("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}
