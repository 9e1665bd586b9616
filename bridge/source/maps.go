package source

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"

	"github.com/rsbridge/rsbridge/bridge/ore"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/store"
)

// oreVersion changes whenever the maps' content for the same records changes,
// so their ETags change with it.
const oreVersion = "2"

// Map assembles the map of an item from its live records in every
// format, all read from one snapshot. It returns nil when no format holds the
// item live; found reports whether the store knows it at all (then it is gone).
// The ETag covers everything the map is made of.
func (s *Source) Map(ctx context.Context, snap *store.Snap, repo config.Repository, id string) (m *ore.Map, etag string, found bool, err error) {
	var records []ore.MetadataRecord
	var facts []ore.Facts
	var members []string
	rights := s.cfg.Resolved(repo).MetadataRights
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%s\x00", oreVersion, s.base, repo.Name, id, rights)
	err = func() error {
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
			records = append(records, ore.MetadataRecord{URL: ResourceURL(s.base, repo.Name, prefix, id), Prefix: prefix,
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
	}()
	if err != nil || len(records) == 0 {
		return nil, "", found, err
	}
	base := ore.Map{
		URI:           MapURL(s.base, repo.Name, id),
		AltURI:        Map02URL(s.base, repo.Name, id),
		ID:            ore.MapID(repo.Name, id),
		OAIIdentifier: id,
		Author:        ore.Agent{Name: "rsbridge (ResourceSync gateway)", URI: s.base + "/"},
		Rights:        rights,
	}
	slices.Sort(members)
	for _, set := range members {
		ok, err := s.IsPublished(ctx, repo, set)
		if err != nil {
			return nil, "", found, err
		}
		if ok {
			base.IsPartOf = append(base.IsPartOf, s.Set(repo, records[0].Prefix, set).CapabilityList())
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
