// Package export publishes the ResourceSync source as a static tree (issue
// 19): every document, resource, resource map and dump package rsbridge
// serves, written to an objstore.Store (a directory behind a static web
// server, or an S3-compatible bucket behind a CDN) at the configured public
// base_url, so a static server answers destinations instead of rsbridge.
//
// An export run works from one store snapshot and publishes in order:
// resources and maps, dump packages, Resource and Change List pages,
// indexes, Capability Lists, then this instance's part of the Source
// Description and the Source Description recomposed from every instance's
// part. A destination never finds a link to an object not yet published.
// Deleted resources and superseded objects go last (superseded dump
// packages and index pages after a grace period). The state of what is
// published is committed to the store only after it is, so a crash leaves
// the next run to redo the work: every write is idempotent.
//
// After the first run only what changed is written: resources from the
// store's change events since the last run, the index pages holding them,
// and documents whose bytes differ from what was published (their SHA-256
// is kept in the state).
package export

import (
	"cmp"
	"context"
	"fmt"
	"html/template"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rsbridge/rsbridge/bridge/export/objstore"
	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/store"
)

// Defaults.
const (
	DefaultWorkers       = 16
	DefaultGrace         = 24 * time.Hour
	DefaultMaxAge        = time.Minute
	DefaultFullThreshold = 200_000
	DefaultInstance      = "main"
)

// Options configure an Exporter.
type Options struct {
	// Target names the target in the export state (store keys) and in
	// logs: objstore.Store.String() unless set.
	Target string
	// Instance names this instance's part of the Source Description
	// ([a-z0-9-]+): instances exporting different repositories to one
	// target each publish a part, and the Source Description lists them all.
	Instance string
	// DumpDir is where the dump packages are (dumps.Dir).
	DumpDir string
	// TempDir holds large documents while they are hashed ("" = os.TempDir).
	TempDir string
	// Workers bounds the object writes in flight.
	Workers int
	// Grace is how long superseded dump packages and index pages stay
	// published: a destination that read the document linking them has
	// that long to fetch them.
	Grace time.Duration
	// MaxAge is the Cache-Control max-age of documents that change:
	// indexes, open lists, the Source Description, resources.
	MaxAge time.Duration
	// FullThreshold: a (repository, format) with more unexported changes
	// than this is exported whole (every record, then the deletions found
	// by listing the target), which bounds a run's memory.
	FullThreshold int
	// CheckpointEvery is how many records a whole export writes between
	// two commits of its position, where a run cut off resumes (default
	// 20,000).
	CheckpointEvery int
	Logger          *slog.Logger
	Now             func() time.Time
	// Published, when set, is called after each stage's objects are
	// published (flushed), with the stage's name: the target is then as a
	// destination would find it. Tests check its links there.
	Published func(stage string)
}

// Exporter exports one source to one target. Runs are serialised.
type Exporter struct {
	src  *source.Source
	db   *store.DB
	st   objstore.Store
	o    Options
	base string
	home *template.Template

	mu      sync.Mutex // one run at a time
	wake    chan struct{}
	running atomic.Bool
	totals  Totals
	last    atomic.Pointer[Report]
}

// Totals count what every run wrote since the process started.
type Totals struct {
	Runs, Failures, Objects, Bytes, Deleted, Skipped, Unexportable atomic.Int64
}

// Report is what one run did.
type Report struct {
	Started, Ended time.Time
	Err            string
	Objects        int64 // objects written
	Bytes          int64
	Deleted        int64
	Skipped        int64 // documents rendered but unchanged
	Unexportable   int64 // resources whose URL cannot be a static path
	Changes        int64 // change events exported
	Full           []string
}

// New builds an exporter of src to st.
func New(src *source.Source, db *store.DB, st objstore.Store, o Options) *Exporter {
	o.Target = cmp.Or(o.Target, st.String())
	o.Instance = cmp.Or(o.Instance, DefaultInstance)
	o.Workers = cmp.Or(o.Workers, DefaultWorkers)
	o.Grace = cmp.Or(o.Grace, DefaultGrace)
	o.MaxAge = cmp.Or(o.MaxAge, DefaultMaxAge)
	o.FullThreshold = cmp.Or(o.FullThreshold, DefaultFullThreshold)
	o.CheckpointEvery = cmp.Or(o.CheckpointEvery, fullFlush)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Exporter{src: src, db: db, st: st, o: o, base: src.Base(), home: parseHome(), wake: make(chan struct{}, 1)}
}

// Target is the target's name.
func (e *Exporter) Target() string { return e.o.Target }

// Totals are the counts since the process started.
func (e *Exporter) Totals() *Totals { return &e.totals }

// Last is the report of the last run (nil before the first ends).
func (e *Exporter) Last() *Report { return e.last.Load() }

// Running reports whether a run is under way.
func (e *Exporter) Running() bool { return e.running.Load() }

// Changed asks for a run soon (harvest.Waker): a harvest committed changes.
func (e *Exporter) Changed() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// Loop exports until ctx ends: after a harvest committed changes (at most
// once per interval, settle after the first change of a quiet spell, so a
// burst of commits makes one run), and every heartbeat intervals without
// one (lists close and dumps appear without a harvest).
func (e *Exporter) Loop(ctx context.Context, interval time.Duration) {
	schedule(ctx, interval, e.wake, func() {
		if _, err := e.Run(ctx); err != nil && ctx.Err() == nil {
			e.o.Logger.Error("export failed; it is retried after the next change, or the next heartbeat", "target", e.o.Target,
				"heartbeat", heartbeat*interval, "err", err)
		}
	})
}

const (
	settle    = time.Second // a change after a quiet spell waits this long for more
	heartbeat = 5           // intervals between runs without a change
)

// schedule calls run at once, then heartbeat intervals after each run
// began, and after a wake sooner: settle after it, never sooner than
// interval after the last run began. Later wakes never push a planned run
// back, so a stream of them does not starve it.
func schedule(ctx context.Context, interval time.Duration, wake <-chan struct{}, run func()) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	var last time.Time
	due := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
			if at := time.Now().Add(max(time.Until(last.Add(interval)), settle)); at.Before(due) {
				due = at
				timer.Reset(time.Until(due))
			}
			continue
		case <-timer.C:
		}
		last = time.Now()
		run()
		due = last.Add(heartbeat * interval)
		timer.Reset(time.Until(due))
	}
}

// Run exports what changed since the last run (everything, the first
// time) and reports what it wrote.
func (e *Exporter) Run(ctx context.Context) (*Report, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.running.Store(true)
	defer e.running.Store(false)
	rep := &Report{Started: e.o.Now().UTC()}
	err := e.db.View(ctx, func(snap *store.Snap) error {
		r, err := newRun(ctx, e, snap, rep)
		if err != nil {
			return err
		}
		defer r.close()
		return r.export()
	})
	rep.Ended = e.o.Now().UTC()
	e.totals.Runs.Add(1)
	if err != nil {
		e.totals.Failures.Add(1)
		rep.Err = err.Error()
		err = fmt.Errorf("export to %s: %w", e.o.Target, err)
	}
	e.last.Store(rep)
	if err == nil {
		e.o.Logger.Info("export done", "target", e.o.Target, "objects", rep.Objects, "bytes", rep.Bytes, "deleted", rep.Deleted,
			"unchanged", rep.Skipped, "changes", rep.Changes, "took", rep.Ended.Sub(rep.Started).Round(time.Millisecond))
	}
	if rep.Unexportable > 0 {
		e.o.Logger.Warn("resources not exported: their identifiers cannot be static paths (see docs/operations.md)", "target", e.o.Target, "count", rep.Unexportable)
	}
	return rep, err
}
