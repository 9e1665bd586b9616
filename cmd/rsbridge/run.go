package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"strings"

	"github.com/rsbridge/rsbridge/bridge"
	"github.com/rsbridge/rsbridge/config"
)

const usage = `rsbridge publishes OAI-PMH 2.0 repositories as ResourceSync 1.1 sources.

Usage:
  rsbridge serve         -config FILE                        serve ResourceSync and harvest on schedule
  rsbridge serve         -oai URL [-prefix P] [-data DIR] [-listen ADDR] [-base-url URL]
                                                             the same without a config file
  rsbridge harvest       -config FILE [-repo NAME] [-full]   harvest now (hands over to a running serve)
  rsbridge reconcile     -config FILE [-repo NAME] [-force]  find silent deletions now (likewise)
  rsbridge backup        -config FILE -o FILE                online backup of the store (- for stdout)
  rsbridge restore       -config FILE -i FILE                restore a backup into an empty data_dir
  rsbridge check-config  -config FILE                        validate a configuration
  rsbridge healthcheck   [-url URL | -config FILE]           probe /healthz (exit 0 when healthy)
  rsbridge check-records -config FILE -repo NAME [-format F] what IRDB's checks find in the stored records
  rsbridge export        -config FILE [-target T] [-every D] write the source as static files: a directory or s3://bucket
  rsbridge mirror        -dir DIR [-once] [-delete] URL      keep a copy of any ResourceSync source (a destination)
  rsbridge demo          [-records N] [-data DIR] [-listen ADDR] [-base-url URL]
                                                             offline demo: serve a built-in synthetic repository
  rsbridge demo-upstream [-listen ADDR] [-records N]         serve a synthetic OAI-PMH repository
  rsbridge version                                           version and build information

Run "rsbridge COMMAND -h" for a command's flags.

Exit status: 0 done (serve: stopped on request), 1 failed, 2 bad usage or
configuration, 130 interrupted (the next run resumes where this one stopped).
A crash (a Go runtime fatal error or an unrecovered panic) aborts with
SIGABRT and a stack dump, never with one of these codes.
`

// Exit codes.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitInterrupted = 130 // 128 + SIGINT, as shells report it
)

// run is the whole program without SIGHUP; it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runWith(ctx, args, stdout, stderr, nil)
}

// runWith is the whole program; hup delivers SIGHUP to serve.
func runWith(ctx context.Context, args []string, stdout, stderr io.Writer, hup <-chan os.Signal) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	var err error
	switch args[0] {
	case "serve":
		err = cmdServe(ctx, args[1:], stdout, stderr, hup)
	case "harvest":
		err = cmdHarvest(ctx, args[1:], stderr, false)
	case "reconcile":
		err = cmdHarvest(ctx, args[1:], stderr, true)
	case "backup":
		err = cmdBackup(ctx, args[1:], stdout, stderr)
	case "restore":
		err = cmdRestore(ctx, args[1:], stderr)
	case "check-config":
		err = cmdCheckConfig(args[1:], stdout, stderr)
	case "healthcheck":
		err = cmdHealthcheck(ctx, args[1:], stdout, stderr)
	case "check-records":
		err = cmdCheckRecords(ctx, args[1:], stdout, stderr)
	case "export":
		err = cmdExport(ctx, args[1:], stdout, stderr)
	case "mirror":
		err = cmdMirror(ctx, args[1:], stdout, stderr)
	case "demo":
		err = cmdDemo(ctx, args[1:], stdout, stderr, hup)
	case "demo-upstream":
		err = cmdDemoUpstream(ctx, args[1:], stdout, stderr)
	case "version", "-version", "--version":
		fmt.Fprint(stdout, versionText())
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "rsbridge: unknown command %q\n\n%s", args[0], usage)
		return exitUsage
	}
	var ue usageError
	var ie interruptedError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "rsbridge %s: %v\n", args[0], err)
		return exitUsage
	case errors.As(err, &ie):
		fmt.Fprintf(stderr, "rsbridge %s: %v\n", args[0], err)
		return exitInterrupted
	}
	fmt.Fprintf(stderr, "rsbridge %s: %v\n", args[0], err)
	return exitFailed
}

// versionText is the version with the build's VCS information.
func versionText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "rsbridge %s\n", bridge.Version)
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b.String()
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	fmt.Fprintf(&b, "  revision   %s\n", bridge.BuildRevision())
	if t := settings["vcs.time"]; t != "" {
		fmt.Fprintf(&b, "  committed  %s\n", t)
	}
	fmt.Fprintf(&b, "  go         %s %s/%s\n", bi.GoVersion, settings["GOOS"], settings["GOARCH"])
	if v := settings["CGO_ENABLED"]; v != "" {
		fmt.Fprintf(&b, "  cgo        %s\n", v)
	}
	if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		fmt.Fprintf(&b, "  module     %s %s\n", bi.Main.Path, bi.Main.Version)
	}
	return b.String()
}

// interruptedError is a command stopped by SIGINT or SIGTERM: exit 130.
type interruptedError struct{ msg string }

func (e interruptedError) Error() string { return e.msg }

type usageError struct{ error }

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("rsbridge "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	return nil
}

// newLogger logs to w at the level and in the format (text or json) given;
// the level can change later through the returned LevelVar (SIGHUP).
func newLogger(w io.Writer, level, format string) (*slog.Logger, *slog.LevelVar) {
	lv := new(slog.LevelVar)
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err == nil {
		lv.Set(l)
	}
	o := &slog.HandlerOptions{Level: lv}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, o)), lv
	}
	return slog.New(slog.NewTextHandler(w, o)), lv
}

// parseWithConfig parses the flags, then loads and validates the -config file
// (path points at the flag's value, set by the parse).
func parseWithConfig(fs *flag.FlagSet, args []string, path *string) (*config.Config, error) {
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if *path == "" {
		return nil, usageError{errors.New("-config FILE is required")}
	}
	return loadConfig(*path)
}

// loadConfig loads and validates a configuration file. Every problem with
// it, an unreadable file included, is a configuration error (exit 2): a
// restart cannot fix it, and the systemd unit does not retry one.
func loadConfig(path string) (*config.Config, error) {
	cfg, err := config.Load(path)
	if err != nil {
		return nil, usageError{err}
	}
	return cfg, nil
}

func cmdCheckConfig(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("check-config", stderr)
	path := fs.String("config", "", "configuration file (required)")
	cfg, err := parseWithConfig(fs, args, path)
	if err != nil {
		return err
	}
	// What serve would find on this machine: the token file, the data
	// directory, the listen addresses (opened and closed again).
	errs := preflight(cfg)
	if ln, admin, debug, err := listenAll(cfg); err != nil {
		errs = append(errs, err)
	} else {
		for _, l := range []net.Listener{ln, admin, debug} {
			if l != nil {
				l.Close()
			}
		}
	}
	if len(errs) > 0 {
		return usageError{fmt.Errorf("%s: the file is valid, but serve would fail here:\n%w", *path, errors.Join(errs...))}
	}
	fmt.Fprintf(stdout, "%s: OK, %d repositories\n", *path, len(cfg.Repositories))
	for _, r := range cfg.Repositories {
		s := cfg.Resolved(r)
		rec := r.Reconcile
		if !cfg.HasReconcile(r) {
			rec = "off"
		}
		fmt.Fprintf(stdout, "  %-20s %s  prefixes=%s schedule=%q reconcile=%q delay=%s retries=%d\n",
			r.Name, cfg.PublicBaseURL(r), strings.Join(r.MetadataPrefixes, ","), r.Schedule, rec, s.Delay, s.MaxRetries)
	}
	return nil
}
