package bridge

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"

	"github.com/rsbridge/rsbridge/bridge/ore"
	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/config"
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

// oreVersion changes whenever the maps' content for the same records changes,
// so their ETags change with it.
const oreVersion = "2"

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
	m, etag, found, err := s.buildMap(r, repo, id)
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

// buildMap assembles the map of an item from its live records in every
// format, all read from one snapshot. It returns nil when no format holds the
// item live; found reports whether the store knows it at all (then it is gone).
// The ETag covers everything the map is made of.
func (s *Server) buildMap(r *http.Request, repo config.Repository, id string) (m *ore.Map, etag string, found bool, err error) {
	var records []ore.MetadataRecord
	var facts []ore.Facts
	var members []string
	rights := s.cfg().Resolved(repo).MetadataRights
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%s\x00", oreVersion, s.src.Base(), repo.Name, id, rights)
	err = s.db.View(r.Context(), func(snap *store.Snap) error {
		for _, prefix := range repo.MetadataPrefixes {
			rec, err := snap.Record(repo.Name, prefix, id)
			if err != nil {
				return err
			}
			if rec == nil {
				continue
			}
			found = true
			if rec.Deleted {
				continue
			}
			meta, err := snap.Metadata(repo.Name, prefix, id)
			if err != nil || meta == nil {
				return err
			}
			f, _ := ore.Extract(meta, repoHost(repo)) // a record that does not parse adds nothing but itself
			records = append(records, ore.MetadataRecord{URL: source.ResourceURL(s.src.Base(), repo.Name, prefix, id), Prefix: prefix,
				Namespace: rec.Namespace, FirstSeen: rec.FirstSeen, Modified: rec.Modified, Length: rec.Length})
			facts = append(facts, f)
			for _, set := range rec.Members() {
				if !slices.Contains(members, set) {
					members = append(members, set)
				}
			}
			fmt.Fprintf(h, "%s\x00%s\x00%d\x00%v\x00", prefix, rec.SHA256, rec.Modified.UnixNano(), rec.Members())
		}
		return nil
	})
	if err != nil || len(records) == 0 {
		return nil, "", found, err
	}
	base := ore.Map{
		URI:           source.MapURL(s.src.Base(), repo.Name, id),
		AltURI:        source.Map02URL(s.src.Base(), repo.Name, id),
		ID:            ore.MapID(repo.Name, id),
		OAIIdentifier: id,
		Author:        ore.Agent{Name: "rsbridge (ResourceSync gateway)", URI: s.src.Base() + "/"},
		Rights:        rights,
	}
	slices.Sort(members)
	for _, set := range members {
		ok, err := s.src.IsPublished(r.Context(), repo, set)
		if err != nil {
			return nil, "", found, err
		}
		if ok {
			base.IsPartOf = append(base.IsPartOf, s.src.Set(repo, records[0].Prefix, set).CapabilityList())
		}
	}
	fmt.Fprintf(h, "%v", base.IsPartOf)
	assembled := ore.Assemble(base, records, facts, ore.AssembleOptions{})
	return &assembled, hex.EncodeToString(h.Sum(nil)), true, nil
}

// repoHost is the host of a repository's OAI-PMH endpoint, preferred among
// landing pages.
func repoHost(repo config.Repository) string {
	u, err := url.Parse(repo.BaseURL)
	if err != nil {
		return ""
	}
	return u.Hostname()
}
