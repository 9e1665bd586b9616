package mirror

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/rsync/zipstream"
)

// changeDumps lists the set's Change Dump packages by the interval they
// cover: a closed Change List with a package of the same from and until is
// applied from the package, one download instead of a GET per change.
func (r *setRun) changeDumps(ctx context.Context) (map[[2]time.Time]string, error) {
	out := map[[2]time.Time]string{}
	if r.set.ChangeDump == "" {
		return out, nil
	}
	doc, _, err := r.m.f.doc(ctx, r.set.ChangeDump)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		r.m.quirk(r.set.ChangeDump, "the Change Dump cannot be read; changes come from the Change Lists: "+err.Error())
		return out, nil
	}
	entries := doc.Entries
	if doc.Index {
		entries = nil
		for _, e := range doc.Entries {
			part, _, err := r.m.f.doc(ctx, resolve(r.set.ChangeDump, e.Loc))
			if err != nil {
				return nil, err
			}
			entries = append(entries, part.Entries...)
		}
	}
	for _, e := range entries {
		if e.MD != nil && !e.MD.From.IsZero() && !e.MD.Until.IsZero() {
			out[[2]time.Time{e.MD.From.UTC(), e.MD.Until.UTC()}] = resolve(r.set.ChangeDump, e.Loc)
		}
	}
	return out, nil
}

// fromChangeDump applies a closed Change List from its Change Dump
// package: the last change of each resource at or after Through, its
// bytes from the package as they were at that change; what the package
// lacks or got wrong is fetched by GET. done is false when the package
// cannot be used at all (the caller reads the Change List instead).
func (r *setRun) fromChangeDump(ctx context.Context, pkg, listLoc string, until time.Time) (done bool, err error) {
	resp, err := r.m.f.get(ctx, pkg, nil)
	if err != nil {
		r.m.quirk(pkg, "a Change Dump package cannot be fetched; the Change List is read instead: "+err.Error())
		return false, ctx.Err()
	}
	defer resp.Body.Close()
	z := zipstream.NewReader(resp.Body)
	latest, order, err := r.changeManifest(z, pkg)
	if err != nil {
		r.m.quirk(pkg, "a Change Dump package without a usable manifest.xml; the Change List is read instead: "+err.Error())
		return false, nil
	}
	r.failed = 0
	byPath := map[string]string{} // path of a wanted file → its resource
	for uri, w := range latest {
		if w.change != "deleted" && w.path != "" {
			byPath[w.path] = uri
		}
	}
	err = r.pool(ctx, func(send func(job) error) error {
		err := r.unpackFiles(ctx, z, pkg, "change-dump", func(name string) (want, bool) {
			uri, ok := byPath["/"+name]
			return latest[uri].want, ok
		}, send)
		if err != nil && ctx.Err() == nil {
			r.m.quirk(pkg, "a Change Dump package broke off; the rest comes by GET: "+err.Error())
			return nil
		}
		return err
	})
	if err != nil {
		return true, err
	}
	if err := r.commit(); err != nil { // holds sees what the package gave
		return true, err
	}
	// What the package did not hold, or held wrong: by GET.
	var deletions []want
	err = r.fetchAll(ctx, "change", func(send func(want) error) error {
		for _, uri := range order {
			w := latest[uri]
			if w.change == "deleted" {
				deletions = append(deletions, w.want)
				continue
			}
			if ok, err := r.holds(w.want); err != nil || ok {
				if ok {
					continue
				}
				return err
			}
			if err := send(w.want); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = r.deleteAll(ctx, deletions)
	}
	if err == nil && r.failed > 0 {
		err = fmt.Errorf("%s: %d resources could not be taken (see the log); the next run applies this list again", listLoc, r.failed)
	}
	if err != nil {
		r.commit()
		return true, err
	}
	r.advance(listLoc, until, until)
	return true, r.commit()
}

// dumpChange is a change as a Change Dump Manifest gives it.
type dumpChange struct {
	want
	path string
}

// changeManifest reads the package's manifest.xml: the last change of each
// resource at or after Through, and the resources in first-change order.
func (r *setRun) changeManifest(z *zipstream.Reader, pkg string) (map[string]dumpChange, []string, error) {
	e, err := z.Next()
	if err != nil {
		return nil, nil, err
	}
	if e.Name != "manifest.xml" {
		return nil, nil, fmt.Errorf("the first file is %q, not manifest.xml", e.Name)
	}
	latest := map[string]dumpChange{}
	var order []string
	m, err := rsync.Stream(io.LimitReader(z, r.m.opts.MaxDocBytes), func(_ *rsync.Document, me rsync.Entry) error {
		w := wantOf(pkg, me)
		if w.change == "" || me.MD == nil || !w.datetime.IsZero() && w.datetime.Before(r.st.Through) {
			return nil
		}
		if _, seen := latest[w.uri]; !seen {
			order = append(order, w.uri)
		}
		latest[w.uri] = dumpChange{want: w, path: me.MD.Path}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if m.MD.Capability != rsync.ChangeDumpManifest {
		return nil, nil, fmt.Errorf("manifest capability %q, want changedump-manifest", m.MD.Capability)
	}
	return latest, order, nil
}
