package sandbox

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// The exec server is started with GOGC=off: its package initialization (the whole
// lovia binary's) then runs without collections, which would otherwise compete for
// the CPU with the parent's first model request. Main restores the collector and
// the environment at once, so neither the server nor anything it starts keeps it.

// savedGOGC carries the GOGC entry the server's environment had ("GOGC=..."; empty
// for none) while GOGC itself is off.
const savedGOGC = "LOVIA_SANDBOX_GOGC"

// ServerEnv is env for starting the exec server: GOGC=off, env's own GOGC kept for
// Main to restore.
func ServerEnv(env []string) []string {
	out := make([]string, 0, len(env)+2)
	saved := ""
	for _, kv := range env {
		switch {
		case strings.HasPrefix(kv, "GOGC="):
			saved = kv
		case strings.HasPrefix(kv, savedGOGC+"="):
		default:
			out = append(out, kv)
		}
	}
	return append(out, "GOGC=off", savedGOGC+"="+saved)
}

// restoreGC undoes ServerEnv in the helper: GOGC as the parent meant it (or unset)
// and the collector working as that value says. Nothing when ServerEnv was not used.
func restoreGC() {
	saved, ok := os.LookupEnv(savedGOGC)
	if !ok {
		return
	}
	_ = os.Unsetenv(savedGOGC)
	_ = os.Unsetenv("GOGC")
	percent := 100
	if v, ok := strings.CutPrefix(saved, "GOGC="); ok {
		_ = os.Setenv("GOGC", v)
		percent = gcPercent(v)
	}
	debug.SetGCPercent(percent)
}

// gcPercent reads a GOGC value as the Go runtime does: "off" disables the collector,
// a number is the percentage, anything else is the default 100.
func gcPercent(v string) int {
	if v == "off" {
		return -1
	}
	if n, err := strconv.Atoi(v); err == nil {
		return n
	}
	return 100
}
