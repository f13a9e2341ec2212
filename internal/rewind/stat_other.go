//go:build !unix

package rewind

import "os"

// Without O_NOFOLLOW the walker still never opens an entry listed as a link; a file
// swapped for a link between listing and opening stays confined by os.Root.
const noFollowFlags = 0

const (
	dirFlags    = 0
	appendFlags = 0
)

func keyOf(fi os.FileInfo) statKey {
	return statKey{MtimeNs: fi.ModTime().UnixNano(), Size: fi.Size(), Mode: uint32(fi.Mode())}
}

// unlinked reports whether an open file was removed (an open file cannot be
// removed here).
func unlinked(os.FileInfo) bool { return false }
