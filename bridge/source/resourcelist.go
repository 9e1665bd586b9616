package source

import (
	"crypto/sha256"
	"fmt"
	"io"
	"math"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/store"
)

// Resource Lists. A set that fits one sitemap gets one Resource List;
// otherwise a Resource List Index whose pages are key ranges: each page URL
// names its first identifier and the next page's, so the pages partition the
// identifiers and a page lists exactly the records live in its range when
// it is read. A record created, deleted or moved while a destination walks
// the index changes one page only; none falls between two pages or is on
// two (resourcesync.md, RS-030..RS-040).

// ResourceList is the set's Resource List, or its Resource List Index. The
// index's at is its snapshot's horizon; it has no completed, since its
// pages are read later, each with its own at and completed.
func (s *Source) ResourceList(snap *store.Snap, rs Set) (Doc, error) {
	v, err := version(snap, rs)
	if err != nil {
		return Doc{}, err
	}
	at := snap.At(rs.Repo.Name, rs.Prefix)
	return Doc{Key: fmt.Sprintf("resourcelist|%s|%d", rs.Path(), v), Modified: at, Write: func(w io.Writer) error {
		cut, err := s.cutPages(snap, rs)
		if err != nil {
			return err
		}
		if cut.single(s.pageLimit) {
			return s.writeResources(w, snap, rs, "", "", false)
		}
		d := rsync.NewSitemapIndex(w, rsync.MD{Capability: rsync.ResourceList, At: at}, rsync.Link{Rel: "up", Href: rs.CapabilityList()})
		for i := range cut.starts {
			start, end := cut.page(i)
			d.Write(rsync.Entry{Loc: rs.ResourceListPage(i+1, start, end)})
		}
		return d.Close()
	}}, nil
}

// Range is the key range of an index page: [Start, End), "" leaving an end
// open. Ranged is false for a page URL without one (found by cutting the
// set as the index does now).
type Range struct {
	Start, End string
	Ranged     bool
}

// maxIdentifierBytes bounds an identifier given in a request (start=, a
// resource path); the harvest refuses longer ones (oaipmh.Options.MaxIdentifierBytes).
const maxIdentifierBytes = 8192

// ValidIdentifier reports whether id could be a stored identifier.
func ValidIdentifier(id string) bool {
	return id != "" && len(id) <= maxIdentifierBytes && utf8.ValidString(id) && !strings.ContainsRune(id, 0)
}

// PageRange reads a page's range from its URL's query: start and end, each
// optional (the first page has no start, the last no end).
func PageRange(q url.Values) (Range, error) {
	var r Range
	for _, k := range []string{"start", "end"} {
		v, has := q[k]
		if !has {
			continue
		}
		if len(v) != 1 || !ValidIdentifier(v[0]) {
			return Range{}, Invalid("%s must be one identifier, as the Resource List Index gives it", k)
		}
		r.Ranged = true
		if k == "start" {
			r.Start = v[0]
		} else {
			r.End = v[0]
		}
	}
	if r.End != "" && r.Start >= r.End {
		return Range{}, Invalid("a page's start must come before its end")
	}
	return r, nil
}

// ResourceListPage is page n of the set's Resource List Index: the live
// records in the range its URL names. A range that has grown past what a
// sitemap may hold since the index was read is a conflict: the destination
// reads the index again, which cuts the range anew. Nothing is dropped.
func (s *Source) ResourceListPage(snap *store.Snap, rs Set, n int, r Range) (Doc, error) {
	if n < 1 {
		return Doc{}, NotFound("no such page")
	}
	v, err := version(snap, rs)
	if err != nil {
		return Doc{}, err
	}
	if !r.Ranged {
		cut, err := s.cutPages(snap, rs)
		if err != nil {
			return Doc{}, err
		}
		if n > len(cut.starts) && n > 1 {
			return Doc{}, NotFound("resource list page %d does not exist; see %s", n, rs.ResourceList())
		}
		if n <= len(cut.starts) {
			r.Start, r.End = cut.page(n - 1)
		}
	}
	count, bytes := 0, int64(0)
	size := s.entryBound(rs)
	if err := snap.Resources(rs.Repo.Name, rs.Prefix, rs.Spec, r.Start, r.End, math.MaxInt, func(rec *store.Record) error {
		count++
		bytes += size(rec)
		return nil
	}); err != nil {
		return Doc{}, err
	}
	if count > rsync.MaxEntries || bytes+DocRoom > rsync.MaxBytes {
		return Doc{}, conflict("this page's range now holds %d records (about %d bytes), more than one sitemap may; read the Resource List Index again: %s", count, bytes, rs.ResourceList())
	}
	return Doc{Key: fmt.Sprintf("resourcelist-page|%s|%d|%s|%s", rs.Path(), v, r.Start, r.End), Modified: snap.At(rs.Repo.Name, rs.Prefix),
		Write: func(w io.Writer) error { return s.writeResources(w, snap, rs, r.Start, r.End, true) }}, nil
}

// pageCut is how a set's live records fall into Resource List pages: each
// page starts at starts[i] and ends where the next begins.
type pageCut struct {
	starts []string
	count  int
	bytes  int64 // the entries' size bound, all pages
}

// single reports whether the records fit one Resource List.
func (c pageCut) single(limit int) bool {
	return c.count <= limit && c.bytes+DocRoom <= rsync.MaxBytes
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
func (s *Source) cutPages(snap *store.Snap, rs Set) (pageCut, error) {
	return s.cutRange(snap, rs, "", "", min(s.pageLimit, rsync.MaxEntries*9/10))
}

// cutRange cuts the live records of [start, end) into pages of at most
// maxN records and 45 MiB.
func (s *Source) cutRange(snap *store.Snap, rs Set, start, end string, maxN int) (pageCut, error) {
	maxB := int64(rsync.MaxBytes * 9 / 10)
	size := s.entryBound(rs)
	var c pageCut
	var n int
	var b int64
	err := snap.Resources(rs.Repo.Name, rs.Prefix, rs.Spec, start, end, math.MaxInt, func(rec *store.Record) error {
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

// Static Resource Lists (a static export, bridge/export). A static server
// cannot read a page's range from its query, so the exporter keeps each
// set's pages, their ranges and names, in its own state and asks for:

// StaticResourceListPage is the URL of a static index page: named by its
// key range, so a page whose range changes is a new document and one a
// destination is reading keeps its content.
func (rs Set) StaticResourceListPage(start, end string) string {
	h := sha256.Sum256([]byte(start + "\x00" + end))
	return fmt.Sprintf("%s/resourcelist-r%x.xml", rs.Path(), h[:8])
}

// CutRange cuts the live records of [start, end) ("" = unbounded) into
// index pages: as evenly as the sitemap limits allow, each a tenth below
// them. Whole is true when the range fits one Resource List as the server
// would serve it (page_limit records, 50 MiB).
func (s *Source) CutRange(snap *store.Snap, rs Set, start, end string) (pages []Range, whole bool, err error) {
	maxN := min(s.pageLimit, rsync.MaxEntries*9/10)
	c, err := s.cutRange(snap, rs, start, end, maxN)
	if err != nil {
		return nil, false, err
	}
	if len(c.starts) > 1 { // even pages: a range that just overflowed splits in halves, not in a full page and a sliver
		if c, err = s.cutRange(snap, rs, start, end, (c.count+len(c.starts)-1)/len(c.starts)); err != nil {
			return nil, false, err
		}
	}
	for i := range c.starts {
		r := Range{Start: start, End: end, Ranged: true}
		if i > 0 {
			r.Start = c.starts[i]
		}
		if i+1 < len(c.starts) {
			r.End = c.starts[i+1]
		}
		pages = append(pages, r)
	}
	if len(pages) == 0 {
		pages = []Range{{Start: start, End: end, Ranged: true}}
	}
	return pages, c.single(s.pageLimit), nil
}

// ResourceListRange is the Resource List of the live records in [start,
// end): a whole list, or (inIndex) a page of the index at rs.ResourceList().
func (s *Source) ResourceListRange(snap *store.Snap, rs Set, start, end string, inIndex bool) Doc {
	return Doc{Modified: snap.At(rs.Repo.Name, rs.Prefix), Write: func(w io.Writer) error {
		return s.writeResources(w, snap, rs, start, end, inIndex)
	}}
}

// ResourceListIndex is a Resource List Index of the given page URLs.
func (s *Source) ResourceListIndex(snap *store.Snap, rs Set, pages []string) Doc {
	at := snap.At(rs.Repo.Name, rs.Prefix)
	return Doc{Modified: at, Write: func(w io.Writer) error {
		d := rsync.NewSitemapIndex(w, rsync.MD{Capability: rsync.ResourceList, At: at}, rsync.Link{Rel: "up", Href: rs.CapabilityList()})
		for _, p := range pages {
			d.Write(rsync.Entry{Loc: p})
		}
		return d.Close()
	}}
}

// writeResources writes a Resource List, or a page of an index: the live
// records in [start, end) ("" = unbounded), as they are at the snapshot.
func (s *Source) writeResources(w io.Writer, snap *store.Snap, rs Set, start, end string, inIndex bool) error {
	links := []rsync.Link{{Rel: "up", Href: rs.CapabilityList()}}
	if inIndex {
		links = append(links, rsync.Link{Rel: "index", Href: rs.ResourceList()})
	}
	d := rsync.NewURLSet(w, rsync.MD{Capability: rsync.ResourceList, At: snap.At(rs.Repo.Name, rs.Prefix), Completed: snap.Now()}, links...)
	via := s.via(rs)
	var others []alternate
	for _, p := range rs.Repo.MetadataPrefixes {
		if p != rs.Prefix {
			c := snap.LiveCursor(rs.Repo.Name, p, start)
			defer c.Close()
			others = append(others, alternate{prefix: p, live: c})
		}
	}
	err := snap.Resources(rs.Repo.Name, rs.Prefix, rs.Spec, start, end, math.MaxInt, func(rec *store.Record) error {
		return d.Write(resourceEntry(rs, via, others, rec))
	})
	if err != nil {
		return err
	}
	return d.Close()
}

// Resource is a record's metadata document: the stored bytes, whose hash
// and length are what the lists say.
func (s *Source) Resource(snap *store.Snap, repo, prefix, id string) (*store.Record, []byte, error) {
	rec, err := snap.Record(repo, prefix, id)
	if err != nil {
		return nil, nil, err
	}
	if rec == nil {
		return nil, nil, NotFound("unknown resource: %s has no record %q in %s", repo, id, prefix)
	}
	var meta []byte
	if !rec.Deleted {
		if meta, err = snap.Metadata(repo, prefix, id); err != nil {
			return nil, nil, err
		}
	}
	if meta == nil {
		return nil, nil, Gone("gone: record %q was deleted from %s", id, repo)
	}
	return rec, meta, nil
}

// Clip shortens text echoed from a request or an upstream for an error
// message or a log line, at a character boundary.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
