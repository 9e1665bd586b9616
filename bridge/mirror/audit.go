package mirror

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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
// The paths the states hold are kept in memory for the walk: about a
// hundred bytes a resource.
func (m *Mirror) auditStray(ctx context.Context, rep *AuditReport, repair bool) error {
	held := map[string]bool{}
	for _, set := range m.known {
		err := m.state.Resources(ctx, set, func(res *store.MirrorResource) error {
			if !res.Deleted {
				held[filepath.Clean(res.Path)] = true
			}
			return nil
		})
		if err != nil {
			return err
		}
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
	removed := false
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == root {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") || skip[p] {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || held[rel] {
			return err
		}
		rep.Stray++
		rep.example("stray", rel)
		if repair && m.opts.Delete {
			if err := m.sink.remove(rel); err != nil {
				return err
			}
			rep.Repaired++
			removed = true
		}
		return nil
	})
	if err == nil && removed {
		_, err = m.sink.flush()
	}
	return err
}

// audit checks one set; with repair, what is missing or differs goes to
// the fetchers as it is found.
func (r *setRun) audit(ctx context.Context, rep *AuditReport, repair bool) error {
	listed := map[string]bool{}
	produce := func(send func(want) error) error {
		check := func(page string, e rsync.Entry) error {
			w := wantOf(page, e)
			listed[w.uri] = true
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
	var err error
	if repair {
		err = r.fetchAll(ctx, "repair", produce)
	} else {
		err = produce(func(want) error { return nil })
	}
	if err != nil {
		return err
	}
	var extra []want
	err = r.m.state.Resources(ctx, r.set.CapabilityList, func(res *store.MirrorResource) error {
		if !res.Deleted && !listed[res.URI] {
			rep.Extra++
			rep.example("extra", res.URI)
			extra = append(extra, want{uri: res.URI, change: "deleted"})
		}
		return nil
	})
	if err != nil || !repair {
		return err
	}
	err = r.deleteAll(ctx, extra)
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
