//go:build !unix

package sqlite

// processStartTime is unknown off Unix.
func processStartTime(int) (string, error) { return "", nil }

// processAlive cannot be checked off Unix; a claimed run is assumed alive (it can be
// released with `lovia runs` once the process is known to be gone).
func processAlive(int, string) bool { return true }
