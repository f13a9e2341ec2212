//go:build !unix

package workspace

import (
	"errors"
	"os"
	"path/filepath"
)

// Without openat and O_NOFOLLOW, paths are opened by name and checked afterwards:
// the file opened must be the one the resolved path names, and not a link.
func openResolved(rootFD *os.File, root, abs string, flags int, perm os.FileMode) (*os.File, error) {
	if fi, err := os.Lstat(abs); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return nil, &os.PathError{Op: "open", Path: abs, Err: errChanged}
	}
	f, err := os.OpenFile(abs, flags, perm)
	if err != nil {
		return nil, err
	}
	fi, err1 := f.Stat()
	li, err2 := os.Lstat(abs)
	if err1 != nil || err2 != nil || !os.SameFile(fi, li) {
		f.Close()
		return nil, &os.PathError{Op: "open", Path: abs, Err: errChanged}
	}
	return f, nil
}

var errChanged = errors.New("the path changed while it was opened")

func openDirResolved(rootFD *os.File, root, abs string, mkdir bool) (*os.File, error) {
	if mkdir {
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return nil, err
		}
	}
	return openResolved(rootFD, root, abs, os.O_RDONLY, 0)
}

func openAt(dir *os.File, name string, flags int, perm os.FileMode) (*os.File, error) {
	return openResolved(nil, "", filepath.Join(dir.Name(), name), flags, perm)
}

func renameAt(dir *os.File, tmp, name string) error {
	return os.Rename(filepath.Join(dir.Name(), tmp), filepath.Join(dir.Name(), name))
}

func unlinkAt(dir *os.File, name string) { os.Remove(filepath.Join(dir.Name(), name)) }

func isLoop(err error) bool { return errors.Is(err, errChanged) }

const toolOpenFlags = 0

const dirFlag = 0

// linkCount: hard links are not counted here.
func linkCount(os.FileInfo) uint64 { return 1 }
