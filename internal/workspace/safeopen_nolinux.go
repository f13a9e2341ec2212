//go:build unix && !linux

package workspace

// openat2 is Linux-only; other systems walk the components with O_NOFOLLOW.
func openat2(dirfd int, rel string, beneath bool, flags int, perm uint32) (int, bool, error) {
	return -1, false, nil
}
