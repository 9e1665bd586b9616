package export

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/rsbridge/rsbridge/bridge/export/objstore"
	"github.com/rsbridge/rsbridge/bridge/ore"
	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/store"
)

// fullFlush is Options.CheckpointEvery's default.
const fullFlush = 20000

// flushEvery is how many objects a stage queues between two flushes: a
// directory target's queue stays small, and each flush (two syncfs) is
// paid for many objects.
const flushEvery = 20000

// resources writes the records and resource maps that changed (every one
// of a format exported whole) and queues the deleted ones for removal. Maps
// go after every format's resources, which they aggregate.
func (r *run) resources() error {
	for _, f := range r.formats {
		if f.full {
			if err := r.fullPass(f); err != nil {
				return fmt.Errorf("%s %s: %w", f.repo.Name, f.prefix, err)
			}
		}
		for id := range f.changed {
			if err := r.resource(f, id); err != nil {
				return err
			}
			if err := r.paced(1); err != nil {
				return err
			}
		}
	}
	for _, repo := range r.e.src.Config().Repositories {
		if err := r.setMaps(repo); err != nil {
			return err
		}
		if !r.allMaps[repo.Name] {
			for id := range r.mapIDs[repo.Name] {
				if err := r.resourceMap(repo, id); err != nil {
					return err
				}
				if err := r.paced(2); err != nil {
					return err
				}
			}
			continue
		}
		if err := r.everyMap(repo); err != nil {
			return fmt.Errorf("%s: %w", repo.Name, err)
		}
		if slices.ContainsFunc(r.formatsOf(repo.Name), func(f *format) bool { return f.full }) {
			if err := r.sweepMaps(repo); err != nil {
				return fmt.Errorf("%s: %w", repo.Name, err)
			}
		}
	}
	return nil
}

// setMaps marks the maps of the members of the sets published or
// unpublished since the last run.
func (r *run) setMaps(repo config.Repository) error {
	if r.allMaps[repo.Name] {
		return nil
	}
	for _, spec := range r.mapSets[repo.Name] {
		for _, prefix := range repo.MetadataPrefixes {
			if err := r.snap.Resources(repo.Name, prefix, spec, "", "", math.MaxInt, func(rec *store.Record) error {
				r.markMap(repo.Name, rec.Identifier)
				return nil
			}); err != nil {
				return err
			}
		}
	}
	return nil
}

// everyMap writes the map of every item of a repository: each item once,
// with the first format that holds it live.
func (r *run) everyMap(repo config.Repository) error {
	for i, prefix := range repo.MetadataPrefixes {
		earlier := repo.MetadataPrefixes[:i]
		err := r.snap.Resources(repo.Name, prefix, store.AllSet, "", "", math.MaxInt, func(rec *store.Record) error {
			first, err := r.firstLive(repo.Name, earlier, rec.Identifier)
			if err != nil || !first {
				return err
			}
			if err := r.resourceMap(repo, rec.Identifier); err != nil {
				return err
			}
			return r.paced(2)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// paced counts n objects queued and publishes the queue every flushEvery.
func (r *run) paced(n int) error {
	r.queued += n
	if r.queued < flushEvery {
		return nil
	}
	r.queued = 0
	return r.flush()
}

// resource publishes one record's metadata, or queues its removal.
func (r *run) resource(f *format, id string) error {
	k, err := r.key(source.ResourceURL(r.e.base, f.repo.Name, f.prefix, id))
	if err != nil {
		r.unexportable(f.repo.Name, id, err)
		return nil
	}
	rec, err := r.snap.Record(f.repo.Name, f.prefix, id)
	if err != nil {
		return err
	}
	var meta []byte
	if rec != nil && !rec.Deleted {
		if meta, err = r.snap.Metadata(f.repo.Name, f.prefix, id); err != nil {
			return err
		}
	}
	if meta == nil {
		r.deletes = append(r.deletes, k)
		return nil
	}
	return r.pool.put(k, meta, objstore.Meta{ContentType: source.XMLType, CacheControl: r.short()})
}

// resourceMap publishes an item's resource maps (ORE 1.0 and 0.2), or
// queues their removal when no format holds the item live.
func (r *run) resourceMap(repo config.Repository, id string) error {
	k10, err := r.key(source.MapURL(r.e.base, repo.Name, id))
	if err != nil {
		r.unexportable(repo.Name, id, err)
		return nil
	}
	k02, err := r.key(source.Map02URL(r.e.base, repo.Name, id))
	if err != nil {
		r.unexportable(repo.Name, id, err)
		return nil
	}
	m, _, _, err := r.e.src.Map(r.ctx, r.snap, repo, id)
	if err != nil {
		return err
	}
	if m == nil {
		r.deletes = append(r.deletes, k10, k02)
		return nil
	}
	for _, o := range []struct {
		key   string
		write func(*ore.Map, io.Writer) error
	}{{k10, (*ore.Map).WriteORE10}, {k02, (*ore.Map).WriteORE02}} {
		var b bytes.Buffer
		if err := o.write(m, &b); err != nil {
			return fmt.Errorf("resource map of %s %q: %w", repo.Name, id, err)
		}
		if err := r.pool.put(o.key, b.Bytes(), objstore.Meta{ContentType: ore.MediaType, CacheControl: r.short()}); err != nil {
			return err
		}
	}
	return nil
}

// fullPass writes every live record of a format; it commits its position
// every fullFlush records, so a run cut off resumes there. Objects of records no longer
// live are then found by listing the target.
func (r *run) fullPass(f *format) error {
	n := 0
	err := r.snap.Resources(f.repo.Name, f.prefix, store.AllSet, f.cur.FullPos, "", math.MaxInt, func(rec *store.Record) error {
		if err := r.resource(f, rec.Identifier); err != nil {
			return err
		}
		if n++; n%r.e.o.CheckpointEvery == 0 {
			if err := r.flush(); err != nil {
				return err
			}
			f.cur.FullPos = rec.Identifier
			return r.commit(map[string]any{cursorName(f.repo.Name, f.prefix): f.cur}, nil)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return r.sweep(f)
}

// firstLive reports whether no earlier format holds the item live.
func (r *run) firstLive(repo string, earlier []string, id string) (bool, error) {
	for _, p := range earlier {
		rec, err := r.snap.Record(repo, p, id)
		if err != nil {
			return false, err
		}
		if rec != nil && !rec.Deleted {
			return false, nil
		}
	}
	return true, nil
}

// sweep queues the removal of the format's resources that the target holds
// but the store has no live record for.
func (r *run) sweep(f *format) error {
	prefix, err := r.key(source.ResourceURL(r.e.base, f.repo.Name, f.prefix, "x"))
	if err != nil {
		return err
	}
	prefix = strings.TrimSuffix(prefix, "x")
	err = r.walk(prefix, func(o objstore.Object) error {
		id := strings.TrimPrefix(o.Key, prefix)
		rec, err := r.snap.Record(f.repo.Name, f.prefix, id)
		if err != nil {
			return err
		}
		if rec == nil || rec.Deleted {
			r.deletes = append(r.deletes, o.Key)
		}
		return nil
	})
	return err
}

// sweepMaps queues the removal of resource maps of items no format holds
// live.
func (r *run) sweepMaps(repo config.Repository) error {
	for _, mapURL := range []func(string, string, string) string{source.MapURL, source.Map02URL} {
		prefix, err := r.key(mapURL(r.e.base, repo.Name, "x"))
		if err != nil {
			return err
		}
		prefix = strings.TrimSuffix(prefix, "x")
		err = r.walk(prefix, func(o objstore.Object) error {
			none, err := r.firstLive(repo.Name, repo.MetadataPrefixes, strings.TrimPrefix(o.Key, prefix))
			if err == nil && none {
				r.deletes = append(r.deletes, o.Key)
			}
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// unexportable counts a record whose URL cannot be an object key.
func (r *run) unexportable(repo, id string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rep.Unexportable++
	r.e.totals.Unexportable.Add(1)
	if r.rep.Unexportable <= 10 {
		r.e.o.Logger.Warn("record not exported: its URL cannot be a static path", "target", r.e.o.Target, "repo", repo,
			"identifier", source.Clip(id, 200), "err", err)
	}
}

// walker is a target that can list without the order, in bounded memory
// (objstore.Dir; S3 listings stream in order anyway).
type walker interface {
	Walk(ctx context.Context, prefix string, fn func(objstore.Object) error) error
}

// walk lists the target's objects under prefix, in any order.
func (r *run) walk(prefix string, fn func(objstore.Object) error) error {
	if w, ok := r.e.st.(walker); ok {
		return w.Walk(r.ctx, prefix, fn)
	}
	return r.e.st.List(r.ctx, prefix, fn)
}
