//go:build !unix

package safefile

import (
	"io/fs"
	"os"
)

// openBeneath checks each link on the way stays inside root.
func openBeneath(root, rel string) (*os.File, error) { return openBeneathPortable(root, rel) }

// openNoFollow refuses a final link (checked just before opening: there is no
// O_NOFOLLOW here).
func openNoFollow(p string) (*os.File, error) {
	st, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return nil, ErrOutsideRoot
	}
	return os.Open(p)
}

// openNamed opens a user-named file.
func openNamed(p string) (*os.File, error) { return os.Open(p) }
