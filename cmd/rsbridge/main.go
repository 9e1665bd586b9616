// Command rsbridge publishes OAI-PMH 2.0 repositories as ResourceSync sources.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

func main() {
	// A crash (runtime fatal error, unrecovered panic) aborts with SIGABRT
	// after the stack dump instead of exiting 2, the code of a bad
	// configuration: systemd's Restart=on-failure restarts after a signal,
	// and RestartPreventExitStatus=2 keeps it from retrying a configuration
	// a restart cannot fix.
	debug.SetTraceback("crash")
	runtimeDefaults() // soft memory limit, GOMAXPROCS (unless set in the environment)
	// SIGINT and SIGTERM stop the command cleanly; a second one kills it at
	// once (the default action is back after the first).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() { <-ctx.Done(); stop() }()
	// SIGHUP (systemctl reload, logrotate) makes serve reload what it safely
	// can; it never stops rsbridge.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	code := runWith(ctx, os.Args[1:], os.Stdout, os.Stderr, hup)
	stop()
	os.Exit(code)
}
