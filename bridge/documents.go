package bridge

import (
	"bytes"
	"cmp"
	"fmt"
	"net/http"
	"strconv"

	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/store"
)

// Document handlers: parse the request, ask the source for a Doc, send it.
// Small documents are rendered straight into the response; those with a
// cache key go through the document cache (cache.go). Headers go out just
// before the first byte; an error after that aborts the connection, so the
// client sees a broken transfer rather than a document that looks complete.

// sendDoc sends a document that needs no snapshot.
func (s *Server) sendDoc(w http.ResponseWriter, r *http.Request, doc source.Doc, err error) {
	if err != nil {
		s.fail(w, r, err)
		return
	}
	docHeaders(w, doc)
	if r.Method == http.MethodHead {
		return
	}
	if err := doc.Write(w); err != nil {
		s.abort(r, err)
	}
}

// docHeaders are the headers of an XML document: final documents may be
// kept for a year, every other one is checked each time.
func docHeaders(w http.ResponseWriter, doc source.Doc) {
	w.Header().Set("Content-Type", cmp.Or(doc.Type, source.XMLType))
	w.Header().Set("Cache-Control", cacheControl(doc))
}

func cacheControl(doc source.Doc) string {
	if doc.Final {
		return "public, max-age=31536000, immutable"
	}
	return "no-cache"
}

// snapDoc serves the document plan makes of a resource set.
func (s *Server) snapDoc(plan func(*store.Snap, source.Set) (source.Doc, error)) http.HandlerFunc {
	return s.withSet(func(w http.ResponseWriter, r *http.Request, rs source.Set) {
		s.serveSnap(w, r, func(snap *store.Snap) (source.Doc, error) { return plan(snap, rs) })
	})
}

// serveSnap plans a document on one store snapshot and renders it from
// that snapshot: into the cache when it has a key (and is then sent from
// the cache file after the snapshot is released), else into the response.
func (s *Server) serveSnap(w http.ResponseWriter, r *http.Request, plan func(*store.Snap) (source.Doc, error)) {
	var hit *cached
	started := false
	err := s.db.View(r.Context(), func(snap *store.Snap) error {
		doc, err := plan(snap)
		if err != nil {
			return err
		}
		if doc.Key != "" {
			e, ok, err := s.cache.get(doc.Key, cacheControl(doc), doc.Modified, doc.Write)
			if err != nil || ok {
				hit = e
				return err
			}
		}
		docHeaders(w, doc)
		if r.Method == http.MethodHead {
			return nil
		}
		started = true
		return doc.Write(w)
	})
	switch {
	case err != nil && started:
		s.abort(r, err)
	case err != nil:
		s.fail(w, r, err)
	case hit != nil:
		releaseSlot(r) // the snapshot is released: the rest is a file
		if err := hit.serve(w, r); err != nil {
			s.fail(w, r, err)
		}
	}
}

// abort cuts a response that broke off after its first bytes.
func (s *Server) abort(r *http.Request, err error) {
	if clientGone(r, err) {
		s.log.Debug("client went away or stopped reading", "path", source.Clip(r.URL.Path, 200), "err", err)
	} else {
		s.log.Error("response aborted", "path", source.Clip(r.URL.Path, 200), "err", err)
	}
	panic(http.ErrAbortHandler)
}

func (s *Server) sourceDescription(w http.ResponseWriter, r *http.Request) {
	doc, err := s.src.SourceDescription(r.Context())
	s.sendDoc(w, r, doc, err)
}

func (s *Server) sourceDescriptionPage(w http.ResponseWriter, r *http.Request) {
	rg, err := source.PageRange(r.URL.Query())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	doc, err := s.src.SourceDescriptionPage(r.Context(), rg.Start, rg.End)
	s.sendDoc(w, r, doc, err)
}

func (s *Server) resourceListPage(w http.ResponseWriter, r *http.Request, rs source.Set) {
	n, err := strconv.Atoi(vars(r)["page"])
	if err != nil {
		s.fail(w, r, source.NotFound("no such page"))
		return
	}
	rg, err := source.PageRange(r.URL.Query())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.serveSnap(w, r, func(snap *store.Snap) (source.Doc, error) { return s.src.ResourceListPage(snap, rs, n, rg) })
}

func (s *Server) changeList(w http.ResponseWriter, r *http.Request, rs source.Set) {
	id := vars(r)["list"]
	s.serveSnap(w, r, func(snap *store.Snap) (source.Doc, error) { return s.src.ChangeList(snap, rs, id) })
}

func (s *Server) changeDump(w http.ResponseWriter, r *http.Request, rs source.Set) {
	now := s.now().UTC()
	s.serveSnap(w, r, func(snap *store.Snap) (source.Doc, error) { return s.src.ChangeDump(snap, rs, now) })
}

// resource serves a record's metadata document: the stored bytes, whose hash
// and length are what the lists say.
func (s *Server) resource(w http.ResponseWriter, r *http.Request) {
	v := vars(r)
	repo, err := s.src.Format(v["repo"], v["prefix"])
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var rec *store.Record
	var meta []byte
	err = s.db.View(r.Context(), func(snap *store.Snap) error {
		var err error
		rec, meta, err = s.src.Resource(snap, repo.Name, v["prefix"], v["id"])
		return err
	})
	if err != nil && statusOf(err) == http.StatusInternalServerError {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Link", fmt.Sprintf("<%s>; rel=\"resourcesync\"", s.src.All(repo, v["prefix"]).CapabilityList()))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", source.XMLType)
	w.Header().Set("ETag", `"`+rec.SHA256+`"`)
	w.Header().Set("Cache-Control", "no-cache")
	// ServeContent answers conditional requests (304), HEAD and ranges, and sets
	// Content-Length and Last-Modified.
	http.ServeContent(w, r, "", rec.Modified, bytes.NewReader(meta))
}

// channel serves a set's change-notification topic (CN-024..CN-027): 200,
// application/xml, Link self and hub, and the latest notification.
func (s *Server) channel(w http.ResponseWriter, r *http.Request, rs source.Set) {
	var body bytes.Buffer
	var doc source.Doc
	err := s.db.View(r.Context(), func(snap *store.Snap) error {
		var err error
		if doc, err = s.src.Channel(snap, rs); err != nil {
			return err
		}
		return doc.Write(&body)
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", source.XMLType)
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="self", <%s>; rel="hub", <%s>; rel="resourcesync"`, rs.Topic(), s.src.Hub(), rs.CapabilityList()))
	http.ServeContent(w, r, "", doc.Modified, bytes.NewReader(body.Bytes()))
}
