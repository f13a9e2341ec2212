package cmd

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// startProfiles starts the profiles that LOVIA_CPUPROFILE and LOVIA_MEMPROFILE ask
// for (files written when the command returns; see docs/profiling.md) and returns
// the function that finishes them. Unset, it costs two getenv calls. The variables
// are removed from the environment so that child processes (the sandbox helper,
// commands, hooks) do not overwrite the files.
func startProfiles() (stop func()) {
	cpu, mem := os.Getenv("LOVIA_CPUPROFILE"), os.Getenv("LOVIA_MEMPROFILE")
	if cpu == "" && mem == "" {
		return func() {}
	}
	os.Unsetenv("LOVIA_CPUPROFILE")
	os.Unsetenv("LOVIA_MEMPROFILE")
	var cpuFile *os.File
	if cpu != "" {
		f, err := os.Create(cpu)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "lovia: LOVIA_CPUPROFILE:", err)
		} else {
			cpuFile = f
		}
	}
	return func() {
		if cpuFile != nil {
			pprof.StopCPUProfile()
			cpuFile.Close()
		}
		if mem != "" {
			f, err := os.Create(mem)
			if err == nil {
				// The live heap after a collection, plus every allocation since start
				// (go tool pprof -sample_index=alloc_space).
				runtime.GC()
				err = pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "lovia: LOVIA_MEMPROFILE:", err)
			}
		}
	}
}
