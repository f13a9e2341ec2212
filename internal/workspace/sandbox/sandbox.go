// Package sandbox confines child processes with Linux Landlock. lovia never restricts
// itself: each command is started through a helper — lovia re-executed with the
// hidden subcommand Subcommand — which applies the rules to itself and then execs the
// command, so the restriction covers exactly that command and its descendants.
package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
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
	out := []string{ServeFlag}
	for _, p := range o.RW {
		out = append(out, "--rw", p)
	}
	for _, p := range o.RO {
		out = append(out, "--ro", p)
	}
	if o.Required {
		out = append(out, "--required")
	}
	return out
}

// Args builds the helper's arguments (after the executable and Subcommand).
func Args(o Options, path string, argv []string) []string {
	out := make([]string, 0, 2*len(o.RW)+2*len(o.RO)+len(argv)+6)
	for _, p := range o.RW {
		out = append(out, "--rw", p)
	}
	for _, p := range o.RO {
		out = append(out, "--ro", p)
	}
	if o.Required {
		out = append(out, "--required")
	}
	out = append(out, "--path", path, "--")
	return append(out, argv...)
}

// deviceFiles are written by ordinary programs; Landlock would otherwise refuse them.
var deviceFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom", "/dev/ptmx"}

// Main is the helper: parse Args' output, restrict, exec. It returns only on error
// (exit status 126, like a shell that cannot execute a command).
func Main(args []string, stderr io.Writer) int {
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
		if a == "--required" {
			o.Required = true
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
		case "--path":
			path = args[i+1]
		default:
			fmt.Fprintf(stderr, "lovia sandbox: unknown flag %s\n", a)
			return 126
		}
		i++
	}
	if server {
		if err := Restrict(o); err != nil {
			fmt.Fprintf(stderr, "lovia sandbox: %v\n", err)
			return 126
		}
		return serve(os.NewFile(3, "sandbox-socket"), stderr)
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
	rules := []landlock.Rule{
		landlock.RODirs(existing(o.RO)...),
		landlock.RWDirs(existing(o.RW)...).WithRefer(),
		landlock.RWFiles(existing(deviceFiles)...).WithIoctlDev(),
	}
	if err := landlock.V7.BestEffort().RestrictPaths(rules...); err != nil {
		return fmt.Errorf("applying landlock rules: %w", err)
	}
	return nil
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
