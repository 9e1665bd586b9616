package bridge

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/store"
)

// document starts an XML response. If streaming fails after the first bytes
// went out, abort cuts the connection so the client sees a broken transfer
// rather than a document that looks complete.
func (s *Server) document(w http.ResponseWriter, r *http.Request, cache string) {
	w.Header().Set("Content-Type", xmlType)
	w.Header().Set("Cache-Control", cache)
}

func (s *Server) abort(r *http.Request, err error) {
	if clientGone(r, err) {
		s.log.Debug("client went away or stopped reading", "path", clip(r.URL.Path, 200), "err", err)
	} else {
		s.log.Error("response aborted", "path", clip(r.URL.Path, 200), "err", err)
	}
	panic(http.ErrAbortHandler)
}

// sourceDescription serves the Source Description: one <urlset> of every
// Capability List while they fit one sitemap, else a Source Description
// Index (RS-057) whose pages are key ranges of the Capability Lists' paths,
// cut like Resource List pages, so a set published while a destination
// walks the index changes one page and drops none.
func (s *Server) sourceDescription(w http.ResponseWriter, r *http.Request) {
	sets, err := s.sortedSets(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.document(w, r, "no-cache")
	if r.Method == http.MethodHead {
		return
	}
	if len(sets) <= s.sdLimit {
		s.writeSourceDescription(w, r, sets, false)
		return
	}
	cut := max(s.sdLimit*9/10, 1)
	d := rsync.NewSitemapIndex(w, rsync.MD{Capability: rsync.Description}, rsync.Link{Rel: "describedby", Href: s.base + "/"})
	for i := 0; i < len(sets); i += cut {
		var start, end string
		if i > 0 {
			start = s.setKey(sets[i])
		}
		if i+cut < len(sets) {
			end = s.setKey(sets[i+cut])
		}
		d.Write(rsync.Entry{Loc: s.sourceDescriptionPageURL(i/cut+1, start, end)})
	}
	if err := d.Close(); err != nil {
		s.abort(r, err)
	}
}

// sourceDescriptionPage serves one page of the Source Description Index:
// the Capability Lists whose paths are in its range.
func (s *Server) sourceDescriptionPage(w http.ResponseWriter, r *http.Request) {
	start, end, _, err := pageRange(r.URL.Query())
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	sets, err := s.sortedSets(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	sets = slices.DeleteFunc(sets, func(rs resourceSet) bool {
		k := s.setKey(rs)
		return k < start || end != "" && k >= end
	})
	if len(sets) > rsync.MaxEntries {
		httpError(w, http.StatusConflict, fmt.Sprintf("this page's range now holds %d Capability Lists, more than one sitemap may; read the Source Description Index again: %s", len(sets), s.sourceDescriptionURL()))
		return
	}
	s.document(w, r, "no-cache")
	if r.Method == http.MethodHead {
		return
	}
	s.writeSourceDescription(w, r, sets, true)
}

func (s *Server) writeSourceDescription(w http.ResponseWriter, r *http.Request, sets []resourceSet, inIndex bool) {
	links := []rsync.Link{{Rel: "describedby", Href: s.base + "/"}}
	if inIndex {
		links = append(links, rsync.Link{Rel: "index", Href: s.sourceDescriptionURL()})
	}
	d := rsync.NewURLSet(w, rsync.MD{Capability: rsync.Description}, links...)
	for _, rs := range sets {
		d.Write(rsync.Entry{Loc: rs.capabilityList(), MD: &rsync.MD{Capability: rsync.CapabilityList},
			Links: []rsync.Link{{Rel: "describedby", Href: rs.about()}}})
	}
	if err := d.Close(); err != nil {
		s.abort(r, err)
	}
}

// sortedSets is every resource set in the order of setKey.
func (s *Server) sortedSets(ctx context.Context) ([]resourceSet, error) {
	sets, err := s.resourceSets(ctx)
	slices.SortFunc(sets, func(a, b resourceSet) int { return strings.Compare(s.setKey(a), s.setKey(b)) })
	return sets, err
}

// setKey orders resource sets for the Source Description Index: the path
// of the set below the base URL.
func (s *Server) setKey(rs resourceSet) string { return strings.TrimPrefix(rs.path(), s.base) }

func (s *Server) sourceDescriptionPageURL(n int, start, end string) string {
	return rangeURL(fmt.Sprintf("%s/sourcedescription-%05d.xml", s.base, n), start, end)
}

// capabilityList lists the set's capabilities: the Resource List, the
// Resource Dump once one is built, the Change List Index, and the Change Dump
// (for sets that get dumps, resourcesync.dump_sets).
func (s *Server) capabilityList(w http.ResponseWriter, r *http.Request, rs resourceSet) {
	s.snapshotDocument(w, r, func(snap *store.Snap, begin func(string) bool) error {
		var hasDump bool
		if rs.dumped(s.cfg) {
			dump, err := snap.ResourceDump(rs.repo.Name, rs.prefix, rs.set)
			if err != nil {
				return err
			}
			hasDump = dump != nil
		}
		if !begin("no-cache") {
			return nil
		}
		d := rsync.NewURLSet(w, rsync.MD{Capability: rsync.CapabilityList},
			rsync.Link{Rel: "up", Href: s.sourceDescriptionURL()}, rsync.Link{Rel: "describedby", Href: rs.about()})
		d.Write(rsync.Entry{Loc: rs.resourceList(), MD: &rsync.MD{Capability: rsync.ResourceList}})
		if hasDump {
			d.Write(rsync.Entry{Loc: rs.resourceDump(), MD: &rsync.MD{Capability: rsync.ResourceDump}})
		}
		d.Write(rsync.Entry{Loc: rs.changeListIndex(), MD: &rsync.MD{Capability: rsync.ChangeList}})
		if rs.dumped(s.cfg) {
			d.Write(rsync.Entry{Loc: rs.changeDump(), MD: &rsync.MD{Capability: rsync.ChangeDump}})
		}
		if s.cfg.Notification.On() {
			d.Write(rsync.Entry{Loc: rs.topic(), MD: &rsync.MD{Capability: changeNotification},
				Links: []rsync.Link{{Rel: "hub", Href: hubURL(s.cfg, s.base)}}})
		}
		return d.Close()
	})
}

// resourceEntry describes one live record: where rsbridge serves it, when its
// copy last changed, fixity, and the related links of spec section 14: via the
// upstream GetRecord (with the upstream datestamp), alternate formats rsbridge
// also serves, and the landing page the metadata describes.
func (s *Server) resourceEntry(rs resourceSet, via func(string) string, others []alternate, rec *store.Record) rsync.Entry {
	e := rsync.Entry{
		Loc:     rs.resource(rec.Identifier),
		LastMod: rec.Modified,
		MD:      &rsync.MD{Hash: rsync.Hash(rec.MD5, rec.SHA256), Length: rec.Length, HasLength: true, Type: xmlType},
	}
	e.Links = append(e.Links, rsync.Link{Rel: "via", Href: via(rec.Identifier), Modified: rec.Datestamp})
	for _, o := range others {
		if o.live.Has(rec.Identifier) {
			e.Links = append(e.Links, rsync.Link{Rel: "alternate", Href: rs.resourceIn(o.prefix, rec.Identifier), Type: xmlType})
		}
	}
	if rec.Landing != "" {
		e.Links = append(e.Links, rsync.Link{Rel: "describes", Href: rec.Landing})
	}
	e.Links = append(e.Links, rsync.Link{Rel: "collection", Href: aggregationURL(rs.base, rs.repo.Name, rec.Identifier)})
	return e
}

// alternate is another format of the repository and a cursor over its live
// records, walked alongside a Resource List (both are in identifier order).
type alternate struct {
	prefix string
	live   *store.LiveCursor
}

// resourceList serves the whole Resource List when it fits one document,
// otherwise a Resource List Index whose pages are key ranges: each page URL
// names its first identifier and the next page's, so the pages of an index
// partition the identifiers, and a page lists exactly the records live in its
// range when it is read. A record created, deleted or moved while a
// destination walks the index changes one page only; no live record falls
// between two pages and none is on two.
//
// The index's at is its snapshot's horizon; it has no completed, since its
// pages are read later, each with its own at and completed.
func (s *Server) resourceList(w http.ResponseWriter, r *http.Request, rs resourceSet) {
	s.cachedDocument(w, r, func(snap *store.Snap) (string, string, time.Time, func(io.Writer) error, error) {
		v, err := s.version(snap, rs)
		key := fmt.Sprintf("resourcelist|%s|%d", rs.path(), v)
		return key, "no-cache", snap.At(rs.repo.Name, rs.prefix), func(w io.Writer) error {
			cut, err := s.cutPages(snap, rs)
			if err != nil {
				return err
			}
			if cut.single(s.limit) {
				return s.writeResources(w, snap, rs, "", "", false)
			}
			d := rsync.NewSitemapIndex(w, rsync.MD{Capability: rsync.ResourceList, At: snap.At(rs.repo.Name, rs.prefix)}, rsync.Link{Rel: "up", Href: rs.capabilityList()})
			for i := range cut.starts {
				start, end := cut.page(i)
				d.Write(rsync.Entry{Loc: rs.resourceListPage(i+1, start, end)})
			}
			return d.Close()
		}, err
	})
}

// docRoom is what a Resource List needs beside its entries: the XML
// declaration, the root element with its namespaces, rs:md and links.
const docRoom = 4 << 10

// pageCut is how a set's live records fall into Resource List pages: each
// page starts at starts[i] and ends where the next begins.
type pageCut struct {
	starts []string
	count  int
	bytes  int64 // the entries' size bound, all pages
}

// single reports whether the records fit one Resource List.
func (c pageCut) single(limit int) bool {
	return c.count <= limit && c.bytes+docRoom <= rsync.MaxBytes
}

// page returns page i's range: the first page starts at the beginning, the
// last has no end.
func (c pageCut) page(i int) (start, end string) {
	if i > 0 {
		start = c.starts[i]
	}
	if i+1 < len(c.starts) {
		end = c.starts[i+1]
	}
	return start, end
}

// cutPages cuts the set's live records into pages of at most page_limit
// records and a tenth below the sitemap limits (45,000 entries, 45 MiB by the
// entry size bound), which leaves room for records created in a page's range
// while a destination walks the index.
func (s *Server) cutPages(snap *store.Snap, rs resourceSet) (pageCut, error) {
	maxN, maxB := min(s.limit, rsync.MaxEntries*9/10), int64(rsync.MaxBytes*9/10)
	size := s.entryBound(rs)
	var c pageCut
	var n int
	var b int64
	err := snap.Resources(rs.repo.Name, rs.prefix, rs.set, "", "", math.MaxInt, func(rec *store.Record) error {
		e := size(rec)
		if len(c.starts) == 0 || n >= maxN || b+e > maxB {
			c.starts = append(c.starts, rec.Identifier)
			n, b = 0, 0
		}
		n++
		b += e
		c.count++
		c.bytes += e
		return nil
	})
	return c, err
}

// entryBound returns an upper bound of the bytes resourceEntry writes for a
// record, from its identifier and landing page alone: the entry of an empty
// identifier with the widest times, length and hashes and every alternate
// format, plus what the identifier adds to each URL that carries it and the
// landing page's href.
func (s *Server) entryBound(rs resourceSet) func(*store.Record) int64 {
	widest := time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
	probe := &store.Record{Modified: widest, Datestamp: widest, Length: math.MaxInt64,
		MD5: strings.Repeat("0", 32), SHA256: strings.Repeat("0", 64), Landing: "x"}
	e := s.resourceEntry(rs, getRecordURL(s.cfg.PublicBaseURL(rs.repo), rs.prefix), nil, probe)
	alternates := int64(0)
	for _, p := range rs.repo.MetadataPrefixes {
		if p != rs.prefix {
			e.Links = append(e.Links, rsync.Link{Rel: "alternate", Href: rs.resourceIn(p, ""), Type: xmlType})
			alternates++
		}
	}
	fixed := rsync.EntrySize(e) - 1 // less the probe's landing
	segments := 2 + alternates      // loc, the alternates, collection
	return func(rec *store.Record) int64 {
		id := rec.Identifier
		return fixed + segments*int64(rsync.EscapedLen(segment(id))) + int64(rsync.EscapedLen(url.QueryEscape(id))) + int64(rsync.EscapedLen(rec.Landing))
	}
}

// version is what the documents of a set are computed from: the Version of
// its (repository, prefix), which every record write moves.
func (s *Server) version(snap *store.Snap, rs resourceSet) (uint64, error) {
	c, err := snap.Counter(rs.repo.Name, rs.prefix)
	return c.Version, err
}

// cachedDocument serves a large document through the cache (cache.go). prep
// runs on a store snapshot and returns the document's cache key (empty: do
// not cache), its Cache-Control, its time, and the function that writes it; a
// prep that already answered (a 404) returns a nil writer. The document is
// rendered once per key from that snapshot into the cache and sent from there
// after the snapshot is released; without the cache (or on a nearly full
// disk) it is streamed from the snapshot as before.
func (s *Server) cachedDocument(w http.ResponseWriter, r *http.Request, prep func(snap *store.Snap) (key, control string, modified time.Time, write func(io.Writer) error, err error)) {
	var hit *cached
	s.snapshotDocument(w, r, func(snap *store.Snap, begin func(string) bool) error {
		key, control, modified, write, err := prep(snap)
		if err != nil || write == nil {
			return err
		}
		if key != "" {
			e, ok, err := s.cache.get(key, control, modified, write)
			if err != nil {
				return err
			}
			if ok {
				hit = e
				return nil
			}
		}
		if !begin(control) {
			return nil
		}
		return write(w)
	})
	if hit != nil {
		releaseSlot(r) // the snapshot is released: the rest is a file
		if err := hit.serve(w, r); err != nil {
			s.fail(w, r, err)
		}
	}
}

// snapshotDocument runs fn on one store snapshot. fn prepares what it needs,
// then calls begin with the Cache-Control value: begin sets the headers and
// reports whether a body is wanted (not for HEAD). An error before begin is
// answered with a status; one after it aborts the connection.
func (s *Server) snapshotDocument(w http.ResponseWriter, r *http.Request, fn func(snap *store.Snap, begin func(cache string) bool) error) {
	started := false
	err := s.db.View(r.Context(), func(snap *store.Snap) error {
		return fn(snap, func(cache string) bool {
			s.document(w, r, cache)
			started = r.Method != http.MethodHead
			return started
		})
	})
	s.finish(w, r, started, err)
}

func (s *Server) finish(w http.ResponseWriter, r *http.Request, started bool, err error) {
	if err == nil {
		return
	}
	if started {
		s.abort(r, err)
	}
	s.fail(w, r, err)
}

// writeResources writes a Resource List, or a page of an index: the live
// records in [start, end) ("" = unbounded), as they are at the snapshot.
func (s *Server) writeResources(w io.Writer, snap *store.Snap, rs resourceSet, start, end string, inIndex bool) error {
	links := []rsync.Link{{Rel: "up", Href: rs.capabilityList()}}
	if inIndex {
		links = append(links, rsync.Link{Rel: "index", Href: rs.resourceList()})
	}
	d := rsync.NewURLSet(w, rsync.MD{Capability: rsync.ResourceList, At: snap.At(rs.repo.Name, rs.prefix), Completed: snap.Now()}, links...)
	via := getRecordURL(s.cfg.PublicBaseURL(rs.repo), rs.prefix)
	var others []alternate
	for _, p := range rs.repo.MetadataPrefixes {
		if p != rs.prefix {
			c := snap.LiveCursor(rs.repo.Name, p, start)
			defer c.Close()
			others = append(others, alternate{prefix: p, live: c})
		}
	}
	err := snap.Resources(rs.repo.Name, rs.prefix, rs.set, start, end, math.MaxInt, func(rec *store.Record) error {
		return d.Write(s.resourceEntry(rs, via, others, rec))
	})
	if err != nil {
		return err
	}
	return d.Close()
}

// ChangeListBytes is the most a Change List's entries may take
// (store.Options.ChangeListBytes): the sitemap limit less the room for the
// document's root.
const ChangeListBytes = rsync.MaxBytes - docRoom

// ChangeEntryBound returns, for store.Options.ChangeEntryBytes, an upper
// bound of the bytes one Change List entry about an identifier takes in the
// lists this configuration serves: the entry of an empty identifier with the
// widest values, plus what the identifier adds to each URL that carries it.
func ChangeEntryBound(cfg *config.Config) func(repo, prefix, id string) int64 {
	base := strings.TrimRight(cfg.BaseURL, "/")
	widest := time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
	fixed := map[[2]string]int64{}
	for _, repo := range cfg.Repositories {
		for _, p := range repo.MetadataPrefixes {
			rs := resourceSet{repo: repo, prefix: p, set: store.AllSet, base: base}
			ev := &store.SetEvent{Change: store.Updated, Time: widest, Datestamp: widest, Length: math.MaxInt64,
				MD5: strings.Repeat("0", 32), SHA256: strings.Repeat("0", 64)}
			fixed[[2]string{repo.Name, p}] = rsync.EntrySize(changeEntry(rs, getRecordURL(cfg.PublicBaseURL(repo), p), ev))
		}
	}
	return func(repo, prefix, id string) int64 {
		f, ok := fixed[[2]string{repo, prefix}]
		if !ok {
			return 0 // not served: nothing to bound
		}
		// loc and the collection link carry the identifier as a path
		// segment, the via link as a query value.
		return f + 2*int64(rsync.EscapedLen(segment(id))) + int64(rsync.EscapedLen(url.QueryEscape(id)))
	}
}

// pageRange reads a page's range from its URL: start and end, each optional
// (the first page has no start, the last no end).
func pageRange(q url.Values) (start, end string, ok bool, err error) {
	for _, k := range []string{"start", "end"} {
		v, has := q[k]
		if !has {
			continue
		}
		if len(v) != 1 || !validIdentifier(v[0]) {
			return "", "", false, fmt.Errorf("%s must be one identifier, as the Resource List Index gives it", k)
		}
		ok = true
		if k == "start" {
			start = v[0]
		} else {
			end = v[0]
		}
	}
	if end != "" && start >= end {
		return "", "", false, errors.New("a page's start must come before its end")
	}
	return start, end, ok, nil
}

// resourceListPage serves one page of a Resource List Index: the live
// records in the range its URL names. Without a range the page is found by
// cutting the set as the index does now. A range that has grown past what a
// sitemap may hold since the index was read answers 409: the destination
// reads the index again, which cuts the range anew. Nothing is dropped.
func (s *Server) resourceListPage(w http.ResponseWriter, r *http.Request, rs resourceSet) {
	n, err := strconv.Atoi(vars(r)["page"])
	if err != nil || n < 1 {
		httpError(w, http.StatusNotFound, "no such page")
		return
	}
	start, end, ranged, err := pageRange(r.URL.Query())
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.cachedDocument(w, r, func(snap *store.Snap) (string, string, time.Time, func(io.Writer) error, error) {
		v, err := s.version(snap, rs)
		if err != nil {
			return "", "", time.Time{}, nil, err
		}
		if !ranged {
			cut, err := s.cutPages(snap, rs)
			if err != nil {
				return "", "", time.Time{}, nil, err
			}
			if n > len(cut.starts) && n > 1 {
				httpError(w, http.StatusNotFound, fmt.Sprintf("resource list page %d does not exist; see %s", n, rs.resourceList()))
				return "", "", time.Time{}, nil, nil
			}
			if n <= len(cut.starts) {
				start, end = cut.page(n - 1)
			}
		}
		count, bytes := 0, int64(0)
		size := s.entryBound(rs)
		if err := snap.Resources(rs.repo.Name, rs.prefix, rs.set, start, end, math.MaxInt, func(rec *store.Record) error {
			count++
			bytes += size(rec)
			return nil
		}); err != nil {
			return "", "", time.Time{}, nil, err
		}
		if count > rsync.MaxEntries || bytes+docRoom > rsync.MaxBytes {
			httpError(w, http.StatusConflict, fmt.Sprintf("this page's range now holds %d records (about %d bytes), more than one sitemap may; read the Resource List Index again: %s", count, bytes, rs.resourceList()))
			return "", "", time.Time{}, nil, nil
		}
		key := fmt.Sprintf("resourcelist-page|%s|%d|%s|%s", rs.path(), v, start, end)
		return key, "no-cache", snap.At(rs.repo.Name, rs.prefix), func(w io.Writer) error { return s.writeResources(w, snap, rs, start, end, true) }, nil
	})
}

// slot is the Change List period a time falls in: open lists close when it
// changes, without a write.
func (s *Server) slot(now time.Time) int64 {
	return now.UnixNano() / int64(s.cfg.ResourceSync.ChangeListPeriod)
}

// changeListIndex lists the set's Change Lists as they are at the store's
// horizon: a list closes only when no uncommitted page can add to it.
func (s *Server) changeListIndex(w http.ResponseWriter, r *http.Request, rs resourceSet) {
	s.cachedDocument(w, r, func(snap *store.Snap) (string, string, time.Time, func(io.Writer) error, error) {
		at := snap.At(rs.repo.Name, rs.prefix)
		v, err := s.version(snap, rs)
		key := fmt.Sprintf("changelist-index|%s|%d|%d", rs.path(), v, s.slot(at))
		return key, "no-cache", at, func(w io.Writer) error {
			lists, err := snap.ChangeLists(rs.repo.Name, rs.prefix, rs.set)
			if err != nil {
				return err
			}
			d := rsync.NewSitemapIndex(w, rsync.MD{Capability: rsync.ChangeList, From: lists[0].From}, rsync.Link{Rel: "up", Href: rs.capabilityList()})
			for _, l := range lists {
				d.Write(rsync.Entry{Loc: rs.changeList(l.ID), MD: &rsync.MD{From: l.From, Until: l.Until(at)}})
			}
			return d.Close()
		}, err
	})
}

// changeList serves one Change List: one entry per change in the set, in order,
// with the detection time as datetime (GW-RS-08) and the upstream datestamp on
// the via link. A list is closed only when the store's horizon has passed its
// end, so every change it will ever hold is in the snapshot: only then is it
// rendered once and cached by clients for long. An open list, empty or not,
// keeps its URL until it closes.
func (s *Server) changeList(w http.ResponseWriter, r *http.Request, rs resourceSet) {
	id := vars(r)["list"]
	s.cachedDocument(w, r, func(snap *store.Snap) (string, string, time.Time, func(io.Writer) error, error) {
		at := snap.At(rs.repo.Name, rs.prefix)
		l, err := snap.ChangeList(rs.repo.Name, rs.prefix, rs.set, id)
		if err != nil {
			return "", "", at, nil, err
		}
		if l == nil {
			httpError(w, http.StatusNotFound, fmt.Sprintf("no change list %q; see %s", id, rs.changeListIndex()))
			return "", "", at, nil, nil
		}
		until := l.Until(at)
		control, key, modified := "no-cache", "", at
		if until.IsZero() {
			v, err := s.version(snap, rs)
			if err != nil {
				return "", "", at, nil, err
			}
			key = fmt.Sprintf("changelist|%s|%s|%d|%d", rs.path(), id, v, s.slot(at))
		} else {
			control, key, modified = "public, max-age=31536000, immutable", fmt.Sprintf("changelist|%s|%s|closed", rs.path(), id), until
		}
		return key, control, modified, func(w io.Writer) error {
			d := rsync.NewURLSet(w, rsync.MD{Capability: rsync.ChangeList, From: l.From, Until: until},
				rsync.Link{Rel: "up", Href: rs.capabilityList()}, rsync.Link{Rel: "index", Href: rs.changeListIndex()})
			if l.Count > 0 {
				via := getRecordURL(s.cfg.PublicBaseURL(rs.repo), rs.prefix)
				err := snap.SetEvents(rs.repo.Name, rs.prefix, rs.set, l.FirstSeq, l.LastSeq, func(ev *store.SetEvent) error {
					return d.Write(changeEntry(rs, via, ev))
				})
				if err != nil {
					return err
				}
			}
			return d.Close()
		}, nil
	})
}

// resource serves a record's metadata document: the stored bytes, whose hash
// and length are what the lists say.
func (s *Server) resource(w http.ResponseWriter, r *http.Request) {
	v := vars(r)
	repo, ok := s.cfg.Repository(v["repo"])
	if !ok || !slices.Contains(repo.MetadataPrefixes, v["prefix"]) {
		httpError(w, http.StatusNotFound, fmt.Sprintf("no repository %q with metadata prefix %q", v["repo"], v["prefix"]))
		return
	}
	var rec *store.Record
	var meta []byte
	err := s.db.View(r.Context(), func(snap *store.Snap) error {
		var err error
		if rec, err = snap.Record(repo.Name, v["prefix"], v["id"]); err != nil || rec == nil || rec.Deleted {
			return err
		}
		meta, err = snap.Metadata(repo.Name, v["prefix"], v["id"])
		return err
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	all := resourceSet{repo: repo, prefix: v["prefix"], set: store.AllSet, base: s.base}
	w.Header().Set("Link", fmt.Sprintf("<%s>; rel=\"resourcesync\"", all.capabilityList()))
	switch {
	case rec == nil:
		httpError(w, http.StatusNotFound, fmt.Sprintf("unknown resource: %s has no record %q in %s", repo.Name, v["id"], v["prefix"]))
		return
	case rec.Deleted || meta == nil:
		httpError(w, http.StatusGone, fmt.Sprintf("gone: record %q was deleted from %s", v["id"], repo.Name))
		return
	}
	w.Header().Set("Content-Type", xmlType)
	w.Header().Set("ETag", `"`+rec.SHA256+`"`)
	w.Header().Set("Cache-Control", "no-cache")
	// ServeContent answers conditional requests (304), HEAD and ranges, and sets
	// Content-Length and Last-Modified.
	http.ServeContent(w, r, "", rec.Modified, bytes.NewReader(meta))
}

// channel serves a set's change-notification topic (CN-024..CN-027): 200,
// application/xml, Link self and hub, and the latest notification as the
// body. Before the first notification the body is an empty notification
// (from = until = where the channel's changes start) rather than nothing:
// an empty body is legal, but XML clients fail on it.
func (s *Server) channel(w http.ResponseWriter, r *http.Request, rs resourceSet) {
	if !s.cfg.Notification.On() {
		httpError(w, http.StatusNotFound, "change notification is off (notification.enabled)")
		return
	}
	var ch store.Channel
	var at time.Time
	err := s.db.View(r.Context(), func(snap *store.Snap) error {
		var err error
		at = snap.At(rs.repo.Name, rs.prefix)
		ch, err = snap.Channel(rs.repo.Name, rs.prefix, rs.set)
		return err
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	body, modified := ch.Latest, ch.LatestTime
	if len(body) == 0 {
		since := cmp.Or(ch.Until, ch.Started, at)
		var b bytes.Buffer
		d := rsync.NewURLSet(&b, rsync.MD{Capability: changeNotification, From: since, Until: since}, rsync.Link{Rel: "up", Href: rs.capabilityList()})
		if err := d.Close(); err != nil {
			s.fail(w, r, err)
			return
		}
		body, modified = b.Bytes(), since
	}
	w.Header().Set("Content-Type", xmlType)
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="self", <%s>; rel="hub", <%s>; rel="resourcesync"`, rs.topic(), hubURL(s.cfg, s.base), rs.capabilityList()))
	http.ServeContent(w, r, "", modified, bytes.NewReader(body))
}
