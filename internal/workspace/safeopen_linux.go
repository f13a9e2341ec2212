//go:build linux

package workspace

import (
	"errors"

	"golang.org/x/sys/unix"
)

// openat2 opens rel below dirfd with RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS
// (plus RESOLVE_BENEATH when beneath is set): the kernel itself refuses every
// symlink on the way and anything escaping the directory. ok is false when the
// kernel has no openat2 (before 5.6, or filtered by seccomp): the caller falls back
// to walking the components with O_NOFOLLOW.
func openat2(dirfd int, rel string, beneath bool, flags int, perm uint32) (fd int, ok bool, err error) {
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	if flags&(unix.O_CREAT|unix.O_TMPFILE) != 0 {
		how.Mode = uint64(perm)
	}
	if beneath {
		how.Resolve |= unix.RESOLVE_BENEATH
	}
	for tries := 0; ; tries++ {
		fd, err = unix.Openat2(dirfd, rel, &how)
		switch {
		case err == nil:
			return fd, true, nil
		case errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) && tries == 0 && probeOpenat2Blocked():
			return -1, false, nil
		case errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) && tries < 8:
			// EAGAIN: a concurrent rename somewhere on the system; the kernel asks to retry.
			continue
		}
		return -1, true, err
	}
}

// probeOpenat2Blocked tells a seccomp filter that answers EPERM for openat2 from a
// real permission error: opening "/" cannot be refused otherwise.
func probeOpenat2Blocked() bool {
	fd, err := unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC | unix.O_DIRECTORY})
	if err == nil {
		unix.Close(fd)
		return false
	}
	return errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSYS)
}
