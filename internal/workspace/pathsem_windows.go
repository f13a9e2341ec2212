//go:build windows

package workspace

import (
	"path/filepath"
	"syscall"
)

// hostWinPaths expands 8.3 short names of existing files before judging, so
// C:\Users\RUNNER~1\AppData\Local\Temp is judged by its long name; a short name
// that does not resolve is refused (winPaths.canon).
func hostWinPaths() winPaths { return winPaths{longName: longPathName} }

// longPathName expands the longest existing prefix of p with GetLongPathName.
func longPathName(p string) string {
	rest := ""
	for q := p; ; {
		if l, ok := getLong(q); ok {
			if rest == "" {
				return l
			}
			return filepath.Join(l, rest)
		}
		d := filepath.Dir(q)
		if d == q {
			return p
		}
		if rest == "" {
			rest = filepath.Base(q)
		} else {
			rest = filepath.Join(filepath.Base(q), rest)
		}
		q = d
	}
}

func getLong(p string) (string, bool) {
	u, err := syscall.UTF16PtrFromString(p)
	if err != nil {
		return "", false
	}
	buf := make([]uint16, 512)
	for {
		n, err := syscall.GetLongPathName(u, &buf[0], uint32(len(buf)))
		if err != nil || n == 0 {
			return "", false
		}
		if int(n) <= len(buf) {
			return syscall.UTF16ToString(buf[:n]), true
		}
		buf = make([]uint16, n)
	}
}
