package export

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/rsbridge/rsbridge/bridge/export/objstore"
	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/store"
)

// run is one export: everything it publishes is read from one snapshot.
type run struct {
	ctx   context.Context
	e     *Exporter
	snap  *store.Snap
	rep   *Report
	now   time.Time
	pool  *pool
	stage string // the stage under way

	formats  []*format                  // one per (repository, prefix)
	sets     []source.Set               // every published resource set
	parts    map[string]*pages          // the sets' Resource List pages, by pagesName
	states   map[string]any             // export state to commit at the end
	drop     []string                   // state names to delete at the end
	deletes  []string                   // objects to delete once the lists no longer link them
	dumps    map[string]struct{}        // the dump files listed now, by object key
	newDumps map[string]bool            // sets (by path) with dump files uploaded by this run
	repaged  map[string]bool            // sets (by pagesName) with Resource List pages written by this run
	mapIDs   map[string]map[string]bool // per repository: items whose map may have changed
}

// format is the plan of one (repository, prefix).
type format struct {
	repo     config.Repository
	prefix   string
	cur      cursor
	ctr      store.Counter
	slot     int64
	full     bool                       // export every record
	allDirty bool                       // every Resource List page may have changed
	changed  map[string]bool            // identifiers with events to export
	dirty    map[string]map[string]bool // per setSpec: identifiers whose pages changed
}

// quiet reports whether nothing of the format changed since the last run.
func (f *format) quiet() bool {
	return !f.full && f.cur.Seq == f.ctr.Seq && f.cur.Version == f.ctr.Version && f.cur.Slot == f.slot
}

func newRun(ctx context.Context, e *Exporter, snap *store.Snap, rep *Report) (*run, error) {
	r := &run{ctx: ctx, e: e, snap: snap, rep: rep, now: e.o.Now().UTC(), parts: map[string]*pages{}, states: map[string]any{},
		dumps: map[string]struct{}{}, newDumps: map[string]bool{}, repaged: map[string]bool{}, mapIDs: map[string]map[string]bool{}}
	sets, err := e.src.Sets(ctx)
	if err != nil {
		return nil, err
	}
	r.sets = sets
	r.pool = newPool(ctx, e.st, e.o.Workers, rep, &e.totals)
	return r, nil
}

func (r *run) close() { r.pool.stop() }

// export runs the stages in publication order.
func (r *run) export() error {
	for _, stage := range []struct {
		name string
		fn   func() error
	}{
		{"plan", r.plan},
		{"resources", r.resources},
		{"dump packages", r.dumpPackages},
		{"lists", r.lists},
		{"indexes", r.indexes},
		{"capability lists", r.capabilityLists},
		{"source description", r.sourceDescription},
		{"removals", r.removals},
	} {
		r.stage = stage.name
		if err := stage.fn(); err != nil {
			return fmt.Errorf("%s: %w", stage.name, err)
		}
		if err := r.flush(); err != nil {
			return fmt.Errorf("%s: %w", stage.name, err)
		}
	}
	return r.commitAll()
}

// flush waits for the writes in flight and publishes them.
func (r *run) flush() error {
	if err := r.pool.wait(); err != nil {
		return err
	}
	if err := r.e.st.Flush(r.ctx); err != nil {
		return err
	}
	if r.e.o.Published != nil {
		r.e.o.Published(r.stage)
	}
	return nil
}

// commitAll commits the run's state in parts small enough for one
// transaction each.
func (r *run) commitAll() error {
	const chunk = 5000
	for _, f := range r.formats {
		r.states[cursorName(f.repo.Name, f.prefix)] = cursor{Seq: f.ctr.Seq, Version: f.ctr.Version, Slot: f.slot}
	}
	set := map[string]any{}
	for _, name := range slices.Sorted(maps.Keys(r.states)) {
		set[name] = r.states[name]
		if len(set) == chunk {
			if err := r.commit(set, nil); err != nil {
				return err
			}
			set = map[string]any{}
		}
	}
	if err := r.commit(set, nil); err != nil {
		return err
	}
	for i := 0; i < len(r.drop); i += chunk {
		if err := r.commit(nil, r.drop[i:min(i+chunk, len(r.drop))]); err != nil {
			return err
		}
	}
	return nil
}

// key is the object a URL of the source is published as: its path below
// the base URL, percent-decoded, which is what static servers and S3
// path-style requests map a URL to.
func (r *run) key(u string) (string, error) {
	rel, ok := strings.CutPrefix(u, r.e.base+"/")
	if !ok {
		return "", fmt.Errorf("%s is not below the base URL %s", u, r.e.base)
	}
	k, err := url.PathUnescape(rel)
	if err != nil {
		return "", fmt.Errorf("%s: %w", u, err)
	}
	if err := objstore.ValidKey(k); err != nil {
		return "", err
	}
	return k, nil
}

// plan reads every format's cursor and the events since, and decides
// what the run writes.
func (r *run) plan() error {
	for _, repo := range r.e.src.Config().Repositories {
		for _, prefix := range repo.MetadataPrefixes {
			r.formats = append(r.formats, &format{repo: repo, prefix: prefix, changed: map[string]bool{}, dirty: map[string]map[string]bool{}})
		}
	}
	for _, f := range r.formats {
		if err := r.planFormat(f); err != nil {
			return fmt.Errorf("%s %s: %w", f.repo.Name, f.prefix, err)
		}
	}
	return nil
}

func (r *run) planFormat(f *format) error {
	var err error
	if f.ctr, err = r.snap.Counter(f.repo.Name, f.prefix); err != nil {
		return err
	}
	f.slot = r.e.src.Slot(r.snap.At(f.repo.Name, f.prefix))
	known, err := r.state(cursorName(f.repo.Name, f.prefix), &f.cur)
	if err != nil {
		return err
	}
	from := f.cur.Seq
	switch {
	case !known || f.cur.Full:
		f.full = true
		if !f.cur.Full { // a whole export starts now; one cut off resumes
			f.cur = cursor{Full: true, FullSeq: f.ctr.Seq}
		}
		from = f.cur.FullSeq
	}
	n, gap, err := r.collect(f, from)
	if err != nil {
		return err
	}
	if !f.full && (gap || n > r.e.o.FullThreshold) {
		f.full = true
		f.cur = cursor{Full: true, FullSeq: f.ctr.Seq}
		clear(f.changed)
		clear(f.dirty)
		r.e.o.Logger.Info("exporting every record", "target", r.e.o.Target, "repo", f.repo.Name, "prefix", f.prefix,
			"why", map[bool]string{true: "the change events since the last export were pruned", false: fmt.Sprintf("%d changes since the last export", n)}[gap])
	}
	if f.full {
		f.allDirty = true
		r.rep.Full = append(r.rep.Full, f.repo.Name+"/"+f.prefix)
	}
	if f.ctr.Version-f.cur.Version > uint64(n) && known && !f.full {
		f.allDirty = true // records rewritten without an event (datestamps): their entries changed
	}
	return nil
}

// collect gathers the events of f after seq: the identifiers to export and
// the pages they touch. It stops counting past the full threshold; gap
// reports that events after seq were pruned.
func (r *run) collect(f *format, after uint64) (n int, gap bool, err error) {
	first := true
	err = r.snap.Events(f.repo.Name, f.prefix, after, func(ev *store.Event) error {
		if ev.Seq > f.ctr.Seq {
			return errEnough
		}
		if first && ev.Seq != after+1 {
			gap = true
			return errEnough
		}
		first = false
		if n++; n > r.e.o.FullThreshold && !f.full {
			return errEnough
		}
		f.changed[ev.Identifier] = true
		r.markMap(f.repo.Name, ev.Identifier)
		r.markDirty(f.repo, ev)
		return nil
	})
	if errors.Is(err, errEnough) {
		err = nil
	}
	if first && after < f.ctr.Seq && err == nil {
		gap = true // events after the cursor exist in the counter but none was read
	}
	r.rep.Changes += int64(min(n, r.e.o.FullThreshold))
	return n, gap, err
}

var errEnough = errors.New("enough events")

// markDirty notes the pages an event touches: in every format of the
// repository (alternate links name the other formats), in every set the
// record was or is in.
func (r *run) markDirty(repo config.Repository, ev *store.Event) {
	for _, f := range r.formatsOf(repo.Name) {
		for _, spec := range append(append([]string{store.AllSet}, ev.SetsBefore...), ev.SetsAfter...) {
			ids := f.dirty[spec]
			if ids == nil {
				ids = map[string]bool{}
				f.dirty[spec] = ids
			}
			ids[ev.Identifier] = true
		}
	}
}

func (r *run) markMap(repo, id string) {
	ids := r.mapIDs[repo]
	if ids == nil {
		ids = map[string]bool{}
		r.mapIDs[repo] = ids
	}
	ids[id] = true
}

// formatsOf are the formats of a repository.
func (r *run) formatsOf(repo string) []*format {
	var out []*format
	for _, f := range r.formats {
		if f.repo.Name == repo {
			out = append(out, f)
		}
	}
	return out
}

// format finds the plan of (repo, prefix).
func (r *run) format(repo, prefix string) *format {
	for _, f := range r.formats {
		if f.repo.Name == repo && f.prefix == prefix {
			return f
		}
	}
	return nil
}
