//go:build unix

package rewind

import (
	"os"
	"syscall"
)

const noFollowFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// dirFlags open a directory to list it. O_NONBLOCK does nothing to a directory
// (nor to a regular file's reads and writes), but spares os.File the four fcntl
// calls with which it tries a descriptor opened blocking in the poller.
const dirFlags = syscall.O_DIRECTORY | syscall.O_NONBLOCK

// appendFlags open the checkpoint log (O_NONBLOCK: as for dirFlags).
const appendFlags = syscall.O_NONBLOCK

func keyOf(fi os.FileInfo) statKey {
	k := statKey{MtimeNs: fi.ModTime().UnixNano(), Size: fi.Size(), Mode: uint32(fi.Mode())}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		k.Ino = uint64(st.Ino)
		k.CtimeNs = ctimeNs(st)
	}
	return k
}

// unlinked reports whether an open file was removed (its last name gone).
func unlinked(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink == 0
}
