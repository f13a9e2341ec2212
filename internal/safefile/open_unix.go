//go:build unix && !linux

package safefile

import (
	"os"
	"syscall"
)

// openBeneath checks each link on the way stays inside root (no openat2 here).
func openBeneath(root, rel string) (*os.File, error) { return openBeneathPortable(root, rel) }

// openNoFollow opens p read-only without following a final link and without blocking
// on a FIFO.
func openNoFollow(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
}

// openNamed opens a user-named file, following links, without blocking on a FIFO.
func openNamed(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
}
