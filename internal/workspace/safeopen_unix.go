//go:build unix

package workspace

import (
	"errors"
	"os"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// openResolved opens abs — clean, absolute, with no symlink in it (what resolvePath
// returns) — so that no symlink is followed anywhere on the way: the kernel reaches
// exactly the path that was judged, or the open fails (ELOOP) because something
// changed in between. Inside the root the open is relative to the root's directory
// fd and beneath it.
func openResolved(rootFD *os.File, root, abs string, flags int, perm os.FileMode) (*os.File, error) {
	base, rel, beneath := unix.AT_FDCWD, abs, false
	if rootFD != nil {
		if r, ok := relInside(root, abs); ok {
			base, rel, beneath = int(rootFD.Fd()), r, true
		}
	}
	defer runtime.KeepAlive(rootFD)
	fd, ok, err := openat2(base, rel, beneath, flags, uint32(perm.Perm()))
	if !ok {
		fd, err = openWalk(base, rel, flags, uint32(perm.Perm()), false)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: abs, Err: err}
	}
	return os.NewFile(uintptr(fd), abs), nil
}

// openWalk opens rel below base one component at a time, each with O_NOFOLLOW (a
// symlink anywhere fails with ELOOP or ENOTDIR). mkdir creates missing directories
// on the way (rel then names a directory).
func openWalk(base int, rel string, flags int, perm uint32, mkdir bool) (int, error) {
	if strings.HasPrefix(rel, "/") {
		fd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, err
		}
		defer func() { unix.Close(fd) }()
		base = fd
		rel = strings.TrimLeft(rel, "/")
	}
	parts := strings.Split(rel, "/")
	cur := base
	closeCur := func() {
		if cur != base {
			unix.Close(cur)
		}
	}
	defer func() { closeCur() }()
	for i, c := range parts {
		if c == "" {
			c = "."
		}
		if c == ".." {
			return -1, unix.EXDEV
		}
		last := i == len(parts)-1
		fl, mode := unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(0)
		if last {
			fl, mode = flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm
		}
		fd, err := unix.Openat(cur, c, fl, mode)
		if errors.Is(err, unix.ENOENT) && mkdir {
			if err := unix.Mkdirat(cur, c, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
				return -1, err
			}
			fd, err = unix.Openat(cur, c, fl, mode)
		}
		if err != nil {
			return -1, err
		}
		if last {
			return fd, nil
		}
		closeCur()
		cur = fd
	}
	return -1, unix.EINVAL
}

// openDirResolved opens the directory abs (resolved, symlink-free) like
// openResolved; mkdir creates the missing part, each directory made with mkdirat
// relative to the one opened before it.
func openDirResolved(rootFD *os.File, root, abs string, mkdir bool) (*os.File, error) {
	f, err := openResolved(rootFD, root, abs, unix.O_RDONLY|dirFlag, 0)
	if err == nil || !mkdir || !errors.Is(err, os.ErrNotExist) {
		return f, err
	}
	base, rel := unix.AT_FDCWD, abs
	if rootFD != nil {
		if r, ok := relInside(root, abs); ok {
			base, rel = int(rootFD.Fd()), r
		}
	}
	defer runtime.KeepAlive(rootFD)
	fd, err := openWalk(base, rel, unix.O_RDONLY|unix.O_DIRECTORY, 0, true)
	if err != nil {
		return nil, &os.PathError{Op: "mkdir", Path: abs, Err: err}
	}
	return os.NewFile(uintptr(fd), abs), nil
}

// openAt opens name in the directory dir, never following a symlink.
func openAt(dir *os.File, name string, flags int, perm os.FileMode) (*os.File, error) {
	fd, err := unix.Openat(int(dir.Fd()), name, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	runtime.KeepAlive(dir)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir.Name() + "/" + name, Err: err}
	}
	return os.NewFile(uintptr(fd), dir.Name()+"/"+name), nil
}

// renameAt replaces name with tmp in the directory dir (the one that was judged,
// not a path resolved again).
func renameAt(dir *os.File, tmp, name string) error {
	err := unix.Renameat(int(dir.Fd()), tmp, int(dir.Fd()), name)
	runtime.KeepAlive(dir)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: tmp, New: dir.Name() + "/" + name, Err: err}
	}
	return nil
}

func unlinkAt(dir *os.File, name string) {
	unix.Unlinkat(int(dir.Fd()), name, 0)
	runtime.KeepAlive(dir)
}

// isLoop reports the error of an open that met a symlink it must not follow.
func isLoop(err error) bool {
	return errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV)
}

// Flags the file tools add: never block on a FIFO swapped in after the check.
const toolOpenFlags = unix.O_NONBLOCK
const dirFlag = unix.O_DIRECTORY

// linkCount is the number of hard links of a file.
func linkCount(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
