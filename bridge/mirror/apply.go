package mirror

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/store"
)

// setRun is one run over one resource set: its state, and the batch of
// state that commits with the next batch of files.
type setRun struct {
	m       *Mirror
	set     Set
	st      store.MirrorSet
	batch   *store.MirrorBatch
	pending int
	live    int // resources of the set in the copy, once counted (-1: not yet)
	deleted int // files this run deleted
	failed  int // resources not taken in the current step: it does not count as done
}

// want is a resource as the source describes it.
type want struct {
	uri       string
	lastmod   time.Time
	length    int64
	hasLength bool
	md5, sha  string
	change    string // a Change List's created, updated, deleted; "" in other lists
	datetime  time.Time
}

func wantOf(base string, e rsync.Entry) want {
	w := want{uri: resolve(base, e.Loc), lastmod: e.LastMod}
	if md := e.MD; md != nil {
		w.length, w.hasLength = md.Length, md.HasLength || md.Length > 0
		w.md5, w.sha = rsync.Hashes(md.Hash)
		w.change, w.datetime = md.Change, md.DateTime
		if w.lastmod.IsZero() && w.change != "" {
			w.lastmod = md.DateTime
		}
	}
	return w
}

// holds reports whether the copy already has the resource in this set as
// the source describes it.
func (r *setRun) holds(w want) (bool, error) {
	cur, err := r.m.state.Resource(r.set.CapabilityList, w.uri)
	return err == nil && same(cur, w), err
}

// same reports whether a resource the copy holds is the one the source
// describes: same hash (md5 or sha-256) and length, or, when the source
// gives no hash, the same length and lastmod.
func same(cur *store.MirrorResource, w want) bool {
	if cur == nil || cur.Deleted || w.hasLength && cur.Length != w.length {
		return false
	}
	switch {
	case w.md5 != "" && cur.MD5 != "":
		return cur.MD5 == w.md5
	case w.sha != "" && cur.SHA256 != "":
		return cur.SHA256 == w.sha
	}
	return w.hasLength && !w.lastmod.IsZero() && cur.LastMod.Equal(w.lastmod)
}

// elsewhere finds the resource, as the source describes it, in another
// set of this run: sets overlap (rsbridge's all-records set holds every
// record of its OAI sets), and one file serves them all.
func (r *setRun) elsewhere(w want) (*store.MirrorResource, error) {
	for _, s := range r.m.sets {
		if s.CapabilityList == r.set.CapabilityList {
			continue
		}
		cur, err := r.m.state.Resource(s.CapabilityList, w.uri)
		if err != nil || same(cur, w) {
			return cur, err
		}
	}
	return nil, nil
}

// heldElsewhere reports whether another set still holds the resource, so
// its file must stay when this set deletes it. Every set the state knows is
// asked: one a -sets filter leaves out of the run holds its files until it
// runs and applies its own changes.
func (r *setRun) heldElsewhere(uri string) (bool, error) {
	for _, s := range r.m.known {
		if s == r.set.CapabilityList {
			continue
		}
		cur, err := r.m.state.Resource(s, uri)
		if err != nil || cur != nil && !cur.Deleted {
			return err == nil, err
		}
	}
	return false, nil
}

// share records a resource another set already holds, without fetching
// it; it reports whether it could.
func (r *setRun) share(w want) (bool, error) {
	cur, err := r.elsewhere(w)
	if err != nil || cur == nil {
		return false, err
	}
	return true, r.record(got{w: w, rel: cur.Path, n: cur.Length, md5: cur.MD5, sha: cur.SHA256, from: "shared"})
}

// got is a resource written to its place, waiting for the state.
type got struct {
	w    want
	rel  string
	n    int64
	md5  string
	sha  string
	from string
	err  error // the resource could not be taken (it is counted, the run goes on)
}

// errMismatch is a resource whose bytes disagree with the list that named
// it.
var errMismatch = errors.New("not as the list describes it")

// superseded reports a resource that is not as its list described it, or
// is gone: most likely it changed after the list was made (a later change
// will describe it), else the source is wrong about it (an audit shows
// it). Either way a retry of the same list cannot fix it.
func superseded(err error) bool {
	return errors.Is(err, errMismatch) || errors.Is(err, errTooLong) || notFound(err)
}

// write copies a resource's bytes from rd to its place and checks them
// against what the source says.
func (r *setRun) write(w want, rd io.Reader, from string) got {
	g := got{w: w, from: from}
	rel, err := Path(w.uri)
	if err != nil {
		g.err = err
		return g
	}
	g.rel = rel
	limit := r.m.opts.MaxFileBytes
	if w.hasLength {
		limit = w.length
	}
	f, err := r.m.sink.create(w.uri, rel, limit)
	if err != nil {
		g.err = err
		return g
	}
	if g.n, err = io.Copy(f, rd); err != nil {
		f.abandon()
		g.err = fmt.Errorf("%s: %w", w.uri, err)
		return g
	}
	g.md5, g.sha = f.sums()
	switch {
	case w.hasLength && g.n != w.length:
		err = fmt.Errorf("%s: %w: %d bytes, the source says %d", w.uri, errMismatch, g.n, w.length)
	case w.md5 != "" && g.md5 != w.md5:
		err = fmt.Errorf("%s: %w: md5 %s, the source says %s", w.uri, errMismatch, g.md5, w.md5)
	case w.sha != "" && g.sha != w.sha:
		err = fmt.Errorf("%s: %w: sha-256 %s, the source says %s", w.uri, errMismatch, g.sha, w.sha)
	}
	if err != nil {
		f.abandon()
		g.err = err
		return g
	}
	if g.err = f.commit(w.lastmod); g.err == nil {
		r.m.count(func(c *Counts) { c.Bytes += g.n })
	}
	return g
}

// record enters a written resource into the state and the change log; the
// batch commits every opts.Batch files.
func (r *setRun) record(g got) error {
	if g.err != nil && (g.from == "dump" || g.from == "change-dump") {
		r.m.quirk(r.set.CapabilityList, "a package file disagrees with its manifest; it is fetched by GET: "+g.err.Error())
		return nil
	}
	if g.err != nil && superseded(g.err) {
		// The resource changed (or went) after the list that named it was
		// made: a later change describes what it is now, and is applied
		// when it is read. Nothing is kept that disagrees with its list.
		r.m.count(func(c *Counts) { c.Superseded++ })
		r.m.log.Debug("resource not as listed: changed since, or gone; a later change brings it", "set", r.set.CapabilityList, "err", g.err)
		return nil
	}
	if g.err != nil {
		r.failed++
		r.m.count(func(c *Counts) { c.Failed++ })
		r.m.log.Warn("resource not taken; the next run tries again", "set", r.set.CapabilityList, "err", g.err)
		return nil
	}
	cur, err := r.m.state.Resource(r.set.CapabilityList, g.w.uri)
	if err != nil {
		return err
	}
	lastmod := g.w.lastmod
	if g.from == "shared" {
		// The file is the other set's: its time is the one it was given.
		if other, err := r.elsewhere(g.w); err == nil && other != nil {
			lastmod = other.LastMod
		}
	}
	change := "created"
	if cur != nil && !cur.Deleted {
		change = "updated"
	}
	now := r.m.now().UTC()
	res := &store.MirrorResource{URI: g.w.uri, Path: g.rel, Length: g.n, MD5: g.md5, SHA256: g.sha, LastMod: lastmod, From: g.from, Applied: now}
	if err := r.batch.PutResource(r.set.CapabilityList, res); err != nil {
		return err
	}
	r.m.sink.ahead.inBatch(g.rel)
	if err := r.m.sink.note(logLine{Change: change, URI: g.w.uri, Path: g.rel, MD5: g.md5, SHA256: g.sha, Length: g.n, Time: now, From: g.from}); err != nil {
		return err
	}
	r.m.count(func(c *Counts) {
		if change == "created" {
			c.Created++
		} else {
			c.Updated++
		}
		switch g.from {
		case "dump", "change-dump":
			c.FromDump++
		case "shared":
			c.Shared++
		default:
			c.Fetched++
		}
	})
	if r.live >= 0 && change == "created" {
		r.live++
	}
	r.pending++
	if r.pending >= r.m.opts.Batch {
		return r.commit()
	}
	return nil
}

// commit makes the change log's new lines durable, then commits the state
// with the log's length and the set's progress.
func (r *setRun) commit() error {
	n, err := r.m.sink.flush()
	if err != nil {
		return fmt.Errorf("change log: %w", err)
	}
	if err := r.batch.PutSet(r.set.CapabilityList, r.st); err != nil {
		return err
	}
	if r.m.opts.Log != "" {
		if err := r.batch.PutLog(store.MirrorLog{Bytes: n}); err != nil {
			return err
		}
	}
	r.pending = 0
	if err := r.batch.Commit(); err != nil {
		return err
	}
	if err := r.m.sink.ahead.committed(); err != nil {
		return err
	}
	r.m.runHook(r.m.sink.takeBatch())
	return nil
}

// job is one resource for the pool: bytes already read (a package
// file), a result already computed, or nothing (a GET).
type job struct {
	w    want
	from string
	body []byte
	done *got
}

// take writes one job's resource into its place, unless another set of
// the run holds it as the source describes it: then its file serves this
// set too.
func (r *setRun) take(ctx context.Context, j job) got {
	if j.done != nil {
		return *j.done
	}
	if cur, err := r.elsewhere(j.w); err != nil {
		return got{w: j.w, from: j.from, err: err}
	} else if cur != nil {
		return got{w: j.w, rel: cur.Path, n: cur.Length, md5: cur.MD5, sha: cur.SHA256, from: "shared"}
	}
	if j.body != nil {
		return r.write(j.w, bytes.NewReader(j.body), j.from)
	}
	resp, err := r.m.f.get(ctx, j.w.uri, nil)
	if err != nil {
		return got{w: j.w, from: j.from, err: err}
	}
	defer resp.Body.Close()
	return r.write(j.w, resp.Body, j.from)
}

// fetchAll GETs what produce sends (see pool).
func (r *setRun) fetchAll(ctx context.Context, from string, produce func(send func(want) error) error) error {
	return r.pool(ctx, func(send func(job) error) error {
		return produce(func(w want) error { return send(job{w: w, from: from}) })
	})
}

// pool takes what produce sends, opts.Workers at a time (files are
// created in parallel: one at a time is slow on common file systems), and
// records each in the state as it arrives. A resource that cannot be taken
// is counted and left for the next run; a state or log failure stops it.
func (r *setRun) pool(ctx context.Context, produce func(send func(job) error) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs, results := make(chan job), make(chan got)
	var prodErr error
	var producer, workers sync.WaitGroup
	producer.Go(func() {
		defer close(jobs)
		prodErr = produce(func(j job) error {
			select {
			case jobs <- j:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	})
	for range r.m.opts.Workers {
		workers.Go(func() {
			for j := range jobs {
				select {
				case results <- r.take(ctx, j):
				case <-ctx.Done():
					return
				}
			}
		})
	}
	var closer sync.WaitGroup
	closer.Go(func() { workers.Wait(); close(results) })
	var err error
	for g := range results {
		if err == nil {
			if err = r.record(g); err != nil {
				cancel()
			}
		}
	}
	closer.Wait()
	producer.Wait()
	return errors.Join(err, prodErr)
}
