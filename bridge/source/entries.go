package source

import (
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/store"
)

// The entries of every document, built in one place each: a Resource List
// entry, a change (Change List, notification), and the two kinds of dump
// manifest entry.

// DocRoom is what a document needs beside its entries: the XML
// declaration, the root element with its namespaces, rs:md and links.
const DocRoom = 4 << 10

// ChangeListBytes is the most a Change List's entries may take
// (store.Options.ChangeListBytes): the sitemap limit less DocRoom.
const ChangeListBytes = rsync.MaxBytes - DocRoom

// widest is the longest time a document writes.
func widest() time.Time { return time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC) }

// resourceEntry describes one live record: where rsbridge serves it, when its
// copy last changed, fixity, and the related links of resourcesync.md §14:
// via the upstream GetRecord (with the upstream datestamp), alternate
// formats rsbridge also serves, the landing page the metadata describes,
// and the ORE aggregation.
func resourceEntry(rs Set, via func(string) string, others []alternate, rec *store.Record) rsync.Entry {
	e := rsync.Entry{
		Loc:     rs.Resource(rec.Identifier),
		LastMod: rec.Modified,
		MD:      &rsync.MD{Hash: rsync.Hash(rec.MD5, rec.SHA256), Length: rec.Length, HasLength: true, Type: XMLType},
	}
	e.Links = append(e.Links, rsync.Link{Rel: "via", Href: via(rec.Identifier), Modified: rec.Datestamp})
	if p := profile(rs); p != "" {
		e.Links = append(e.Links, rsync.Link{Rel: "profile", Href: p})
	}
	for _, o := range others {
		if o.live.Has(rec.Identifier) {
			e.Links = append(e.Links, rsync.Link{Rel: "alternate", Href: rs.ResourceIn(o.prefix, rec.Identifier), Type: XMLType})
		}
	}
	if rec.Landing != "" {
		e.Links = append(e.Links, rsync.Link{Rel: "describes", Href: rec.Landing})
	}
	e.Links = append(e.Links, rsync.Link{Rel: "collection", Href: AggregationURL(rs.base, rs.Repo.Name, rec.Identifier)})
	return e
}

// profile is the schema of a derived format's records (GW-J2J-20), ""
// for a harvested format.
func profile(rs Set) string {
	if _, derived := rs.Repo.DerivedFrom(rs.Prefix); derived {
		return config.DerivedProfile(rs.Prefix)
	}
	return ""
}

// alternate is another format of the repository and a cursor over its live
// records, walked alongside a Resource List (both are in identifier order).
type alternate struct {
	prefix string
	live   *store.LiveCursor
}

// entryBound returns an upper bound of the bytes resourceEntry writes for a
// record, from its identifier and landing page alone: the entry of an empty
// identifier with the widest times, length and hashes and every alternate
// format, plus what the identifier adds to each URL that carries it and the
// landing page's href.
func (s *Source) entryBound(rs Set) func(*store.Record) int64 {
	probe := &store.Record{Modified: widest(), Datestamp: widest(), Length: math.MaxInt64,
		MD5: strings.Repeat("0", 32), SHA256: strings.Repeat("0", 64), Landing: "x"}
	e := resourceEntry(rs, s.via(rs), nil, probe)
	alternates := int64(0)
	for _, p := range rs.Repo.MetadataPrefixes {
		if p != rs.Prefix {
			e.Links = append(e.Links, rsync.Link{Rel: "alternate", Href: rs.ResourceIn(p, ""), Type: XMLType})
			alternates++
		}
	}
	fixed := rsync.EntrySize(e) - 1 // less the probe's landing
	segments := 2 + alternates      // loc, the alternates, collection
	return func(rec *store.Record) int64 {
		id := rec.Identifier
		return fixed + segments*int64(rsync.EscapedLen(Segment(id))) + int64(rsync.EscapedLen(url.QueryEscape(id))) + int64(rsync.EscapedLen(rec.Landing))
	}
}

// ChangeEntry is the entry of one change in a set, in a Change List or a
// notification: datetime is when rsbridge detected it (GW-RS-08), the
// upstream datestamp is on the via link.
func ChangeEntry(rs Set, via func(string) string, ev *store.SetEvent) rsync.Entry {
	e := rsync.Entry{Loc: rs.Resource(ev.Identifier), MD: &rsync.MD{Change: ev.Change.String(), DateTime: ev.Time}}
	if ev.Change != store.Deleted {
		e.LastMod = ev.Time
		e.MD.Hash, e.MD.Length, e.MD.HasLength, e.MD.Type = rsync.Hash(ev.MD5, ev.SHA256), ev.Length, true, XMLType
	}
	e.Links = []rsync.Link{{Rel: "via", Href: via(ev.Identifier), Modified: ev.Datestamp}}
	if p := profile(rs); p != "" && ev.Change != store.Deleted {
		e.Links = append(e.Links, rsync.Link{Rel: "profile", Href: p})
	}
	if ev.Change != store.Deleted {
		e.Links = append(e.Links, rsync.Link{Rel: "collection", Href: AggregationURL(rs.base, rs.Repo.Name, ev.Identifier)})
	}
	return e
}

// ChangeEntryBound returns, for store.Options.ChangeEntryBytes, an upper
// bound of the bytes one Change List entry about an identifier takes in the
// lists this configuration serves: the entry of an empty identifier with the
// widest values, plus what the identifier adds to each URL that carries it.
func ChangeEntryBound(cfg *config.Config) func(repo, prefix, id string) int64 {
	base := strings.TrimRight(cfg.BaseURL, "/")
	fixed := map[[2]string]int64{}
	for _, repo := range cfg.Repositories {
		for _, p := range repo.MetadataPrefixes {
			rs := Set{Repo: repo, Prefix: p, Spec: store.AllSet, base: base}
			ev := &store.SetEvent{Change: store.Updated, Time: widest(), Datestamp: widest(), Length: math.MaxInt64,
				MD5: strings.Repeat("0", 32), SHA256: strings.Repeat("0", 64)}
			fixed[[2]string{repo.Name, p}] = rsync.EntrySize(ChangeEntry(rs, GetRecordURL(cfg.PublicBaseURL(repo), UpstreamPrefix(repo, p)), ev))
		}
	}
	return func(repo, prefix, id string) int64 {
		f, ok := fixed[[2]string{repo, prefix}]
		if !ok {
			return 0 // not served: nothing to bound
		}
		// loc and the collection link carry the identifier as a path
		// segment, the via link as a query value.
		return f + 2*int64(rsync.EscapedLen(Segment(id))) + int64(rsync.EscapedLen(url.QueryEscape(id)))
	}
}

// ResourceManifestEntry is a record's entry in a Resource Dump Manifest:
// its bytes are at /resources/{PackageName} in the package.
func ResourceManifestEntry(rs Set, rec *store.Record) rsync.Entry {
	return rsync.Entry{Loc: rs.Resource(rec.Identifier), LastMod: rec.Modified, MD: &rsync.MD{
		Path: "/" + ResourcePath(rec.Identifier), Hash: rsync.Hash(rec.MD5, rec.SHA256), Length: rec.Length, HasLength: true, Type: XMLType}}
}

// ChangeManifestEntry is a change's entry in a Change Dump Manifest: the
// bytes of a created or updated resource, as they were at that change, are
// at ChangePath in the package.
func ChangeManifestEntry(rs Set, ev *store.SetEvent) rsync.Entry {
	e := rsync.Entry{Loc: rs.Resource(ev.Identifier), MD: &rsync.MD{Change: ev.Change.String(), DateTime: ev.Time}}
	if ev.Change != store.Deleted {
		e.LastMod = ev.Time
		e.MD.Path, e.MD.Hash, e.MD.Length, e.MD.HasLength, e.MD.Type = "/"+ChangePath(ev), rsync.Hash(ev.MD5, ev.SHA256), ev.Length, true, XMLType
	}
	return e
}

// ResourcePath is where a Resource Dump package holds a record's bytes.
func ResourcePath(id string) string { return "resources/" + PackageName(id) }

// ChangePath is where a Change Dump package holds the bytes of a change.
func ChangePath(ev *store.SetEvent) string {
	return fmt.Sprintf("changes/%010d-%s", ev.Seq, PackageName(ev.Identifier))
}

// packageMD is the rs:md of a package in a dump document.
func packageMD(p store.Package) rsync.MD {
	return rsync.MD{Type: "application/zip", Length: p.Length, HasLength: true, Hash: rsync.Hash(p.MD5, p.SHA256)}
}

// MaxPackageName bounds a file name inside a package; longer escaped
// identifiers are cut and completed with a hash of the whole identifier.
const MaxPackageName = 200

// PackageName is the file name of a resource's bytes inside a package: the
// identifier as rsync.SafeName writes it, at most MaxPackageName bytes with
// ".xml" (so no "/", no "..", nothing absolute or hidden, and no two
// identifiers give the same name).
func PackageName(id string) string {
	return rsync.SafeName(id, MaxPackageName-len(".xml")) + ".xml"
}
