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

// DefaultGCPercent is lovia's collection target when GOGC is not set. lovia's live
// heap is a few megabytes, so collecting when the heap has grown by 80 % rather than
// Go's 100 % costs no measurable CPU and lowers the peak RSS of a long run by about
// a megabyte (docs/performance.md). A GOGC in the environment wins.
const DefaultGCPercent = 80

// SetDefaultGC applies DefaultGCPercent unless GOGC is set. The environment is left
// alone, so commands, hooks and MCP servers keep Go's own default.
func SetDefaultGC() {
	if _, ok := os.LookupEnv("GOGC"); !ok {
		debug.SetGCPercent(DefaultGCPercent)
	}
}

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
// and the collector working as that value says (lovia's default when unset).
// Nothing when ServerEnv was not used.
func restoreGC() {
	saved, ok := os.LookupEnv(savedGOGC)
	if !ok {
		return
	}
	_ = os.Unsetenv(savedGOGC)
	_ = os.Unsetenv("GOGC")
	percent := DefaultGCPercent
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
