package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/rsbridge/rsbridge/bridge"
	"github.com/rsbridge/rsbridge/bridge/mirror"
)

// mirrorMemoryLimit is the mirror's soft memory limit unless GOMEMLIMIT
// is set.
const mirrorMemoryLimit = 64 << 20

// listFlag is a flag that may be given several times.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ", ") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// cmdMirror keeps a copy of a ResourceSync source in a directory: once
// (-once), or following it, a run every -every.
func cmdMirror(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("mirror", stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: rsbridge mirror -dir DIR [flags] URL\n\nURL: a Source Description, a Capability List, a site (its /.well-known/resourcesync),\na robots.txt, or a page linking rel=\"resourcesync\". Flags:\n")
		fs.PrintDefaults()
	}
	dir := fs.String("dir", "", "directory of the copy (required)")
	state := fs.String("state", "", "state directory, one process at a time (default: DIR.state)")
	logPath := fs.String("log", "", "append every change to this JSON-lines file")
	var sets, headers listFlag
	fs.Var(&sets, "sets", "only Capability Lists whose URL path matches this pattern (path.Match; repeatable)")
	fs.Var(&headers, "header", `extra request header, "Name: value" (repeatable; e.g. a bearer token)`)
	del := fs.Bool("delete", false, "delete the files of resources the source deleted")
	noDumps := fs.Bool("no-dumps", false, "ignore Resource and Change Dumps: everything by GET, guided by the lists")
	force := fs.Bool("force", false, "lift the deletion limit")
	share := fs.Float64("max-delete-share", 0.5, "largest share of a set's copy one run may delete without -force")
	workers := fs.Int("workers", 8, "GETs at once")
	delay := fs.Duration("delay", 0, "pause between requests")
	timeout := fs.Duration("timeout", time.Minute, "per request")
	retries := fs.Int("retries", 4, "retries of a failed request (backoff, Retry-After)")
	once := fs.Bool("once", false, "take the baseline or catch up, then exit")
	every := fs.Duration("every", 10*time.Minute, "without -once: how often to read the Change Lists")
	listen := fs.String("listen", "", "without -once: subscribe to Change Notification, with the callback server here (e.g. :8081)")
	callback := fs.String("callback-url", "", "the callback server's URL as hubs reach it (default: http:// and the -listen address)")
	hook := fs.String("hook", "", "shell command run after each committed batch, with the batch's change-log lines on stdin")
	audit := fs.Bool("audit", false, "compare every file of the copy with the Resource Lists (length, hash) and report; exit 1 when they differ")
	repair := fs.Bool("repair", false, "audit, and fetch again what is missing or differs (with -delete, remove what the lists no longer name)")
	level := fs.String("log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() != 1 || *dir == "" {
		return usageError{errors.New("give -dir DIR and one URL to start from (rsbridge mirror -h)")}
	}
	hdr, err := parseHeaders(headers)
	if err != nil {
		return usageError{err}
	}
	if *state == "" {
		*state = strings.TrimRight(*dir, "/") + ".state"
	}
	log, _ := newLogger(stderr, *level, "text")
	if os.Getenv("GOMEMLIMIT") == "" {
		// A mirror's live heap is small (one list's last changes, one
		// manifest's paths); a tighter soft limit than serve's keeps its
		// resident set small on a dump of any size.
		debug.SetMemoryLimit(mirrorMemoryLimit)
	}
	progress := newMirrorProgress(stderr, 2*time.Second)
	var hookCmd []string
	if *hook != "" {
		hookCmd = []string{"sh", "-c", *hook}
	}
	m, err := mirror.New(*state, mirror.Options{Hook: hookCmd, Dir: *dir, Log: *logPath, Sets: sets, Delete: *del, NoDumps: *noDumps, Force: *force, MaxDeleteShare: *share,
		Workers: *workers, Delay: *delay, Timeout: *timeout, Retries: *retries, Headers: hdr, Logger: log,
		UserAgent: "rsbridge-mirror/" + bridge.Version + " (+https://github.com/rsbridge/rsbridge)", Progress: progress.print})
	if err != nil {
		return err
	}
	defer m.Close()
	start := fs.Arg(0)
	if *audit || *repair {
		return auditCopy(ctx, m, start, *repair, stdout)
	}
	var runErr error
	if *once {
		runErr = m.Run(ctx, start)
	} else {
		runErr = m.Follow(ctx, start, mirror.FollowOptions{Every: *every, Listen: *listen, CallbackURL: *callback})
	}
	progress.done(m.Counts())
	if ctx.Err() != nil {
		return interruptedError{"stopped; the next run goes on from the last committed batch"}
	}
	return runErr
}

// auditCopy reports an audit; it fails when the copy differs from the
// lists (after a repair: when something could not be repaired).
func auditCopy(ctx context.Context, m *mirror.Mirror, start string, repair bool, stdout io.Writer) error {
	rep, err := m.Audit(ctx, start, repair)
	fmt.Fprintf(stdout, "audit: %d listed, %d good, %d missing, %d differing, %d in the copy but not listed, %d files in no set's state, %d repaired\n",
		rep.Listed, rep.Good, rep.Missing, rep.Differing, rep.Extra, rep.Stray, rep.Repaired)
	for _, e := range rep.Examples {
		fmt.Fprintln(stdout, "  "+e)
	}
	switch {
	case err != nil:
		return err
	case !repair && rep.Missing+rep.Differing+rep.Extra+rep.Stray > 0:
		return errors.New("the copy differs from the source's lists; run with -repair to fix it")
	}
	return nil
}

// parseHeaders reads "Name: value" flags.
func parseHeaders(lines []string) (http.Header, error) {
	h := http.Header{}
	for _, l := range lines {
		k, v, ok := strings.Cut(l, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("-header %q: want \"Name: value\"", l)
		}
		h.Add(textproto.CanonicalMIMEHeaderKey(strings.TrimSpace(k)), strings.TrimSpace(v))
	}
	return h, nil
}

// mirrorProgress prints the counts on stderr every so often.
type mirrorProgress struct {
	w     io.Writer
	every time.Duration
	start time.Time
	last  time.Time
}

func newMirrorProgress(w io.Writer, every time.Duration) *mirrorProgress {
	return &mirrorProgress{w: w, every: every, start: time.Now(), last: time.Now()}
}

func (p *mirrorProgress) print(c mirror.Counts) {
	if time.Since(p.last) < p.every {
		return
	}
	p.last = time.Now()
	p.line("mirroring", c)
}

func (p *mirrorProgress) done(c mirror.Counts) { p.line("done", c) }

func (p *mirrorProgress) line(state string, c mirror.Counts) {
	took := time.Since(p.start).Seconds()
	taken := c.FromDump + c.Fetched
	fmt.Fprintf(p.w, "%s: %d sets, %d resources taken (%d from dumps, %d by GET, %.0f/s, %.1f MB), %d shared between sets, %d unchanged, %d created, %d updated, %d deleted, %d kept (no -delete), %d failed\n",
		state, c.Sets, taken, c.FromDump, c.Fetched, float64(taken)/max(took, 0.001), float64(c.Bytes)/1e6, c.Shared, c.Unchanged, c.Created, c.Updated, c.Deleted, c.Kept, c.Failed)
}
