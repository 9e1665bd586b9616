package bridge

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/store"
)

// Server serves the store as a ResourceSync 1.1 source. Every document is read
// from one store snapshot and streamed to the client entry by entry.
type Server struct {
	cfg    *config.Config
	db     *store.DB
	log    *slog.Logger
	now    func() time.Time
	base   string
	limit  int
	period time.Duration
	pages  *template.Template
}

// ServerOptions are the optional parts of NewServer.
type ServerOptions struct {
	Logger *slog.Logger
	Now    func() time.Time
}

// NewServer builds a server over an open store. The store must have been opened
// with the same Change List limit and period as the configuration.
func NewServer(cfg *config.Config, db *store.DB, o ServerOptions) *Server {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Server{cfg: cfg, db: db, log: o.Logger, now: o.Now, base: strings.TrimRight(cfg.BaseURL, "/"),
		limit: cfg.ResourceSync.PageLimit, period: cfg.ResourceSync.ChangeListPeriod, pages: parsePages()}
}

const xmlType = "application/xml"

// Handler is the route table.
func (s *Server) Handler() http.Handler {
	r := mux.NewRouter().UseEncodedPath()
	get := []string{http.MethodGet, http.MethodHead}
	r.HandleFunc("/", s.home).Methods(get...)
	r.HandleFunc("/.well-known/resourcesync", s.sourceDescription).Methods(get...)
	r.HandleFunc("/robots.txt", s.robots).Methods(get...)
	r.HandleFunc("/{repo}/{prefix}/resource/{id}", s.resource).Methods(get...)
	for _, set := range []string{"/{repo}/{prefix}/all", "/{repo}/{prefix}/set/{set}"} {
		r.HandleFunc(set+"/capabilitylist.xml", s.withSet(s.capabilityList)).Methods(get...)
		r.HandleFunc(set+"/about.html", s.withSet(s.about)).Methods(get...)
		r.HandleFunc(set+"/resourcelist.xml", s.withSet(s.resourceList)).Methods(get...)
		r.HandleFunc(set+"/resourcelist-{page:[0-9]+}.xml", s.withSet(s.resourceListPage)).Methods(get...)
		r.HandleFunc(set+"/changelist.xml", s.withSet(s.changeListIndex)).Methods(get...)
		r.HandleFunc(set+"/changelist-{list}.xml", s.withSet(s.changeList)).Methods(get...)
	}
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		httpError(w, http.StatusNotFound, "not found: "+req.URL.Path+"\nstart at /.well-known/resourcesync")
	})
	r.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		httpError(w, http.StatusMethodNotAllowed, "method not allowed: use GET or HEAD")
	})
	return gzipDocuments(r)
}

func httpError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	fmt.Fprintln(w, msg)
}

// resourceSet is one (repository, metadata prefix, set) with its URLs. Set is
// store.AllSet for all records.
type resourceSet struct {
	repo   config.Repository
	prefix string
	set    string
	base   string
}

func (rs resourceSet) path() string {
	p := rs.base + "/" + url.PathEscape(rs.repo.Name) + "/" + url.PathEscape(rs.prefix)
	if rs.set == store.AllSet {
		return p + "/all"
	}
	return p + "/set/" + url.PathEscape(rs.set)
}

func (rs resourceSet) capabilityList() string { return rs.path() + "/capabilitylist.xml" }
func (rs resourceSet) about() string          { return rs.path() + "/about.html" }
func (rs resourceSet) resourceList() string   { return rs.path() + "/resourcelist.xml" }
func (rs resourceSet) changeListIndex() string {
	return rs.path() + "/changelist.xml"
}
func (rs resourceSet) changeList(id string) string { return rs.path() + "/changelist-" + id + ".xml" }
func (rs resourceSet) resourceListPage(n int, start string) string {
	return fmt.Sprintf("%s/resourcelist-%05d.xml?start=%s", rs.path(), n, url.QueryEscape(start))
}

// resourceURL is where rsbridge serves a record; identifiers are one escaped
// path segment, so slashes, spaces and non-ASCII survive.
func resourceURL(base, repo, prefix, id string) string {
	return base + "/" + url.PathEscape(repo) + "/" + url.PathEscape(prefix) + "/resource/" + url.PathEscape(id)
}

func (rs resourceSet) resource(id string) string {
	return resourceURL(rs.base, rs.repo.Name, rs.prefix, id)
}

func (s *Server) sourceDescriptionURL() string { return s.base + "/.well-known/resourcesync" }

func vars(r *http.Request) map[string]string {
	out := map[string]string{}
	for k, v := range mux.Vars(r) {
		if u, err := url.PathUnescape(v); err == nil {
			v = u
		}
		out[k] = v
	}
	return out
}

// withSet resolves the resource set of a request, or answers 404.
func (s *Server) withSet(h func(http.ResponseWriter, *http.Request, resourceSet)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v := vars(r)
		repo, ok := s.cfg.Repository(v["repo"])
		if !ok || !slices.Contains(repo.MetadataPrefixes, v["prefix"]) {
			httpError(w, http.StatusNotFound, fmt.Sprintf("no repository %q with metadata prefix %q", v["repo"], v["prefix"]))
			return
		}
		rs := resourceSet{repo: repo, prefix: v["prefix"], set: store.AllSet, base: s.base}
		if spec, ok := v["set"]; ok {
			published, err := s.published(r.Context(), repo)
			if err != nil {
				s.fail(w, r, err)
				return
			}
			if !slices.Contains(published, spec) {
				httpError(w, http.StatusNotFound, fmt.Sprintf("repository %q publishes no set %q", repo.Name, spec))
				return
			}
			rs.set = spec
		}
		h(w, r, rs)
	}
}

// published lists the setSpecs that get their own resource set: the configured
// sets, or else every set ListSets reported.
func (s *Server) published(ctx context.Context, repo config.Repository) ([]string, error) {
	if len(repo.Sets) > 0 {
		return repo.Sets, nil
	}
	var specs []string
	err := s.db.View(ctx, func(snap *store.Snap) error {
		sets, err := snap.Sets(repo.Name)
		for _, si := range sets {
			specs = append(specs, si.Spec)
		}
		return err
	})
	return specs, err
}

// resourceSets lists every resource set of every repository, in a stable order.
func (s *Server) resourceSets(ctx context.Context) ([]resourceSet, error) {
	var out []resourceSet
	for _, repo := range s.cfg.Repositories {
		specs, err := s.published(ctx, repo)
		if err != nil {
			return nil, err
		}
		for _, p := range repo.MetadataPrefixes {
			out = append(out, resourceSet{repo: repo, prefix: p, set: store.AllSet, base: s.base})
			for _, spec := range specs {
				out = append(out, resourceSet{repo: repo, prefix: p, set: spec, base: s.base})
			}
		}
	}
	return out, nil
}

// fail answers an error that happened before anything was written.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	s.log.Error("request failed", "path", r.URL.Path, "err", err)
	httpError(w, http.StatusInternalServerError, "internal error; see the rsbridge log")
}

// document starts an XML response. If streaming fails after the first bytes
// went out, abort cuts the connection so the client sees a broken transfer
// rather than a document that looks complete.
func (s *Server) document(w http.ResponseWriter, r *http.Request, cache string) {
	w.Header().Set("Content-Type", xmlType)
	w.Header().Set("Cache-Control", cache)
}

func (s *Server) abort(r *http.Request, err error) {
	if !errors.Is(err, context.Canceled) {
		s.log.Error("response aborted", "path", r.URL.Path, "err", err)
	}
	panic(http.ErrAbortHandler)
}

func (s *Server) sourceDescription(w http.ResponseWriter, r *http.Request) {
	sets, err := s.resourceSets(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
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

func (s *Server) capabilityList(w http.ResponseWriter, r *http.Request, rs resourceSet) {
	s.document(w, r, "no-cache")
	if r.Method == http.MethodHead {
		return
	}
	d := rsync.NewURLSet(w, rsync.MD{Capability: rsync.CapabilityList},
		rsync.Link{Rel: "up", Href: s.sourceDescriptionURL()}, rsync.Link{Rel: "describedby", Href: rs.about()})
	d.Write(rsync.Entry{Loc: rs.resourceList(), MD: &rsync.MD{Capability: rsync.ResourceList}})
	d.Write(rsync.Entry{Loc: rs.changeListIndex(), MD: &rsync.MD{Capability: rsync.ChangeList}})
	if err := d.Close(); err != nil {
		s.abort(r, err)
	}
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
	return e
}

// alternate is another format of the repository and a cursor over its live
// records, walked alongside a Resource List (both are in identifier order).
type alternate struct {
	prefix string
	live   *store.LiveCursor
}

func (rs resourceSet) resourceIn(prefix, id string) string {
	return resourceURL(rs.base, rs.repo.Name, prefix, id)
}

// getRecordURL returns a function building the upstream OAI-PMH GetRecord
// request of a record in one format; the fixed part is built once per document.
func getRecordURL(base, prefix string) func(id string) string {
	u, err := url.Parse(base)
	if err != nil {
		return func(string) string { return base }
	}
	q := u.Query()
	q.Set("verb", "GetRecord")
	q.Set("metadataPrefix", prefix)
	u.RawQuery = q.Encode()
	head := u.String() + "&identifier="
	return func(id string) string { return head + url.QueryEscape(id) }
}

// resourceList serves the whole Resource List when it fits one page, otherwise a
// Resource List Index whose pages start at given identifiers, so a page stays the
// same run of records however the store grows while a client walks the index.
func (s *Server) resourceList(w http.ResponseWriter, r *http.Request, rs resourceSet) {
	at := s.now().UTC()
	s.snapshotDocument(w, r, func(snap *store.Snap, begin func(string) bool) error {
		var starts []string
		count, err := snap.Pages(rs.repo.Name, rs.prefix, rs.set, s.limit, func(_ int, first string) error {
			starts = append(starts, first)
			return nil
		})
		if err != nil {
			return err
		}
		if !begin("no-cache") {
			return nil
		}
		if count <= s.limit {
			return s.writeResources(w, snap, rs, at, "", s.limit, false)
		}
		d := rsync.NewSitemapIndex(w, rsync.MD{Capability: rsync.ResourceList, At: at, Completed: at}, rsync.Link{Rel: "up", Href: rs.capabilityList()})
		for i, first := range starts {
			d.Write(rsync.Entry{Loc: rs.resourceListPage(i+1, first)})
		}
		return d.Close()
	})
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
	at := s.now().UTC()
	s.snapshotDocument(w, r, func(snap *store.Snap, begin func(string) bool) error {
		start, ok := r.URL.Query()["start"]
		first := ""
		if ok {
			first = start[0]
		} else {
			found := false
			if _, err := snap.Pages(rs.repo.Name, rs.prefix, rs.set, s.limit, func(i int, id string) error {
				if i == n {
					first, found = id, true
				}
				return nil
			}); err != nil {
				return err
			}
			if !found && n > 1 {
				httpError(w, http.StatusNotFound, fmt.Sprintf("resource list page %d does not exist", n))
				return nil
			}
		}
		if !begin("no-cache") {
			return nil
		}
		return s.writeResources(w, snap, rs, at, first, s.limit, true)
	})
}

// lists returns the set's Change Lists with the open one last: the catalog's
// lists, plus, when the newest one is already closed (or there is none), the
// open list that the next change will go to.
func (s *Server) lists(snap *store.Snap, rs resourceSet, now time.Time) ([]store.ChangeListInfo, error) {
	lists, err := snap.ChangeLists(rs.repo.Name, rs.prefix, rs.set)
	if err != nil {
		return nil, err
	}
	var last *store.ChangeListInfo
	if len(lists) > 0 {
		last = &lists[len(lists)-1]
	}
	if last == nil || !last.Until(now).IsZero() {
		lists = append(lists, store.NextList(last, now, s.period, s.limit))
	}
	return lists, nil
}

func (s *Server) changeListIndex(w http.ResponseWriter, r *http.Request, rs resourceSet) {
	now := s.now().UTC()
	s.snapshotDocument(w, r, func(snap *store.Snap, begin func(string) bool) error {
		lists, err := s.lists(snap, rs, now)
		if err != nil {
			return err
		}
		if !begin("no-cache") {
			return nil
		}
		d := rsync.NewSitemapIndex(w, rsync.MD{Capability: rsync.ChangeList, From: lists[0].From}, rsync.Link{Rel: "up", Href: rs.capabilityList()})
		for _, l := range lists {
			d.Write(rsync.Entry{Loc: rs.changeList(l.ID), MD: &rsync.MD{From: l.From, Until: l.Until(now)}})
		}
		return d.Close()
	})
}

// changeList serves one Change List: one entry per change in the set, in order,
// with the detection time as datetime (GW-RS-08) and the upstream datestamp on
// the via link. A closed list never changes and may be cached for long.
func (s *Server) changeList(w http.ResponseWriter, r *http.Request, rs resourceSet) {
	id := vars(r)["list"]
	now := s.now().UTC()
	s.snapshotDocument(w, r, func(snap *store.Snap, begin func(string) bool) error {
		l, err := snap.ChangeList(rs.repo.Name, rs.prefix, rs.set, id)
		if err != nil {
			return err
		}
		if l == nil {
			lists, err := s.lists(snap, rs, now)
			if err != nil {
				return err
			}
			if open := lists[len(lists)-1]; open.ID == id && open.Count == 0 {
				l = &open
			}
		}
		if l == nil {
			httpError(w, http.StatusNotFound, fmt.Sprintf("no change list %q; see %s", id, rs.changeListIndex()))
			return nil
		}
		until := l.Until(now)
		cache := "no-cache"
		if !until.IsZero() {
			cache = "public, max-age=31536000, immutable"
		}
		if !begin(cache) {
			return nil
		}
		d := rsync.NewURLSet(w, rsync.MD{Capability: rsync.ChangeList, From: l.From, Until: until},
			rsync.Link{Rel: "up", Href: rs.capabilityList()}, rsync.Link{Rel: "index", Href: rs.changeListIndex()})
		if l.Count > 0 {
			via := getRecordURL(rs.repo.BaseURL, rs.prefix)
			err := snap.SetEvents(rs.repo.Name, rs.prefix, rs.set, l.FirstSeq, l.LastSeq, func(ev *store.SetEvent) error {
				e := rsync.Entry{Loc: rs.resource(ev.Identifier), MD: &rsync.MD{Change: ev.Change.String(), DateTime: ev.Time}}
				if ev.Change != store.Deleted {
					e.LastMod = ev.Time
					e.MD.Hash, e.MD.Length, e.MD.HasLength, e.MD.Type = rsync.Hash(ev.MD5, ev.SHA256), ev.Length, true, xmlType
				}
				e.Links = []rsync.Link{{Rel: "via", Href: via(ev.Identifier), Modified: ev.Datestamp}}
				return d.Write(e)
			})
			if err != nil {
				return err
			}
		}
		return d.Close()
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

// gzipDocuments compresses ResourceSync documents and pages, only for clients
// that ask with Accept-Encoding: gzip (the reference client never does).
// Resources are served as stored, so their bytes, length and hash agree with
// the lists.
func gzipDocuments(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/resource/") || !acceptsGzip(r.Header.Get("Accept-Encoding")) || r.Method == http.MethodHead {
			if !strings.Contains(r.URL.Path, "/resource/") {
				w.Header().Add("Vary", "Accept-Encoding")
			}
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Add("Vary", "Accept-Encoding")
		zw := gzip.NewWriter(w)
		gw := &gzipWriter{ResponseWriter: w, zw: zw}
		defer func() {
			if !gw.plain {
				zw.Close()
			}
		}()
		next.ServeHTTP(gw, r)
	})
}

// acceptsGzip reads Accept-Encoding: gzip listed without q=0.
func acceptsGzip(v string) bool {
	for _, part := range strings.Split(v, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		for _, p := range strings.Split(params, ";") {
			k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.TrimSpace(k) == "q" {
				q, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
				return err == nil && q > 0
			}
		}
		return true
	}
	return false
}

type gzipWriter struct {
	http.ResponseWriter
	zw    *gzip.Writer
	plain bool // an error response: sent uncompressed
	wrote bool
}

func (g *gzipWriter) WriteHeader(code int) {
	if !g.wrote {
		g.wrote = true
		g.Header().Del("Content-Length")
		if code >= 300 {
			g.plain = true
			g.Header().Del("Content-Encoding")
		}
	}
	g.ResponseWriter.WriteHeader(code)
}

func (g *gzipWriter) Write(b []byte) (int, error) {
	if !g.wrote {
		g.WriteHeader(http.StatusOK)
	}
	if g.plain {
		return g.ResponseWriter.Write(b)
	}
	return g.zw.Write(b)
}
