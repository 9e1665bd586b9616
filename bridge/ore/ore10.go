package ore

import (
	"errors"
	"fmt"
	"io"
)

// MediaType is the media type of both serialisations.
const MediaType = "application/atom+xml"

// WriteORE10 writes the Map as an ORE 1.0 Atom Entry Document
// (application/atom+xml): the Resource Map is the atom:entry; its self link is
// URI, its ore:describes link URI-A = URI + "#aggregation" (Aggregation); each
// aggregated resource is a link rel="http://www.openarchives.org/ore/terms/aggregates"
// with type, title and length; the landing page is also the text/html
// alternate link and the 0.2 document the application/atom+xml one; Related
// URIs are related links; types and relations of the Aggregation and its
// resources go in oreatom:triples. The entry's authors are ItemAuthors (else
// Author) and source/author is Author, the Resource Map's creator. Its atom:id
// is Entry10ID(ID). Every URI is written as an IRI (see Map.Validate).
//
// RFC 4287 wants an alternate link in an entry without content, so a Map with
// neither a landing page nor AltURI is refused.
func (m *Map) WriteORE10(w io.Writer) error {
	v, err := m.view()
	if err == nil && v.landing.URI == "" && v.alt == "" {
		err = errors.New("neither a landing page nor AltURI for the entry's alternate link")
	}
	if err != nil {
		return fmt.Errorf("ore: write ORE 1.0 resource map %s: %w", m.URI, err)
	}
	x := newXMLWriter(w)
	x.raw(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	x.raw(`<entry xmlns="` + nsAtom + `" xmlns:oreatom="` + nsOREAtom + `" xmlns:rdf="` + nsRDF + `" xmlns:dcterms="` + nsDCTerms + `">`)
	x.elem(1, "id", Entry10ID(m.ID))
	x.link(1, link{rel: "self", href: v.uri, typ: MediaType})
	x.link(1, link{rel: nsORE + "describes", href: v.agg})
	if v.landing.URI != "" {
		x.link(1, link{rel: "alternate", href: v.landing.URI, typ: v.landing.Type})
	}
	if v.alt != "" {
		x.link(1, link{rel: "alternate", href: v.alt, typ: MediaType})
	}
	for _, u := range v.related {
		x.link(1, link{rel: "related", href: u})
	}
	x.elem(1, "title", v.title)
	authors := 0
	for _, a := range m.ItemAuthors {
		if a.Name != "" {
			x.person(1, "author", a)
			authors++
		}
	}
	if authors == 0 {
		x.person(1, "author", m.Author)
	}
	x.indent(1)
	x.raw("<source>")
	x.person(2, "author", m.Author)
	x.indent(1)
	x.raw("</source>")
	if !m.Created.IsZero() {
		x.elem(1, "published", formatTime(m.Created))
	}
	x.elem(1, "updated", formatTime(v.updated))
	if v.rights != "" {
		x.elem(1, "rights", v.rights)
	}
	x.category(1, nsORE, nsORE+"Aggregation", "Aggregation")
	for _, r := range v.res {
		x.link(1, link{rel: nsORE + "aggregates", href: r.URI, typ: r.Type, title: r.Title, length: r.Length})
	}
	if needsTriples(v) {
		writeTriples(x, v)
	}
	x.raw("\n</entry>\n")
	return x.flush()
}

func needsTriples(v view) bool {
	if len(v.types)+len(v.creators)+len(v.isPartOf) > 0 {
		return true
	}
	for _, r := range v.res {
		if r.Kind == KindMetadata || r.Kind == KindLanding || r.ObjectType != "" {
			return true
		}
	}
	return false
}

// writeTriples writes oreatom:triples: the Aggregation's types and relations,
// then each resource's.
func writeTriples(x *xmlWriter, v view) {
	x.indent(1)
	x.raw("<oreatom:triples>")
	if len(v.types)+len(v.creators)+len(v.isPartOf) > 0 {
		x.describe(2, v.agg, func() {
			for _, u := range v.types {
				x.resourceElem(3, "rdf:type", u)
			}
			for _, u := range v.creators {
				x.resourceElem(3, "dcterms:creator", u)
			}
			for _, u := range v.isPartOf {
				x.resourceElem(3, "dcterms:isPartOf", u)
			}
		})
	}
	for _, r := range v.res {
		switch {
		case r.Kind == KindMetadata:
			x.describe(2, r.URI, func() {
				x.resourceElem(3, "rdf:type", TypeDescriptiveMetadata)
				if r.ConformsTo != "" {
					x.resourceElem(3, "dcterms:conformsTo", r.ConformsTo)
				}
			})
		case r.Kind == KindLanding:
			x.describe(2, r.URI, func() { x.resourceElem(3, "rdf:type", TypeHumanStartPage) })
		case r.ObjectType != "":
			x.describe(2, r.URI, func() { x.elem(3, "dcterms:type", r.ObjectType) })
		}
	}
	x.indent(1)
	x.raw("</oreatom:triples>")
}

// Entry10ID is the atom:id of the ORE 1.0 entry of the Map whose ID is mapID:
// UUID5 of mapID + "\nore-1.0", so never the 0.2 feed's id.
func Entry10ID(mapID string) string {
	return UUID5(Namespace(), mapID+"\nore-1.0")
}

// describe writes an rdf:Description about uri (made an IRI, iri) whose
// properties body writes; nothing when uri cannot be an IRI.
func (w *xmlWriter) describe(n int, uri string, body func()) {
	about := iri(uri)
	if about == "" {
		return
	}
	w.indent(n)
	w.raw("<rdf:Description")
	w.attr("rdf:about", about)
	w.raw(">")
	body()
	w.indent(n)
	w.raw("</rdf:Description>")
}
