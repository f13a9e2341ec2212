//go:build !linux

package rewind

import "os"

// listDir lists the open directory f with each entry's lstat (an entry gone
// before its lstat is left out).
func listDir(f *os.File, _ *listScratch) ([]listed, error) {
	des, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	out := make([]listed, 0, len(des))
	for _, de := range des {
		fi, err := de.Info()
		if err != nil {
			continue // vanished
		}
		out = append(out, listed{name: de.Name(), mode: fi.Mode(), size: fi.Size(), key: keyOf(fi)})
	}
	return out, nil
}
