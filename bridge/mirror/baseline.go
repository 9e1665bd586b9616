package mirror

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/rsync/zipstream"
)

// baseline takes the set's first copy: the Resource Dump's packages when
// there is a dump, then the Resource List for whatever the copy still
// lacks or holds differently (RS-183). Changes after the baseline's at are
// applied from the Change Lists; applying one the copy already has costs
// a comparison of hashes, so an at taken early loses nothing.
func (r *setRun) baseline(ctx context.Context) error {
	var at time.Time
	if r.set.ResourceDump != "" {
		dumpAt, err := r.fromDump(ctx)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			r.m.quirk(r.set.ResourceDump, "the Resource Dump cannot be used, the Resource List is read instead: "+err.Error())
		default:
			at = dumpAt
		}
	}
	if r.set.ResourceList == "" {
		if at.IsZero() {
			return errors.New("the Capability List offers neither a Resource List nor a usable Resource Dump: no baseline can be taken")
		}
		r.m.quirk(r.set.CapabilityList, "no Resource List: the baseline is the dump alone")
	} else {
		r.failed = 0
		listAt, err := r.fromList(ctx)
		if err != nil {
			return err
		}
		if at.IsZero() || listAt.Before(at) {
			at = listAt
		}
		if r.failed > 0 {
			r.commit() // what was taken stays; the next run takes the baseline again
			return fmt.Errorf("%d resources of the Resource List could not be taken (see the log); the next run tries again", r.failed)
		}
	}
	r.st.BaselineAt, r.st.Through, r.st.BaselineDone, r.st.Packages = at, at, true, nil
	return r.commit()
}

// fromDump unpacks the packages of the Resource Dump (or its index) the
// copy has not yet taken whole, and returns the dump's at.
func (r *setRun) fromDump(ctx context.Context) (time.Time, error) {
	doc, _, err := r.m.f.doc(ctx, r.set.ResourceDump)
	if err != nil {
		return time.Time{}, err
	}
	if doc.MD.Capability != rsync.ResourceDump {
		return time.Time{}, fmt.Errorf("capability %q, want resourcedump", doc.MD.Capability)
	}
	at, packages := doc.MD.At, doc.Entries
	if doc.Index {
		packages = nil
		for _, e := range doc.Entries {
			part, _, err := r.m.f.doc(ctx, resolve(r.set.ResourceDump, e.Loc))
			if err != nil {
				return time.Time{}, err
			}
			packages = append(packages, part.Entries...)
		}
	}
	if at.IsZero() {
		return time.Time{}, errors.New("the Resource Dump has no at (RS-084)")
	}
	for _, p := range packages {
		loc := resolve(r.set.ResourceDump, p.Loc)
		if slices.Contains(r.st.Packages, loc) {
			continue
		}
		if err := r.unpack(ctx, loc); err != nil {
			if ctx.Err() != nil {
				return time.Time{}, ctx.Err()
			}
			r.m.quirk(loc, "a package could not be read whole; the Resource List covers the rest: "+err.Error())
			continue
		}
		r.st.Packages = append(r.st.Packages, loc)
		if err := r.commit(); err != nil {
			return time.Time{}, err
		}
	}
	return at, nil
}

// unpack streams one package: manifest.xml first, then each file written
// to its resource's place and checked against the manifest's length and
// hashes. A file the manifest does not name, or that disagrees with it, is
// left to the Resource List.
func (r *setRun) unpack(ctx context.Context, loc string) error {
	resp, err := r.m.f.get(ctx, loc, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	z := zipstream.NewReader(resp.Body)
	e, err := z.Next()
	if err != nil {
		return err
	}
	if e.Name != "manifest.xml" {
		return fmt.Errorf("the first file is %q, not manifest.xml (RS-092)", e.Name)
	}
	files := map[string]want{}
	_, err = rsync.Stream(io.LimitReader(z, r.m.opts.MaxDocBytes), func(_ *rsync.Document, me rsync.Entry) error {
		if me.MD == nil || me.MD.Path == "" {
			r.m.quirk(loc, "a manifest entry without rs:md path (RS-096)")
			return nil
		}
		files[me.MD.Path] = wantOf(loc, me)
		return nil
	})
	if err != nil {
		return fmt.Errorf("manifest.xml: %w", err)
	}
	return r.pool(ctx, func(send func(job) error) error {
		return r.unpackFiles(ctx, z, loc, "dump", func(name string) (want, bool) {
			w, ok := files["/"+name]
			return w, ok
		}, send)
	})
}

// inMemory is the largest package file handed to the pool as bytes;
// larger ones are written as they stream.
const inMemory = 1 << 20

// unpackFiles reads a package's files after manifest.xml and sends each
// the manifest names (lookup) and the copy lacks to the pool: small ones
// as bytes, so several are created at once, large ones written as they
// stream. Unsafe names and files the manifest does not name are skipped.
func (r *setRun) unpackFiles(ctx context.Context, z *zipstream.Reader, loc, from string, lookup func(string) (want, bool), send func(job) error) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		e, err := z.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		w, ok := lookup(e.Name)
		if !ok || strings.HasPrefix(e.Name, "/") || slices.Contains(strings.Split(e.Name, "/"), "..") {
			r.m.quirk(loc, fmt.Sprintf("a package file the manifest does not name, or an unsafe name, skipped: %q", e.Name))
			continue
		}
		if held, err := r.holds(w); err != nil {
			return err
		} else if held {
			// A package read again after a cut-short run: what the copy
			// committed is not written twice.
			r.m.count(func(c *Counts) { c.Unchanged++ })
			continue
		}
		j := job{w: w, from: from}
		buf, err := io.ReadAll(io.LimitReader(z, inMemory+1))
		switch {
		case err != nil:
			g := got{w: w, from: from, err: err}
			j.done = &g
		case len(buf) <= inMemory:
			j.body = buf
		default:
			g := r.write(w, io.MultiReader(bytes.NewReader(buf), z), from)
			j.done = &g
		}
		if err := send(j); err != nil {
			return err
		}
		if err != nil && !errors.Is(err, zipstream.ErrChecksum) {
			return err // the stream is broken: the rest of the package is lost
		}
	}
}

// fromList reads the Resource List (or each page of its index) as it
// streams and GETs every resource the copy lacks or holds differently; it
// returns the earliest at of what it read.
func (r *setRun) fromList(ctx context.Context) (time.Time, error) {
	if err := r.commit(); err != nil { // the dump's files are visible to holds
		return time.Time{}, err
	}
	var at time.Time
	earliest := func(t time.Time) {
		if !t.IsZero() && (at.IsZero() || t.Before(at)) {
			at = t
		}
	}
	err := r.fetchAll(ctx, "list", func(send func(want) error) error {
		var pages []string
		doc, _, err := r.m.f.stream(ctx, r.set.ResourceList, "", func(d *rsync.Document, e rsync.Entry) error {
			if d.MD.Capability != rsync.ResourceList {
				return fmt.Errorf("capability %q, want resourcelist", d.MD.Capability)
			}
			if d.Index {
				pages = append(pages, resolve(r.set.ResourceList, e.Loc))
				return nil
			}
			return r.sendMissing(r.set.ResourceList, e, send)
		})
		if err != nil {
			return err
		}
		earliest(doc.MD.At)
		for _, p := range pages {
			page, _, err := r.m.f.stream(ctx, p, "", func(_ *rsync.Document, e rsync.Entry) error { return r.sendMissing(p, e, send) })
			if err != nil {
				return err
			}
			earliest(page.MD.At)
		}
		return nil
	})
	if err != nil {
		return time.Time{}, err
	}
	if at.IsZero() {
		r.m.quirk(r.set.ResourceList, "a Resource List without at (RS-070): changes are applied from the oldest Change List")
	}
	return at, r.commit()
}

// sendMissing sends a list entry to be fetched unless the copy holds it.
func (r *setRun) sendMissing(page string, e rsync.Entry, send func(want) error) error {
	w := wantOf(page, e)
	ok, err := r.holds(w)
	if err != nil {
		return err
	}
	if ok {
		r.m.count(func(c *Counts) { c.Unchanged++ })
		return nil
	}
	return send(w)
}
