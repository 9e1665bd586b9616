package mirror

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/store"
)

// Audit (RS-185): the copy against the source's Resource Lists, file by
// file on disk, by length and hash. With repair, what is missing or
// differs is fetched again, and with Delete what the copy holds beyond the
// lists goes.

// AuditReport is what an audit found, per kind, over all sets.
type AuditReport struct {
	Listed    int64 `json:"listed"`    // resources the lists name
	Good      int64 `json:"good"`      // on disk as the lists describe them
	Missing   int64 `json:"missing"`   // listed, not in the copy
	Differing int64 `json:"differing"` // in the copy, but not as listed (changed since, or damaged)
	Extra     int64 `json:"extra"`     // in the copy, not listed
	// Stray files are in the copy's directory but in no set's state: left
	// by a crash the journal could not mend (a power loss), or put there
	// by hand. With repair and Delete they go.
	Stray    int64    `json:"stray"`
	Repaired int64    `json:"repaired"` // fetched again or removed by -repair
	Examples []string `json:"examples,omitempty"`
}

// maxExamples bounds the URIs an audit report names.
const maxExamples = 20

func (a *AuditReport) example(kind, uri string) {
	if len(a.Examples) < maxExamples {
		a.Examples = append(a.Examples, kind+" "+uri)
	}
}

// Audit compares the copy of every set with its Resource List, and with
// repair brings it back in line. A resource that changed at the source
// after the list was made shows as differing: audits read at rest are
// exact, audits during churn are an upper bound.
func (m *Mirror) Audit(ctx context.Context, start string, repair bool) (AuditReport, error) {
	var rep AuditReport
	sets, err := m.discover(ctx, start)
	if err != nil {
		return rep, err
	}
	if err := m.begin(ctx, sets); err != nil {
		return rep, err
	}
	for _, s := range sets {
		if s.ResourceList == "" {
			m.quirk(s.CapabilityList, "no Resource List: this set cannot be audited")
			continue
		}
		st, err := m.state.Set(s.CapabilityList)
		if err != nil {
			return rep, err
		}
		r := &setRun{m: m, set: s, st: st, batch: m.state.Batch(), live: -1}
		if err := r.audit(ctx, &rep, repair); err != nil {
			return rep, fmt.Errorf("set %s: %w", s.CapabilityList, err)
		}
	}
	return rep, m.auditStray(ctx, &rep, repair)
}

// auditStray walks the copy's directory for files no set's state holds
// (every set the state knows, not only this run's). Names starting with
// "." are never a resource's (rsync.SafeName) and are left alone, as are
// the state's directory and the change log when they are inside the copy.
// The paths the states hold, and with -repair -delete the strays to
// remove, are marks in the state's store, and directories are read a few
// hundred entries at a time: memory does not grow with the copy.
func (m *Mirror) auditStray(ctx context.Context, rep *AuditReport, repair bool) (err error) {
	held, err := m.state.Marks("held")
	if err != nil {
		return err
	}
	defer func() {
		if derr := held.Drop(); err == nil {
			err = derr
		}
	}()
	// A page of the state at a time: a read left open while the marks
	// commit would keep what they wrote in Badger's memory until it ends.
	for _, set := range m.known {
		for after := ""; ; {
			n := 0
			err := m.state.ResourcesAfter(ctx, set, after, m.auditPage, func(res *store.MirrorResource) error {
				n++
				after = res.URI
				if !res.Deleted {
					return held.Add(filepath.Clean(res.Path))
				}
				return nil
			})
			if err != nil {
				return err
			}
			if n < m.auditPage {
				break
			}
		}
	}
	if err := held.Flush(); err != nil {
		return err
	}
	// Strays are removed after the walk, not while a directory is read.
	var stray *store.MirrorMarks
	if repair && m.opts.Delete {
		if stray, err = m.state.Marks("stray"); err != nil {
			return err
		}
		defer func() {
			if derr := stray.Drop(); err == nil {
				err = derr
			}
		}()
	}
	skip := map[string]bool{}
	for _, p := range []string{m.stateDir, m.opts.Log} {
		if a, err := filepath.Abs(p); p != "" && err == nil {
			skip[a] = true
		}
	}
	root, err := filepath.Abs(m.opts.Dir)
	if err != nil {
		return err
	}
	var chunk []string
	check := func() error {
		err := held.Check(chunk, func(rel string, ok bool) error {
			if ok {
				return nil
			}
			rep.Stray++
			rep.example("stray", rel)
			if stray != nil {
				return stray.Add(rel)
			}
			return nil
		})
		chunk = chunk[:0]
		return err
	}
	err = walkFiles(ctx, root, root, skip, func(rel string) error {
		if chunk = append(chunk, rel); len(chunk) == m.auditPage {
			return check()
		}
		return nil
	})
	if err == nil {
		err = check()
	}
	if err != nil || stray == nil || rep.Stray == 0 {
		return err
	}
	if err := stray.Flush(); err != nil {
		return err
	}
	err = stray.Each(ctx, func(rel string) error {
		if err := m.sink.remove(rel); err != nil {
			return err
		}
		rep.Repaired++
		return nil
	})
	if err == nil {
		_, err = m.sink.flush()
	}
	return err
}

// walkFiles calls fn with the path below root of every file under dir
// that is not a directory, reading each directory a few hundred entries at
// a time (a directory of a million records is never listed at once), in
// the order the file system gives. Names starting with "." and the
// absolute paths in skip are passed over, directories with all below them.
func walkFiles(ctx context.Context, root, dir string, skip map[string]bool, fn func(rel string) error) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		entries, rerr := f.ReadDir(256)
		for _, e := range entries {
			if err := ctx.Err(); err != nil {
				return err
			}
			p := filepath.Join(dir, e.Name())
			if strings.HasPrefix(e.Name(), ".") || skip[p] {
				continue
			}
			if e.IsDir() {
				if err := walkFiles(ctx, root, p, skip, fn); err != nil {
					return err
				}
				continue
			}
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			if err := fn(rel); err != nil {
				return err
			}
		}
		if errors.Is(rerr, io.EOF) {
			return nil
		}
		if rerr != nil {
			return rerr
		}
	}
}

// audit checks one set; with repair, what is missing or differs goes to
// the fetchers as it is found.
func (r *setRun) audit(ctx context.Context, rep *AuditReport, repair bool) (err error) {
	// The URIs the lists name are marks in the state's store, not a map:
	// memory does not grow with the set.
	listed, err := r.m.state.Marks("listed")
	if err != nil {
		return err
	}
	defer func() {
		if derr := listed.Drop(); err == nil {
			err = derr
		}
	}()
	produce := func(send func(want) error) error {
		check := func(page string, e rsync.Entry) error {
			w := wantOf(page, e)
			if err := listed.Add(w.uri); err != nil {
				return err
			}
			rep.Listed++
			cur, err := r.m.state.Resource(r.set.CapabilityList, w.uri)
			if err != nil {
				return err
			}
			switch v, err := r.onDisk(cur, w); {
			case err != nil:
				return err
			case v == good:
				rep.Good++
				return nil
			case v == missing:
				rep.Missing++
				rep.example("missing", w.uri)
			default:
				rep.Differing++
				rep.example("differing", w.uri)
			}
			return send(w)
		}
		var pages []string
		_, _, err := r.m.f.stream(ctx, r.set.ResourceList, "", func(d *rsync.Document, e rsync.Entry) error {
			if d.Index {
				pages = append(pages, resolve(r.set.ResourceList, e.Loc))
				return nil
			}
			return check(r.set.ResourceList, e)
		})
		for _, p := range pages {
			if err != nil {
				break
			}
			_, _, err = r.m.f.stream(ctx, p, "", func(_ *rsync.Document, e rsync.Entry) error { return check(p, e) })
		}
		return err
	}
	r.failed = 0
	before := r.m.Counts()
	if repair {
		err = r.fetchAll(ctx, "repair", produce)
	} else {
		err = produce(func(want) error { return nil })
	}
	if err == nil {
		err = listed.Flush()
	}
	if err != nil {
		return err
	}
	// What the state holds and no list named, a page of the state at a
	// time: with repair, each page's extras are deleted before the next
	// page is read.
	for after := ""; ; {
		var live []string
		n := 0
		err = r.m.state.ResourcesAfter(ctx, r.set.CapabilityList, after, r.m.auditPage, func(res *store.MirrorResource) error {
			n++
			after = res.URI
			if !res.Deleted {
				live = append(live, res.URI)
			}
			return nil
		})
		var extra []want
		if err == nil {
			err = listed.Check(live, func(uri string, ok bool) error {
				if !ok {
					rep.Extra++
					rep.example("extra", uri)
					if repair {
						extra = append(extra, want{uri: uri, change: "deleted"})
					}
				}
				return nil
			})
		}
		if err == nil && len(extra) > 0 {
			err = r.deleteAll(ctx, extra)
		}
		if err != nil || n < r.m.auditPage {
			break
		}
	}
	if !repair {
		return err
	}
	after := r.m.Counts()
	rep.Repaired += after.Created + after.Updated + after.Deleted - before.Created - before.Updated - before.Deleted
	if cerr := r.commit(); err == nil {
		err = cerr
	}
	if err == nil && r.failed > 0 {
		err = fmt.Errorf("%d resources could not be repaired (see the log)", r.failed)
	}
	return err
}

// defaultAuditPage is how many resources of the state an audit reads at a
// time when it looks for extras.
const defaultAuditPage = 1000

// verdict is what an audit found of one resource.
type verdict int

const (
	good verdict = iota
	missing
	differing
)

// onDisk reads the copy's file of a resource: missing when the copy has
// none, good when its length and the listed hash (md5 or sha-256,
// recomputed) agree with the list, else differing.
func (r *setRun) onDisk(cur *store.MirrorResource, w want) (verdict, error) {
	if cur == nil || cur.Deleted {
		return missing, nil
	}
	n, md, sh, err := sumFile(filepath.Join(r.m.opts.Dir, cur.Path))
	if errors.Is(err, os.ErrNotExist) {
		return missing, nil
	}
	if err != nil {
		return differing, err
	}
	same := false
	switch {
	case w.hasLength && n != w.length:
	case w.md5 != "":
		same = md == w.md5
	case w.sha != "":
		same = sh == w.sha
	default:
		// No hash listed: the length, and the lastmod the copy recorded.
		same = w.hasLength && (w.lastmod.IsZero() || cur.LastMod.Equal(w.lastmod))
	}
	if same {
		return good, nil
	}
	return differing, nil
}
