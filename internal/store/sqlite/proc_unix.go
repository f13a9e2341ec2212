//go:build unix

package sqlite

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// processStartTime reads pid's start time (field 22 of /proc/PID/stat, clock ticks
// since boot). Where /proc does not exist it returns "", and liveness falls back to
// kill(pid, 0) alone.
func processStartTime(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", err
	}
	_, start, ok := parseStat(string(b))
	if !ok {
		return "", fmt.Errorf("unexpected /proc/%d/stat format", pid)
	}
	return start, nil
}

// parseStat extracts the state and start time from a /proc/PID/stat line. The command
// name (field 2) is in parentheses and may itself contain spaces and ')'.
func parseStat(s string) (state, start string, ok bool) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", "", false
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); field 22 (starttime) is f[19].
	if len(f) < 20 {
		return "", "", false
	}
	return f[0], f[19], true
}

// processAlive reports whether pid runs and, when startTime is known, is the same
// process (not a later one that reused the pid). Zombies count as dead.
func processAlive(pid int, startTime string) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		if _, statErr := os.Stat("/proc/self/stat"); statErr == nil {
			return false // /proc works, so the process vanished meanwhile
		}
		return true // no /proc (macOS, BSD): kill(pid, 0) is all we know
	}
	state, start, ok := parseStat(string(b))
	if !ok {
		return true
	}
	if state == "Z" || state == "X" {
		return false
	}
	return startTime == "" || start == startTime
}
