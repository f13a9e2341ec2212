// Package doctor checks that lovia can work on this machine: configuration files
// parse, API keys are present, the configured model's server answers, the database
// opens and is sound, the Landlock sandbox is available, skills load and the MCP
// servers start. Each check yields one Result with what to fix.
package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/lovia-dev/lovia/internal/textutil"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lovia-dev/lovia/internal/config"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/plugin/mcp"
	"github.com/lovia-dev/lovia/internal/plugin/skills"
	"github.com/lovia-dev/lovia/internal/preset"
	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/provider/script"
	"github.com/lovia-dev/lovia/internal/store/sqlite"
	"github.com/lovia-dev/lovia/internal/termtext"
	"github.com/lovia-dev/lovia/internal/workspace"
	"github.com/lovia-dev/lovia/internal/workspace/sandbox"
)

// Status is the outcome of one check.
type Status string

const (
	OK   Status = "ok"
	Warn Status = "warn"
	Fail Status = "fail"
)

// Mark is the symbol printed before a result.
func (s Status) Mark() string {
	switch s {
	case OK:
		return "✓"
	case Warn:
		return "!"
	}
	return "✗"
}

// Result is one line of the report.
type Result struct {
	Check  string `json:"check"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
	// Fix says what to do (empty when nothing needs doing).
	Fix string `json:"fix,omitempty"`
}

// DefaultTimeout bounds the model reachability probe.
const DefaultTimeout = 5 * time.Second

// Options configure a check-up. Zero values use the real process.
type Options struct {
	Cwd    string
	Getenv func(string) string
	// Flags are the common flags the user set (--model, --preset, --db, ...).
	Flags []config.Override
	// HTTPClient probes the model's server (tests use httptest).
	HTTPClient *http.Client
	// Timeout bounds the model probe (default DefaultTimeout).
	Timeout time.Duration
	// Landlock reports the kernel's Landlock ABI (default sandbox.ABI).
	Landlock func() (int, error)
	// GOOS picks the platform's sandbox checks (default runtime.GOOS); Seatbelt
	// probes macOS's sandbox-exec (default workspace.ProbeSeatbelt). See platform.go.
	GOOS     string
	Seatbelt func(context.Context) error
	// Sandbox starts the sandbox for the workspace configuration and reports its
	// layers (nsErr: why the namespaces are off). Nil: only the kernel is probed
	// (sandbox.ProbeKernel), without starting lovia's helper.
	Sandbox func(cfg workspace.Config) (rep sandbox.Report, nsErr error, err error)
	// Bundled are the embedded skills (nil for none).
	Bundled fs.FS
	Logger  *slog.Logger
	// Trust checks with the project's loosening settings applied (--trust).
	Trust bool
}

// Run performs every check in order. It never fails as a whole: problems are
// results.
func Run(ctx context.Context, opts Options) []Result {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = http.DefaultClient
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Landlock == nil {
		opts.Landlock = sandbox.ABI
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	var out []Result
	cfg, err := config.Load(config.Options{Cwd: opts.Cwd, Getenv: opts.Getenv, Flags: opts.Flags, Trust: opts.Trust})
	if err != nil {
		out = append(out, failure("config", err, "fix the file named above, then run lovia doctor again"))
	} else {
		detail := "defaults only (no config file)"
		if len(cfg.Files) > 0 {
			detail = "parsed " + strings.Join(cfg.Files, ", ")
		}
		out = append(out, Result{Check: "config", Status: OK, Detail: detail})
		if ig := cfg.Trust.Ignored(); len(ig) > 0 {
			keys := make([]string, 0, len(ig))
			for _, e := range ig {
				keys = append(keys, e.Key)
			}
			out = append(out, Result{Check: "trust", Status: Warn,
				Detail: fmt.Sprintf("folder not trusted: %d project setting(s) ignored (%s)", len(ig), strings.Join(keys, ", ")),
				Fix:    "review them with `lovia trust`, which asks before it trusts the folder"})
		}
	}

	model := ""
	if cfg != nil {
		var r Result
		r, model = checkPreset(cfg)
		out = append(out, r)
	}
	out = append(out, checkKeys(opts.Getenv, model)...)
	if cfg != nil {
		out = append(out, checkModel(ctx, opts, cfg, model))
	}
	dbPath := sqlite.DefaultPath(opts.Getenv)
	if cfg != nil {
		dbPath = cfg.DB
	}
	out = append(out, checkDB(ctx, dbPath))
	var wcfg workspace.Config
	if cfg != nil {
		wcfg = cfg.Workspace
		wcfg.Root = cfg.Root
		if cfg.Policy != "" {
			wcfg.Policy = cfg.Policy
		}
	}
	out = append(out, checkSandbox(ctx, opts, wcfg)...)
	if cfg != nil {
		out = append(out, checkSkills(ctx, opts, cfg)...)
		out = append(out, checkMCP(ctx, opts, cfg)...)
	}
	return out
}

// Failed reports whether any result is a failure.
func Failed(rs []Result) bool {
	for _, r := range rs {
		if r.Status == Fail {
			return true
		}
	}
	return false
}

// Write prints one line per result and the fix under it.
func Write(w io.Writer, rs []Result) error {
	// Details quote what servers, providers and files said: shown sanitized.
	sw := termtext.NewWriter(w)
	defer sw.Flush()
	w = sw
	width := 0
	for _, r := range rs {
		width = max(width, len(r.Check))
	}
	for _, r := range rs {
		if _, err := fmt.Fprintf(w, "%s %-*s  %s\n", r.Status.Mark(), width, r.Check, r.Detail); err != nil {
			return err
		}
		if r.Fix != "" {
			if _, err := fmt.Fprintf(w, "  %*s  fix: %s\n", width, "", r.Fix); err != nil {
				return err
			}
		}
	}
	var fails, warns int
	for _, r := range rs {
		switch r.Status {
		case Fail:
			fails++
		case Warn:
			warns++
		}
	}
	var err error
	switch {
	case fails > 0:
		_, err = fmt.Fprintf(w, "\n%d problem(s) to fix, %d warning(s)\n", fails, warns)
	case warns > 0:
		_, err = fmt.Fprintf(w, "\nready, with %d warning(s)\n", warns)
	default:
		_, err = fmt.Fprintln(w, "\nready")
	}
	return err
}

// WriteJSON prints the results as a JSON array.
func WriteJSON(w io.Writer, rs []Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if rs == nil {
		rs = []Result{}
	}
	return enc.Encode(rs)
}

// failure turns err into a failed result; an errs.Error's hint is the fix.
func failure(check string, err error, fallback string) Result {
	fix := errs.HintOf(err)
	if fix == "" {
		fix = fallback
	}
	return Result{Check: check, Status: Fail, Detail: textutil.OneLine(err.Error()), Fix: fix}
}

// checkPreset loads the presets and returns the effective model (the configured one,
// else the preset's).
func checkPreset(cfg *config.Config) (Result, string) {
	set, err := preset.Load(cfg.PresetDirs())
	if err != nil {
		return failure("preset", err, "fix the preset file named above"), cfg.Model
	}
	p, err := set.Get(cfg.Preset)
	if err != nil {
		return failure("preset", err, "run lovia presets for the names"), cfg.Model
	}
	model := cfg.Model
	if p.Model != "" && cfg.Source("model").Layer == config.LayerDefault {
		model = p.Model
	}
	return Result{Check: "preset", Status: OK, Detail: p.Name + " (" + p.Source + ")"}, model
}

// keyVars are the API keys doctor reports, with the providers that need them.
var keyVars = []struct {
	name      string
	alt       string // another variable that satisfies the provider
	providers []string
	base      string // base-URL variable: a custom server may need no key
}{
	{"OPENAI_API_KEY", "", []string{"openai", "oai", "openai-chat", "openai-responses"}, "OPENAI_BASE_URL"},
	{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", []string{"anthropic", "claude"}, "ANTHROPIC_BASE_URL"},
}

func checkKeys(getenv func(string) string, model string) []Result {
	prefix, _, _ := strings.Cut(model, ":")
	var out []Result
	for _, k := range keyVars {
		set := getenv(k.name) != "" || (k.alt != "" && getenv(k.alt) != "")
		needed := false
		for _, p := range k.providers {
			needed = needed || p == prefix
		}
		r := Result{Check: k.name, Status: OK, Detail: "set"}
		if !set {
			r.Detail = "not set"
			switch {
			case needed && getenv(k.base) == "":
				r.Status = Fail
				r.Detail = "not set, and the model " + model + " needs it"
				r.Fix = "export " + k.name + "=... (your key from the provider's console), or choose another model with --model"
			case needed:
				r.Status = Warn
				r.Detail = "not set (fine if the server at " + k.base + " needs no key)"
			default:
				r.Detail = "not set (needed only for " + k.providers[0] + ": models)"
			}
		}
		out = append(out, r)
	}
	return out
}

// probeURL is the URL doctor fetches to see that a provider's server answers, with
// the headers that carry the key.
func probeURL(prefix string, getenv func(string) string) (string, http.Header, bool) {
	h := http.Header{}
	switch prefix {
	case "openai", "oai", "openai-chat", "openai-responses":
		base := getenv("OPENAI_BASE_URL")
		if base == "" {
			base = "https://api.openai.com/v1"
		}
		if k := getenv("OPENAI_API_KEY"); k != "" {
			h.Set("Authorization", "Bearer "+k)
		}
		return strings.TrimRight(base, "/") + "/models", h, true
	case "anthropic", "claude":
		base := getenv("ANTHROPIC_BASE_URL")
		if base == "" {
			base = "https://api.anthropic.com"
		}
		if k := getenv("ANTHROPIC_API_KEY"); k != "" {
			h.Set("x-api-key", k)
		} else if t := getenv("ANTHROPIC_AUTH_TOKEN"); t != "" {
			h.Set("Authorization", "Bearer "+t)
		}
		h.Set("anthropic-version", "2023-06-01")
		return strings.TrimRight(base, "/") + "/v1/models", h, true
	case "ollama":
		host := getenv("OLLAMA_HOST")
		if host == "" {
			host = "localhost:11434"
		}
		if !strings.Contains(host, "://") {
			host = "http://" + host
		}
		if u, err := url.Parse(host); err == nil && u.Port() == "" && !strings.Contains(u.Host, ":") {
			u.Host += ":11434"
			host = u.String()
		}
		if k := getenv("OLLAMA_API_KEY"); k != "" {
			h.Set("Authorization", "Bearer "+k)
		}
		return strings.TrimRight(host, "/") + "/v1/models", h, true
	}
	return "", nil, false
}

func baseVar(prefix string) string {
	switch prefix {
	case "anthropic", "claude":
		return "ANTHROPIC_BASE_URL"
	case "ollama":
		return "OLLAMA_HOST"
	}
	return "OPENAI_BASE_URL"
}

func checkModel(ctx context.Context, opts Options, cfg *config.Config, model string) Result {
	r := Result{Check: "model"}
	if model == "" {
		r.Status, r.Detail = Fail, "no model configured"
		r.Fix = "set OPENAI_API_KEY or ANTHROPIC_API_KEY, or pass --model PROVIDER:MODEL (or model: in ~/.config/lovia/config.yaml)"
		return r
	}
	prefix, name, _ := strings.Cut(model, ":")
	if prefix == "script" {
		// Resolving parses the script file: the only thing that can go wrong offline.
		reg := provider.NewRegistry(provider.Env{Getenv: opts.Getenv, Dir: cfg.Cwd})
		script.Register(reg)
		if _, err := reg.Resolve(ctx, model); err != nil {
			return failure("model", err, "fix the script file or choose another --model")
		}
		r.Status, r.Detail = OK, model+" (scripted, no network)"
		return r
	}
	u, hdr, ok := probeURL(prefix, opts.Getenv)
	if !ok || name == "" {
		r.Status, r.Detail = Fail, fmt.Sprintf("model %q: unknown provider %q", model, prefix)
		r.Fix = "use --model PROVIDER:MODEL with openai, openai-responses, anthropic, ollama or script"
		return r
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		r.Status, r.Detail = Fail, fmt.Sprintf("%s: bad server URL %q", model, u)
		r.Fix = "set " + baseVar(prefix) + " to an http(s) URL"
		return r
	}
	req.Header = hdr
	start := time.Now()
	resp, err := opts.HTTPClient.Do(req)
	if err != nil {
		r.Status = Fail
		what := "cannot reach"
		if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			what = fmt.Sprintf("no answer within %s from", opts.Timeout)
		}
		// The URL carries no secret (keys travel in headers), so it is safe to show.
		r.Detail = fmt.Sprintf("%s: %s %s", model, what, redactURL(u))
		r.Fix = "check the network (proxy, VPN, firewall) and " + baseVar(prefix) + "; for ollama, start it with `ollama serve`"
		return r
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	ms := time.Since(start).Milliseconds()
	r.Status, r.Detail = OK, fmt.Sprintf("%s: %s answered HTTP %d in %d ms", model, hostOf(u), resp.StatusCode, ms)
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		r.Status = Warn
		r.Detail = fmt.Sprintf("%s: %s is reachable but refused the key (HTTP %d)", model, hostOf(u), resp.StatusCode)
		r.Fix = "check the API key variable for " + prefix + " (lovia doctor never prints it)"
	}
	return r
}

func hostOf(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return p.Host
}

// redactURL drops user info and the query, where credentials sometimes hide.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return hostOf(u)
	}
	p.User, p.RawQuery = nil, ""
	return p.String()
}

func checkDB(ctx context.Context, path string) Result {
	r := Result{Check: "database"}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		r.Status, r.Detail = OK, path+" (created on the first run)"
		return r
	}
	db, err := sqlite.OpenReadOnly(ctx, path)
	if err != nil {
		return failure("database", err, "move "+path+" aside; lovia creates a fresh one")
	}
	defer db.Close()
	if err := db.Check(ctx); err != nil {
		return failure("database", err, "move "+path+" aside; lovia creates a fresh one")
	}
	r.Status, r.Detail = OK, path+" (integrity check passed)"
	return r
}

func checkLandlock(abi func() (int, error), mode string) Result {
	r := Result{Check: "sandbox"}
	if mode == workspace.SandboxOff {
		r.Status, r.Detail = Warn, "off in config (workspace.sandbox: off): commands are confined by the policy checks only"
		r.Fix = "remove workspace.sandbox: off to use Landlock when the kernel has it"
		return r
	}
	v, err := abi()
	if v > 0 {
		r.Status, r.Detail = OK, fmt.Sprintf("Landlock ABI v%d: commands run confined to the workspace", v)
		return r
	}
	r.Status, r.Detail = Warn, "Landlock unavailable: commands are confined by the policy checks only"
	if err != nil {
		r.Detail += " (" + textutil.OneLine(err.Error()) + ")"
	}
	r.Fix = "use Linux 5.13+ with Landlock enabled (lsm=landlock) for the kernel sandbox"
	if mode == workspace.SandboxRequired {
		r.Status = Fail
		r.Fix = "workspace.sandbox is required: run on a kernel with Landlock, or set it to auto"
	}
	return r
}

func checkSkills(ctx context.Context, opts Options, cfg *config.Config) []Result {
	home := opts.Getenv("HOME")
	dirs := append(skills.DirsFor(home, cfg.UserDir, cfg.Root), cfg.Skills.Dirs...)
	list, problems := skills.List(ctx, skills.Config{Bundled: opts.Bundled, Dirs: dirs, NoWatch: true, Repo: cfg.Root})
	out := []Result{{Check: "skills", Status: OK, Detail: fmt.Sprintf("%d loaded", len(list))}}
	for _, p := range problems {
		out = append(out, Result{Check: "skills", Status: Warn, Detail: textutil.OneLine(p.Error()), Fix: "fix the SKILL.md frontmatter (name ≤64 characters, description ≤1024); the other skills still load"})
	}
	return out
}

func checkMCP(ctx context.Context, opts Options, cfg *config.Config) []Result {
	if len(cfg.MCP.Servers) == 0 {
		return []Result{{Check: "mcp", Status: OK, Detail: "no servers configured"}}
	}
	list, err := mcp.ListServers(ctx, cfg.MCP, opts.Logger)
	if err != nil {
		return []Result{failure("mcp", err, "fix mcp.servers in the config")}
	}
	var out []Result
	for _, s := range list {
		r := Result{Check: "mcp " + s.Name}
		switch s.Status {
		case "ok":
			r.Status, r.Detail = OK, fmt.Sprintf("%s started, %d tools", s.Target, len(s.Tools))
		case "disabled":
			r.Status, r.Detail = OK, "disabled"
		default:
			r.Status, r.Detail = Fail, textutil.OneLine(s.Error)
			r.Fix = "check mcp.servers." + s.Name + " (command, args, env or url); run the command by hand to see its error, or set disabled: true"
		}
		out = append(out, r)
	}
	return out
}

// checkNamespaces reports the namespace layer and the network boundary, as the
// sandbox actually started (opts.Sandbox) or as far as a kernel probe can tell.
func checkNamespaces(opts Options, cfg workspace.Config) []Result {
	ns := Result{Check: "sandbox namespaces"}
	netr := Result{Check: "sandbox network"}
	required := cfg.Sandbox == workspace.SandboxRequired
	var rep sandbox.Report
	var nsErr error
	probed := false
	if opts.Sandbox != nil {
		r, ne, err := opts.Sandbox(cfg)
		if err != nil && ne == nil {
			return []Result{failure("sandbox namespaces", err, "run lovia doctor again; if it persists use --sandbox off and report the error")}
		}
		rep, nsErr, probed = r, ne, true
	} else if nsErr = sandbox.ProbeKernel(); nsErr == nil {
		rep = sandbox.Report{Namespaces: true, NetNS: true}
	}
	if nsErr != nil || !rep.Namespaces {
		ns.Status, ns.Detail = Warn, "unavailable, Landlock alone confines commands: no private /proc (commands can read other processes' environment), .git/config, .git/hooks and .lovia writable, credential stores readable, daemons outlive commands"
		if nsErr != nil {
			ns.Detail += " (" + textutil.OneLine(nsErr.Error()) + ")"
		}
		ns.Fix = "allow unprivileged user namespaces: sysctl kernel.unprivileged_userns_clone=1 (Debian), kernel.apparmor_restrict_unprivileged_userns=0 (Ubuntu 24.04+), or raise user.max_user_namespaces"
		if required {
			ns.Status = Fail
			ns.Fix = "workspace.sandbox is required, which needs the namespaces: " + ns.Fix + "; or set it to auto"
		}
	} else {
		ns.Status = OK
		parts := []string{"user, mount, PID and IPC namespaces"}
		if probed {
			if rep.PrivateProc {
				parts = append(parts, "private /proc")
			}
			if len(rep.Protected) > 0 {
				parts = append(parts, fmt.Sprintf("%d paths read-only (%s)", len(rep.Protected), strings.Join(baseNames(rep.Protected, cfg.Root), ", ")))
			}
			stores, sockets := 0, 0
			for _, h := range rep.Hidden {
				if fi, err := os.Stat(h); err == nil && fi.Mode()&os.ModeSocket != 0 {
					sockets++ // a daemon that runs what it is asked (D-Bus, Docker)
				} else {
					stores++
				}
			}
			if stores > 0 {
				parts = append(parts, fmt.Sprintf("%d credential stores hidden", stores))
			}
			if sockets > 0 {
				parts = append(parts, fmt.Sprintf("%d daemon sockets refused", sockets))
			}
			if rep.ProcLimit != "" {
				parts = append(parts, "process limit: "+rep.ProcLimit)
			} else {
				parts = append(parts, "no process limit (kernel before 6.14 and running as root)")
			}
		} else {
			parts = append(parts, "available (kernel probe; the helper sets up a private /proc and the read-only mounts when commands run)")
		}
		ns.Detail = strings.Join(parts, "; ")
	}
	switch mode := workspace.NetworkMode(cfg); {
	case mode == workspace.NetworkAllow:
		netr.Status, netr.Detail = OK, "allowed to every command (workspace.network: allow)"
	case nsErr == nil && rep.Namespaces:
		netr.Status, netr.Detail = OK, "denied to commands (network namespace, loopback only)"
		if mode == workspace.NetworkAsk {
			netr.Detail += "; commands known to need it (curl, git fetch/push, go get, npm install, ...) ask and then run with it"
		}
	default:
		if v, _ := opts.Landlock(); v >= 4 {
			netr.Status, netr.Detail = Warn, fmt.Sprintf("TCP denied by Landlock (ABI v%d) without a network namespace: UDP is not covered, and local test servers cannot bind", v)
		} else {
			netr.Status, netr.Detail = Warn, "not restricted: no network namespace and Landlock before ABI v4"
		}
		netr.Fix = ns.Fix
	}
	return []Result{ns, netr}
}

// baseNames shows paths relative to the root.
func baseNames(ps []string, root string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		if rel, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(rel, "..") {
			p = rel
		}
		out = append(out, p)
	}
	return out
}
