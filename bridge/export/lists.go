package export

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/rsbridge/rsbridge/bridge/export/objstore"
	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/store"
)

// Cache-Control of documents that never change again (closed Change
// Lists, dump packages and manifests).
const immutable = "public, max-age=31536000, immutable"

// short is the Cache-Control of everything that changes.
func (r *run) short() string { return fmt.Sprintf("public, max-age=%d", int(r.e.o.MaxAge.Seconds())) }

// putDoc publishes a document unless the target already holds its bytes.
func (r *run) putDoc(u string, doc source.Doc) error {
	k, prev, known, err := r.lookup(u)
	if err != nil {
		return err
	}
	sp := newSpool(r.e.o.TempDir)
	defer sp.close()
	if err := doc.Write(sp); err != nil {
		return fmt.Errorf("render %s: %w", u, err)
	}
	sum := sp.sum()
	if err := r.keep(k); err != nil {
		return err
	}
	if known && prev.SHA256 == sum {
		r.skipped()
		return nil
	}
	body, err := sp.reader()
	if err != nil {
		return err
	}
	cache := r.short()
	if doc.Final {
		cache = immutable
	}
	if err := r.e.st.Put(r.ctx, k, body, sp.n, objstore.Meta{ContentType: cmp.Or(doc.Type, source.XMLType), CacheControl: cache}); err != nil {
		return err
	}
	r.pool.counted(1, sp.n, 0)
	r.states[objectName(k)] = published{SHA256: sum, Final: doc.Final}
	return nil
}

// published reports whether the state knows the document at u as
// published (a set published since the last run has nothing yet).
func (r *run) published(u string) bool {
	_, _, known, err := r.lookup(u)
	return err == nil && known
}

// lookup finds the object a URL is published as, and what the state says
// of it (known: published before).
func (r *run) lookup(u string) (k string, prev published, known bool, err error) {
	if k, err = r.key(u); err != nil {
		return "", published{}, false, err
	}
	known, err = r.state(objectName(k), &prev)
	return k, prev, known, err
}

// keep notes that the run publishes an object, and cancels its removal if
// one was scheduled (a set published again within the grace period).
func (r *run) keep(k string) error {
	r.current[k] = true
	if _, pending := r.states[garbageName(k)]; pending {
		delete(r.states, garbageName(k))
	}
	var g garbage
	known, err := r.state(garbageName(k), &g)
	if known {
		r.drop = append(r.drop, garbageName(k))
	}
	return err
}

// keepSet cancels every removal scheduled under a set's directory: a set
// published again keeps the documents the state still knows as published.
func (r *run) keepSet(rs source.Set) error {
	k, err := r.key(rs.CapabilityList())
	if err != nil {
		return err
	}
	dir := strings.TrimSuffix(k, "capabilitylist.xml")
	return r.snap.ExportStates(r.e.o.Target, garbageName(dir), func(name string, _ []byte) error {
		r.drop = append(r.drop, name)
		return nil
	})
}

func (r *run) skipped() {
	r.rep.Skipped++
	r.e.totals.Skipped.Add(1)
}

// dumpPackages uploads the dump packages and manifest copies the sets list
// that the target does not hold yet.
func (r *run) dumpPackages() error {
	for _, rs := range r.sets {
		if !r.e.src.Dumped(rs) {
			continue
		}
		var pkgs []store.Package
		dump, err := r.snap.ResourceDump(rs.Repo.Name, rs.Prefix, rs.Spec)
		if err != nil {
			return err
		}
		if dump != nil {
			pkgs = append(pkgs, dump.Packages...)
		}
		if err := r.snap.ChangeDumps(rs.Repo.Name, rs.Prefix, rs.Spec, func(_ string, p store.Package) error {
			pkgs = append(pkgs, p)
			return nil
		}); err != nil {
			return err
		}
		for _, p := range pkgs {
			for _, f := range []struct{ file, typ, sum string }{{p.File, "application/zip", p.SHA256}, {p.Manifest, source.XMLType, ""}} {
				if err := r.dumpFile(rs, f.file, f.typ, f.sum); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (r *run) dumpFile(rs source.Set, file, typ, sum string) error {
	k, err := r.key(rs.DumpFile(file))
	if err != nil {
		return err
	}
	r.dumps[k] = struct{}{}
	if err := r.keep(k); err != nil {
		return err
	}
	var prev published
	if known, err := r.state(dumpName(k), &prev); err != nil || known {
		return err
	}
	f, err := os.Open(filepath.Join(r.e.o.DumpDir, file))
	if err != nil {
		return fmt.Errorf("%s lists the dump file %s, which is not in the dump directory %s (run the export with serve's data_dir, where serve builds the dumps): %w",
			rs.Path(), file, r.e.o.DumpDir, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if err := r.e.st.Put(r.ctx, k, f, info.Size(), objstore.Meta{ContentType: typ, CacheControl: immutable}); err != nil {
		return err
	}
	r.pool.counted(1, info.Size(), 0)
	r.states[dumpName(k)] = published{SHA256: sum, Final: true}
	return nil
}

// lists publishes, per set, what the indexes link: Resource List pages,
// Change Lists, and the documents the Capability List links directly (the
// notification channel, the dump documents, the about page).
func (r *run) lists() error {
	for _, rs := range r.sets {
		f := r.format(rs.Repo.Name, rs.Prefix)
		if err := r.resourcePages(f, rs); err != nil {
			return fmt.Errorf("%s: %w", rs.Path(), err)
		}
		if err := r.changeLists(f, rs); err != nil {
			return fmt.Errorf("%s: %w", rs.Path(), err)
		}
		if err := r.setDocs(f, rs); err != nil {
			return fmt.Errorf("%s: %w", rs.Path(), err)
		}
	}
	return nil
}

// setDocs publishes the documents a Capability List links besides the
// lists' indexes.
func (r *run) setDocs(f *format, rs source.Set) error {
	if !f.quiet() || !r.published(rs.About()) {
		if err := r.putSetDoc(rs, rs.About(), r.e.src.About); err != nil {
			return err
		}
	}
	if r.e.src.Config().Notification.On() { // the notifier moves it without an event
		if err := r.putSetDoc(rs, rs.Topic(), r.e.src.Channel); err != nil {
			return err
		}
	}
	if !r.e.src.Dumped(rs) { // dump documents: packages come and go (retention) without an event
		return nil
	}
	if doc, err := r.e.src.ResourceDump(r.snap, rs); err == nil {
		if err := r.putDoc(rs.ResourceDump(), doc); err != nil {
			return err
		}
	} else if se, ok := err.(*source.Error); !ok || se.Code != source.CodeNotYet {
		return err
	}
	// A set with no change yet has an empty Change Dump from when its format
	// was first harvested: a stable from, so the document is not rewritten
	// every run (serve says from now).
	doc, err := r.e.src.ChangeDump(r.snap, rs, cmp.Or(f.ctr.Began, r.snap.Now()))
	if err != nil {
		return err
	}
	return r.putDoc(rs.ChangeDump(), doc)
}

// changeLists publishes the set's Change Lists not published closed yet;
// the open one only when its format changed.
func (r *run) changeLists(f *format, rs source.Set) error {
	lists, err := r.snap.ChangeLists(rs.Repo.Name, rs.Prefix, rs.Spec)
	if err != nil {
		return err
	}
	if err := r.pruned(rs, lists); err != nil {
		return err
	}
	for _, l := range lists {
		_, prev, known, err := r.lookup(rs.ChangeList(l.ID))
		if err != nil {
			return err
		}
		if known && (prev.Final || f.quiet()) {
			continue
		}
		doc, err := r.e.src.ChangeList(r.snap, rs, l.ID)
		if err != nil {
			return err
		}
		if err := r.putDoc(rs.ChangeList(l.ID), doc); err != nil {
			return err
		}
	}
	return nil
}

// resourcePages publishes the set's Resource List pages that changed: the
// pages holding records with events, every page when the format is
// exported whole, pages not published yet. A page grown past what one
// sitemap should hold is split; the new pages get new names (their
// ranges'), and the old one stays published for the grace period, so a
// destination that read the old index still finds every record in it.
func (r *run) resourcePages(f *format, rs source.Set) error {
	name := pagesName(rs)
	pg := &pages{}
	known, err := r.state(name, pg)
	if err != nil {
		return err
	}
	if !known {
		if err := r.keepSet(rs); err != nil {
			return err
		}
		if pg, err = r.cut(rs, "", ""); err != nil {
			return err
		}
	}
	dirty := r.dirtyPages(f, rs, pg)
	next := &pages{Whole: pg.Whole, FirstList: pg.FirstList}
	var render []bool
	var retired []string
	for i, p := range pg.Pages {
		if !dirty[i] || p.Fresh { // fresh pages were cut by this run or the one cut off
			next.Pages = append(next.Pages, p)
			render = append(render, dirty[i])
			continue
		}
		cut, err := r.cut(rs, p.Start, p.End)
		if err != nil {
			return err
		}
		if pg.Whole && cut.Whole || !pg.Whole && len(cut.Pages) == 1 {
			next.Pages = append(next.Pages, p)
			render = append(render, true)
			continue
		}
		if !pg.Whole { // a page split (a whole list becomes an index in place)
			k, err := r.key(p.url(rs, false))
			if err != nil {
				return err
			}
			retired = append(retired, k)
		}
		next.Whole = false
		for _, np := range cut.Pages {
			next.Pages = append(next.Pages, np)
			render = append(render, true)
		}
	}
	if len(retired) > 0 || next.Whole != pg.Whole {
		if err := r.retire(name, next, retired); err != nil {
			return err
		}
	}
	for i, p := range next.Pages {
		if !render[i] {
			continue
		}
		doc := r.e.src.ResourceListRange(r.snap, rs, p.Start, p.End, !next.Whole)
		if err := r.putDoc(p.url(rs, next.Whole), doc); err != nil {
			return err
		}
		next.Pages[i].Fresh = false
	}
	r.parts[name] = next
	if !known || !reflect.DeepEqual(pg, next) {
		r.states[name] = next
	}
	r.repaged[name] = !known || slices.Contains(render, true)
	return nil
}

// cut cuts a range of the set into pages, all Fresh.
func (r *run) cut(rs source.Set, start, end string) (*pages, error) {
	ranges, whole, err := r.e.src.CutRange(r.snap, rs, start, end)
	if err != nil {
		return nil, err
	}
	pg := &pages{Whole: whole && start == "" && end == ""}
	for _, rg := range ranges {
		pg.Pages = append(pg.Pages, page{Start: rg.Start, End: rg.End, Fresh: true})
	}
	if pg.Whole {
		pg.Pages = []page{{Fresh: true}}
	}
	return pg, nil
}

// dirtyPages are the indexes of the pages to render again.
func (r *run) dirtyPages(f *format, rs source.Set, pg *pages) map[int]bool {
	dirty := map[int]bool{}
	for i, p := range pg.Pages {
		if f.allDirty || p.Fresh {
			dirty[i] = true
		}
	}
	for id := range f.dirty[rs.Spec] {
		i := sort.Search(len(pg.Pages), func(i int) bool { return pg.Pages[i].Start > id }) - 1
		dirty[max(i, 0)] = true
	}
	return dirty
}

// retire commits a set's new pages, not yet published, and schedules the
// pages they replace for removal, before any of them is written: a run cut
// off after it publishes the new pages and removes the old ones in time.
func (r *run) retire(name string, next *pages, retired []string) error {
	set := map[string]any{name: next}
	due := garbage{Due: r.now.Add(r.e.o.Grace)}
	for _, k := range retired {
		set[garbageName(k)] = due
	}
	return r.commit(set, nil)
}

// indexes publishes the Resource List Indexes and Change List Indexes.
func (r *run) indexes() error {
	for _, rs := range r.sets {
		pg := r.parts[pagesName(rs)]
		if pg != nil && !pg.Whole && (!r.format(rs.Repo.Name, rs.Prefix).quiet() || r.repaged[pagesName(rs)]) {
			urls := make([]string, len(pg.Pages))
			for i, p := range pg.Pages {
				urls[i] = p.url(rs, false)
			}
			if err := r.putDoc(rs.ResourceList(), r.e.src.ResourceListIndex(r.snap, rs, urls)); err != nil {
				return fmt.Errorf("%s: %w", rs.Path(), err)
			}
		}
		if err := r.putSetDoc(rs, rs.ChangeListIndex(), r.e.src.ChangeListIndex); err != nil {
			return err
		}
	}
	return nil
}

// putSetDoc plans a set's document on the run's snapshot and publishes it.
func (r *run) putSetDoc(rs source.Set, u string, plan func(*store.Snap, source.Set) (source.Doc, error)) error {
	doc, err := plan(r.snap, rs)
	if err != nil {
		return fmt.Errorf("%s: %w", u, err)
	}
	return r.putDoc(u, doc)
}

// capabilityLists publishes every set's Capability List.
func (r *run) capabilityLists() error {
	for _, rs := range r.sets {
		if err := r.putSetDoc(rs, rs.CapabilityList(), r.e.src.CapabilityList); err != nil {
			return err
		}
	}
	return nil
}

// pruned schedules the removal of the set's Change Lists that retention
// pruned from the store since the last run: those published before the
// oldest list the store still has.
func (r *run) pruned(rs source.Set, lists []store.ChangeListInfo) error {
	pg := r.parts[pagesName(rs)]
	if pg == nil || len(lists) == 0 || pg.FirstList == lists[0].ID {
		return nil
	}
	first := lists[0].ID
	if pg.FirstList != "" {
		k, err := r.key(rs.ChangeList(""))
		if err != nil {
			return err
		}
		prefix := objectName(strings.TrimSuffix(k, ".xml"))
		oldest, err := r.key(rs.ChangeList(first))
		if err != nil {
			return err
		}
		due := garbage{Due: r.now.Add(r.e.o.Grace)}
		if err := r.snap.ExportStates(r.e.o.Target, prefix, func(name string, _ []byte) error {
			if k := strings.TrimPrefix(name, "o/"); k < oldest {
				r.states[garbageName(k)] = due
			}
			return nil
		}); err != nil {
			return err
		}
	}
	pg.FirstList = first
	r.states[pagesName(rs)] = pg
	return nil
}
