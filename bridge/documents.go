package bridge

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"time"

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

func (s *Server) sourceDescription(w http.ResponseWriter, r *http.Request) {
	sets, err := s.resourceSets(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if len(sets) > rsync.MaxEntries {
		// A Source Description is one sitemap: past its limit the rest
		// cannot be listed. Every all-records set stays; sets are cut from
		// the end.
		s.log.Warn("the Source Description lists 50,000 Capability Lists only (the sitemap limit): publish fewer sets with sets, set_patterns or max_sets",
			"capability_lists", len(sets))
		all := slices.DeleteFunc(slices.Clone(sets), func(rs resourceSet) bool { return rs.set != store.AllSet })
		rest := slices.DeleteFunc(sets, func(rs resourceSet) bool { return rs.set == store.AllSet })
		sets = append(all, rest[:max(rsync.MaxEntries-len(all), 0)]...)[:rsync.MaxEntries]
	}
	s.document(w, r, "no-cache")
	if r.Method == http.MethodHead {
		return
	}
	d := rsync.NewURLSet(w, rsync.MD{Capability: rsync.Description}, rsync.Link{Rel: "describedby", Href: s.base + "/"})
	for _, rs := range sets {
		d.Write(rsync.Entry{Loc: rs.capabilityList(), MD: &rsync.MD{Capability: rsync.CapabilityList},
			Links: []rsync.Link{{Rel: "describedby", Href: rs.about()}}})
	}
	if err := d.Close(); err != nil {
		s.abort(r, err)
	}
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

// resourceList serves the whole Resource List when it fits one page, otherwise a
// Resource List Index whose pages start at given identifiers, so a page stays the
// same run of records however the store grows while a client walks the index.
func (s *Server) resourceList(w http.ResponseWriter, r *http.Request, rs resourceSet) {
	at := s.now().UTC()
	s.cachedDocument(w, r, func(snap *store.Snap) (string, string, time.Time, func(io.Writer) error, error) {
		v, err := s.version(snap, rs)
		key := fmt.Sprintf("resourcelist|%s|%d", rs.path(), v)
		return key, "no-cache", at, func(w io.Writer) error {
			var starts []string
			count, err := snap.Pages(rs.repo.Name, rs.prefix, rs.set, s.limit, func(_ int, first string) error {
				starts = append(starts, first)
				return nil
			})
			if err != nil {
				return err
			}
			if count <= s.limit {
				return s.writeResources(w, snap, rs, at, "", s.limit, false)
			}
			d := rsync.NewSitemapIndex(w, rsync.MD{Capability: rsync.ResourceList, At: at, Completed: at}, rsync.Link{Rel: "up", Href: rs.capabilityList()})
			for i, first := range starts {
				d.Write(rsync.Entry{Loc: rs.resourceListPage(i+1, first)})
			}
			return d.Close()
		}, err
	})
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

func (s *Server) writeResources(w io.Writer, snap *store.Snap, rs resourceSet, at time.Time, start string, limit int, inIndex bool) error {
	links := []rsync.Link{{Rel: "up", Href: rs.capabilityList()}}
	if inIndex {
		links = append(links, rsync.Link{Rel: "index", Href: rs.resourceList()})
	}
	d := rsync.NewURLSet(w, rsync.MD{Capability: rsync.ResourceList, At: at, Completed: at}, links...)
	via := getRecordURL(rs.repo.BaseURL, rs.prefix)
	var others []alternate
	for _, p := range rs.repo.MetadataPrefixes {
		if p != rs.prefix {
			c := snap.LiveCursor(rs.repo.Name, p, start)
			defer c.Close()
			others = append(others, alternate{prefix: p, live: c})
		}
	}
	err := snap.Resources(rs.repo.Name, rs.prefix, rs.set, start, limit, func(rec *store.Record) error {
		return d.Write(s.resourceEntry(rs, via, others, rec))
	})
	if err != nil {
		return err
	}
	return d.Close()
}

// resourceListPage serves one page of a Resource List Index. The start
// parameter names its first identifier; without it the page is found by
// counting.
func (s *Server) resourceListPage(w http.ResponseWriter, r *http.Request, rs resourceSet) {
	n, err := strconv.Atoi(vars(r)["page"])
	if err != nil || n < 1 {
		httpError(w, http.StatusNotFound, "no such page")
		return
	}
	start, ok := r.URL.Query()["start"]
	if ok && (len(start) != 1 || !validIdentifier(start[0])) {
		httpError(w, http.StatusBadRequest, "start must be one identifier, as the Resource List Index gives it")
		return
	}
	at := s.now().UTC()
	s.cachedDocument(w, r, func(snap *store.Snap) (string, string, time.Time, func(io.Writer) error, error) {
		v, err := s.version(snap, rs)
		if err != nil {
			return "", "", at, nil, err
		}
		first := ""
		if ok {
			// Pages start at identifiers the store knows (live or deleted, so
			// a page whose first record was deleted meanwhile still works);
			// any other value is not a page.
			first = start[0]
			if rec, err := snap.Record(rs.repo.Name, rs.prefix, first); err != nil {
				return "", "", at, nil, err
			} else if rec == nil {
				httpError(w, http.StatusNotFound, fmt.Sprintf("no resource list page starts at %q; read %s again", clip(first, 200), rs.resourceList()))
				return "", "", at, nil, nil
			}
		} else {
			found := false
			if _, err := snap.Pages(rs.repo.Name, rs.prefix, rs.set, s.limit, func(i int, id string) error {
				if i == n {
					first, found = id, true
				}
				return nil
			}); err != nil {
				return "", "", at, nil, err
			}
			if !found && n > 1 {
				httpError(w, http.StatusNotFound, fmt.Sprintf("resource list page %d does not exist", n))
				return "", "", at, nil, nil
			}
		}
		key := fmt.Sprintf("resourcelist-page|%s|%d|%s", rs.path(), v, first)
		return key, "no-cache", at, func(w io.Writer) error { return s.writeResources(w, snap, rs, at, first, s.limit, true) }, nil
	})
}

// slot is the Change List period a time falls in: open lists close when it
// changes, without a write.
func (s *Server) slot(now time.Time) int64 {
	return now.UnixNano() / int64(s.cfg.ResourceSync.ChangeListPeriod)
}

func (s *Server) changeListIndex(w http.ResponseWriter, r *http.Request, rs resourceSet) {
	now := s.now().UTC()
	s.cachedDocument(w, r, func(snap *store.Snap) (string, string, time.Time, func(io.Writer) error, error) {
		v, err := s.version(snap, rs)
		key := fmt.Sprintf("changelist-index|%s|%d|%d", rs.path(), v, s.slot(now))
		return key, "no-cache", now, func(w io.Writer) error {
			lists, err := snap.ChangeLists(rs.repo.Name, rs.prefix, rs.set, now)
			if err != nil {
				return err
			}
			d := rsync.NewSitemapIndex(w, rsync.MD{Capability: rsync.ChangeList, From: lists[0].From}, rsync.Link{Rel: "up", Href: rs.capabilityList()})
			for _, l := range lists {
				d.Write(rsync.Entry{Loc: rs.changeList(l.ID), MD: &rsync.MD{From: l.From, Until: l.Until(now)}})
			}
			return d.Close()
		}, err
	})
}

// changeList serves one Change List: one entry per change in the set, in order,
// with the detection time as datetime (GW-RS-08) and the upstream datestamp on
// the via link. A closed list never changes: it is rendered once and may be
// cached by clients for long.
func (s *Server) changeList(w http.ResponseWriter, r *http.Request, rs resourceSet) {
	id := vars(r)["list"]
	now := s.now().UTC()
	s.cachedDocument(w, r, func(snap *store.Snap) (string, string, time.Time, func(io.Writer) error, error) {
		l, err := snap.ChangeList(rs.repo.Name, rs.prefix, rs.set, id, now)
		if err != nil {
			return "", "", now, nil, err
		}
		if l == nil {
			httpError(w, http.StatusNotFound, fmt.Sprintf("no change list %q; see %s", id, rs.changeListIndex()))
			return "", "", now, nil, nil
		}
		until := l.Until(now)
		control, key, modified := "no-cache", "", now
		if until.IsZero() {
			v, err := s.version(snap, rs)
			if err != nil {
				return "", "", now, nil, err
			}
			key = fmt.Sprintf("changelist|%s|%s|%d|%d", rs.path(), id, v, s.slot(now))
		} else {
			control, key, modified = "public, max-age=31536000, immutable", fmt.Sprintf("changelist|%s|%s|closed", rs.path(), id), until
		}
		return key, control, modified, func(w io.Writer) error {
			d := rsync.NewURLSet(w, rsync.MD{Capability: rsync.ChangeList, From: l.From, Until: until},
				rsync.Link{Rel: "up", Href: rs.capabilityList()}, rsync.Link{Rel: "index", Href: rs.changeListIndex()})
			if l.Count > 0 {
				via := getRecordURL(rs.repo.BaseURL, rs.prefix)
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
// application/xml, Link self and hub, and the latest notification as the body
// (empty, with Content-Length 0, before the first).
func (s *Server) channel(w http.ResponseWriter, r *http.Request, rs resourceSet) {
	if !s.cfg.Notification.On() {
		httpError(w, http.StatusNotFound, "change notification is off (notification.enabled)")
		return
	}
	var ch store.Channel
	err := s.db.View(r.Context(), func(snap *store.Snap) error {
		var err error
		ch, err = snap.Channel(rs.repo.Name, rs.prefix, rs.set)
		return err
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", xmlType)
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="self", <%s>; rel="hub", <%s>; rel="resourcesync"`, rs.topic(), hubURL(s.cfg, s.base), rs.capabilityList()))
	http.ServeContent(w, r, "", ch.LatestTime, bytes.NewReader(ch.Latest))
}
