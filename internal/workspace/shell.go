package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"sort"
	"strings"
	"sync"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/lovia-dev/lovia/internal/workspace/sandbox"
)

// DefaultShellTimeout bounds one foreground shell command.
const DefaultShellTimeout = 300 * time.Second

// MaxShellOutput is the cap on a shell result (head + tail are kept).
const MaxShellOutput = 30_000

// ExecRequest is one simple command that passed the policy, ready to start.
type ExecRequest struct {
	Path string   // resolved program
	Args []string // argv, Args[0] as written
	Dir  string
	Env  []string
	// Writable are extra paths the person approved writing for this call.
	Writable []string
	// Network: the command passed the policy as one that needs the network.
	Network bool
}

// ShellExecutor prepares the process for one simple command (it does not start
// it). The seam between the policy and the OS: a plain executor, or one that
// confines the process (Landlock).
type ShellExecutor interface {
	Command(ctx context.Context, req ExecRequest) (*exec.Cmd, error)
	// Describe says what the executor enforces, for the system prompt.
	Describe() string
}

// DirectExecutor runs commands unconfined (the guard and run-time checks only).
type DirectExecutor struct{}

func (DirectExecutor) Command(ctx context.Context, req ExecRequest) (*exec.Cmd, error) {
	cmd := exec.CommandContext(ctx, req.Path)
	cmd.Args = req.Args
	cmd.Dir, cmd.Env = req.Dir, req.Env
	return cmd, nil
}

func (DirectExecutor) Describe() string { return "" }

// SandboxExecutor starts each command through the sandbox helper (lovia re-executed
// with sandbox.Subcommand), which confines it (namespaces, then Landlock) before exec.
type SandboxExecutor struct {
	// Helper is the argv prefix of the helper, e.g. [/usr/bin/lovia __sandbox-exec].
	Helper []string
	// Writable are the directories every command may write (root, temp, grants).
	Writable []string
	// Caches are tool caches commands may write too (not writable for the file tools).
	Caches []string
	// Readable are the directories commands may read and execute from.
	Readable []string
	// Required: refuse to run commands unless namespaces and Landlock are in force.
	Required bool
	// Namespaces: start helpers in user, mount and PID namespaces (Linux), which
	// Probe turns off (recording why) when the system does not allow them.
	Namespaces bool
	// Network is the workspace.network mode: with anything but allow, commands run
	// in a network namespace (or under Landlock TCP rules) unless they passed the
	// policy as needing the network.
	Network string
	// Protect are paths mounted read-only when they exist (.git/config, .git/hooks,
	// .lovia); Hide are credential stores replaced by empty ones.
	Protect, Hide []string
	// MaxProcs bounds the processes of the sandbox (0: sandbox.DefaultMaxProcs).
	MaxProcs int
	// Env is the exec server's own environment (the commands' allow-list).
	Env []string

	mu        sync.Mutex     // the servers; held while one starts
	srv       [2]*execServer // without, with the network
	retired   []*execServer  // replaced while still running commands (closed by Close)
	srvFailed [2]bool
	// stateMu guards nsErr and report apart from mu, so that reading them (Describe,
	// for the system prompt) does not wait for a server that is starting: the first
	// model request must not wait for the background probe.
	stateMu sync.Mutex
	nsErr   error          // why namespaces are off
	report  sandbox.Report // what the last started server put in force

	// kernelChecked is closed once the kernel's namespace check (auto mode runs it in
	// the background) has set nsErr; nil when no check is pending. Every reader of
	// nsErr waits for it, so nothing claims or uses a layer the kernel refuses.
	kernelChecked chan struct{}

	// probed is closed when the background probe (auto mode) has finished; probeErr
	// is its result. Commands wait for it; the first model request does not.
	probed    chan struct{}
	probeErr  error
	probeOnce sync.Once
	// closing is closed by stopDeferred (the workspace closes): a deferred probe that
	// has not started by then never starts.
	closing   chan struct{}
	closeOnce sync.Once
}

// probeAsync runs Probe in the background: re-executing lovia as the helper costs
// ~50 ms of start-up (CPU on a machine the first model request shares). With a start
// signal the probe waits for it — the front end closes it once the first model
// request is on its way — or for the first command (ready), whichever comes first.
func (s *SandboxExecutor) probeAsync(start <-chan struct{}) {
	s.probed = make(chan struct{})
	s.closing = make(chan struct{})
	if start == nil {
		s.startProbe()
		return
	}
	go func() {
		select {
		case <-start:
			s.startProbe()
		case <-s.closing:
		}
	}()
}

// startProbe starts the background probe unless it has started already.
func (s *SandboxExecutor) startProbe() {
	s.probeOnce.Do(func() {
		go func() {
			defer close(s.probed)
			s.probeErr = s.Probe()
		}()
	})
}

// stopDeferred drops a probe still waiting for its start signal.
func (s *SandboxExecutor) stopDeferred() {
	if s.closing != nil {
		s.closeOnce.Do(func() { close(s.closing) })
	}
}

// checkKernelAsync runs the kernel's namespace check in the background (see
// kernelChecked).
func (s *SandboxExecutor) checkKernelAsync(check func() error) {
	s.kernelChecked = make(chan struct{})
	go func() {
		defer close(s.kernelChecked)
		if err := check(); err != nil {
			s.stateMu.Lock()
			s.nsErr = err
			s.stateMu.Unlock()
		}
	}()
}

// waitKernel waits for a pending kernel check.
func (s *SandboxExecutor) waitKernel() {
	if s.kernelChecked != nil {
		<-s.kernelChecked
	}
}

// awaitProbe starts the background probe if it is still waiting for its signal,
// waits for it and returns its error (nil when there is none: not auto mode).
func (s *SandboxExecutor) awaitProbe() error {
	if s.probed == nil {
		return nil
	}
	s.startProbe()
	<-s.probed
	return s.probeErr
}

// ready waits for the background probe. A helper that failed refuses commands rather
// than running them unconfined: the system prompt already said they are sandboxed.
func (s *SandboxExecutor) ready() error {
	if err := s.awaitProbe(); err != nil {
		return fmt.Errorf("the sandbox helper failed (%v), so commands cannot run confined; restart lovia with --sandbox off to run them under the policy checks only", err)
	}
	return nil
}

// options are the helper's options for one command (or the server: req zero).
func (s *SandboxExecutor) options(req ExecRequest, ns bool) (sandbox.Options, bool) {
	rw := append(append(append([]string(nil), s.Writable...), s.Caches...), req.Writable...)
	o := sandbox.Options{RW: rw, RO: s.Readable, Required: s.Required}
	isolate := s.Network != NetworkAllow && !req.Network
	if ns {
		o.NS, o.NetNS = true, isolate
		o.Protect, o.Hide, o.MaxProcs = s.Protect, s.Hide, s.MaxProcs
	} else {
		// No network namespace: Landlock's TCP rules are the network boundary.
		o.DenyNet = isolate
	}
	return o, isolate
}

func (s *SandboxExecutor) useNamespaces() bool {
	s.waitKernel()
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	return s.Namespaces && s.nsErr == nil
}

func (s *SandboxExecutor) Command(ctx context.Context, req ExecRequest) (*exec.Cmd, error) {
	if len(s.Helper) == 0 {
		return nil, errors.New("sandbox helper not configured")
	}
	ns := s.useNamespaces()
	o, isolate := s.options(req, ns)
	args := append(append([]string(nil), s.Helper[1:]...), sandbox.Args(o, req.Path, req.Args)...)
	cmd := exec.CommandContext(ctx, s.Helper[0], args...)
	cmd.Dir, cmd.Env = req.Dir, req.Env
	cmd.SysProcAttr = sandbox.PlainAttr()
	if ns {
		cmd.SysProcAttr = sandbox.NamespaceAttr(isolate)
	}
	return cmd, nil
}

// Probe starts the exec server once, so a helper that cannot start (e.g. a binary
// without the hidden subcommand) is found before the first real command. The kernel
// was found to allow the namespaces (New's check, which useNamespaces waits for): a
// helper that still cannot set them up fails closed — commands are refused, not run
// with fewer layers — since the cause may be the repository itself (a path shaped to
// make a mount fail). Only a
// refusal no repository path takes part in (sandbox.ErrNoNamespaces) counts as the
// layer being unavailable.
func (s *SandboxExecutor) Probe() error {
	err := s.probeServer()
	if err == nil || !s.useNamespaces() {
		return err
	}
	s.stateMu.Lock()
	s.nsErr = err
	s.stateMu.Unlock()
	if errors.Is(err, sandbox.ErrNoNamespaces) && !s.Required {
		// The system refused the layer at a step no repository path takes part in
		// (a container's masked /proc): as if the kernel had no namespaces, commands
		// run under Landlock alone, which Layers and lovia doctor report.
		return s.probeServer()
	}
	return err
}

// Layers reports what confines commands: the last server's report, and why the
// namespaces are off (nil when they are on or were not wanted).
func (s *SandboxExecutor) Layers() (sandbox.Report, error) {
	s.waitKernel()
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	return s.report, s.nsErr
}

func (s *SandboxExecutor) Describe() string {
	d := "Commands run in a sandbox (Landlock, and namespaces where the system has them): child processes (including scripts such as python -c) can write only to " + strings.Join(s.Writable, ", ")
	if len(s.Caches) > 0 {
		d += ", and lovia's own build caches " + strings.Join(s.Caches, ", ") + " (GOCACHE, npm and pip caches point there)"
	}
	if s.useNamespaces() {
		d += "; other writes fail with \"permission denied\" or \"read-only file system\" (.git/config, .git/hooks and .lovia are read-only)."
	} else {
		d += "; other writes fail with \"permission denied\"."
	}
	switch s.Network {
	case NetworkAllow:
	case NetworkDeny:
		d += " Commands have no network access."
	default:
		d += " Commands have no network access unless they are known to need it (curl, git fetch/push, go get, npm install, pip install, ...), which needs the user's approval."
	}
	return d
}

// DeniedError stops a command at execution time.
type DeniedError struct {
	What   string // the expanded command or path
	Reason string
	Ask    bool // the policy would have asked (nobody could answer)
}

func (e *DeniedError) Error() string {
	verb := "denied"
	if e.Ask {
		verb = "needs approval, which was not given"
	}
	return fmt.Sprintf("lovia: %s %s: %s", e.What, verb, e.Reason)
}

// ShellRequest is one shell invocation.
type ShellRequest struct {
	Command string
	Cwd     string // relative to the root or absolute; "" = root
	Timeout time.Duration
	Output  io.Writer
	// Approved: a person approved this call as the guard showed it. At run time it
	// covers "ask" verdicts of command rules, and path asks on ApprovedPaths (what the
	// person could see); a path that only appears at run time is asked again.
	Approved bool
	// ApprovedPaths are the resolved paths the approved call visibly reads or writes.
	ApprovedPaths []string
	// Writable: approved paths opened for writing in the sandbox.
	Writable []string
	// Ask routes a run-time approval (nil: unapproved asks are denied).
	Ask func(ctx context.Context, what, reason string) bool
}

// shellRun is the state of one invocation shared by its handlers.
type shellRun struct {
	s      *Workspace
	req    ShellRequest
	cancel context.CancelFunc
	// memBase is lovia's heap when the invocation started (see overMemory).
	memBase uint64
	mu      sync.Mutex
	denied  *DeniedError
	pgids   map[int]bool
	kills   []func() // exec server requests to kill (killAll)
}

func (r *shellRun) deny(e *DeniedError) error {
	r.mu.Lock()
	if r.denied == nil {
		r.denied = e
	}
	r.mu.Unlock()
	r.cancel()
	return e
}

// covered reports whether the call's approval covered abs (the path or a directory
// above it was visible in the approved command).
func (r *shellRun) covered(abs string) bool {
	if !r.req.Approved {
		return false
	}
	for _, p := range r.req.ApprovedPaths {
		if under(p, abs) {
			return true
		}
	}
	return false
}

// coversBelow reports a directory above a path the call's approval covered: the
// glob engine checks each directory on the way to it.
func (r *shellRun) coversBelow(abs string) bool {
	if !r.req.Approved || abs == "" {
		return false
	}
	for _, p := range r.req.ApprovedPaths {
		if under(abs, p) {
			return true
		}
	}
	return false
}

// check turns a run-time decision into nil (go on) or a stopping error. An "ask"
// passes when the call's approval covers it, or when the person approves it now.
// runtimeOK reports an approval given just now (the sandbox may open its writes).
func (r *shellRun) check(ctx context.Context, d Decision, covered bool, what, reason string) (runtimeOK bool, err error) {
	switch d {
	case Allow:
		return false, nil
	case Ask:
		if covered {
			return false, nil
		}
		if r.req.Ask != nil && r.req.Ask(ctx, what, reason) {
			return true, nil
		}
		return false, r.deny(&DeniedError{What: what, Reason: reason, Ask: true})
	}
	return false, r.deny(&DeniedError{What: what, Reason: reason})
}

// ShellResult is the outcome of a foreground command.
type ShellResult struct {
	ExitCode int
	TimedOut bool
	Denied   *DeniedError
	Err      error // infrastructure failure
}

// RunShell runs a command under mvdan.cc/sh/v3/interp with the policy checked at
// every simple command (expanded argv) and every redirect open. Processes get their
// own process group; cancellation or the timeout kills the groups.
func (s *Workspace) RunShell(ctx context.Context, req ShellRequest) ShellResult {
	if req.Timeout <= 0 {
		req.Timeout = s.shellTimeout
	}
	if req.Output == nil {
		req.Output = io.Discard
	}
	cwd, err := s.dir(req.Cwd)
	if err != nil {
		return ShellResult{ExitCode: -1, Err: err}
	}
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(req.Command), "")
	if err != nil {
		return ShellResult{ExitCode: 2, Err: fmt.Errorf("the command does not parse: %w", err)}
	}
	ctx, cancel := context.WithTimeout(ctx, req.Timeout)
	defer cancel()
	run := &shellRun{s: s, req: req, cancel: cancel, pgids: map[int]bool{}, memBase: heapBase()}
	env := s.env()
	out := &lockedWriter{w: req.Output}
	runner, err := interp.New(
		interp.Dir(cwd),
		interp.Env(expand.ListEnviron(env...)),
		interp.StdIO(nil, out, out),
		interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc { return run.exec }),
		interp.OpenHandler(run.open),
		interp.ReadDirHandler2(run.readDir),
		interp.CallHandler(run.call),
	)
	if err != nil {
		return ShellResult{ExitCode: -1, Err: err}
	}
	watched := make(chan struct{})
	go run.watchMemory(ctx, watched)
	err = runner.Run(ctx, file)
	close(watched)
	run.killAll()
	if note := s.undoPlants(); note != "" {
		fmt.Fprintln(out, "lovia: "+note)
	}
	res := ShellResult{}
	run.mu.Lock()
	res.Denied = run.denied
	run.mu.Unlock()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && res.Denied == nil {
		res.TimedOut = true
		res.ExitCode = -1
		return res
	}
	if res.Denied != nil {
		res.ExitCode = 126
		return res
	}
	if err == nil {
		return res
	}
	if code, ok := interp.IsExitStatus(err); ok {
		res.ExitCode = int(code)
		return res
	}
	if ctx.Err() != nil {
		res.ExitCode = -1
		res.Err = ctx.Err()
		return res
	}
	res.ExitCode = 1
	res.Err = err
	return res
}

// call checks builtins that read files (source) — other builtins act only through
// redirects (open handler) or run commands (exec handler). The interpreter opens a
// sourced file through the open handler, which judges and opens it like any
// redirect; a denial is reported here already, with the builtin's name.
// maxShellTasks bounds the goroutines the embedded shell may have alive: its
// functions, subshells and pipelines run inside lovia, outside the sandbox's process
// limit, so a shell function bomb would otherwise exhaust lovia itself.
const maxShellTasks = 4000

func (r *shellRun) call(ctx context.Context, args []string) ([]string, error) {
	if runtime.NumGoroutine() > maxShellTasks {
		return nil, r.deny(&DeniedError{What: "the command", Reason: fmt.Sprintf("it started more than %d concurrent shell tasks (functions, pipelines, background jobs) inside lovia, like a fork bomb; it was stopped", maxShellTasks)})
	}
	if r.overMemory() {
		return nil, r.deny(errTooMuchMemory)
	}
	if (args[0] == "source" || args[0] == ".") && len(args) > 1 {
		hc := interp.HandlerCtx(ctx)
		_, d, why := r.s.policy.Judge(args[1], hc.Dir, OpRead)
		if d == Deny {
			return nil, r.deny(&DeniedError{What: "source " + args[1], Reason: why})
		}
	}
	return args, nil
}

// maxShellMemory bounds how much of lovia's own memory one shell invocation may
// take. Variables and command substitutions live in the embedded shell, inside
// lovia, where no sandbox limit applies: `x=a; while :; do x=$x$x; done` or
// `echo "$(seq inf)"` (no approval needed) would otherwise grow until lovia dies
// of it — or the machine's OOM killer picks another of the user's processes.
const maxShellMemory = 512 << 20

var errTooMuchMemory = &DeniedError{What: "the command", Reason: fmt.Sprintf("it made lovia's own memory grow by more than %d MiB (shell variables or command substitution output are kept inside lovia); it was stopped", maxShellMemory>>20)}

// heapBytes is the Go heap in use, garbage not yet collected included.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// heapBase is the heap an invocation starts from. A heap much larger than lovia
// needs holds garbage (the output a stopped invocation collected): collected first,
// or it would raise the next invocation's bound by its size.
func heapBase() uint64 {
	if h := heapBytes(); h < maxShellMemory/2 {
		return h
	}
	runtime.GC()
	return heapBytes()
}

// overMemory reports a heap grown by maxShellMemory since the invocation started;
// garbage is collected before it says so.
func (r *shellRun) overMemory() bool {
	if heapBytes() < r.memBase+maxShellMemory {
		return false
	}
	runtime.GC()
	return heapBytes() >= r.memBase+maxShellMemory
}

// watchMemory stops the invocation when it grows the heap by maxShellMemory between
// two simple commands (a command substitution filling while its command runs).
func (r *shellRun) watchMemory(ctx context.Context, done <-chan struct{}) {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			if r.overMemory() {
				_ = r.deny(errTooMuchMemory)
				return
			}
		}
	}
}

// open is every redirect and sourced file of the interpreter: the exact stream
// names are the command's own streams; every other path is judged by
// Policy.Judge and opened by safeOpen, exactly as judged, by lovia's process.
func (r *shellRun) open(ctx context.Context, path string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
	hc := interp.HandlerCtx(ctx)
	op := OpRead
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_TRUNC) != 0 {
		op = OpWrite
	}
	if s, ok := streamFile(hc, path, flag, perm); ok {
		return s()
	}
	abs, d, why := r.s.policy.Judge(path, hc.Dir, op)
	if d != Allow {
		why += ". " + r.s.policy.AllowHint(op, abs)
	}
	if _, err := r.check(ctx, d, r.covered(abs), fmt.Sprintf("%s redirect to %s", op, path), why); err != nil {
		return nil, err
	}
	f, err := r.s.safeOpen(abs, flag, perm, forRedirect)
	if err != nil {
		// A *PathError is an ordinary failure (message, status 1), not a fatal one.
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, &os.PathError{Op: "open", Path: path, Err: pe.Err}
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return f, nil
}

// readDir lists a directory for glob expansion in lovia's process: the directory
// is judged for reading like any path (an ask passes only when the call's approval
// showed it) and opened by safeOpen. A refused directory expands to nothing, so the
// pattern stays as written and the command is judged on it.
func (r *shellRun) readDir(ctx context.Context, path string) ([]fs.DirEntry, error) {
	hc := interp.HandlerCtx(ctx)
	abs, d, why := r.s.policy.Judge(path, hc.Dir, OpRead)
	if d == Deny || d == Ask && !r.covered(abs) && !r.coversBelow(abs) {
		return nil, &os.PathError{Op: "readdir", Path: path, Err: errors.New(why)}
	}
	f, err := r.s.safeOpen(abs, os.O_RDONLY|dirFlag, 0, forTool)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	return ents, err
}

// streamFile maps the exact names /dev/null, /dev/stdin, /dev/stdout, /dev/stderr
// and /dev/tty. The std names are the command's streams in the interpreter, not
// lovia's own (opening lovia's /dev/stdout would write into its terminal); a
// command has no terminal, so /dev/tty reads nothing and writes to stderr.
func streamFile(hc interp.HandlerContext, path string, flag int, perm os.FileMode) (func() (io.ReadWriteCloser, error), bool) {
	switch path {
	case "/dev/null":
		return func() (io.ReadWriteCloser, error) { return os.OpenFile(os.DevNull, flag, perm) }, true
	case "/dev/stdin":
		return func() (io.ReadWriteCloser, error) { return stream{r: hc.Stdin}, nil }, true
	case "/dev/stdout":
		return func() (io.ReadWriteCloser, error) { return stream{w: hc.Stdout}, nil }, true
	case "/dev/stderr", "/dev/tty":
		return func() (io.ReadWriteCloser, error) { return stream{w: hc.Stderr}, nil }, true
	}
	return nil, false
}

// stream is one of the command's own streams as a file; Close leaves it open.
type stream struct {
	r io.Reader
	w io.Writer
}

func (s stream) Read(p []byte) (int, error) {
	if s.r == nil {
		return 0, io.EOF
	}
	return s.r.Read(p)
}

func (s stream) Write(p []byte) (int, error) {
	if s.w == nil {
		return len(p), nil
	}
	return s.w.Write(p)
}

func (stream) Close() error { return nil }

// baseline are variables whose change makes a command run other code.
var baseline = []string{"PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "BASH_ENV"}

func (r *shellRun) exec(ctx context.Context, args []string) error {
	hc := interp.HandlerCtx(ctx)
	text := strings.Join(args, " ")
	a := r.s.policy.AnalyzeArgv(args, hc.Dir)
	for _, k := range baseline {
		if hc.Env.Get(k).String() != r.s.baseEnv[k] {
			a.reason(Ask, fmt.Sprintf("%s was changed, which changes what runs", k))
		}
	}
	// The call's approval covers the command itself; path asks only when the path was
	// visible in what the person approved.
	covered := r.req.Approved
	var fresh []Claim
	for _, c := range a.Claims {
		if c.Verdict == Ask && !r.covered(c.Abs) {
			covered = false
			fresh = append(fresh, c)
		}
	}
	why := a.Explain()
	if a.Decision == Deny {
		why += ". " + r.s.commandHint(a)
	}
	runtimeOK, err := r.check(ctx, a.Decision, covered, text, why)
	if err != nil {
		return err
	}
	path, err := interp.LookPathDir(hc.Dir, hc.Env, args[0])
	if err != nil {
		fmt.Fprintln(hc.Stderr, err)
		return interp.ExitStatus(127)
	}
	var env []string
	for name, v := range hc.Env.Each {
		if v.IsSet() && v.Exported && v.Kind == expand.String {
			env = append(env, name+"="+v.Str)
		}
	}
	// Writes the person approved (for this call, or just now at run time) are opened
	// in the sandbox for this process only.
	var writable []string
	if r.req.Approved {
		writable = r.req.Writable
	}
	if runtimeOK {
		for _, c := range fresh {
			if c.Op == OpWrite && c.Abs != "" {
				writable = append(writable, existingAncestor(c.Abs))
			}
		}
	}
	if sb, ok := r.s.executor.(*SandboxExecutor); ok {
		if err := sb.ready(); err != nil {
			fmt.Fprintln(hc.Stderr, "lovia:", err)
			return interp.ExitStatus(126)
		}
	}
	// A command that passed as needing the network runs with it (guard_net.go).
	xreq := ExecRequest{Path: path, Args: args, Dir: hc.Dir, Env: env, Writable: writable, Network: a.Network}
	// The common case goes through the sandbox's exec server (one confined helper for
	// the workspace); extra approved writes need a helper of their own.
	if sb, ok := r.s.executor.(*SandboxExecutor); ok && len(writable) == 0 {
		if srv := sb.server(xreq); srv != nil {
			if handled, err := r.runViaServer(ctx, srv, hc, path, args, env); handled {
				return err
			}
		}
	}
	cmd, err := r.s.executor.Command(ctx, xreq)
	if err != nil {
		return err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = hc.Stdin, hc.Stdout, hc.Stderr
	ownGroup(cmd)
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(hc.Stderr, err)
		return interp.ExitStatus(126)
	}
	pid := cmd.Process.Pid
	r.mu.Lock()
	r.pgids[pid] = true
	r.mu.Unlock()
	err = cmd.Wait()
	// The group may still hold background children of this command: they belong to
	// the shell call and die with it (killAll at the end).
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee):
		if sig, ok := signaled(ee); ok {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return interp.ExitStatus(128 + sig)
		}
		return interp.ExitStatus(ee.ExitCode())
	case errors.Is(err, exec.ErrWaitDelay):
		return nil
	}
	return err
}

// killAll kills every process group the invocation started, and asks the exec
// servers to kill what they started for it (their pids are in another namespace).
func (r *shellRun) killAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for pg := range r.pgids {
		killGroup(pg)
	}
	for _, kill := range r.kills {
		kill()
	}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// capBuffer keeps the first head and the last tail bytes of a stream.
type capBuffer struct {
	mu         sync.Mutex
	head       []byte
	tail       []byte // ring
	tailStart  int
	headMax    int
	tailMax    int
	total      int64
	tailFilled bool
}

func newCapBuffer(max int) *capBuffer {
	h := max * 2 / 3
	return &capBuffer{headMax: h, tailMax: max - h}
}

func (b *capBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	b.total += int64(n)
	if room := b.headMax - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		if len(b.tail) < b.tailMax {
			k := min(b.tailMax-len(b.tail), len(p))
			b.tail = append(b.tail, p[:k]...)
			p = p[k:]
			continue
		}
		if len(p) >= b.tailMax {
			copy(b.tail, p[len(p)-b.tailMax:])
			b.tailStart = 0
			b.tailFilled = true
			break
		}
		for _, c := range p {
			b.tail[b.tailStart] = c
			b.tailStart = (b.tailStart + 1) % b.tailMax
		}
		b.tailFilled = true
		break
	}
	return n, nil
}

// String renders head + tail with a marker where output was cut.
func (b *capBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	tail := append(append([]byte(nil), b.tail[b.tailStart:]...), b.tail[:b.tailStart]...)
	kept := int64(len(b.head) + len(tail))
	if kept == b.total {
		return strings.ToValidUTF8(string(b.head)+string(tail), "\uFFFD")
	}
	return strings.ToValidUTF8(string(b.head), "") + fmt.Sprintf("\n\n[... %d bytes of output omitted; showing the first %d and the last %d ...]\n\n", b.total-kept, len(b.head), len(tail)) + strings.ToValidUTF8(string(tail), "")
}
