package workspace

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/lovia-dev/lovia/internal/textutil"
)

// How paths are opened (docs/policies.md, "How paths are judged and opened"):
// Policy.Judge resolves a path as the kernel would and decides on the resolved
// path; safeOpen then opens exactly that path with every symlink refused
// (openat2 RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS, beneath the root's directory
// fd for paths inside it; O_NOFOLLOW on every component where openat2 is missing).
// A path that changed between the two fails instead of reaching something else.

// openKind says who opens a path: what a file tool may open is narrower than what a
// shell redirect may.
type openKind int

const (
	// forTool: regular files and directories only; never blocks on a FIFO.
	forTool openKind = iota
	// forRedirect: also devices and FIFOs, when the policy allowed the path itself.
	forRedirect
	// forWalk: a file tool opening an entry its walk listed as a regular file or a
	// directory (no lstat first; what is opened is still checked).
	forWalk
)

// errChangedPath is the message when an open meets a symlink the judged path did
// not have: someone changed the tree between the check and the open.
const errChangedPath = "the path changed while it was being opened (a symbolic link appeared where the checked path had none); try again"

// safeOpen opens abs, a path returned by Policy.Judge (resolved, symlink-free), which
// the caller's gate has allowed. It refuses what the kind may not open, and for
// paths outside the root checks that the file opened is the one the path names.
func (w *Workspace) safeOpen(abs string, flags int, perm os.FileMode, kind openKind) (*os.File, error) {
	if kind != forRedirect {
		flags |= toolOpenFlags
	}
	if kind == forTool {
		// Check before opening: opening a device can have effects (a tape rewinds).
		if fi, err := os.Lstat(abs); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
			return nil, userErr("%s is not a regular file (%s); the file tools open files and directories only", w.rel(abs), fi.Mode().Type())
		}
	}
	// A write never goes through a hard link: the file's other names may be
	// anywhere on the file system. Truncation waits until that is checked.
	trunc := flags&os.O_TRUNC != 0 && flags&(os.O_WRONLY|os.O_RDWR) != 0
	flags &^= os.O_TRUNC
	f, err := openResolved(w.rootFD, w.policy.root, abs, flags, perm)
	if err != nil {
		if isLoop(err) {
			return nil, userErr("cannot open %s: %s", w.rel(abs), errChangedPath)
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if kind != forRedirect && !fi.Mode().IsRegular() && !fi.IsDir() {
		f.Close()
		return nil, userErr("%s is not a regular file (%s); the file tools open files and directories only", w.rel(abs), fi.Mode().Type())
	}
	if flags&(os.O_WRONLY|os.O_RDWR) != 0 && fi.Mode().IsRegular() && linkCount(fi) > 1 {
		f.Close()
		return nil, userErr("%s has %d hard links; lovia does not write through a hard link, whose other names may be outside the workspace (replace the file instead, e.g. with write_file)", w.rel(abs), linkCount(fi))
	}
	if trunc && fi.Mode().IsRegular() {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, err
		}
	}
	if !w.policy.Inside(abs) {
		// Belt and braces outside the root: what was opened is what the path names.
		li, err := os.Lstat(abs)
		if err != nil || !os.SameFile(fi, li) {
			f.Close()
			return nil, userErr("cannot open %s: %s", abs, errChangedPath)
		}
	}
	return f, nil
}

// readJudged reads the regular file abs (judged for reading) up to limit bytes.
// exists is false when there is no such file; tooBig reports its size otherwise.
func (w *Workspace) readJudged(abs string, limit int64) (data []byte, fi os.FileInfo, exists bool, err error) {
	f, err := w.safeOpen(abs, os.O_RDONLY, 0, forTool)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, err
	}
	defer f.Close()
	return readOpened(f, limit)
}

// errTooBig is returned (wrapped) with the size when a file exceeds a limit.
type errTooBig struct{ size, limit int64 }

func (e *errTooBig) Error() string {
	return fmt.Sprintf("%s, over the limit of %s", textutil.Bytes(e.size), textutil.Bytes(e.limit))
}

// readOpened reads an opened file that must be regular, up to limit bytes.
func readOpened(f *os.File, limit int64) ([]byte, os.FileInfo, bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, false, err
	}
	if fi.IsDir() {
		return nil, fi, true, userErr("%s is a directory", f.Name())
	}
	if !fi.Mode().IsRegular() {
		return nil, fi, true, userErr("%s is not a regular file", f.Name())
	}
	if fi.Size() > limit {
		return nil, fi, true, &errTooBig{size: fi.Size(), limit: limit}
	}
	// The size may grow after fstat: never read more than the limit.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fi, true, err
	}
	if int64(len(data)) > limit {
		return nil, fi, true, &errTooBig{size: int64(len(data)), limit: limit}
	}
	return data, fi, true, nil
}

// target is a file to be written: its directory, opened (and created) along the
// judged path, and the name in it. Reads of the old content and the replacement
// go through the directory fd, so they touch the same file the policy judged.
type target struct {
	dir  *os.File
	name string
	abs  string
}

func (t *target) Close() { t.dir.Close() }

// openTarget opens the directory of abs (judged for writing), creating missing
// directories below it with mkdirat relative to the directory judged before.
func (w *Workspace) openTarget(abs string, mkdir bool) (*target, error) {
	name := filepath.Base(abs)
	if name == "/" || name == "." || name == ".." {
		return nil, userErr("%s is a directory", abs)
	}
	d, err := openDirResolved(w.rootFD, w.policy.root, filepath.Dir(abs), mkdir)
	if err != nil {
		if isLoop(err) {
			return nil, userErr("cannot open the directory of %s: %s", w.rel(abs), errChangedPath)
		}
		return nil, err
	}
	return &target{dir: d, name: name, abs: abs}, nil
}

// readExisting reads the file the target names, if any, up to limit bytes.
func (t *target) readExisting(limit int64) ([]byte, os.FileInfo, bool, error) {
	f, err := openAt(t.dir, t.name, os.O_RDONLY|toolOpenFlags, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, false, nil
	}
	if err != nil {
		if isLoop(err) {
			return nil, nil, false, userErr("%s is a symbolic link (it appeared after the path was checked); lovia does not write through it", t.abs)
		}
		return nil, nil, false, err
	}
	defer f.Close()
	return readOpened(f, limit)
}

// replace writes data to the target: a new file is created with O_EXCL; an existing
// one is replaced atomically by a temporary file in the same directory renamed over
// it (so a hard link to a file elsewhere is never written through, and a reader
// never sees half a file). mode is the permission to give the file.
func (t *target) replace(data []byte, mode os.FileMode, exists bool) (os.FileInfo, error) {
	if !exists {
		f, err := openAt(t.dir, t.name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if err != nil {
			if errors.Is(err, fs.ErrExist) || isLoop(err) {
				return nil, userErr("%s appeared while it was being written; read it and try again", t.abs)
			}
			return nil, err
		}
		return writeClose(f, data, 0)
	}
	if mode&0o200 == 0 {
		// Replacing would succeed where writing in place fails: keep the protection.
		return nil, userErr("%s is read-only (mode %v); make it writable first if it should change", t.abs, mode.Perm())
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := "." + t.name + ".lovia-" + hex.EncodeToString(rnd[:]) + ".tmp"
	f, err := openAt(t.dir, tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	fi, err := writeClose(f, data, mode)
	if err == nil {
		err = renameAt(t.dir, tmp, t.name)
	}
	if err != nil {
		unlinkAt(t.dir, tmp)
		return nil, err
	}
	return fi, nil
}

// writeClose writes data, sets mode when non-zero, and returns the file's new stat.
func writeClose(f *os.File, data []byte, mode os.FileMode) (os.FileInfo, error) {
	_, err := f.Write(data)
	if err == nil && mode != 0 {
		err = f.Chmod(mode)
	}
	var fi os.FileInfo
	if err == nil {
		fi, err = f.Stat()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return fi, err
}
