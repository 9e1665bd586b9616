package bridge

import (
	"bytes"
	"fmt"
	"io"
	"net/http"

	"github.com/rsbridge/rsbridge/bridge/ore"
	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/store"
)

// OAI-ORE Resource Maps (issue 12): one per live item of a repository, built on
// request from the item's stored metadata records, at
//
//	{base}/{repo}/map/{id}       ORE 1.0 Atom (an Atom entry)
//	{base}/{repo}/map-0.2/{id}   the ORE 0.2 Atom profile (a feed), linked as alternate
//
// Each document describes its own URL + "#aggregation" (ORE-015); the 0.2 feed
// names the 1.0 one as related (ore:analogousTo). The 1.0 one is the
// Aggregation's URI in ResourceSync: every Resource List and Change List entry
// of the item carries it as rel="collection" (spec §14.7). Both documents carry
// the repository's metadata_rights as atom:rights. Neither has a
// rel="resourcesync" link, in the document or as an HTTP Link header: a
// Capability List so linked must list the linking resource (RS-046), and no
// Capability List lists Resource Maps.

func (s *Server) resourceMap(w http.ResponseWriter, r *http.Request) {
	s.serveMap(w, r, (*ore.Map).WriteORE10)
}

func (s *Server) resourceMap02(w http.ResponseWriter, r *http.Request) {
	s.serveMap(w, r, (*ore.Map).WriteORE02)
}

func (s *Server) serveMap(w http.ResponseWriter, r *http.Request, write func(*ore.Map, io.Writer) error) {
	v := vars(r)
	repo, ok := s.cfg().Repository(v["repo"])
	if !ok {
		s.fail(w, r, source.NotFound("no repository %q", v["repo"]))
		return
	}
	id := v["id"]
	if !source.ValidIdentifier(id) {
		s.fail(w, r, source.Invalid("not an identifier"))
		return
	}
	var m *ore.Map
	var etag string
	var found bool
	err := s.db.View(r.Context(), func(snap *store.Snap) error {
		var err error
		m, etag, found, err = s.src.Map(r.Context(), snap, repo, id)
		return err
	})
	switch {
	case err != nil:
		s.fail(w, r, err)
		return
	case m == nil && found:
		s.fail(w, r, source.Gone("gone: record %q was deleted from %s", source.Clip(id, 200), repo.Name))
		return
	case m == nil:
		s.fail(w, r, source.NotFound("unknown item: %s has no record %q", repo.Name, source.Clip(id, 200)))
		return
	}
	var buf bytes.Buffer
	if err := write(m, &buf); err != nil {
		s.fail(w, r, fmt.Errorf("resource map of %s %q: %w", repo.Name, id, err))
		return
	}
	w.Header().Set("Content-Type", ore.MediaType)
	w.Header().Set("ETag", `"`+etag+`"`)
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, "", m.Updated, bytes.NewReader(buf.Bytes()))
}
