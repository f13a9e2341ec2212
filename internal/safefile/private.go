package safefile

import (
	"errors"
	"io/fs"
	"os"
)

// Files lovia keeps in its data directory (databases, logs, archived tool results,
// trust records) hold conversations, source code and sometimes secrets: they are
// private to the user whatever the umask, and so are the directories holding them.

// PrivateDir creates dir (and parents) with mode 0700, and takes group and other
// permissions away from dir itself when it already existed looser.
func PrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return tighten(dir, 0o700)
}

// PrivateFile takes group and other permissions away from an existing file (0600
// for a file lovia created 0644 before, or that a umask widened). A missing file is
// not an error.
func PrivateFile(path string) error {
	err := tighten(path, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// CreatePrivate creates path with mode 0600 if it does not exist (so a program that
// opens it next, like SQLite, never creates it world-readable), and tightens it if it
// does.
func CreatePrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	cerr := f.Close()
	if err := tighten(path, 0o600); err != nil {
		return err
	}
	return cerr
}

// tighten clears the group and other bits of path (never follows a final link: a
// link's target is not ours to change).
func tighten(path string, want fs.FileMode) error {
	st, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return nil
	}
	if st.Mode().Perm()&0o077 == 0 {
		return nil
	}
	return os.Chmod(path, st.Mode().Perm()&want)
}
