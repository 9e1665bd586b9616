package dumps

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/store"
)

// Resource Dumps and Change Dumps (issue 8, RS-081..RS-149). A Dumper owns
// one background goroutine (Run) that, for every resource set that gets
// dumps (resourcesync.dump_sets):
//   - builds a Resource Dump from one store snapshot when the set has none,
//     or when its records changed and the last one is dump_interval old;
//   - builds the Change Dump package of every closed Change List that has
//     none (the bytes of each change as they were at that change);
//   - prunes change history older than resourcesync.retention;
//   - removes superseded files after dump_grace, and at start files that no
//     descriptor names (a build cut off by a crash).
//
// Files live in data_dir/dumps/{repo}/{prefix}/{all|set-SPEC}/; each is
// written to a temporary file, synced and renamed, and the store's
// descriptor is written after, so a listed package is always complete.

// Dir is where the dumps of a configuration live.
func Dir(cfg *config.Config) string { return filepath.Join(cfg.DataDir, "dumps") }

// Options are the optional parts of New.
type Options struct {
	Logger *slog.Logger
	Now    func() time.Time
	Dir    string        // default Dir(cfg)
	Tick   time.Duration // how often to look for work when nothing wakes it; default 1m
	// BeforePrune, when set, runs before each retention pass with its
	// cutoff; the pass waits for it and does not run if it fails. The
	// notifier's KeepQuiet: a quiet channel's topic document is built from
	// entries the pass may remove.
	BeforePrune func(ctx context.Context, cutoff time.Time) error
}

// Dumper builds, prunes and removes dumps in the background.
type Dumper struct {
	src  *source.Source
	cfg  *config.Config
	db   *store.DB
	dir  string
	log  *slog.Logger
	now  func() time.Time
	tick time.Duration
	wake chan struct{}
	// beforePrune is Options.BeforePrune.
	beforePrune func(ctx context.Context, cutoff time.Time) error
	mu          sync.Mutex // guards the fields below
	prune       time.Time  // last retention pass
	last        error      // last failure, for the status page
}

// New prepares a dumper of a source; Run starts it.
func New(src *source.Source, db *store.DB, o Options) *Dumper {
	cfg := src.Config()
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Dir == "" {
		o.Dir = Dir(cfg)
	}
	if o.Tick <= 0 {
		o.Tick = time.Minute
	}
	return &Dumper{src: src, cfg: cfg, db: db, dir: o.Dir,
		log: o.Logger.With("component", "dumps"), now: o.Now, tick: o.Tick, wake: make(chan struct{}, 1),
		beforePrune: o.BeforePrune}
}

// Changed tells the dumper that a harvest committed changes; it looks for
// work soon (building stays limited by dump_interval).
func (d *Dumper) Changed() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Run works until ctx ends; the caller owns the goroutine and waits for Run
// to return.
func (d *Dumper) Run(ctx context.Context) {
	if d.cfg.ResourceSync.DumpSets != config.DumpNone {
		if err := d.RemoveOrphans(ctx); err != nil {
			d.log.Warn("cannot look for files left by an interrupted build", "err", err)
		}
	}
	t := time.NewTicker(d.tick)
	defer t.Stop()
	for {
		d.Work(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-d.wake:
		}
	}
}

// Work does what is due now: builds, prunes, removes. Errors are logged and
// kept for the status page; the next round tries again.
func (d *Dumper) Work(ctx context.Context) {
	err := d.work(ctx)
	d.mu.Lock()
	d.last = err
	d.mu.Unlock()
	if err != nil && ctx.Err() == nil {
		d.log.Error("dumps: will try again", "err", err)
	}
}

// LastError is the last round's failure, or nil.
func (d *Dumper) LastError() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.last
}

func (d *Dumper) work(ctx context.Context) error {
	now := d.now().UTC()
	var errs []error
	if r := d.cfg.ResourceSync.Retention; r > 0 {
		d.mu.Lock()
		due := now.Sub(d.prune) >= min(time.Hour, r/10)
		d.mu.Unlock()
		if due {
			if err := d.pruneHistory(ctx, now.Add(-r), now); err != nil {
				errs = append(errs, err)
			} else {
				d.mu.Lock()
				d.prune = now
				d.mu.Unlock()
			}
		}
	}
	if d.cfg.ResourceSync.DumpSets != config.DumpNone {
		sets, err := d.src.Sets(ctx)
		if err != nil {
			return err
		}
		for _, rs := range sets {
			if !d.src.Dumped(rs) {
				continue
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := d.resourceDumpIfDue(ctx, rs, now); err != nil {
				errs = append(errs, err)
			}
			if err := d.changeDumps(ctx, rs); err != nil {
				errs = append(errs, err)
			}
		}
	}
	errs = append(errs, d.collect(ctx, now))
	return errors.Join(errs...)
}

// pruneHistory applies retention to every repository and format.
func (d *Dumper) pruneHistory(ctx context.Context, cutoff, now time.Time) error {
	if d.beforePrune != nil {
		if err := d.beforePrune(ctx, cutoff); err != nil {
			return fmt.Errorf("retention: before pruning: %w", err)
		}
	}
	for _, repo := range d.cfg.Repositories {
		for _, prefix := range repo.MetadataPrefixes {
			p, err := d.db.Prune(ctx, repo.Name, prefix, cutoff, now, d.cfg.ResourceSync.DumpGrace)
			if err != nil {
				return err
			}
			if p.Lists+p.Events+p.Versions > 0 {
				d.log.Info("pruned change history older than retention", "repo", repo.Name, "prefix", prefix,
					"before", cutoff.Format(time.RFC3339), "lists", p.Lists, "events", p.Events, "versions", p.Versions, "entries_filled", p.Filled)
			}
		}
	}
	return nil
}

// resourceDumpIfDue builds the set's Resource Dump when it has none (and has
// records), or when its records changed since and the dump is
// dump_interval old.
func (d *Dumper) resourceDumpIfDue(ctx context.Context, rs source.Set, now time.Time) error {
	var due bool
	err := d.db.View(ctx, func(snap *store.Snap) error {
		dump, err := snap.ResourceDump(rs.Repo.Name, rs.Prefix, rs.Spec)
		if err != nil {
			return err
		}
		lists, err := snap.ChangeLists(rs.Repo.Name, rs.Prefix, rs.Spec)
		if err != nil {
			return err
		}
		var lastSeq uint64
		for _, l := range lists {
			lastSeq = max(lastSeq, l.LastSeq)
		}
		cp, err := snap.Checkpoint(rs.Repo.Name, rs.Prefix)
		if err != nil {
			return err
		}
		switch {
		case cp.InProgress:
			// A list is being harvested (or was interrupted): a dump now
			// would be a partial copy, soon outdated. Build it when the list
			// completes.
		case dump == nil:
			due = lastSeq > 0
		case lastSeq > dump.Seq:
			due = now.Sub(dump.At) >= d.cfg.ResourceSync.DumpInterval
		}
		return nil
	})
	if err != nil || !due {
		return err
	}
	if err := d.db.CheckSpace(); err != nil {
		return err
	}
	return d.BuildResourceDump(ctx, rs)
}

// span is the run of records one package holds.
type span struct {
	start string
	count int
}

// BuildResourceDump writes the set's Resource Dump from one snapshot: ZIP
// packages of at most 50,000 resources and dump_package_bytes, each with
// manifest.xml first and a copy of that manifest beside it; then the store
// lists them (and queues the previous dump's files for removal).
func (d *Dumper) BuildResourceDump(ctx context.Context, rs source.Set) error {
	started := time.Now()
	var dump store.ResourceDump
	var written []string
	err := d.db.View(ctx, func(snap *store.Snap) error {
		ctr, err := snap.Counter(rs.Repo.Name, rs.Prefix)
		if err != nil {
			return err
		}
		// at is the snapshot's horizon: every change timed before it is in
		// the dump, so a destination that follows the Change Dump from at
		// misses nothing; the snapshot may already hold later ones, up to
		// its completed.
		at := snap.At(rs.Repo.Name, rs.Prefix)
		dump = store.ResourceDump{At: at, Done: snap.Now(), Seq: ctr.Seq}
		// Package boundaries from the record states alone.
		var spans []span
		var size int64
		err = snap.Resources(rs.Repo.Name, rs.Prefix, rs.Spec, "", "", 1<<62, func(rec *store.Record) error {
			cost := rec.Length + 200 // local header and central directory entry
			if len(spans) == 0 || spans[len(spans)-1].count >= rsync.MaxEntries || size+cost > d.cfg.ResourceSync.DumpPackageBytes && spans[len(spans)-1].count > 0 {
				spans = append(spans, span{start: rec.Identifier})
				size = 0
			}
			spans[len(spans)-1].count++
			size += cost
			return nil
		})
		if err != nil {
			return err
		}
		stamp := at.Format("20060102T150405.000Z")
		for i, sp := range spans {
			name := fmt.Sprintf("resourcedump-%s-%05d", strings.ReplaceAll(stamp, ".", ""), i+1)
			pkg, err := d.writeResourcePackage(snap, rs, sp, name)
			if pkg.File != "" {
				written = append(written, pkg.File, pkg.Manifest)
			}
			if err != nil {
				return err
			}
			dump.Packages = append(dump.Packages, pkg)
			dump.Records += pkg.Entries
		}
		return nil
	})
	if err == nil {
		err = d.db.PutResourceDump(rs.Repo.Name, rs.Prefix, rs.Spec, dump, d.now().Add(d.cfg.ResourceSync.DumpGrace))
	}
	if err != nil {
		for _, f := range written { // not listed: nothing may keep them
			os.Remove(filepath.Join(d.dir, f))
		}
		return fmt.Errorf("resource dump of %s: %w", rs.Path(), err)
	}
	d.log.Info("resource dump built", "set", rs.CapabilityList(), "records", dump.Records, "packages", len(dump.Packages),
		"took", time.Since(started).Round(time.Millisecond).String())
	return nil
}

// writeResourcePackage writes one package of a Resource Dump and the copy of
// its manifest.
func (d *Dumper) writeResourcePackage(snap *store.Snap, rs source.Set, sp span, name string) (store.Package, error) {
	rel := filepath.Join(rs.DumpDir(), name+".zip")
	relManifest := filepath.Join(rs.DumpDir(), name+"-manifest.xml")
	at := snap.At(rs.Repo.Name, rs.Prefix)
	pkg := store.Package{At: at, Done: snap.Now()}
	p, err := newPackage(filepath.Join(d.dir, rel))
	if err != nil {
		return pkg, err
	}
	mf, err := newFileWriter(filepath.Join(d.dir, relManifest))
	if err != nil {
		p.abandon()
		return pkg, err
	}
	fail := func(err error) (store.Package, error) { p.abandon(); mf.abandon(); return pkg, err }
	w, err := p.create("manifest.xml", at)
	if err != nil {
		return fail(err)
	}
	m := source.ResourceManifest(io.MultiWriter(w, mf), rs, at, pkg.Done)
	err = snap.Resources(rs.Repo.Name, rs.Prefix, rs.Spec, sp.start, "", sp.count, func(rec *store.Record) error {
		return m.Write(source.ResourceManifestEntry(rs, rec))
	})
	if err == nil {
		err = m.Close()
	}
	if err == nil {
		err = snap.Resources(rs.Repo.Name, rs.Prefix, rs.Spec, sp.start, "", sp.count, func(rec *store.Record) error {
			b, err := snap.Metadata(rs.Repo.Name, rs.Prefix, rec.Identifier)
			if err != nil {
				return err
			}
			pkg.Entries++
			return p.add(source.ResourcePath(rec.Identifier), rec.Modified, b)
		})
	}
	if err != nil {
		return fail(err)
	}
	if pkg.Length, pkg.SHA256, pkg.MD5, err = p.finish(); err != nil {
		mf.abandon()
		return pkg, err
	}
	pkg.File = rel
	if err := mf.finish(); err != nil {
		return pkg, err
	}
	pkg.Manifest = relManifest
	pkg.Built = d.now().UTC()
	return pkg, nil
}

// changeDumps builds the Change Dump package of every closed Change List of
// the set that has none yet. A list is closed at the store's horizon, so no
// uncommitted page can still add to it (store.Snap.At).
func (d *Dumper) changeDumps(ctx context.Context, rs source.Set) error {
	var todo []store.ChangeListInfo
	err := d.db.View(ctx, func(snap *store.Snap) error {
		lists, err := snap.ChangeLists(rs.Repo.Name, rs.Prefix, rs.Spec)
		if err != nil {
			return err
		}
		for _, l := range lists {
			if l.Count == 0 || l.Until(snap.At(rs.Repo.Name, rs.Prefix)).IsZero() {
				continue
			}
			if pkg, err := snap.ChangeDump(rs.Repo.Name, rs.Prefix, rs.Spec, l.ID); err != nil {
				return err
			} else if pkg == nil {
				todo = append(todo, l)
			}
		}
		return nil
	})
	if err != nil || len(todo) == 0 {
		return err
	}
	if err := d.db.CheckSpace(); err != nil {
		return err
	}
	for _, l := range todo {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := d.BuildChangeDump(ctx, rs, l); err != nil {
			return err
		}
	}
	return nil
}

// BuildChangeDump writes the package of one closed Change List: every change
// of the list in order, the bytes of each created or updated resource as
// they were at that change, and a Change Dump Manifest covering exactly the
// list's from/until.
func (d *Dumper) BuildChangeDump(ctx context.Context, rs source.Set, l store.ChangeListInfo) error {
	name := "changedump-" + l.ID
	rel := filepath.Join(rs.DumpDir(), name+".zip")
	relManifest := filepath.Join(rs.DumpDir(), name+"-manifest.xml")
	var until time.Time
	pkg := store.Package{From: l.From, File: rel, Manifest: relManifest}
	err := d.db.View(ctx, func(snap *store.Snap) error {
		if until = l.Until(snap.At(rs.Repo.Name, rs.Prefix)); until.IsZero() {
			return fmt.Errorf("change list %s is still open", l.ID)
		}
		pkg.Until = until
		p, err := newPackage(filepath.Join(d.dir, rel))
		if err != nil {
			return err
		}
		mf, err := newFileWriter(filepath.Join(d.dir, relManifest))
		if err != nil {
			p.abandon()
			return err
		}
		fail := func(err error) error { p.abandon(); mf.abandon(); return err }
		w, err := p.create("manifest.xml", until)
		if err != nil {
			return fail(err)
		}
		m := source.ChangeManifest(io.MultiWriter(w, mf), rs, l.From, until)
		err = snap.SetEvents(rs.Repo.Name, rs.Prefix, rs.Spec, l.FirstSeq, l.LastSeq, func(ev *store.SetEvent) error {
			return m.Write(source.ChangeManifestEntry(rs, ev))
		})
		if err == nil {
			err = m.Close()
		}
		if err == nil {
			err = snap.SetEvents(rs.Repo.Name, rs.Prefix, rs.Spec, l.FirstSeq, l.LastSeq, func(ev *store.SetEvent) error {
				if ev.Change == store.Deleted {
					pkg.Entries++
					return nil
				}
				b, err := snap.Bytes(rs.Repo.Name, rs.Prefix, ev.Identifier, ev.SHA256)
				if err != nil {
					return err
				}
				if b == nil {
					return fmt.Errorf("the bytes of change %d (%q) are no longer stored", ev.Seq, ev.Identifier)
				}
				pkg.Entries++
				return p.add(source.ChangePath(ev), ev.Time, b)
			})
		}
		if err != nil {
			return fail(err)
		}
		if pkg.Length, pkg.SHA256, pkg.MD5, err = p.finish(); err != nil {
			mf.abandon()
			return err
		}
		return mf.finish()
	})
	if err == nil {
		pkg.Built = d.now().UTC()
		err = d.db.PutChangeDump(rs.Repo.Name, rs.Prefix, rs.Spec, l.ID, pkg)
	}
	if err != nil {
		os.Remove(filepath.Join(d.dir, rel))
		os.Remove(filepath.Join(d.dir, relManifest))
		return fmt.Errorf("change dump %s of %s: %w", l.ID, rs.Path(), err)
	}
	d.log.Info("change dump built", "set", rs.CapabilityList(), "list", l.ID, "changes", pkg.Entries)
	return nil
}

// collect removes the files whose grace period ended.
func (d *Dumper) collect(ctx context.Context, now time.Time) error {
	var due []string
	err := d.db.View(ctx, func(snap *store.Snap) error {
		return snap.Garbage(func(g store.Garbage) error {
			if !now.Before(g.RemoveAfter) {
				due = append(due, g.File)
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	for _, f := range due {
		if err := os.Remove(filepath.Join(d.dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if err := d.db.Collected(f); err != nil {
			return err
		}
	}
	return nil
}

// RemoveOrphans deletes files in the dump directory that no descriptor names:
// temporary files and packages of a build a crash cut off.
func (d *Dumper) RemoveOrphans(ctx context.Context) error {
	named := map[string]bool{}
	err := d.db.View(ctx, func(snap *store.Snap) error {
		return snap.DumpFiles(func(f string) error { named[filepath.Clean(f)] = true; return nil })
	})
	if err != nil {
		return err
	}
	n := 0
	err = filepath.WalkDir(d.dir, func(path string, e os.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		if e.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(d.dir, path)
		if err != nil || named[rel] {
			return err
		}
		n++
		return os.Remove(path)
	})
	if n > 0 {
		d.log.Info("removed dump files no dump lists (an interrupted build)", "files", n)
	}
	return err
}

// fileWriter writes a file through a temporary file, like pkgWriter.
type fileWriter struct {
	final string
	f     *os.File
}

func newFileWriter(final string) (*fileWriter, error) {
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(final), ".tmp-*")
	if err != nil {
		return nil, err
	}
	return &fileWriter{final: final, f: f}, nil
}

func (w *fileWriter) Write(b []byte) (int, error) { return w.f.Write(b) }

func (w *fileWriter) abandon() { w.f.Close(); os.Remove(w.f.Name()) }

func (w *fileWriter) finish() error {
	err := w.f.Sync()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(w.f.Name(), w.final)
	}
	if err != nil {
		os.Remove(w.f.Name())
		return err
	}
	return syncDir(filepath.Dir(w.final))
}
