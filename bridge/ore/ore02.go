package ore

import (
	"errors"
	"fmt"
	"io"
)

// Constants of the ORE 0.2 Resource Map Profile of Atom: the GRDDL stylesheet
// by its versioned URI (ORE-041, D-ORE-05), and the ORE icon and logo that
// make the feed recognisable as a Resource Map (ORE-012).
const (
	grddl02 = "http://www.openarchives.org/ore/0.2/atom-grddl.xsl"
	icon02  = "http://www.openarchives.org/ore/logos/ore_icon.png"
	logo02  = "http://www.openarchives.org/ore/logos/ore_logo.png"
)

// WriteORE02 writes the Map as an ORE 0.2 Resource Map Profile of Atom document
// (application/atom+xml), an Atom feed with one entry per aggregated resource:
//
//   - feed: id (ID, ORE-013), self link = AltURI with type application/atom+xml
//     (ORE-014), the describes link to this document's own URI-A, related
//     links: first the 1.0 document's URI-A (Aggregation), then Related and
//     the OAI identifier; an alternate link to the 1.0 document (no ORE
//     meaning, ORE-017), the author Author (ORE-007), title "Resource Map:
//     {title}", updated, the ResourceMap category (ORE-008), the ORE icon and
//     logo, rights (ORE-018), the GRDDL transformation attribute, and
//     rdf:type / dcterms:creator / dcterms:isPartOf extension children about
//     the Aggregation (ORE-022);
//   - each entry: exactly one id (never the resource's URI), title, updated,
//     published, one alternate link to the resource with its media type, no
//     author, content, rights or other link (ORE-024..ORE-035), and extension
//     children about the resource: rdf:type and dcterms:conformsTo for metadata
//     records, rdf:type for the landing page, dcterms:type = objectType for files
//     (ORE-036).
//
// Every URI is written as an IRI (see Map.Validate).
func (m *Map) WriteORE02(w io.Writer) error {
	v, err := m.view()
	if err == nil && v.alt == "" {
		err = errors.New("no AltURI for the feed's self link")
	}
	if err != nil {
		return fmt.Errorf("ore: write ORE 0.2 resource map %s: %w", m.AltURI, err)
	}
	x := newXMLWriter(w)
	x.raw(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	x.raw(`<feed xmlns="` + nsAtom + `" xmlns:rdf="` + nsRDF + `" xmlns:dcterms="` + nsDCTerms +
		`" xmlns:grddl="` + nsGRDDL + `" grddl:transformation="` + grddl02 + `">`)
	x.elem(1, "id", m.ID)
	x.link(1, link{rel: "self", href: v.alt, typ: MediaType})
	x.link(1, link{rel: "describes", href: v.agg02})
	x.link(1, link{rel: "related", href: v.agg})
	for _, u := range v.related {
		x.link(1, link{rel: "related", href: u})
	}
	x.link(1, link{rel: "alternate", href: v.uri, typ: MediaType})
	x.person(1, "author", m.Author)
	x.elem(1, "title", "Resource Map: "+v.title)
	x.elem(1, "updated", formatTime(v.updated))
	x.category(1, nsORE, nsORE+"ResourceMap", "Resource Map")
	x.elem(1, "icon", icon02)
	x.elem(1, "logo", logo02)
	if v.rights != "" {
		x.elem(1, "rights", v.rights)
	}
	for _, u := range v.types {
		x.elem(1, "rdf:type", u)
	}
	for _, u := range v.creators {
		x.elem(1, "dcterms:creator", u)
	}
	for _, u := range v.isPartOf {
		x.elem(1, "dcterms:isPartOf", u)
	}
	for _, r := range v.res {
		x.indent(1)
		x.raw("<entry>")
		x.elem(2, "id", r.ID)
		x.elem(2, "title", r.Title)
		x.elem(2, "updated", formatTime(r.Updated))
		x.elem(2, "published", formatTime(r.Published))
		x.link(2, link{rel: "alternate", href: r.URI, typ: r.Type, length: r.Length})
		switch r.Kind {
		case KindMetadata:
			x.elem(2, "rdf:type", TypeDescriptiveMetadata)
			if r.ConformsTo != "" {
				x.elem(2, "dcterms:conformsTo", r.ConformsTo)
			}
		case KindLanding:
			x.elem(2, "rdf:type", TypeHumanStartPage)
		}
		if r.ObjectType != "" && r.Kind != KindMetadata && r.Kind != KindLanding {
			x.elem(2, "dcterms:type", r.ObjectType)
		}
		x.indent(1)
		x.raw("</entry>")
	}
	x.raw("\n</feed>\n")
	return x.flush()
}
