// Package config loads lovia's configuration: built-in defaults, the user file
// (~/.config/lovia/config.yaml), the project file (.lovia/config.yaml, found by
// searching upward from the working directory to the git root), the environment
// (LOVIA_*), and flags — in increasing precedence (SPEC §11). Every effective value
// remembers where it came from, for `lovia config`.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/lovia-dev/lovia/internal/compaction"
	"github.com/lovia-dev/lovia/internal/config/trust"
	"github.com/lovia-dev/lovia/internal/config/yamlfile"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/guardrail"
	"github.com/lovia-dev/lovia/internal/plugin/hooks"
	"github.com/lovia-dev/lovia/internal/plugin/mcp"
	"github.com/lovia-dev/lovia/internal/safefile"
	"github.com/lovia-dev/lovia/internal/workspace"
)

// File is the schema of a config file. Every section is optional.
type File struct {
	// Model is the default "provider:model".
	Model string `yaml:"model,omitempty" json:"model,omitempty"`
	// Preset is the default agent preset (default coder).
	Preset string `yaml:"preset,omitempty" json:"preset,omitempty"`
	// Policy is the workspace policy: readonly, coding or trusted (default: the
	// preset's, else coding).
	Policy       string `yaml:"policy,omitempty" json:"policy,omitempty"`
	MaxTurns     int    `yaml:"max_turns,omitempty" json:"max_turns,omitempty"`
	BudgetTokens int    `yaml:"budget_tokens,omitempty" json:"budget_tokens,omitempty"`
	// Models holds per-model overrides keyed by "provider:model" (or the model name).
	Models map[string]Model `yaml:"models,omitempty" json:"models,omitempty"`
	// Pricing overrides or extends the built-in model prices (USD per million
	// tokens), keyed "provider:model", "model", or either ending in "*" (docs/cost.md).
	Pricing    map[string]ModelPrice `yaml:"pricing,omitempty" json:"pricing,omitempty"`
	Compaction compaction.Config     `yaml:"compaction,omitempty" json:"compaction,omitempty"`
	Workspace  workspace.Config      `yaml:"workspace,omitempty" json:"workspace,omitempty"`
	MCP        mcp.Config            `yaml:"mcp,omitempty" json:"mcp,omitempty"`
	Hooks      []hooks.Hook          `yaml:"hooks,omitempty" json:"hooks,omitempty"`
	Skills     Skills                `yaml:"skills,omitempty" json:"skills,omitempty"`
	Provider   Provider              `yaml:"provider,omitempty" json:"provider,omitempty"`

	// MCPRules decide MCP tool calls (allow/ask/deny by glob over <server>__<tool>).
	MCPRules []workspace.MCPRule `yaml:"mcp_rules,omitempty" json:"mcp_rules,omitempty"`
	// Secrets names environment variables whose values are scrubbed from tool results
	// (in addition to *_API_KEY, *_TOKEN and the like).
	Secrets []string `yaml:"secrets,omitempty" json:"secrets,omitempty"`

	// Guardrails are the output guardrails (see docs/guardrails.md).
	Guardrails guardrail.Config `yaml:"guardrails,omitempty" json:"guardrails,omitempty"`

	// Memory configures the memory archive's semantic index (see docs/memory.md).
	Memory Memory `yaml:"memory,omitempty" json:"memory,omitempty"`
}

// Memory configures the memory archive.
type Memory struct {
	// EmbedModel ("openai:MODEL" or "ollama:MODEL") turns on hybrid search; empty:
	// keyword search only.
	EmbedModel string `yaml:"embed_model,omitempty" json:"embed_model,omitempty"`
	// EmbedBaseURL overrides the embedding server (default OPENAI_BASE_URL or
	// https://api.openai.com/v1; OLLAMA_HOST or http://localhost:11434).
	EmbedBaseURL string `yaml:"embed_base_url,omitempty" json:"embed_base_url,omitempty"`
	// Curate asks a cheap model, at the end of a completed run, for facts worth
	// remembering; a person keeps them or not (see docs/memory.md). Off by default.
	Curate Curate `yaml:"curate,omitempty" json:"curate,omitempty"`
}

// Curate configures memory curation.
type Curate struct {
	Enabled bool `yaml:"enabled,omitempty" json:"enabled,omitempty"`
	// Model is "provider:model" (empty: the run's model).
	Model string `yaml:"model,omitempty" json:"model,omitempty"`
}

// Model overrides what lovia knows about one model.
type Model struct {
	ContextWindow int `yaml:"context_window,omitempty" json:"context_window,omitempty"`
	// Vision says whether the model takes images (unset: lovia's table decides).
	Vision *bool `yaml:"vision,omitempty" json:"vision,omitempty"`
}

// ModelPrice is one model's price in USD per million tokens. Input and output are
// required; a cache read or write the file leaves out costs the input price.
type ModelPrice struct {
	Input       *float64 `yaml:"input,omitempty" json:"input,omitempty"`
	CachedInput *float64 `yaml:"cached_input,omitempty" json:"cached_input,omitempty"`
	CacheWrite  *float64 `yaml:"cache_write,omitempty" json:"cache_write,omitempty"`
	Output      *float64 `yaml:"output,omitempty" json:"output,omitempty"`
}

// Skills adds skill directories (after the standard ones).
type Skills struct {
	Dirs    []string `yaml:"dirs,omitempty" json:"dirs,omitempty"`
	NoWatch bool     `yaml:"no_watch,omitempty" json:"no_watch,omitempty"`
}

// Layer names where a value came from, lowest precedence first.
type Layer int

const (
	LayerDefault Layer = iota
	LayerPreset
	LayerUser
	LayerProject
	LayerEnv
	LayerFlag
)

func (l Layer) String() string {
	return [...]string{"default", "preset", "user", "project", "env", "flag"}[l]
}

// Source says where one effective value came from.
type Source struct {
	Layer Layer
	// Where: "path:line" for files, the variable for env, the flag for flags, a
	// note for defaults.
	Where string
}

func (s Source) String() string {
	if s.Where == "" {
		return s.Layer.String()
	}
	return s.Layer.String() + " " + s.Where
}

// Override is one flag the user set.
type Override struct {
	Key   string // config key: model, preset, policy, max_turns, budget_tokens, home, db
	Value string
	Flag  string // as typed, e.g. "--model"
}

// Options tell Load where to look.
type Options struct {
	// Cwd is the working directory (-C); default os.Getwd.
	Cwd string
	// Getenv reads the environment (default os.Getenv).
	Getenv func(string) string
	// Flags are the flags the user set explicitly.
	Flags []Override
	// Trust trusts the project's settings for this invocation (--trust), as if the
	// folder had been trusted with `lovia trust`.
	Trust bool
}

// Config is the effective configuration.
type Config struct {
	File
	// Home is lovia's data directory ($LOVIA_HOME, default $XDG_DATA_HOME/lovia).
	Home string
	// DB is the SQLite file (--db, $LOVIA_DB, default Home/lovia.db).
	DB string
	// UserDir is ~/.config/lovia ($XDG_CONFIG_HOME respected).
	UserDir string
	// Cwd is the absolute working directory.
	Cwd string
	// Root is the project root: the git root above Cwd, or Cwd outside a repository.
	Root string
	// InGit reports whether Root is a git repository.
	InGit bool
	// Files are the config files that were read, lowest precedence first.
	Files []string

	// Trust is the project folder's trust: the settings that need it and whether
	// they apply.
	Trust Trust
	// Compat is what was read from Claude Code's files (hooks, MCP servers).
	Compat *Compat

	sources map[string]Source
	order   []string
	values  map[string]string

	// tightenPolicy: an untrusted project set the policy, which may then only
	// tighten the policy the run would have without it (userPolicy, else the
	// preset's, else coding).
	tightenPolicy bool
	projectPolicy string
	userPolicy    string
	userWSPolicy  string
}

// Env keys (SPEC §11) mapped to config keys.
var envKeys = []struct{ env, key string }{
	{"LOVIA_MODEL", "model"},
	{"LOVIA_PRESET", "preset"},
	{"LOVIA_POLICY", "policy"},
	{"LOVIA_MAX_TURNS", "max_turns"},
	{"LOVIA_BUDGET_TOKENS", "budget_tokens"},
	{"LOVIA_HOME", "home"},
	{"LOVIA_DB", "db"},
	{"LOVIA_SANDBOX", "sandbox"},
	{"LOVIA_CONNECT_TIMEOUT", "provider.connect_timeout"},
	{"LOVIA_HEADER_TIMEOUT", "provider.header_timeout"},
	{"LOVIA_STREAM_IDLE_TIMEOUT", "provider.stream_idle_timeout"},
}

// scalarKeys are always listed by `lovia config`, in this order.
var scalarKeys = []string{"model", "preset", "policy", "max_turns", "budget_tokens", "home", "db"}

// Default values.
const (
	DefaultPreset = "coder"
	DefaultPolicy = "coding"
)

// Load reads the configuration.
func Load(opts Options) (*Config, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	cwd := opts.Cwd
	if cwd == "" {
		var err error
		if cwd, err = os.Getwd(); err != nil {
			return nil, errs.Wrap(errs.KindConfig, err, "working directory", "run lovia from an existing directory or pass -C DIR")
		}
	}
	cwd, err := filepath.Abs(cwd)
	if err != nil {
		return nil, errs.Wrap(errs.KindConfig, err, "working directory", "")
	}
	if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
		return nil, errs.Newf(errs.KindUsage, "pass an existing directory to -C/--cwd", "working directory %s does not exist", cwd)
	}
	c := &Config{Cwd: cwd, sources: map[string]Source{}, values: map[string]string{}}
	c.UserDir = UserDir(getenv)
	c.Root, c.InGit = FindRoot(cwd)
	c.Compat = readClaude(c.Root, claudeHome(getenv), getenv)

	c.set("preset", DefaultPreset, Source{Layer: LayerDefault})
	c.set("policy", "", Source{Layer: LayerDefault, Where: "(the preset's, else coding)"})
	c.set("max_turns", "", Source{Layer: LayerDefault, Where: "(50)"})
	c.set("budget_tokens", "", Source{Layer: LayerDefault, Where: "(none)"})
	if m, why := defaultModel(getenv); m != "" {
		c.set("model", m, Source{Layer: LayerDefault, Where: why})
	} else {
		c.set("model", "", Source{Layer: LayerDefault, Where: "(none: set --model, LOVIA_MODEL or model: in config)"})
	}

	// The trust store lives in the data directory, which only the environment and
	// flags choose (never a config file).
	home := DataDir(getenv)
	for _, o := range opts.Flags {
		if o.Key == "home" {
			home = absPath(o.Value)
		}
	}

	merged := map[string]any{}
	var userFile File
	layers := []struct {
		path  string
		layer Layer
	}{
		{filepath.Join(c.UserDir, "config.yaml"), LayerUser},
	}
	if p := findProjectConfig(cwd, c.Root); p != "" {
		layers = append(layers, struct {
			path  string
			layer Layer
		}{p, LayerProject})
	}
	projectSeen := false
	for _, l := range layers {
		// A project config file must be a regular file inside the project directory
		// holding .lovia, and any config file at most 1 MiB: refusing it stops the
		// command, since ignoring it could drop settings that tighten the policy.
		// The user's own file may be a link (a dotfiles repository): the user is
		// trusted, so only the size cap applies to it.
		var data []byte
		var err error
		if l.layer == LayerProject {
			data, err = safefile.ReadBeneath(filepath.Dir(filepath.Dir(l.path)), l.path, safefile.MaxConfig)
		} else {
			data, err = safefile.ReadNamed(l.path, safefile.MaxConfig)
		}
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var f File
		if err := yamlfile.Decode(l.path, data, &f); err != nil {
			return nil, err
		}
		if err := check(l.path, f); err != nil {
			return nil, err
		}
		var generic map[string]any
		if err := yaml.Unmarshal(data, &generic); err != nil {
			return nil, yamlfile.Wrap(l.path, err, nil)
		}
		lines := keyLines(data)
		if l.layer == LayerUser {
			userFile = f
			deepMerge(merged, generic)
		} else {
			projectSeen = true
			keep, loose := splitProject(userFile, generic, l.path, lines)
			c.decideTrust(opts, home, loose)
			if c.Trust.Trusted {
				keep = generic
			} else if pp := trust.Stricter(str(keep["policy"]), str(nested(keep, "workspace", "policy"))); pp != "" {
				c.tightenPolicy = true
				c.projectPolicy = pp
				c.userPolicy, c.userWSPolicy = userFile.Policy, userFile.Workspace.Policy
			}
			generic = keep
			mergeProject(merged, generic, "")
		}
		for _, leaf := range leaves("", generic) {
			c.set(leaf.key, leaf.value, Source{Layer: l.layer, Where: fmt.Sprintf("%s:%d", l.path, lines[leaf.key])})
		}
		c.Files = append(c.Files, l.path)
	}
	if !projectSeen {
		c.decideTrust(opts, home, nil)
	}
	if len(merged) > 0 {
		data, err := yaml.Marshal(merged)
		if err == nil {
			err = yaml.Unmarshal(data, &c.File)
		}
		if err != nil {
			return nil, errs.Wrap(errs.KindInternal, err, "merge config files", "")
		}
	}
	c.Compat.apply(c)
	if c.Model == "" {
		c.Model = c.values["model"]
	}
	if c.Preset == "" {
		c.Preset = DefaultPreset
	}
	if c.Policy == "" && c.Workspace.Policy != "" {
		c.Policy = c.Workspace.Policy
	}

	for _, e := range envKeys {
		if v := getenv(e.env); v != "" {
			if err := c.apply(e.key, v, Source{Layer: LayerEnv, Where: e.env}); err != nil {
				return nil, err
			}
		}
	}
	for _, o := range opts.Flags {
		if err := c.apply(o.Key, o.Value, Source{Layer: LayerFlag, Where: o.Flag}); err != nil {
			return nil, err
		}
	}
	if c.Home == "" {
		c.Home = DataDir(getenv)
		c.set("home", c.Home, Source{Layer: LayerDefault})
	}
	if c.DB == "" {
		c.DB = filepath.Join(c.Home, "lovia.db")
		c.set("db", c.DB, Source{Layer: LayerDefault, Where: "(home/lovia.db)"})
	}
	if err := check("", c.File); err != nil {
		return nil, err
	}
	return c, nil
}

// apply sets a scalar key from the environment or a flag.
func (c *Config) apply(key, v string, src Source) error {
	bad := func(hint string) error {
		what := src.Where
		if src.Layer == LayerEnv {
			what = "environment variable " + what
		}
		return errs.Newf(errs.KindConfig, hint, "%s=%q: invalid value", what, v)
	}
	switch key {
	case "model":
		c.Model = v
	case "preset":
		c.Preset = v
	case "policy":
		if !validPolicy(v) {
			return &errs.Error{Kind: kindFor(src), Msg: fmt.Sprintf("%s: unknown policy %q", src.Where, v), Hint: "use readonly, coding or trusted"}
		}
		c.Policy = v
	case "max_turns", "budget_tokens":
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			hint := "use a whole number >= 0"
			if key == "max_turns" {
				hint = "use a positive number of turns, e.g. 50 (0 = the default)"
			}
			if src.Layer == LayerFlag {
				if err == nil {
					return errs.Newf(errs.KindUsage, hint, "%s %s: must not be negative", src.Where, v)
				}
				return errs.Newf(errs.KindUsage, hint, "%s %q is not a number", src.Where, v)
			}
			return bad(hint)
		}
		if key == "max_turns" {
			c.MaxTurns = n
		} else {
			c.BudgetTokens = n
		}
	case "sandbox":
		switch v {
		case "off", "auto", "required":
		default:
			return &errs.Error{Kind: kindFor(src), Msg: fmt.Sprintf("%s: unknown sandbox mode %q", src.Where, v), Hint: "use off, auto or required"}
		}
		c.Workspace.Sandbox = v
	case "provider.connect_timeout", "provider.header_timeout", "provider.stream_idle_timeout":
		if _, err := parseTimeout(v); err != nil {
			return bad("use a Go duration >= 0 such as 30s or 5m (0 turns the limit off)")
		}
		*c.Provider.timeoutField(key) = v
	case "home":
		c.Home = absPath(v)
		v = c.Home
	case "db":
		c.DB = absPath(v)
		v = c.DB
	default:
		return errs.Newf(errs.KindInternal, "", "config key %q cannot be overridden", key)
	}
	c.set(key, v, src)
	return nil
}

func kindFor(src Source) errs.Kind {
	if src.Layer == LayerFlag {
		return errs.KindUsage
	}
	return errs.KindConfig
}

func absPath(p string) string {
	if strings.HasPrefix(p, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(h, p[2:])
		}
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func validPolicy(p string) bool { return p == "readonly" || p == "coding" || p == "trusted" }

// check validates values a YAML type check cannot.
func check(path string, f File) error {
	where := func(key string) string {
		if path == "" {
			return key
		}
		return path + ": " + key
	}
	if f.Policy != "" && !validPolicy(f.Policy) {
		return errs.Newf(errs.KindConfig, "use readonly, coding or trusted", "%s: unknown policy %q", where("policy"), f.Policy)
	}
	if f.MaxTurns < 0 {
		return errs.Newf(errs.KindConfig, "use a whole number >= 0 (0 = default 50)", "%s must not be negative", where("max_turns"))
	}
	if f.BudgetTokens < 0 {
		return errs.Newf(errs.KindConfig, "use a whole number >= 0 (0 = no budget)", "%s must not be negative", where("budget_tokens"))
	}
	if f.Model != "" && !strings.Contains(f.Model, ":") {
		return errs.Newf(errs.KindConfig, "write it as PROVIDER:MODEL, e.g. openai:gpt-4.1", "%s %q is not of the form PROVIDER:MODEL", where("model"), f.Model)
	}
	if err := checkPricing(f.Pricing); err != nil {
		if path != "" {
			return errs.Wrap(errs.KindConfig, err, path, errs.HintOf(err))
		}
		return err
	}
	if err := f.Compaction.Validate(); err != nil {
		if path != "" {
			return errs.Wrap(errs.KindConfig, err, path, errs.HintOf(err))
		}
		return err
	}
	if f.Workspace.ShellTimeout < 0 {
		return errs.Newf(errs.KindConfig, "use a number of seconds >= 0 (0 = the default)", "%s must not be negative", where("workspace.shell_timeout"))
	}
	if err := f.Provider.Validate(); err != nil {
		if path != "" {
			return errs.Wrap(errs.KindConfig, err, path, errs.HintOf(err))
		}
		return err
	}
	if err := f.MCP.Validate(); err != nil {
		if path != "" {
			return errs.Wrap(errs.KindConfig, err, path, errs.HintOf(err))
		}
		return err
	}
	if err := workspace.ValidateMCPRules(f.MCPRules); err != nil {
		if path != "" {
			return errs.Wrap(errs.KindConfig, err, path, errs.HintOf(err))
		}
		return err
	}
	if m := f.Memory.EmbedModel; m != "" && !strings.HasPrefix(m, "openai:") && !strings.HasPrefix(m, "ollama:") {
		err := errs.Newf(errs.KindConfig, "write it as openai:MODEL or ollama:MODEL", "memory.embed_model %q: unknown embedding provider", m)
		if path != "" {
			return errs.Wrap(errs.KindConfig, err, path, errs.HintOf(err))
		}
		return err
	}
	for i, g := range f.Guardrails.Output {
		if err := g.Validate(fmt.Sprintf("guardrails.output[%d]", i)); err != nil {
			if path != "" {
				return errs.Wrap(errs.KindConfig, err, path, errs.HintOf(err))
			}
			return err
		}
	}
	if len(f.Hooks) > 0 {
		if _, err := hooks.NewRunner(hooks.Config{Hooks: f.Hooks}, slog.New(slog.DiscardHandler)); err != nil {
			if path != "" {
				return errs.Wrap(errs.KindConfig, err, path, errs.HintOf(err))
			}
			return err
		}
	}
	return nil
}

// set records the effective value and source of key.
func (c *Config) set(key, value string, src Source) {
	if _, ok := c.sources[key]; !ok {
		c.order = append(c.order, key)
	}
	c.sources[key] = src
	c.values[key] = value
}

// SetPreset records a value that came from the chosen preset (the preset sits between
// defaults and config files, so it only applies where nothing else set the key).
func (c *Config) SetPreset(key, value, preset string) bool {
	if s, ok := c.sources[key]; ok && s.Layer > LayerPreset {
		return false
	}
	c.set(key, value, Source{Layer: LayerPreset, Where: preset})
	return true
}

// Source returns where key's effective value came from.
func (c *Config) Source(key string) Source { return c.sources[key] }

// Value is one line of `lovia config`.
type Value struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// Values lists every effective value with its source: the scalar keys first, then
// the keys set in config files, sorted.
func (c *Config) Values() []Value {
	var out []Value
	for _, k := range scalarKeys {
		out = append(out, Value{Key: k, Value: c.values[k], Source: c.sources[k].String()})
	}
	var rest []string
	for _, k := range c.order {
		if !slices.Contains(scalarKeys, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	for _, k := range rest {
		v := c.values[k]
		if secretKey(k) && v != "" {
			v = "(redacted)"
		}
		out = append(out, Value{Key: k, Value: v, Source: c.sources[k].String()})
	}
	return out
}

// secretKey reports keys whose values must not be shown (MCP headers and env often
// hold tokens).
func secretKey(key string) bool {
	last := strings.ToLower(key[strings.LastIndexByte(key, '.')+1:])
	if lk := strings.ToLower(key); strings.HasSuffix(last, "_tokens") && !strings.Contains(lk, ".env.") && !strings.Contains(lk, ".headers.") {
		return false // a count (budget_tokens, mcp.sampling_max_tokens), not a credential
	}
	for _, s := range []string{"authorization", "token", "secret", "password", "passwd", "api_key", "apikey", "api-key", "cookie", "credential"} {
		if strings.Contains(last, s) {
			return true
		}
	}
	return strings.HasSuffix(last, "_key") || strings.HasSuffix(last, "-key")
}

// ContextWindows returns the models.<name>.context_window overrides.
func (c *Config) ContextWindows() map[string]int {
	m := map[string]int{}
	for name, mc := range c.Models {
		if mc.ContextWindow > 0 {
			m[name] = mc.ContextWindow
			// "script:foo.yaml" also applies to the provider's model name "foo.yaml".
			if _, model, ok := strings.Cut(name, ":"); ok {
				if _, dup := m[model]; !dup {
					m[model] = mc.ContextWindow
				}
			}
		}
	}
	return m
}

// ProjectDir is Root/.lovia.
func (c *Config) ProjectDir() string { return filepath.Join(c.Root, ".lovia") }

// LogFile is where lovia writes its log.
func (c *Config) LogFile() string { return filepath.Join(c.Home, "logs", "lovia.log") }

// UserDir returns lovia's user config directory.
func UserDir(getenv func(string) string) string {
	if d := getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "lovia")
	}
	return filepath.Join(homeDir(getenv), ".config", "lovia")
}

// DataDir returns lovia's default data directory.
func DataDir(getenv func(string) string) string {
	if d := getenv("LOVIA_HOME"); d != "" {
		return absPath(d)
	}
	if d := getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "lovia")
	}
	return filepath.Join(homeDir(getenv), ".local", "share", "lovia")
}

func homeDir(getenv func(string) string) string {
	if h := getenv("HOME"); h != "" {
		return h
	}
	if h, err := os.UserHomeDir(); err == nil {
		return h
	}
	return os.TempDir()
}

// FindRoot returns the git root above dir (dir included), or dir itself.
func FindRoot(dir string) (string, bool) {
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d, true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir, false
		}
		d = parent
	}
}

// findProjectConfig searches .lovia/config.yaml from cwd up to root.
func findProjectConfig(cwd, root string) string {
	for d := cwd; ; {
		p := filepath.Join(d, ".lovia", "config.yaml")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		if d == root {
			return ""
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// defaultModel picks a model when none is configured: a real one when a key is set.
func defaultModel(getenv func(string) string) (string, string) {
	switch {
	case getenv("ANTHROPIC_API_KEY") != "":
		return "anthropic:claude-sonnet-4-5", "(ANTHROPIC_API_KEY is set)"
	case getenv("OPENAI_API_KEY") != "":
		return "openai:gpt-4.1", "(OPENAI_API_KEY is set)"
	}
	return "", ""
}

type leaf struct{ key, value string }

// leaves flattens a decoded YAML mapping into dotted keys with printable values.
func leaves(prefix string, m map[string]any) []leaf {
	var out []leaf
	for k, v := range m {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
			out = append(out, leaves(key, sub)...)
			continue
		}
		out = append(out, leaf{key, printable(v)})
	}
	return out
}

func printable(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	}
	if reflect.TypeOf(v).Kind() == reflect.Slice || reflect.TypeOf(v).Kind() == reflect.Map {
		b, err := json.Marshal(v)
		if err == nil {
			return string(b)
		}
	}
	return fmt.Sprint(v)
}

// deepMerge merges src into dst: mappings merge key by key, anything else replaces.
func deepMerge(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				deepMerge(dm, sm)
				continue
			}
			cp := map[string]any{}
			deepMerge(cp, sm)
			dst[k] = cp
			continue
		}
		dst[k] = v
	}
}

// keyLines maps dotted keys to the line they are set on.
func keyLines(data []byte) map[string]int {
	out := map[string]int{}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return out
	}
	var walk func(prefix string, n ast.Node)
	walk = func(prefix string, n ast.Node) {
		var values []*ast.MappingValueNode
		switch x := n.(type) {
		case *ast.MappingNode:
			values = x.Values
		case *ast.MappingValueNode:
			values = []*ast.MappingValueNode{x}
		case *ast.TagNode:
			walk(prefix, x.Value)
			return
		case *ast.SequenceNode:
			// List items are "key[i]" (trust notices name the entry's own line).
			for i, item := range x.Values {
				if item == nil {
					continue
				}
				k := fmt.Sprintf("%s[%d]", prefix, i)
				if tk := item.GetToken(); tk != nil && tk.Position != nil {
					out[k] = tk.Position.Line
				}
				walk(k, item)
			}
			return
		default:
			return
		}
		for _, mv := range values {
			tk := mv.Key.GetToken()
			if tk == nil {
				continue
			}
			key := tk.Value
			if prefix != "" {
				key = prefix + "." + key
			}
			if tk.Position != nil {
				out[key] = tk.Position.Line
			}
			walk(key, mv.Value)
		}
	}
	for _, d := range f.Docs {
		if d != nil && d.Body != nil {
			walk("", d.Body)
		}
	}
	return out
}

// Marshal renders a File as YAML (for tests and `lovia config --yaml`).
func Marshal(f File) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf, yaml.OmitEmpty())
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
