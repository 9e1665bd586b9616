package bridge

import (
	"os"
	"runtime"
	"runtime/debug"

	"github.com/rsbridge/rsbridge/config"
)

// runtimeDefaults applies the memory limit and GOMAXPROCS the binary runs
// with (cmd/rsbridge/runtime.go), so benchmarks measure what it does, and
// returns a function that restores the previous ones.
func runtimeDefaults() (restore func()) {
	mem, procs := int64(-1), 0
	if os.Getenv("GOMEMLIMIT") == "" {
		mem = debug.SetMemoryLimit(config.MemoryLimit)
	}
	if os.Getenv("GOMAXPROCS") == "" {
		procs = runtime.GOMAXPROCS(config.ProcsPerCPU * runtime.NumCPU())
	}
	return func() {
		if mem >= 0 {
			debug.SetMemoryLimit(mem)
		}
		if procs > 0 {
			runtime.GOMAXPROCS(procs)
		}
	}
}
