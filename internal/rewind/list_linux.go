//go:build linux

package rewind

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"
)

// listDir lists the open directory f with each entry's lstat (an entry gone
// before its lstat is left out). It reads the entries (getdents) and lstat-s them
// (fstatat on f) itself: os.File.ReadDir in an os.Root allocates five or six
// objects an entry, most of a walk's garbage.
func listDir(f *os.File, sc *listScratch) ([]listed, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	if len(sc.buf) == 0 {
		sc.buf = make([]byte, 8<<10)
	}
	var out []listed
	var lerr error
	err = rc.Read(func(fd uintptr) bool {
		for {
			n, err := unix.Getdents(int(fd), sc.buf)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				lerr = os.NewSyscallError("getdents", err)
				return true
			}
			if n <= 0 {
				return true
			}
			_, _, sc.names = unix.ParseDirent(sc.buf[:n], -1, sc.names[:0])
			out = slices.Grow(out, len(sc.names))
			for _, name := range sc.names {
				var st unix.Stat_t
				err := unix.Fstatat(int(fd), name, &st, unix.AT_SYMLINK_NOFOLLOW)
				for err == unix.EINTR {
					err = unix.Fstatat(int(fd), name, &st, unix.AT_SYMLINK_NOFOLLOW)
				}
				if errors.Is(err, unix.ENOENT) {
					continue // vanished
				}
				if err != nil {
					lerr = &fs.PathError{Op: "lstat", Path: name, Err: err}
					return true
				}
				mode := fileMode(st.Mode)
				out = append(out, listed{name: name, mode: mode, size: st.Size, key: statKey{
					MtimeNs: st.Mtim.Nano(), CtimeNs: st.Ctim.Nano(), Ino: st.Ino, Size: st.Size, Mode: uint32(mode),
				}})
			}
		}
	})
	if err == nil {
		err = lerr
	}
	return out, err
}

// fileMode is the fs.FileMode os.Lstat reports for a st_mode (as os's
// fillFileStatFromSys makes it), so that keys match those of keyOf.
func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & syscall.S_IFMT {
	case syscall.S_IFBLK:
		mode |= fs.ModeDevice
	case syscall.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFDIR:
		mode |= fs.ModeDir
	case syscall.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case syscall.S_IFLNK:
		mode |= fs.ModeSymlink
	case syscall.S_IFSOCK:
		mode |= fs.ModeSocket
	}
	if m&syscall.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&syscall.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&syscall.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}
