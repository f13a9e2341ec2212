//go:build linux

package safefile

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// openBeneath opens root/rel with openat2(RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS): the
// kernel refuses any resolution step that would leave root. An absolute link that
// happens to point back inside root (EXDEV too) gets the portable check; so does a
// kernel without openat2 (before 5.6).
func openBeneath(root, rel string) (*os.File, error) {
	dir, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: root, Err: err}
	}
	defer unix.Close(dir)
	how := &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOCTTY,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	for {
		fd, err := unix.Openat2(dir, rel, how)
		switch {
		case err == nil:
			return os.NewFile(uintptr(fd), filepath.Join(root, rel)), nil
		case errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN):
			continue
		case errors.Is(err, unix.EXDEV) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM):
			// EPERM: seccomp filters that block unknown syscalls.
			return openBeneathPortable(root, rel)
		case errors.Is(err, unix.ELOOP):
			return nil, ErrOutsideRoot
		}
		return nil, &os.PathError{Op: "open", Path: filepath.Join(root, rel), Err: err}
	}
}

// openNoFollow opens p read-only without following a final link and without blocking
// on a FIFO.
func openNoFollow(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
}

// openNamed opens a user-named file, following links, without blocking on a FIFO
// that has no writer yet (Go's poller then waits for data properly).
func openNamed(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
}
