// Package sandbox confines child processes on Linux. lovia never restricts itself:
// each command is started through a helper — lovia re-executed with the hidden
// subcommand Subcommand — which applies the rules to itself and then execs the
// command, so the restriction covers exactly that command and its descendants.
//
// Layers (each optional, each reported by Layers):
//   - Landlock: writes only under the RW directories; TCP connect/bind denied when
//     DenyNet is set (ABI >= 4);
//   - namespaces (NS; the parent starts the helper with NamespaceAttr): a user, mount
//     and PID namespace — a private /proc, read-only binds over Protect, empty
//     read-only mounts over Hide, a process limit — and, unless the command may use
//     the network, a network namespace with only loopback.
package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Subcommand is the hidden lovia subcommand that runs Main.
const Subcommand = "__sandbox-exec"

// Options are the helper's filesystem scopes.
type Options struct {
	// RW directories: read, write, create, delete (and reparent within them).
	RW []string
	// RO directories: read and execute.
	RO []string
	// Required makes the helper fail rather than run unconfined.
	Required bool
	// NS: the helper was started in new user, mount and PID namespaces
	// (NamespaceAttr) and sets them up before Landlock.
	NS bool
	// NetNS: it is in a new network namespace too (loopback is brought up).
	NetNS bool
	// DenyNet denies TCP connect and bind with Landlock (the layer used when there is
	// no network namespace).
	DenyNet bool
	// Protect are paths mounted read-only (with NS): files that run code later, such
	// as .git/config, .git/hooks and .lovia.
	Protect []string
	// Hide are paths replaced by empty read-only ones (with NS): credential stores.
	Hide []string
	// MaxProcs bounds the processes of the PID namespace (with NS), so a fork bomb
	// stops there; 0 means DefaultMaxProcs.
	MaxProcs int
}

// Report is what a helper put in force (the exec server sends it when it starts).
type Report struct {
	Landlock    int      `json:"landlock,omitempty"` // ABI version applied, 0 = none
	Namespaces  bool     `json:"namespaces,omitempty"`
	PrivateProc bool     `json:"private_proc,omitempty"`
	NetNS       bool     `json:"netns,omitempty"`
	DenyNetTCP  bool     `json:"deny_net_tcp,omitempty"` // Landlock TCP rules
	ProcLimit   string   `json:"proc_limit,omitempty"`   // what bounds the process count
	Protected   []string `json:"protected,omitempty"`
	Hidden      []string `json:"hidden,omitempty"`
}

// DefaultMaxProcs is the process limit of a sandbox's PID namespace.
const DefaultMaxProcs = 4096

// ExitNoNamespaces is the helper's exit status when the system refuses the namespace
// layer at a step no repository path takes part in (making / private, a private
// /proc, the loopback): the layer is unavailable here, like a kernel without
// namespaces. Any other set-up failure exits 126 and fails closed, since a
// repository could shape it.
const ExitNoNamespaces = 125

// ErrNoNamespaces marks an error caused by a helper that exited ExitNoNamespaces.
var ErrNoNamespaces = errors.New("the system refuses the namespace layer")

// systemError is a set-up failure that does not depend on the repository.
type systemError struct{ error }

func (e systemError) Unwrap() error { return e.error }

// flags renders o as helper flags (shared by Args and ServerArgs).
func (o Options) flags() []string {
	var out []string
	for _, p := range o.RW {
		out = append(out, "--rw", p)
	}
	for _, p := range o.RO {
		out = append(out, "--ro", p)
	}
	for _, p := range o.Protect {
		out = append(out, "--protect", p)
	}
	for _, p := range o.Hide {
		out = append(out, "--hide", p)
	}
	if o.Required {
		out = append(out, "--required")
	}
	if o.NS {
		out = append(out, "--ns")
	}
	if o.NetNS {
		out = append(out, "--netns")
	}
	if o.DenyNet {
		out = append(out, "--deny-net")
	}
	if o.MaxProcs > 0 {
		out = append(out, "--max-procs", strconv.Itoa(o.MaxProcs))
	}
	return out
}

// ABI returns the kernel's Landlock ABI version (0 when unavailable) and why.
func ABI() (int, error) {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil {
		return 0, fmt.Errorf("landlock is not available on this kernel: %w", err)
	}
	return v, nil
}

// ServerArgs builds the arguments of the exec server (socket on fd 3).
func ServerArgs(o Options) []string {
	return append([]string{ServeFlag}, o.flags()...)
}

// Args builds the helper's arguments (after the executable and Subcommand).
func Args(o Options, path string, argv []string) []string {
	out := append(o.flags(), "--path", path, "--")
	return append(out, argv...)
}

// deviceFiles are written by ordinary programs; Landlock would otherwise refuse them.
var deviceFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom", "/dev/ptmx"}

// Main is the helper: parse Args' output, restrict, exec. It returns only on error
// (exit status 126, like a shell that cannot execute a command).
func Main(args []string, stderr io.Writer) int {
	restoreGC()
	// Never unlocked: capabilities and prctl settings are per thread, and the commands
	// must be started from the thread that dropped them.
	runtime.LockOSThread()
	// Before any command starts: none may reach lovia's terminal.
	detachTerminal()
	var o Options
	path := ""
	var argv []string
	server := false
	if len(args) > 0 && args[0] == ServeFlag {
		server = true
		args = args[1:]
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			argv = args[i+1:]
			break
		}
		switch a {
		case "--required":
			o.Required = true
			continue
		case "--ns":
			o.NS = true
			continue
		case "--netns":
			o.NetNS = true
			continue
		case "--deny-net":
			o.DenyNet = true
			continue
		}
		if i+1 >= len(args) {
			fmt.Fprintf(stderr, "lovia sandbox: flag %s needs a value\n", a)
			return 126
		}
		switch a {
		case "--rw":
			o.RW = append(o.RW, args[i+1])
		case "--ro":
			o.RO = append(o.RO, args[i+1])
		case "--protect":
			o.Protect = append(o.Protect, args[i+1])
		case "--hide":
			o.Hide = append(o.Hide, args[i+1])
		case "--max-procs":
			n, err := strconv.Atoi(args[i+1])
			if err != nil || n <= 0 {
				fmt.Fprintf(stderr, "lovia sandbox: bad --max-procs %q\n", args[i+1])
				return 126
			}
			o.MaxProcs = n
		case "--path":
			path = args[i+1]
		default:
			fmt.Fprintf(stderr, "lovia sandbox: unknown flag %s\n", a)
			return 126
		}
		i++
	}
	var rep Report
	if o.NS {
		// Before Landlock: a Landlock domain may not mount.
		if err := setupNamespaces(o, &rep); err != nil {
			fmt.Fprintf(stderr, "lovia sandbox: %v\n", err)
			var se systemError
			if errors.As(err, &se) {
				return ExitNoNamespaces
			}
			return 126
		}
	} else {
		bestEffortLifetime()
	}
	if server {
		if err := Restrict(o); err != nil {
			fmt.Fprintf(stderr, "lovia sandbox: %v\n", err)
			return 126
		}
		if v, _ := ABI(); v > 0 {
			rep.Landlock = v
			rep.DenyNetTCP = o.DenyNet && v >= 4
		}
		return serve(os.NewFile(3, "sandbox-socket"), stderr, o.NS, rep)
	}
	if len(argv) == 0 {
		fmt.Fprintln(stderr, "lovia sandbox: no command given (usage: "+Subcommand+" --rw DIR --ro DIR --path PROG -- ARGV...)")
		return 126
	}
	if path == "" {
		path = argv[0]
	}
	if err := Restrict(o); err != nil {
		fmt.Fprintf(stderr, "lovia sandbox: %v\n", err)
		return 126
	}
	if o.NS {
		// The helper is the init of its PID namespace: it runs the command as a child
		// (which then has ordinary signal semantics) and, by exiting when the command
		// ends, makes the kernel kill whatever the command left behind.
		return runAsInit(path, argv, stderr)
	}
	err := execve(path, argv, os.Environ())
	fmt.Fprintf(stderr, "lovia sandbox: exec %s: %v\n", path, err)
	if errors.Is(err, os.ErrNotExist) {
		return 127
	}
	return 126
}

// Restrict applies the Landlock rules to the calling process (and what it execs).
func Restrict(o Options) error {
	if v, err := ABI(); v == 0 {
		if o.Required {
			return fmt.Errorf("sandbox required but %v", err)
		}
		return nil
	}
	// A configured path may be a file (workspace.writable naming a socket or a single
	// file): Landlock refuses directory rights on it, which would fail every command.
	roDirs, roFiles := splitDirs(o.RO)
	rwDirs, rwFiles := splitDirs(o.RW)
	rules := []landlock.Rule{
		landlock.RODirs(roDirs...),
		landlock.ROFiles(roFiles...),
		landlock.RWDirs(rwDirs...).WithRefer(),
		landlock.RWFiles(rwFiles...),
		landlock.RWFiles(existing(deviceFiles)...).WithIoctlDev(),
	}
	cfg := landlock.V7.BestEffort()
	restrict := cfg.RestrictPaths
	if o.DenyNet {
		// Restrict handles TCP connect/bind too (ABI >= 4) and no rule allows any port.
		restrict = cfg.Restrict
	}
	if err := restrict(rules...); err != nil {
		return fmt.Errorf("applying landlock rules: %w", err)
	}
	return nil
}

// splitDirs is existing(ps) separated into directories and the other paths (files,
// sockets, devices), with one stat each.
func splitDirs(ps []string) (dirs, files []string) {
	for _, p := range ps {
		if strings.TrimSpace(p) == "" {
			continue
		}
		fi, err := os.Stat(p)
		switch {
		case err != nil:
		case fi.IsDir():
			dirs = append(dirs, p)
		default:
			files = append(files, p)
		}
	}
	return dirs, files
}

// existing drops paths that do not exist (Landlock needs an open file descriptor).
func existing(ps []string) []string {
	out := ps[:0:0]
	for _, p := range ps {
		if strings.TrimSpace(p) == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}
