package ore

import (
	"sort"
	"strings"
	"time"
)

// MetadataRecord is one metadata record of the item as the gateway serves it:
// one per metadata format kept.
type MetadataRecord struct {
	URL       string    // where the gateway serves the standalone record
	Prefix    string    // metadataPrefix, for the entry title when the namespace is not a known one
	Namespace string    // namespace URI of the record's root element (dcterms:conformsTo)
	FirstSeen time.Time // when the gateway first stored the record (entry published)
	Modified  time.Time // when the gateway's copy last changed (entry updated)
	Length    int64     // bytes, 0 when unknown
}

// AssembleOptions tune Assemble. The zero value is the default.
type AssembleOptions struct {
	// SkipThumbnails leaves out files whose objectType is thumbnail or iiif
	// (GW-ORE-05.3). By default they are aggregated.
	SkipThumbnails bool
	// Seen, when set, gives the gateway's own record of when it first aggregated
	// a landing page or file (published) and when that entry last changed
	// (updated), GW-ORE-07. Without it, or when it returns ok false, a resource is
	// published when the earliest record naming it was first seen and updated
	// when the newest record naming it last changed.
	Seen func(uri string) (published, updated time.Time, ok bool)
}

// Assemble builds the aggregation of one item from base (URI, AltURI, ID,
// OAIIdentifier, Author, IsPartOf, Rights, and anything else already known)
// and the item's metadata records, where facts[i] is what Extract found in
// records[i] (facts may be shorter than records: a record that could not be
// read says nothing). It returns a new Map; base is not changed.
//
//   - Resources: the metadata records first, in the order given; then the
//     landing page, once; then every file, once; then base.Resources not already
//     present. Resources are deduplicated by URI. JPCOAR facts are read first,
//     then junii2, then Dublin Core, so the richest description of a file wins
//     and the others only fill in what it lacks; the landing page comes from the
//     first of them that names one.
//   - A file's media type is jpcoar:mimeType; without one it is guessed from the
//     URL's extension (a small built-in table) or, for objectType iiif,
//     application/ld+json; the writers fall back to application/octet-stream.
//   - Title and ItemAuthors, when base has none, come from the facts in the same
//     order; DOIs and Handles are added to Related; Types and Creators are merged.
//   - Aggregation defaults to URI + "#aggregation"; Created to the earliest
//     FirstSeen; Updated becomes the newest time of any part.
//
// A record with no landing page and no file gives a map of its metadata records
// alone, which is still a valid Resource Map. With no record and no
// base.Resources the map has nothing to aggregate, and the writers refuse it.
func Assemble(base Map, records []MetadataRecord, facts []Facts, opts AssembleOptions) Map {
	m := cloneBase(base)
	at := map[string]int{} // resource URI -> index in m.Resources
	add := func(r Resource) {
		if _, dup := at[r.URI]; r.URI != "" && !dup {
			at[r.URI] = len(m.Resources)
			m.Resources = append(m.Resources, r)
		}
	}
	for _, rec := range records {
		if base.Created.IsZero() && (m.Created.IsZero() || (!rec.FirstSeen.IsZero() && rec.FirstSeen.Before(m.Created))) {
			m.Created = rec.FirstSeen
		}
		add(metadataResource(rec))
	}

	order := byRichness(facts)
	spans := map[string]span{}
	noteSpans(spans, records, facts)
	times := func(uri string) (time.Time, time.Time) {
		if opts.Seen != nil {
			if p, u, ok := opts.Seen(uri); ok {
				return p, u
			}
		}
		return spans[uri].pub, spans[uri].upd
	}
	for _, i := range order {
		if l := facts[i].Landing; l != "" {
			pub, upd := times(l)
			add(Resource{URI: l, Kind: KindLanding, Type: "text/html", Title: "Landing page", Published: pub, Updated: upd})
			break
		}
	}
	for _, i := range order {
		for _, f := range facts[i].Files {
			if opts.SkipThumbnails && (strings.EqualFold(f.ObjectType, "thumbnail") || strings.EqualFold(f.ObjectType, "iiif")) {
				continue
			}
			if j, dup := at[f.URI]; dup {
				fillFile(&m.Resources[j], f)
				continue
			}
			pub, upd := times(f.URI)
			add(fileResource(f, pub, upd))
		}
	}
	for _, r := range base.Resources {
		add(r)
	}

	mergeFacts(&m, order, facts)
	settle(&m)
	return m
}

// cloneBase copies base with slices of its own and no resources, and defaults
// Aggregation to URI + "#aggregation".
func cloneBase(base Map) Map {
	m := base
	m.Related = append([]string(nil), base.Related...)
	m.Types = append([]string(nil), base.Types...)
	m.Creators = append([]string(nil), base.Creators...)
	m.IsPartOf = append([]string(nil), base.IsPartOf...)
	m.ItemAuthors = append([]Agent(nil), base.ItemAuthors...)
	m.Resources = nil
	if m.Aggregation == "" && m.URI != "" {
		m.Aggregation = m.URI + "#aggregation"
	}
	return m
}

// byRichness returns the indices of facts, JPCOAR first, then junii2, then
// Dublin Core, in the given order within a format.
func byRichness(facts []Facts) []int {
	order := make([]int, len(facts))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return formatRank(facts[order[a]].Format) < formatRank(facts[order[b]].Format) })
	return order
}

// metadataResource is the aggregated resource of a metadata record.
func metadataResource(rec MetadataRecord) Resource {
	return Resource{
		URI:        rec.URL,
		Kind:       KindMetadata,
		Type:       "application/xml",
		Title:      metadataTitle(rec.Prefix, rec.Namespace),
		Length:     rec.Length,
		ConformsTo: rec.Namespace,
		Published:  rec.FirstSeen,
		Updated:    latest(rec.Modified, rec.FirstSeen),
	}
}

// span is when the records naming a landing page or file were first seen
// (the earliest) and last changed (the newest).
type span struct{ pub, upd time.Time }

// noteSpans sets spans[uri] for every landing page and file that facts[i]
// names, from records[i]: its times when the gateway keeps none of its own.
func noteSpans(spans map[string]span, records []MetadataRecord, facts []Facts) {
	for i, f := range facts {
		if i >= len(records) {
			break
		}
		rec := records[i]
		note := func(uri string) {
			sp := spans[uri]
			if sp.pub.IsZero() || (!rec.FirstSeen.IsZero() && rec.FirstSeen.Before(sp.pub)) {
				sp.pub = rec.FirstSeen
			}
			sp.upd = latest(sp.upd, rec.Modified, rec.FirstSeen)
			spans[uri] = sp
		}
		named := set{}
		if f.Landing != "" && named.add(f.Landing) {
			note(f.Landing)
		}
		for _, file := range f.Files {
			if named.add(file.URI) {
				note(file.URI)
			}
		}
	}
}

// fileResource is the aggregated resource of a file: titled by its label or
// last path segment, its media type guessed when the metadata gave none.
func fileResource(f File, published, updated time.Time) Resource {
	title := f.Label
	if title == "" {
		title = lastSegment(f.URI)
	}
	typ := f.MediaType
	if typ == "" {
		typ = guessMediaType(f.URI, f.ObjectType)
	}
	return Resource{URI: f.URI, Kind: KindFile, Type: typ, Title: title, Length: f.Length, ObjectType: f.ObjectType, Published: published, Updated: updated}
}

// fillFile fills in, from a later description of the same file, what the
// first one left out; r is left alone unless it is a file.
func fillFile(r *Resource, f File) {
	if r.Kind != KindFile {
		return
	}
	fill(&r.Type, f.MediaType)
	fill(&r.ObjectType, f.ObjectType)
	if r.Length == 0 {
		r.Length = f.Length
	}
}

// mergeFacts fills Title and ItemAuthors from the richest facts that have
// them, adds DOIs and then Handles to Related (after base's, compared
// case-insensitively, as DOIs are) and merges Types and Creators.
func mergeFacts(m *Map, order []int, facts []Facts) {
	related := set{}
	for _, u := range m.Related {
		related.add(strings.ToLower(u))
	}
	var types, creators [][]string
	for _, i := range order {
		f := facts[i]
		if m.Title == "" {
			m.Title = f.Title
		}
		if len(m.ItemAuthors) == 0 {
			m.ItemAuthors = append(m.ItemAuthors, f.Authors...)
		}
		for _, d := range f.DOIs {
			if related.add(strings.ToLower(d)) {
				m.Related = append(m.Related, d)
			}
		}
		types = append(types, f.Types)
		creators = append(creators, f.Creators)
	}
	for _, i := range order {
		for _, h := range facts[i].Handles {
			if related.add(strings.ToLower(h)) {
				m.Related = append(m.Related, h)
			}
		}
	}
	m.Types = unique(append([][]string{m.Types}, types...)...)
	m.Creators = unique(append([][]string{m.Creators}, creators...)...)
}

// settle gives every resource its entry id and makes Updated the newest time
// of any part.
func settle(m *Map) {
	for i := range m.Resources {
		r := &m.Resources[i]
		if r.ID == "" {
			r.ID = EntryID(m.OAIIdentifier, r.URI)
		}
		m.Updated = latest(m.Updated, r.Published, r.Updated)
	}
	m.Updated = latest(m.Updated, m.Created)
}

func formatRank(format string) int {
	switch format {
	case FormatJPCOAR:
		return 0
	case FormatJunii2:
		return 1
	case FormatDC:
		return 2
	}
	return 3
}

func fill(dst *string, v string) {
	if *dst == "" {
		*dst = v
	}
}

// metadataTitle names a metadata record entry: "JPCOAR 2.0 metadata record",
// "junii2 metadata record", "oai_dc metadata record", else by prefix.
func metadataTitle(prefix, ns string) string {
	switch {
	case isJPCOAR(ns):
		v := lastSegment(ns)
		if digitsAndDots(v) {
			return "JPCOAR " + v + " metadata record"
		}
		return "JPCOAR metadata record"
	case ns == nsJunii2:
		return "junii2 metadata record"
	case ns == nsOAIDC:
		return "oai_dc metadata record"
	case prefix != "":
		return prefix + " metadata record"
	}
	return "Metadata record"
}
