// Command rsbridge publishes OAI-PMH 2.0 repositories as ResourceSync sources.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

// defaultMemoryLimit is the Go soft memory limit unless GOMEMLIMIT says
// otherwise: Badger's compaction leaves large short-lived buffers, and without a
// limit the collector lets the heap reach twice the live size before it runs.
const defaultMemoryLimit = 256 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
