// Package workspace gives the agent files and processes under one allow/ask/deny
// policy (SPEC §7). The Workspace is the single enforcement point for deny: every
// tool resolves paths and judges commands through it; "ask" verdicts surface as tool
// approvals. Shell commands run under mvdan.cc/sh/v3/interp with the policy checked
// again at execution time, optionally inside a Landlock sandbox.
package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/workspace/sandbox"
)

// Sandbox modes.
const (
	SandboxOff      = "off"
	SandboxAuto     = "auto"
	SandboxRequired = "required"
)

// Workspace is one root under one policy, with the state of a (chat) session: the
// "allow for this session" rules, what the agent has read (to refuse stale edits) and
// background processes. It is safe for concurrent use. Close kills background processes.
type Workspace struct {
	cfg    Config
	policy *Policy
	// rootFD is the root directory, opened once: file tools open paths inside the
	// root relative to it (safeOpen). Closed by its finalizer, not by Close, so a
	// late call after Close still works.
	rootFD       *os.File
	executor     ShellExecutor
	sandboxNote  string // set when the sandbox was requested but is unavailable
	envList      []string
	baseEnv      map[string]string
	shellTimeout time.Duration

	// plantable are files the sandbox cannot mount read-only because they did not
	// exist when it started, and that no repository of its own would create
	// (.git/commondir of a repository's main git directory): one that appears was
	// planted by a command and is removed when the command ends (undoPlants).
	plantable []string

	mu    sync.Mutex
	reads map[string]stamp // abs path -> what the agent last saw
	// shown: the resolved path each pending path approval showed ("op\x00path" as
	// the model wrote it), so the run opens only what was approved.
	shown    map[string]string
	shownCmd map[string]map[string]bool // the same for shell commands: "op:abs" shown
	procs    map[string]*bgProc
	nproc    int
}

// stamp identifies a file version the agent has seen.
type stamp struct {
	mod  time.Time
	size int64
	hash [32]byte
}

// New builds a Workspace from cfg (Root defaults to the current directory).
func New(cfg Config) (*Workspace, error) {
	p, err := NewPolicy(cfg)
	if err != nil {
		return nil, err
	}
	w := &Workspace{cfg: cfg, policy: p, reads: map[string]stamp{}, procs: map[string]*bgProc{}, shown: map[string]string{}, shownCmd: map[string]map[string]bool{}}
	// One scan of the tree for nested repositories serves both the files removed
	// after each command and the sandbox's read-only mounts.
	nested := nestedGitDirs(p.root)
	for _, cd := range plantablePaths(p.root, nested) {
		if _, err := os.Lstat(cd); errors.Is(err, fs.ErrNotExist) {
			w.plantable = append(w.plantable, cd)
		}
	}
	rootFD, err := openResolved(nil, "", p.root, os.O_RDONLY|dirFlag, 0)
	if err != nil {
		return nil, errs.Wrap(errs.KindConfig, err, "workspace root "+p.root+" cannot be opened", "run lovia inside a readable directory or pass -C DIR")
	}
	w.rootFD = rootFD
	w.shellTimeout = DefaultShellTimeout
	if cfg.ShellTimeout > 0 {
		w.shellTimeout = time.Duration(cfg.ShellTimeout) * time.Second
	}
	mode := cfg.Sandbox
	if mode == "" {
		mode = SandboxAuto
	}
	switch mode {
	case SandboxOff:
		w.executor = DirectExecutor{}
	case SandboxAuto, SandboxRequired:
		abi, abiErr := sandbox.ABI()
		if abi == 0 {
			// No Landlock: the system's own sandbox where lovia has one (macOS).
			if ex, err := platformSandbox(p, &cfg, protectedPaths(p.root, nested)); err == nil {
				w.executor = ex
				break
			} else if runtime.GOOS != "linux" {
				abiErr = err
			}
			if mode == SandboxRequired {
				return nil, errs.Wrap(errs.KindConfig, abiErr, "sandbox required but unavailable", "run on a Linux kernel with Landlock enabled, or use --sandbox auto|off")
			}
			w.sandboxNote = "the Landlock sandbox is unavailable on this system, commands are confined by the policy checks only"
			if runtime.GOOS != "linux" {
				w.sandboxNote = abiErr.Error() + ", commands are confined by the policy checks only"
			}
			slog.Debug("workspace: "+w.sandboxNote, "err", abiErr)
			w.executor = DirectExecutor{}
			break
		}
		helper := cfg.SandboxHelper
		if len(helper) == 0 {
			exe, err := os.Executable()
			if err != nil {
				return nil, fmt.Errorf("locating the lovia executable for the sandbox helper: %w", err)
			}
			helper = []string{exe, sandbox.Subcommand}
		}
		sb := &SandboxExecutor{Helper: helper, Writable: p.WritableRoots(), Readable: []string{"/"}, Required: mode == SandboxRequired,
			Namespaces: sandbox.NamespacesSupported, Network: p.network, Protect: protectedPaths(p.root, nested), Hide: p.hiddenStores()}
		if !cfg.StrictSandbox && p.preset.WriteInside == Allow {
			// Build caches shared with the user's own builds stay read-only (a poisoned
			// entry would run in the user's next build); commands get lovia's own.
			var env map[string]string
			sb.Caches, env = sandboxCaches(p)
			for k, v := range env {
				if _, set := cfg.Env[k]; !set {
					if cfg.Env == nil {
						cfg.Env = map[string]string{}
					}
					cfg.Env[k] = v
				}
			}
		}
		w.envList, w.baseEnv = buildEnv(cfg)
		sb.Env = w.envList
		if sb.Namespaces {
			// A quick kernel check (one clone of /bin/true) so that the prompt never
			// claims the namespace layer where the system refuses it; the helper's own
			// set-up is checked by the probe. In auto mode it runs while the rest of
			// the run is assembled: whatever needs its answer (the system prompt,
			// commands, the helper's start, Layers) waits for it.
			check := cfg.KernelCheck
			if check == nil {
				check = sandbox.ProbeKernel
			}
			if mode == SandboxAuto {
				sb.checkKernelAsync(check)
			} else if err := check(); err != nil {
				sb.nsErr = err
				return nil, errs.Wrap(errs.KindConfig, err, "sandbox required but the namespace layer is unavailable", "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu kernel.apparmor_restrict_unprivileged_userns=0), or use --sandbox auto (Landlock alone, reported by lovia doctor)")
			}
		}
		w.executor = sb
		if mode == SandboxAuto {
			// The kernel has Landlock, so the prompt says commands are confined; a helper
			// that then fails refuses commands (SandboxExecutor.ready) instead of running
			// them unconfined.
			sb.probeAsync(cfg.SandboxStart)
			break
		}
		if !sandbox.NamespacesSupported {
			return nil, errs.Newf(errs.KindConfig, "use Linux (user, mount and PID namespaces and Landlock), or --sandbox auto|off", "sandbox required but this system has no namespaces")
		}
		if err := sb.Probe(); err != nil {
			if _, nsErr := sb.Layers(); nsErr != nil {
				return nil, errs.Wrap(errs.KindConfig, nsErr, "sandbox required but the namespace layer is unavailable", "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu kernel.apparmor_restrict_unprivileged_userns=0), or use --sandbox auto (Landlock alone, reported by lovia doctor)")
			}
			return nil, errs.Wrap(errs.KindConfig, err, "sandbox required but its helper does not work", "check that `lovia "+sandbox.Subcommand+"` is available (same lovia binary), or use --sandbox auto|off")
		}
	default:
		return nil, errs.Newf(errs.KindConfig, "use --sandbox off, auto or required", "unknown sandbox mode %q", cfg.Sandbox)
	}
	if w.envList == nil {
		w.envList, w.baseEnv = buildEnv(cfg)
	}
	return w, nil
}

// SandboxLayers reports what confines commands (for lovia doctor and tests): the
// exec server's report, and why the namespaces are off (nil when on). ok is false
// when commands do not run through the sandbox at all.
func (w *Workspace) SandboxLayers() (rep sandbox.Report, nsErr error, ok bool) {
	sb, isSB := w.executor.(*SandboxExecutor)
	if !isSB {
		return rep, nil, false
	}
	_ = sb.awaitProbe() // its failure shows in the report (Layers)
	rep, nsErr = sb.Layers()
	return rep, nsErr, true
}

// SetExecutor replaces the shell executor (tests, other sandboxes).
func (w *Workspace) SetExecutor(e ShellExecutor) { w.executor = e }

// Policy returns the compiled policy.
func (w *Workspace) Policy() *Policy { return w.policy }

// Root returns the resolved root.
func (w *Workspace) Root() string { return w.policy.root }

// SandboxNote is non-empty when the sandbox was wanted but is not in effect.
func (w *Workspace) SandboxNote() string { return w.sandboxNote }

// Sandboxed reports whether commands run confined.
func (w *Workspace) Sandboxed() bool {
	switch w.executor.(type) {
	case *SandboxExecutor, *SeatbeltExecutor:
		return true
	}
	return false
}

// Close kills background processes.
func (w *Workspace) Close() error {
	w.mu.Lock()
	procs := make([]*bgProc, 0, len(w.procs))
	for _, p := range w.procs {
		procs = append(procs, p)
	}
	w.mu.Unlock()
	for _, p := range procs {
		p.kill()
	}
	if sb, ok := w.executor.(*SandboxExecutor); ok {
		sb.stopDeferred()
		sb.Close()
	}
	w.undoPlants()
	return nil
}

// undoPlants removes the plantable files a command created (see Workspace.plantable)
// and says what it removed ("" when nothing). A .git/commondir names the directory
// git reads its config from: left in place, the user's next git command would run a
// core.fsmonitor of the command's choosing, outside any sandbox.
func (w *Workspace) undoPlants() string {
	var gone []string
	for _, p := range w.plantable {
		if _, err := os.Lstat(p); err == nil {
			if err := os.RemoveAll(p); err == nil {
				gone = append(gone, p)
			}
		}
	}
	if len(gone) == 0 {
		return ""
	}
	return fmt.Sprintf("removed %s: it redirects git to a configuration of the command's own, which would run on the user's next git command", strings.Join(gone, ", "))
}

// envKeep are passed to commands by default: nothing secret.
var envKeep = []string{"PATH", "HOME", "LANG", "LANGUAGE", "TERM", "TMPDIR", "USER", "LOGNAME", "SHELL", "TZ"}

// secretEnv reports variables that hold keys: never passed on from lovia's own
// environment, not even with inherit_env (workspace.env can still set one by name).
func secretEnv(k string) bool {
	u := strings.ToUpper(k)
	for _, s := range []string{"_API_KEY", "_TOKEN", "_ACCESS_KEY", "_PASSWORD", "_CREDENTIALS"} {
		if strings.HasSuffix(u, s) {
			return true
		}
	}
	return strings.Contains(u, "SECRET") || strings.HasPrefix(u, "LOVIA_") && strings.Contains(u, "KEY") || u == "APIKEY" || u == "API_KEY"
}

// keptEnv is the allow-list part of lovia's environment: envKeep and LC_*.
func keptEnv() map[string]string {
	m := map[string]string{}
	for _, k := range envKeep {
		if v, ok := os.LookupEnv(k); ok {
			m[k] = v
		}
	}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "LC_") {
			k, v, _ := strings.Cut(kv, "=")
			m[k] = v
		}
	}
	return m
}

func buildEnv(cfg Config) ([]string, map[string]string) {
	m := map[string]string{}
	if cfg.InheritEnv {
		for _, kv := range os.Environ() {
			if k, v, ok := strings.Cut(kv, "="); ok && !secretEnv(k) {
				m[k] = v
			}
		}
	} else {
		m = keptEnv()
	}
	if _, ok := m["PATH"]; !ok {
		m["PATH"] = "/usr/local/bin:/usr/bin:/bin"
	}
	// Nobody can answer a prompt or page through output: fail fast instead of hanging.
	for k, v := range map[string]string{"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"} {
		if _, ok := m[k]; !ok {
			m[k] = v
		}
	}
	for k, v := range cfg.Env {
		m[k] = v
	}
	list := make([]string, 0, len(m))
	for k, v := range m {
		list = append(list, k+"="+v)
	}
	sort.Strings(list)
	base := map[string]string{}
	for _, k := range baseline {
		base[k] = m[k]
	}
	return list, base
}

func (w *Workspace) env() []string { return w.envList }

// dir resolves a working directory for a command: it must exist and be readable.
func (w *Workspace) dir(cwd string) (string, error) {
	if cwd == "" {
		return w.policy.root, nil
	}
	abs, d, why := w.policy.Judge(cwd, "", OpRead)
	if d == Deny {
		return "", &DeniedError{What: "working directory " + cwd, Reason: why}
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("working directory %s: %w", cwd, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("working directory %s is not a directory", cwd)
	}
	return abs, nil
}

// ErrDenied marks path denials from the file operations.
var ErrDenied = errors.New("denied by the workspace policy")

// PathError is a denial of a file operation, with what would allow it.
type PathError struct {
	Path, Abs string
	Op        Op
	Decision  Decision
	Reason    string
	hint      string
}

func (e *PathError) Error() string {
	return fmt.Sprintf("%s %s denied: %s. %s", e.Op, e.Path, e.Reason, e.hint)
}

func (e *PathError) Unwrap() error { return ErrDenied }

// AllowHint says what would allow op on abs (for denial messages): which part of the
// configuration decides it, and what the user could change.
func (p *Policy) AllowHint(op Op, abs string) string {
	if abs == "" {
		return "Use a plain path to an existing directory: no symlink loops, no .. after a directory that does not exist, no /proc/*/fd or /dev/fd links (for a command's own streams use >&2, /dev/stdout or /dev/stderr)."
	}
	for _, d := range p.denied {
		if d.match(abs, p.root) {
			return "The path is in workspace.denied_paths: leave it alone unless the user changes that."
		}
	}
	for _, r := range p.rules {
		if (op == OpRead && r.read != nil || op == OpWrite && r.write != nil) && r.match(abs, p.root) {
			return fmt.Sprintf("The workspace.path_rules entry %q decides this.", r.raw)
		}
	}
	for _, c := range p.credentials {
		if c.match(abs, p.root) {
			return "Credentials are off limits: leave them alone unless the user adds a workspace.path_rules entry for this path."
		}
	}
	if op == OpWrite {
		if _, ok := p.ownState(abs); ok {
			return "Leave lovia's own configuration and data to the user: tell them what to change and they can edit it themselves."
		}
		if rel, ok := relInside(p.root, abs); ok {
			if _, ok := protectedWrite(rel); ok {
				return "Leave git's config and hooks and lovia's .lovia/ to the user (they can edit them, or run lovia with --policy trusted, which asks); for a git setting the user wants, tell them the command to run."
			}
		}
	}
	dir := abs
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		dir = filepath.Dir(abs)
	}
	switch {
	case p.name == PresetReadonly:
		return "The readonly policy allows no changes; the user can switch with --policy coding."
	case op == OpRead:
		return fmt.Sprintf("If the user wants this, they can add %q to workspace.readable in .lovia/config.yaml, or use --policy trusted.", dir)
	case p.Inside(abs):
		return "Writing inside the workspace is not allowed by this policy."
	case p.name == PresetCoding:
		return fmt.Sprintf("If the user wants this, they can add %q to workspace.writable in .lovia/config.yaml, or use --policy trusted (which asks).", dir)
	}
	return fmt.Sprintf("If the user wants this, they can add %q to workspace.writable in .lovia/config.yaml.", dir)
}

// CheckPath is the session gate every file operation passes: it resolves path
// (relative to the root) and returns the absolute path, or a *PathError when the
// policy denies it. An "ask" verdict passes only when approved is true.
func (w *Workspace) CheckPath(path string, op Op, approved bool) (string, Decision, error) {
	return w.checkPath(path, op, fixedGate(approved))
}

// gate decides an "ask" on the resolved path abs at the moment it is used.
type gate func(abs, why string) bool

func fixedGate(approved bool) gate { return func(string, string) bool { return approved } }

func (w *Workspace) checkPath(path string, op Op, g gate) (string, Decision, error) {
	if strings.TrimSpace(path) == "" {
		return "", Deny, fmt.Errorf("empty path")
	}
	path = unquoteName(path) // a name as list_files/grep_files showed it
	abs, d, why := w.policy.Judge(path, "", op)
	if d == Deny || d == Ask && !g(abs, why) {
		return abs, d, &PathError{Path: path, Abs: abs, Op: op, Decision: d, Reason: why, hint: w.policy.AllowHint(op, abs)}
	}
	return abs, d, nil
}

// sandboxCaches are lovia's own writable build caches for sandboxed commands, and
// the variables pointing the tools at them (GOCACHE, XDG_CACHE_HOME, npm and pip).
// The user's own caches stay read-only to commands unless workspace.writable names
// them (then the tool keeps using it): a writable shared cache is a code-planting
// route, since a poisoned GOCACHE entry runs in the user's next build.
func sandboxCaches(p *Policy) ([]string, map[string]string) {
	base, err := os.UserCacheDir()
	if err != nil || !filepath.IsAbs(base) {
		return nil, nil
	}
	// One cache per workspace root: a cache shared across repositories would let a
	// hostile repository's command plant a build object (a GOCACHE entry is trusted by
	// its key alone) that another repository's build then links and runs.
	sum := sha256.Sum256([]byte(p.root))
	base = filepath.Join(base, "lovia", "sandbox-cache", hex.EncodeToString(sum[:8]))
	// The user's location of each cache, as the tool would find it.
	userCache := func(env, def string) string {
		if v := os.Getenv(env); filepath.IsAbs(v) {
			return v
		}
		return def
	}
	xdg := userCache("XDG_CACHE_HOME", filepath.Join(p.home, ".cache"))
	tools := []struct{ env, dir, user string }{
		{"GOCACHE", "go-build", userCache("GOCACHE", filepath.Join(xdg, "go-build"))},
		{"XDG_CACHE_HOME", "xdg", xdg},
		{"npm_config_cache", "npm", userCache("npm_config_cache", filepath.Join(p.home, ".npm"))},
		{"PIP_CACHE_DIR", "pip", userCache("PIP_CACHE_DIR", filepath.Join(xdg, "pip"))},
	}
	var dirs []string
	env := map[string]string{}
	for _, t := range tools {
		if d, _ := p.DecidePath(resolveLoose(t.user), OpWrite); d == Allow {
			// workspace.writable names it: the tool keeps the user's cache — named
			// explicitly, since XDG_CACHE_HOME (its default's base) may move.
			if t.env != "XDG_CACHE_HOME" {
				env[t.env] = t.user
			}
			continue
		}
		dir := filepath.Join(base, t.dir)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			continue
		}
		dirs = append(dirs, dir)
		env[t.env] = dir
	}
	return dirs, env
}

// protectedPaths are the files in the root that run code later, outside any sandbox
// (git's configuration and hooks, lovia's own configuration): read-only to sandboxed
// commands. Those missing when a sandbox starts cannot be mounted over; the exec
// server restarts when one appears.
func protectedPaths(root string, nested []string) []string {
	git := filepath.Join(root, ".git")
	out := []string{filepath.Join(root, ".lovia")}
	fi, err := os.Lstat(git)
	if err == nil && !fi.IsDir() {
		// A .git file (a worktree or submodule) names the real git directory: the file
		// itself is read-only, so a command cannot repoint it at a directory of its own
		// with hooks. The directory it names is judged like any path (outside the root
		// Landlock keeps it read-only).
		return append(out, git)
	}
	out = append(out, filepath.Join(git, "config"), filepath.Join(git, "config.worktree"), filepath.Join(git, "commondir"), filepath.Join(git, "hooks"))
	if err == nil && fi.IsDir() {
		// Without a hooks directory a command could create one; an empty one is what
		// git init makes anyway.
		_ = os.Mkdir(filepath.Join(git, "hooks"), 0o755)
		mods, _ := filepath.Glob(filepath.Join(git, "modules", "*"))
		for _, m := range mods {
			out = append(out, filepath.Join(m, "config"), filepath.Join(m, "hooks"))
		}
		// A linked worktree elsewhere takes its config and hooks from the directory
		// its commondir names: rewritten, the user's next git command there runs a
		// core.fsmonitor of the command's choosing.
		wts, _ := filepath.Glob(filepath.Join(git, "worktrees", "*"))
		for _, wt := range wts {
			out = append(out, filepath.Join(wt, "commondir"), filepath.Join(wt, "config.worktree"))
		}
	}
	// Nested repositories (a vendored clone, a checked-out dependency): the user's git
	// runs their config and hooks when they work there.
	for _, g := range nested {
		out = append(out, filepath.Join(g, "config"), filepath.Join(g, "config.worktree"), filepath.Join(g, "hooks"))
	}
	return out
}

// plantablePaths are files that redirect git to a configuration of their own and
// that usually do not exist, so the sandbox cannot mount them read-only: a commondir
// in the root's git directory, its submodules' and nested repositories' (git takes
// config and hooks from the directory it names), and a linked worktree's
// config.worktree. Those missing at the start are removed after every command.
func plantablePaths(root string, nested []string) []string {
	git := filepath.Join(root, ".git")
	if fi, err := os.Lstat(git); err != nil || !fi.IsDir() {
		return nil
	}
	out := []string{filepath.Join(git, "commondir")}
	mods, _ := filepath.Glob(filepath.Join(git, "modules", "*"))
	for _, m := range mods {
		out = append(out, filepath.Join(m, "commondir"))
	}
	wts, _ := filepath.Glob(filepath.Join(git, "worktrees", "*"))
	for _, wt := range wts {
		out = append(out, filepath.Join(wt, "config.worktree"))
	}
	for _, g := range nested {
		out = append(out, filepath.Join(g, "commondir"))
	}
	return out
}

// nestedGitDirs finds the git directories of repositories nested in the root, a few
// levels deep and within a budget of directories visited (the scan runs once per
// workspace, in New); links are not followed. A deeper one is guarded by the policy
// checks only (docs/policies.md).
func nestedGitDirs(root string) []string {
	const maxDepth, budget = 4, 4000
	var out []string
	level := []string{root}
	seen := 0
	for depth := 0; depth < maxDepth && len(level) > 0 && seen < budget; depth++ {
		var next []string
		for _, d := range level {
			ents, err := os.ReadDir(d)
			if err != nil {
				continue
			}
			for _, e := range ents {
				if !e.IsDir() || seen >= budget {
					continue
				}
				seen++
				p := filepath.Join(d, e.Name())
				if e.Name() == ".git" {
					if d != root {
						out = append(out, p)
					}
					continue
				}
				if e.Name() == "node_modules" {
					continue
				}
				next = append(next, p)
			}
		}
		level = next
	}
	return out
}

// hiddenStores are the credential stores that exist and that no path rule opens for
// reading, plus lovia's own secrets (ownSecrets, which no rule opens): sandboxed
// commands see them empty.
func (p *Policy) hiddenStores() []string {
	var out []string
	for _, c := range credentialStores {
		pat := expandHome(c, p.home)
		ms, _ := filepath.Glob(pat)
		for _, m := range ms {
			abs := resolveLoose(m)
			if d, _ := p.DecidePath(abs, OpRead); d == Allow {
				continue
			}
			if under(abs, p.root) || under(p.root, abs) {
				continue // the workspace itself (lovia run in ~/.password-store): keep it visible
			}
			out = append(out, abs)
		}
	}
	return append(append(out, p.ownSecrets()...), p.daemonSockets()...)
}

// daemonSockets are the sockets of daemons that run what a client asks outside any
// sandbox: the user's D-Bus session bus and systemd manager (`systemd-run --user`),
// the system bus and systemd (as root), Docker and Podman (a container with the
// host's / mounted). A sandboxed command connected to one has left the sandbox, and
// Landlock before ABI 9 cannot refuse a connection to a pathname socket: with
// namespaces each is covered by /dev/null, which refuses it. Listed whether or not
// they exist yet (the exec server starts afresh once one appears, see existingKey);
// workspace.writable naming one (or a directory holding it) leaves it reachable.
func (p *Policy) daemonSockets() []string {
	runtimeDirs := []string{filepath.Join("/run/user", strconv.Itoa(os.Getuid()))}
	if d := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(d) {
		runtimeDirs = append(runtimeDirs, d)
	}
	var cands []string
	for _, d := range runtimeDirs {
		cands = append(cands, filepath.Join(d, "bus"), filepath.Join(d, "systemd", "private"),
			filepath.Join(d, "docker.sock"), filepath.Join(d, "podman", "podman.sock"))
	}
	cands = append(cands, "/run/dbus/system_bus_socket", "/run/systemd/private", "/run/docker.sock",
		"/var/run/docker.sock", "/run/podman/podman.sock", "/run/containerd/containerd.sock")
	seen := map[string]bool{}
	var out []string
cand:
	for _, c := range cands {
		abs := resolveLoose(c)
		if seen[abs] {
			continue
		}
		seen[abs] = true
		for _, w := range p.writable {
			if under(w, abs) {
				continue cand
			}
		}
		out = append(out, abs)
	}
	return out
}

// MCPAuthDir is the directory of lovia's data directory that keeps the OAuth tokens
// of MCP servers (mcp.AuthDir).
const MCPAuthDir = "mcp-auth"

// ownSecrets are the secrets lovia itself keeps outside the root — the MCP servers'
// OAuth tokens, sent only to the server each was issued for — in each of its own
// directories, whether they exist yet or not (the exec server starts afresh once one
// appears, see existingKey). Unlike the credential stores no policy or path rule lets
// a command read them: they are lovia's, not the user's files.
func (p *Policy) ownSecrets() []string {
	var out []string
	for _, d := range p.own {
		if fi, err := os.Stat(d); err == nil && !fi.IsDir() {
			continue // a --db file
		}
		m := filepath.Join(d, MCPAuthDir)
		if under(m, p.root) || under(p.root, m) {
			continue // lovia run on its own data directory: keep it visible
		}
		out = append(out, m)
	}
	return out
}
