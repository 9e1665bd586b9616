package main

import (
	"os"
	"runtime"
	"runtime/debug"

	"github.com/rsbridge/rsbridge/config"
)

// runtimeDefaults applies rsbridge's runtime settings where the environment
// does not set them, and returns a function that restores the previous ones
// (for benchmarks, which measure what the binary does):
//
//   - the soft memory limit (config.MemoryLimit): Badger's compaction leaves
//     large short-lived buffers, and without a limit the collector lets the
//     heap reach twice the live size before it runs;
//   - config.ProcsPerCPU Ps per CPU (GOMAXPROCS). Badger's compactions are
//     CPU-bound goroutines; with one P per core they can hold every P for a
//     scheduling slice while a goroutine woken by the network (the next OAI
//     page, a client's request) waits. With spare Ps the kernel shares the
//     cores among the threads instead: against a 20 ms-per-page repository
//     the harvest's overhead over bare paging fell from 10-15 % to 5-7 %, and
//     resource GETs during a harvest kept 79 % of their throughput instead
//     of 72 %, for ~6 % less peak harvest rate (docs/benchmarks.md).
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
