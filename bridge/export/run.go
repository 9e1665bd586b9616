package export

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rsbridge/rsbridge/bridge/export/objstore"
	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/store"
)

// run is one export: everything it publishes is read from one snapshot.
type run struct {
	ctx    context.Context
	e      *Exporter
	snap   *store.Snap
	rep    *Report
	now    time.Time
	pool   *pool
	stage  string     // the stage under way
	queued int        // objects queued in the stage (paced)
	mu     sync.Mutex // guards rep.Unexportable (pool workers count refusals)

	formats []*format                  // one per (repository, prefix)
	sets    []source.Set               // every published resource set
	parts   map[string]*pages          // the sets' Resource List pages, by pagesName
	states  map[string]any             // export state to commit at the end
	drop    []string                   // state names to delete at the end
	deletes []string                   // objects to delete once the lists no longer link them
	dumps   map[string]struct{}        // the dump files listed now, by object key
	repaged map[string]bool            // sets (by pagesName) with Resource List pages written by this run
	mapIDs  map[string]map[string]bool // per repository: items whose map may have changed
	allMaps map[string]bool            // repositories whose every map is written again
	mapSets map[string][]string        // per repository: sets whose members' maps are written again
	current map[string]bool            // objects written or confirmed by this run: never garbage
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
		dumps: map[string]struct{}{}, repaged: map[string]bool{}, allMaps: map[string]bool{}, mapSets: map[string][]string{}, current: map[string]bool{}, mapIDs: map[string]map[string]bool{}}
	sets, err := e.src.Sets(ctx)
	if err != nil {
		return nil, err
	}
	r.sets = sets
	r.pool = newPool(ctx, e.st, e.o.Workers, rep, &e.totals)
	r.pool.onUnexportable = r.refused
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
	if err := r.e.st.Flush(r.ctx); err != nil && !r.allRefused(err) {
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
	reshaped, err := r.reshaped()
	if err != nil {
		return err
	}
	for _, repo := range r.e.src.Config().Repositories {
		for _, prefix := range repo.MetadataPrefixes {
			r.formats = append(r.formats, &format{repo: repo, prefix: prefix, changed: map[string]bool{}, dirty: map[string]map[string]bool{}})
		}
	}
	for _, f := range r.formats {
		if err := r.planFormat(f, reshaped); err != nil {
			return fmt.Errorf("%s %s: %w", f.repo.Name, f.prefix, err)
		}
	}
	// A format exported whole may have lost records the others link as
	// alternates, and every map of the repository aggregates it.
	for _, f := range r.formats {
		if f.full {
			for _, g := range r.formatsOf(f.repo.Name) {
				g.allDirty = true
			}
			r.allMaps[f.repo.Name] = true
		}
	}
	return r.catalogChanges()
}

// catalogChanges finds the sets published or unpublished since the last
// run (a set without pages in the state, or pages of a set no longer
// published): the maps of their members name the sets an item is part of.
func (r *run) catalogChanges() error {
	current := map[string]source.Set{}
	for _, rs := range r.sets {
		current[pagesName(rs)] = rs
	}
	seen := map[string]bool{}
	err := r.snap.ExportStates(r.e.o.Target, "p/", func(name string, _ []byte) error {
		seen[name] = true
		if _, ok := current[name]; ok {
			return nil
		}
		// .../{repo}/{prefix}/set/{spec}: a set no longer published
		parts := strings.Split(strings.TrimPrefix(strings.TrimPrefix(name, "p/"), r.e.base+"/"), "/")
		if len(parts) == 4 && parts[2] == "set" {
			if spec, err := url.PathUnescape(parts[3]); err == nil {
				r.changedSet(parts[0], spec)
			}
		}
		return nil
	})
	for name, rs := range current {
		if !seen[name] && rs.Spec != store.AllSet {
			r.changedSet(rs.Repo.Name, rs.Spec)
		}
	}
	return err
}

func (r *run) changedSet(repo, spec string) {
	if !slices.Contains(r.mapSets[repo], spec) {
		r.mapSets[repo] = append(r.mapSets[repo], spec)
	}
}

func (r *run) planFormat(f *format, reshaped bool) error {
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
	if reshaped && known && !f.cur.Full {
		known = false // what the documents say changed: export everything again
		r.e.o.Logger.Info("the configuration changed what the documents say: exporting every record", "target", r.e.o.Target,
			"repo", f.repo.Name, "prefix", f.prefix)
	}
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
		return r.markDirty(f.repo, ev)
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
func (r *run) markDirty(repo config.Repository, ev *store.Event) error {
	for _, f := range r.formatsOf(repo.Name) {
		specs := append(append([]string{store.AllSet}, ev.SetsBefore...), ev.SetsAfter...)
		if f.prefix != ev.Prefix { // the record as that format has it
			rec, err := r.snap.Record(repo.Name, f.prefix, ev.Identifier)
			if err != nil {
				return err
			}
			specs = append([]string{store.AllSet}, rec.Members()...)
		}
		for _, spec := range specs {
			ids := f.dirty[spec]
			if ids == nil {
				ids = map[string]bool{}
				f.dirty[spec] = ids
			}
			ids[ev.Identifier] = true
		}
	}
	return nil
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

// allRefused reports whether every error err joins is the target refusing
// a key (counted as unexportable; the run goes on).
func (r *run) allRefused(err error) bool {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		if !unexportable(e) {
			return false
		}
	}
	for _, e := range errs {
		r.refused("", e)
	}
	return true
}

// refused counts an object the target cannot hold.
func (r *run) refused(key string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rep.Unexportable++
	r.e.totals.Unexportable.Add(1)
	if r.rep.Unexportable <= 10 {
		r.e.o.Logger.Warn("object not exported: the target cannot hold its key", "target", r.e.o.Target, "key", source.Clip(key, 200), "err", err)
	}
}

// layoutVersion changes when the exporter publishes differently for the
// same store: every target is then exported again, whole.
const layoutVersion = "1"

// reshaped reports whether the configuration that shapes the documents
// (base URL, page size, Change List period, dumps, notification, the
// repositories' formats, public URLs and rights) changed since the last
// run, and notes the new one. Documents of quiet formats are otherwise
// never rendered again.
func (r *run) reshaped() (bool, error) {
	cfg := r.e.src.Config()
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%d\x00%s\x00%s\x00%v\x00%s\x00", layoutVersion, cfg.BaseURL, cfg.ResourceSync.PageLimit,
		cfg.ResourceSync.ChangeListPeriod, cfg.ResourceSync.DumpSets, cfg.Notification.On(), source.HubURL(cfg))
	for _, repo := range cfg.Repositories {
		fmt.Fprintf(h, "%s\x00%v\x00%s\x00%s\x00", repo.Name, repo.MetadataPrefixes, cfg.PublicBaseURL(repo), cfg.Resolved(repo).MetadataRights)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	var prev string
	known, err := r.state("f/shape", &prev)
	if err != nil {
		return false, err
	}
	r.states["f/shape"] = sum
	return known && prev != sum, nil
}
