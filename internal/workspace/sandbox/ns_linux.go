//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// NamespaceAttr starts a helper in new user, mount, PID and IPC namespaces (and a network
// namespace when isolateNet), mapping the current user to itself so files keep their
// owner. The helper dies with the thread that started it (PR_SET_PDEATHSIG, which
// Go's fork also re-checks against the parent to close the race), and with it its
// whole PID namespace. It starts a session of its own (see PlainAttr).
func NamespaceAttr(isolateNet bool) *syscall.SysProcAttr {
	// An IPC namespace too: System V shared memory, semaphores and message queues
	// (and POSIX message queues) of the user's other processes — an X server's
	// shared images, a database's buffers — are not the commands' to attach.
	flags := uintptr(syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC)
	if isolateNet {
		flags |= syscall.CLONE_NEWNET
	}
	uid, gid := os.Getuid(), os.Getgid()
	attr := &syscall.SysProcAttr{
		Cloneflags:  flags,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		Pdeathsig:   syscall.SIGKILL,
		Setsid:      true,
	}
	if uid != 0 {
		// A non-root uid loses the namespace's capabilities at exec: keep those the
		// helper's set-up needs as ambient ones (it clears them before any command).
		attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP}
	}
	return attr
}

// PlainAttr starts a helper without namespaces, killed when the starting thread ends
// (PR_SET_PDEATHSIG), in a session of its own (and so its own process group): a
// process group of lovia's session would keep lovia's controlling terminal, and with
// it /dev/tty — a command could push keystrokes into the terminal's input with
// TIOCSTI, which the user's shell runs once lovia exits, outside any sandbox; read
// what the user types; or write escape sequences around lovia's sanitizing.
func PlainAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}

// NamespacesSupported reports whether this system has the namespace layer.
const NamespacesSupported = true

// ProbeKernel checks that the kernel lets this user create the namespaces and mount in
// them, by starting /bin/true in them (no helper needed). The helper's own set-up
// (private /proc, the read-only mounts) is checked by starting it (see the
// workspace's probe).
func ProbeKernel() error {
	path := "/bin/true"
	if _, err := os.Stat(path); err != nil {
		if path, err = exec.LookPath("true"); err != nil {
			return fmt.Errorf("no true program to probe with: %w", err)
		}
	}
	cmd := exec.Command(path)
	attr := NamespaceAttr(true)
	// The mount namespace is unshared after the user namespace's mappings are written,
	// and Go then makes / private (mount MS_REC|MS_PRIVATE) — the helper's first step.
	// Creating the namespaces is not enough: Ubuntu's AppArmor (kernel.apparmor_restrict
	// _unprivileged_userns) lets a user create them but denies the capabilities in
	// them, and a helper that then cannot mount fails closed, refusing every command.
	attr.Cloneflags &^= syscall.CLONE_NEWNS
	attr.Unshareflags = syscall.CLONE_NEWNS
	cmd.SysProcAttr = attr
	if err := cmd.Run(); err != nil {
		return NamespaceError(err)
	}
	return nil
}

// NamespaceError explains why starting in new namespaces failed.
func NamespaceError(err error) error {
	var hint string
	switch {
	case errors.Is(err, syscall.EPERM), errors.Is(err, syscall.EACCES):
		hint = "unprivileged user namespaces are restricted (sysctl kernel.unprivileged_userns_clone=1, or kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu, enables them)"
	case errors.Is(err, syscall.ENOSPC):
		hint = "the user namespace limit is reached (sysctl user.max_user_namespaces)"
	case errors.Is(err, syscall.EINVAL):
		hint = "the kernel lacks user, mount, PID or IPC namespace support"
	default:
		hint = "the helper could not set them up"
	}
	return fmt.Errorf("namespaces unavailable: %w; %s", err, hint)
}

// setupNamespaces runs in the helper, which the parent started with NamespaceAttr: it
// is PID 1 of a new PID namespace, with all capabilities in its own user namespace.
func setupNamespaces(o Options, r *Report) error {
	// Only PID 1 of a fresh PID namespace (started with NamespaceAttr) may mount: a
	// helper asked for namespaces but started without them (a caller that replaced
	// SysProcAttr) would otherwise change the mounts of the caller's own namespace —
	// as root, the whole machine's.
	if os.Getpid() != 1 {
		return errors.New("started without its namespaces (not PID 1 of a new PID namespace); refusing to mount")
	}
	// Mounts below must not propagate back to the parent's namespace.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return systemError{fmt.Errorf("making / private: %w", err)}
	}
	// A /proc of this PID namespace only: lovia's and every other outside process's
	// environ, cmdline and fds are not visible.
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		// Refused where the system's /proc is partly covered (a container's masked
		// paths): the system's doing, not the repository's.
		return systemError{fmt.Errorf("mounting a private /proc: %w", err)}
	}
	r.Namespaces, r.PrivateProc = true, true
	// A devpts of the sandbox's own over /dev/pts: the user's terminals (lovia's among
	// them) are not there to read keystrokes from by name, while /dev/ptmx still
	// gives commands pseudo-terminals of their own. Best effort: a system that
	// refuses it keeps the other layers.
	if fi, err := os.Stat("/dev/pts"); err == nil && fi.IsDir() {
		_ = unix.Mount("devpts", "/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620")
	}
	r.ProcLimit = limitProcs(o.MaxProcs)
	if o.NetNS {
		if err := loopbackUp(); err != nil {
			return systemError{fmt.Errorf("bringing up loopback in the network namespace: %w", err)}
		}
		r.NetNS = true
	}
	// The directories holding protected paths become mount points of themselves, so
	// they cannot be renamed away and replaced by copies without the read-only mounts.
	// Shallowest first: a later pin clones the earlier ones inside it.
	// Every directory between a protected path and the directory all of them share
	// (the root) is pinned, not only the one holding it: renaming .git/modules or a
	// nested repository's parent away would otherwise move the read-only mounts with
	// it and leave the path free for a new config.
	pinned := map[string]bool{"/": true}
	var pins []string
	base := commonDir(o.Protect)
	for _, p := range o.Protect {
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		for d := filepath.Dir(p); !pinned[d]; d = filepath.Dir(d) {
			pinned[d] = true
			pins = append(pins, d)
			if d == base || !strings.HasPrefix(d, base+"/") {
				break
			}
		}
	}
	sort.Slice(pins, func(i, j int) bool { return strings.Count(pins[i], "/") < strings.Count(pins[j], "/") })
	for _, d := range pins {
		if err := bind(d, d, false); err != nil {
			return fmt.Errorf("pinning %s: %w", d, err)
		}
	}
	for _, p := range o.Protect {
		ok, err := bindReadOnly(p, p)
		if err != nil {
			return fmt.Errorf("mounting %s read-only: %w", p, err)
		}
		if ok {
			r.Protected = append(r.Protected, p)
		}
	}
	for _, p := range o.Hide {
		ok, err := hide(p)
		if err != nil {
			return fmt.Errorf("hiding %s: %w", p, err)
		}
		if ok {
			r.Hidden = append(r.Hidden, p)
		}
	}
	// Commands exec'd from here get no capabilities, even as uid 0: they cannot
	// unmount what was mounted above (Landlock forbids mounting too). Capabilities
	// are per thread: Main runs locked to one thread, which starts every command.
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clearing ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("reading capabilities: %w", err)
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clearing inheritable capabilities: %w", err)
	}
	for c := 0; c <= 63; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); errors.Is(err, unix.EINVAL) {
			break
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %w", err)
	}
	// The working directory was entered before the mounts: enter it again by name, or
	// relative paths would still reach the files under them.
	if wd, err := os.Getwd(); err == nil {
		if err := os.Chdir(wd); err != nil {
			return fmt.Errorf("re-entering %s: %w", wd, err)
		}
	}
	return nil
}

// commonDir is the deepest directory holding every path of ps ("/" at worst).
func commonDir(ps []string) string {
	if len(ps) == 0 {
		return "/"
	}
	c := filepath.Dir(filepath.Clean(ps[0]))
	for _, p := range ps[1:] {
		p = filepath.Clean(p)
		for c != "/" && !strings.HasPrefix(p, c+"/") {
			c = filepath.Dir(c)
		}
	}
	return c
}

// limitProcs bounds the processes of this PID namespace and says how: its own
// pid_max (kernels >= 6.14 keep one per namespace, and nested namespaces are bound
// by it too) bounds every user, root included; RLIMIT_NPROC bounds non-root users
// (root is exempt from it).
func limitProcs(n int) string {
	if n <= 0 {
		n = DefaultMaxProcs
	}
	var how []string
	// pid_max bounds pid numbers (at least 301: the kernel reserves the first 300
	// after a wrap).
	if os.WriteFile("/proc/sys/kernel/pid_max", []byte(strconv.Itoa(max(n, 301))), 0) == nil {
		how = append(how, fmt.Sprintf("pid_max %d in the PID namespace", max(n, 301)))
	}
	if unix.Setrlimit(unix.RLIMIT_NPROC, &unix.Rlimit{Cur: uint64(n), Max: uint64(n)}) == nil && os.Getuid() != 0 {
		how = append(how, fmt.Sprintf("RLIMIT_NPROC %d", n))
	}
	return strings.Join(how, ", ")
}

func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	ifr.SetUint16(unix.IFF_UP | unix.IFF_LOOPBACK | unix.IFF_RUNNING)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// openTarget opens p as a mount target without following a final symlink: a link
// planted there is mounted over as itself would be, at the place it points to.
func openTarget(p string) (int, error) {
	fd, err := unix.Open(p, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) {
		// A symlink: protect what it points to (git follows it when reading).
		return unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	}
	return fd, err
}

// bindReadOnly mounts src read-only over dst (missing paths are skipped). The mount
// is made detached and attached by descriptor, so a path swapped meanwhile cannot
// redirect it; the mount point cannot be renamed or unlinked (EBUSY) afterwards.
func bindReadOnly(src, dst string) (bool, error) {
	sfd, err := openTarget(src)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		// Missing, or below something that is not a directory (.git as a file): there
		// is nothing to protect at this path.
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer unix.Close(sfd)
	return true, bindFD(sfd, sfd, true)
}

// bind mounts src over dst (both must exist).
func bind(src, dst string, ro bool) error {
	sfd, err := openTarget(src)
	if err != nil {
		return err
	}
	defer unix.Close(sfd)
	dfd := sfd
	if dst != src {
		if dfd, err = openTarget(dst); err != nil {
			return err
		}
		defer unix.Close(dfd)
	}
	return bindFD(sfd, dfd, ro)
}

func bindFD(sfd, dfd int, ro bool) error {
	tree, err := unix.OpenTree(sfd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
	if err != nil {
		return fmt.Errorf("open_tree: %w", err)
	}
	defer unix.Close(tree)
	if ro {
		// Not nodev: /dev/null is bound this way to hide credential files.
		attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID}
		if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, attr); err != nil {
			return fmt.Errorf("mount_setattr: %w", err)
		}
	}
	if err := unix.MoveMount(tree, "", dfd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount: %w", err)
	}
	return nil
}

// hide replaces p with an empty read-only directory (tmpfs) or file (/dev/null).
func hide(p string) (bool, error) {
	fd, err := openTarget(p)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		// Missing, or below a file: nothing is stored there.
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return false, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		null, err := unix.Open("/dev/null", unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return false, err
		}
		defer unix.Close(null)
		return true, bindFD(null, fd, true) // reads as an empty file
	}
	// Mounting on the descriptor's magic link mounts on exactly the opened directory.
	target := "/proc/self/fd/" + strconv.Itoa(fd)
	return true, unix.Mount("tmpfs", target, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0500")
}

// detachTerminal gives up the helper's controlling terminal, should it have one (a
// caller that started it without a session of its own, see PlainAttr): the commands
// it starts inherit the loss, so /dev/tty fails for them (ENXIO) and TIOCSTI, which
// needs the caller's own controlling terminal, is refused. A session leader keeps
// it: giving it up would hang up the terminal's foreground jobs.
func detachTerminal() {
	if sid, err := unix.Getsid(0); err != nil || sid == os.Getpid() {
		return
	}
	fd, err := unix.Open("/dev/tty", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return // no controlling terminal
	}
	_ = unix.IoctlSetInt(fd, unix.TIOCNOTTY, 0)
	unix.Close(fd)
}

// bestEffortLifetime is the lifetime layer without namespaces: die with the parent
// (set at fork too; repeated here for helpers started otherwise). Commands get their
// own process group, killed when they end; what leaves the group (setsid) survives.
// No subreaper: the server could not reap adopted orphans without racing os/exec.
func bestEffortLifetime() {
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0)
}

// runAsInit runs the command as the only child of the helper, which is PID 1 of the
// namespace: when the command ends the helper returns, and the kernel kills every
// process the command left in the namespace. Signals the command dies of are
// reported as 128+n, as a shell does.
func runAsInit(path string, argv []string, stderr io.Writer) int {
	cmd := exec.Command(path)
	cmd.Args, cmd.Env = argv, os.Environ()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "lovia sandbox: exec %s: %v\n", path, err)
		if errors.Is(err, os.ErrNotExist) {
			return 127
		}
		return 126
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			return 128 + int(st.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		return 126
	}
	return 0
}

// commandAttr is how the exec server starts one command: with namespaces, in a
// nested PID namespace of its own under a /bin/sh init (the command itself would be
// PID 1 otherwise, and an init ignores SIGPIPE, SIGTERM and SIGINT), so whatever the
// command leaves behind — setsid, double forks, nohup — is killed when it ends.
func commandAttr(ns bool) *syscall.SysProcAttr {
	if ns {
		return &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID, Pdeathsig: syscall.SIGKILL, Setpgid: true}
	}
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
