package mirror

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/store"
)

// changes applies the changes after the set's Through from its Change
// Lists, oldest list first: closed lists already applied whole are skipped
// by their from/until (RS-112, RS-113), and within a list only the last
// change of each resource counts. A change at Through itself is applied
// again: a source may add to an open list at its last time, and applying
// what the copy has costs a comparison of hashes.
func (r *setRun) changes(ctx context.Context) error {
	if r.set.ChangeList == "" {
		return nil
	}
	type list struct {
		loc         string
		from, until time.Time
	}
	var lists []list
	top := newChangeSet()
	doc, _, err := r.m.f.stream(ctx, r.set.ChangeList, "", func(d *rsync.Document, e rsync.Entry) error {
		if !d.Index {
			r.addChange(top, r.set.ChangeList, e)
			return nil
		}
		l := list{loc: resolve(r.set.ChangeList, e.Loc)}
		if e.MD != nil {
			l.from, l.until = e.MD.From, e.MD.Until
		}
		lists = append(lists, l)
		return nil
	})
	if err != nil {
		return err
	}
	if doc.MD.Capability != rsync.ChangeList {
		return fmt.Errorf("%s: capability %q, want changelist", r.set.ChangeList, doc.MD.Capability)
	}
	if !doc.Index {
		// One Change List and no index.
		return r.applyChanges(ctx, r.set.ChangeList, top, doc.MD.Until)
	}
	slices.SortStableFunc(lists, func(a, b list) int { return a.from.Compare(b.from) })
	packages, err := r.changeDumps(ctx)
	if err != nil {
		return err
	}
	for _, l := range lists {
		if !l.until.IsZero() && (!l.until.After(r.st.Through) || !r.st.Lists[l.loc].IsZero()) {
			continue // closed and applied
		}
		if pkg, ok := packages[[2]time.Time{l.from, l.until}]; ok && !l.until.IsZero() {
			done, err := r.fromChangeDump(ctx, pkg, l.loc, l.until)
			if err != nil {
				return err
			}
			if done {
				continue
			}
		}
		if err := r.pullList(ctx, l.loc, l.until.IsZero()); err != nil {
			return err
		}
	}
	return nil
}

// pullList reads one Change List as it streams and applies it; the open
// list is asked for with its last ETag, and an unchanged one costs a 304.
func (r *setRun) pullList(ctx context.Context, loc string, open bool) error {
	etag := ""
	if open && r.st.OpenList == loc {
		etag = r.st.OpenETag
	}
	cs := newChangeSet()
	doc, resp, err := r.m.f.stream(ctx, loc, etag, func(_ *rsync.Document, e rsync.Entry) error {
		r.addChange(cs, loc, e)
		return nil
	})
	if err != nil || doc == nil { // doc nil: not modified
		return err
	}
	if err := r.applyChanges(ctx, loc, cs, doc.MD.Until); err != nil {
		return err
	}
	if open {
		// Only a list applied whole may be skipped when unchanged.
		r.st.OpenList, r.st.OpenETag = loc, resp.Header.Get("ETag")
		return r.commit()
	}
	return nil
}

// changeSet is the last change of each resource in a list at or after
// Through, in first-change order.
type changeSet struct {
	latest map[string]want
	order  []string
	last   time.Time
}

func newChangeSet() *changeSet { return &changeSet{latest: map[string]want{}} }

// addChange adds a list entry to cs.
func (r *setRun) addChange(cs *changeSet, loc string, e rsync.Entry) {
	w := wantOf(loc, e)
	if w.change == "" {
		r.m.quirk(loc, "a Change List entry without rs:md change (RS-108), skipped")
		return
	}
	if !w.datetime.IsZero() && w.datetime.Before(r.st.Through) {
		return
	}
	if _, seen := cs.latest[w.uri]; !seen {
		cs.order = append(cs.order, w.uri)
	}
	cs.latest[w.uri] = w
	if w.datetime.After(cs.last) {
		cs.last = w.datetime
	}
}

// applyChanges applies one list's changes (until: the list's, zero when
// it is open).
func (r *setRun) applyChanges(ctx context.Context, loc string, cs *changeSet, until time.Time) error {
	r.failed = 0
	var deletions []want
	err := r.fetchAll(ctx, "change", func(send func(want) error) error {
		for _, uri := range cs.order {
			w := cs.latest[uri]
			if w.change == "deleted" {
				deletions = append(deletions, w)
				continue
			}
			ok, err := r.holds(w)
			if err != nil {
				return err
			}
			if ok {
				r.m.count(func(c *Counts) { c.Unchanged++ })
				continue
			}
			if err := send(w); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = r.deleteAll(ctx, deletions)
	}
	if err != nil {
		r.commit()
		return err
	}
	if r.failed > 0 {
		r.commit()
		return fmt.Errorf("%s: %d resources could not be taken (see the log); the next run applies this list again", loc, r.failed)
	}
	r.advance(loc, until, cs.last)
	return r.commit()
}

// advance notes a list as applied: a closed one whole (its until), an open
// one up to its last change.
func (r *setRun) advance(loc string, until, last time.Time) {
	if !until.IsZero() {
		if r.st.Lists == nil {
			r.st.Lists = map[string]time.Time{}
		}
		r.st.Lists[loc] = until
		if until.After(r.st.Through) {
			r.st.Through = until
		}
		return
	}
	if last.After(r.st.Through) {
		r.st.Through = last
	}
}

// deleteAll applies deletions: with -delete the files go, at most
// MaxDeleteShare of the set's copy in one run without -force; without
// -delete they are counted and kept.
func (r *setRun) deleteAll(ctx context.Context, ws []want) error {
	for _, w := range ws {
		if err := ctx.Err(); err != nil {
			return err
		}
		cur, err := r.m.state.Resource(r.set.CapabilityList, w.uri)
		if err != nil {
			return err
		}
		if cur == nil || cur.Deleted {
			continue
		}
		if !r.m.opts.Delete {
			r.m.count(func(c *Counts) { c.Kept++ })
			continue
		}
		if err := r.allowDelete(ctx); err != nil {
			return err
		}
		// A set's deletion may be a record leaving that set only: the file
		// stays while another set holds it.
		if shared, err := r.heldElsewhere(w.uri); err != nil {
			return err
		} else if !shared {
			if err := r.m.sink.removeFor(w.uri, cur.Path); err != nil {
				return err
			}
		}
		now := r.m.now().UTC()
		gone := *cur
		gone.Deleted, gone.Applied = true, now
		if err := r.batch.PutResource(r.set.CapabilityList, &gone); err != nil {
			return err
		}
		r.m.sink.ahead.inBatch(cur.Path)
		if err := r.m.sink.note(logLine{Change: "deleted", URI: w.uri, Path: cur.Path, Time: now, From: "change"}); err != nil {
			return err
		}
		r.deleted++
		r.live--
		r.m.count(func(c *Counts) { c.Deleted++ })
		if r.pending++; r.pending >= r.m.opts.Batch {
			if err := r.commit(); err != nil {
				return err
			}
		}
	}
	return nil
}

// allowDelete refuses a deletion past MaxDeleteShare of the set's copy in
// one run (more than 10 files), unless -force: a source that suddenly
// deletes most of what it had is more likely broken than emptied.
func (r *setRun) allowDelete(ctx context.Context) error {
	if r.live < 0 {
		r.live = 0
		err := r.m.state.Resources(ctx, r.set.CapabilityList, func(res *store.MirrorResource) error {
			if !res.Deleted {
				r.live++
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if r.m.opts.Force || r.deleted < 10 || float64(r.deleted+1) <= r.m.opts.MaxDeleteShare*float64(r.live+r.deleted) {
		return nil
	}
	return fmt.Errorf("refusing to delete more than %.0f%% of the copy of this set in one run (%d deleted, %d left); if the source really deleted them, run again with -force",
		100*r.m.opts.MaxDeleteShare, r.deleted, r.live)
}
