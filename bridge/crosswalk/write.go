package crosswalk

import (
	"bytes"
	"encoding/xml"
)

// The output model: one field per JPCOAR element group, written in the
// xs:sequence order of J2V-01 by writeRecord. Same-name siblings keep the
// order the converter appended them in (source order, GW-J2J-20).

// text is a string with an optional xml:lang.
type text struct{ lang, value string }

// person is a jpcoar:creator or jpcoar:contributor (GW-J2J-08): name
// identifiers first, as the XSD sequence requires, then the names.
type person struct {
	ids   []nameID
	names []text
}

type nameID struct{ scheme, uri, value string }

type subject struct {
	scheme string
	text
}

type description struct {
	typ string
	text
}

type typed struct{ typ, value string }

type relation struct {
	relType string
	id      *typed // jpcoar:relatedIdentifier, 0..1 ([XSD2])
	title   *text
}

type file struct{ uri, mime string }

type grantor struct {
	kakenhi string
	name    *text
}

type record struct {
	titles, alternatives []text
	creators             []person
	contributors         []person
	accessRights         *resType
	rights               []text
	subjects             []subject
	descriptions         []description
	publishers           []text
	dates                []typed // datacite:date, typ = dateType
	termsDates           []text  // dcterms:date
	languages            []string
	typ                  resType
	version              *resType
	identifiers          []typed
	registration         *typed
	relations            []relation
	temporal             []text
	places               []string
	sourceIDs            []typed
	sourceTitle          *text
	volume, issue        string
	pageStart, pageEnd   string
	dissertationNumber   string
	degreeName           *text
	dateGranted          string
	grantor              *grantor
	files                []file
}

// xw writes indented, deterministic XML: attributes in the order given,
// empty attribute values omitted, text escaped by encoding/xml.
type xw struct{ b bytes.Buffer }

func (w *xw) indent(depth int) {
	w.b.WriteByte('\n')
	for range depth {
		w.b.WriteString("  ")
	}
}

func (w *xw) start(depth int, name string, attrs ...string) {
	w.indent(depth)
	w.b.WriteByte('<')
	w.b.WriteString(name)
	for i := 0; i+1 < len(attrs); i += 2 {
		if attrs[i+1] == "" {
			continue
		}
		w.b.WriteByte(' ')
		w.b.WriteString(attrs[i])
		w.b.WriteString(`="`)
		xml.EscapeText(&w.b, []byte(attrs[i+1]))
		w.b.WriteByte('"')
	}
	w.b.WriteByte('>')
}

func (w *xw) end(depth int, name string) {
	w.indent(depth)
	w.b.WriteString("</" + name + ">")
}

// leaf writes <name attrs>value</name> on one line.
func (w *xw) leaf(depth int, name, value string, attrs ...string) {
	w.start(depth, name, attrs...)
	xml.EscapeText(&w.b, []byte(value))
	w.b.WriteString("</" + name + ">")
}

// rootStart declares every output namespace with the prefixes of the
// JPCOAR samples (GW-J2J-20), whether used or not, so the root is stable.
const rootStart = `<jpcoar:jpcoar xmlns:jpcoar="` + nsJPCOAR + `" xmlns:dc="` + nsDC +
	`" xmlns:dcterms="` + nsDCTerms + `" xmlns:datacite="` + nsDatacite +
	`" xmlns:oaire="` + nsOAIRE + `" xmlns:dcndl="` + nsDCNDL + `" xmlns:rdf="` + nsRDF + `">`

// writeRecord serialises r in J2V-01 order.
func writeRecord(r *record) []byte {
	w := &xw{}
	w.b.Grow(2048)
	w.b.WriteString(rootStart)
	writeHead(w, r)
	writeMiddle(w, r)
	writeTail(w, r)
	w.b.WriteString("\n</jpcoar:jpcoar>\n")
	return w.b.Bytes()
}

// writeHead writes J2V-01 items 1–13.
func writeHead(w *xw, r *record) {
	for _, t := range r.titles {
		w.leaf(1, "dc:title", t.value, "xml:lang", t.lang)
	}
	for _, t := range r.alternatives {
		w.leaf(1, "dcterms:alternative", t.value, "xml:lang", t.lang)
	}
	writePeople(w, "jpcoar:creator", "jpcoar:creatorName", r.creators)
	writePeople(w, "jpcoar:contributor", "jpcoar:contributorName", r.contributors)
	if a := r.accessRights; a != nil {
		w.leaf(1, "dcterms:accessRights", a.label, "rdf:resource", a.uri)
	}
	for _, t := range r.rights {
		w.leaf(1, "dc:rights", t.value, "xml:lang", t.lang)
	}
	for _, s := range r.subjects {
		w.leaf(1, "jpcoar:subject", s.value, "xml:lang", s.lang, "subjectScheme", s.scheme)
	}
	for _, d := range r.descriptions {
		w.leaf(1, "datacite:description", d.value, "descriptionType", d.typ, "xml:lang", d.lang)
	}
	for _, t := range r.publishers {
		w.leaf(1, "dc:publisher", t.value, "xml:lang", t.lang)
	}
	for _, d := range r.dates {
		w.leaf(1, "datacite:date", d.value, "dateType", d.typ)
	}
	for _, t := range r.termsDates {
		w.leaf(1, "dcterms:date", t.value, "xml:lang", t.lang)
	}
}

func writePeople(w *xw, elem, nameElem string, people []person) {
	for _, p := range people {
		w.start(1, elem)
		for _, id := range p.ids {
			w.leaf(2, "jpcoar:nameIdentifier", id.value, "nameIdentifierScheme", id.scheme, "nameIdentifierURI", id.uri)
		}
		for _, n := range p.names {
			w.leaf(2, nameElem, n.value, "xml:lang", n.lang)
		}
		w.end(1, elem)
	}
}

// writeMiddle writes J2V-01 items 14–24.
func writeMiddle(w *xw, r *record) {
	for _, l := range r.languages {
		w.leaf(1, "dc:language", l)
	}
	w.leaf(1, "dc:type", r.typ.label, "rdf:resource", r.typ.uri)
	if v := r.version; v != nil {
		w.leaf(1, "oaire:version", v.label, "rdf:resource", v.uri)
	}
	for _, id := range r.identifiers {
		w.leaf(1, "jpcoar:identifier", id.value, "identifierType", id.typ)
	}
	if g := r.registration; g != nil {
		w.leaf(1, "jpcoar:identifierRegistration", g.value, "identifierType", g.typ)
	}
	for _, rel := range r.relations {
		w.start(1, "jpcoar:relation", "relationType", rel.relType)
		if rel.id != nil {
			w.leaf(2, "jpcoar:relatedIdentifier", rel.id.value, "identifierType", rel.id.typ)
		}
		if rel.title != nil {
			w.leaf(2, "jpcoar:relatedTitle", rel.title.value, "xml:lang", rel.title.lang)
		}
		w.end(1, "jpcoar:relation")
	}
	for _, t := range r.temporal {
		w.leaf(1, "dcterms:temporal", t.value, "xml:lang", t.lang)
	}
	for _, p := range r.places {
		w.start(1, "datacite:geoLocation")
		w.leaf(2, "datacite:geoLocationPlace", p)
		w.end(1, "datacite:geoLocation")
	}
	for _, s := range r.sourceIDs {
		w.leaf(1, "jpcoar:sourceIdentifier", s.value, "identifierType", s.typ)
	}
}

// writeTail writes J2V-01 items 32–43 (25–31 have no junii2 source).
func writeTail(w *xw, r *record) {
	if t := r.sourceTitle; t != nil {
		w.leaf(1, "jpcoar:sourceTitle", t.value, "xml:lang", t.lang)
	}
	opt := func(name, v string) {
		if v != "" {
			w.leaf(1, name, v)
		}
	}
	opt("jpcoar:volume", r.volume)
	opt("jpcoar:issue", r.issue)
	opt("jpcoar:pageStart", r.pageStart)
	opt("jpcoar:pageEnd", r.pageEnd)
	opt("dcndl:dissertationNumber", r.dissertationNumber)
	if t := r.degreeName; t != nil {
		w.leaf(1, "dcndl:degreeName", t.value, "xml:lang", t.lang)
	}
	opt("dcndl:dateGranted", r.dateGranted)
	if g := r.grantor; g != nil {
		w.start(1, "jpcoar:degreeGrantor")
		if g.kakenhi != "" {
			w.leaf(2, "jpcoar:nameIdentifier", g.kakenhi, "nameIdentifierScheme", "kakenhi")
		}
		if g.name != nil {
			w.leaf(2, "jpcoar:degreeGrantorName", g.name.value, "xml:lang", g.name.lang)
		}
		w.end(1, "jpcoar:degreeGrantor")
	}
	for _, f := range r.files {
		w.start(1, "jpcoar:file")
		w.leaf(2, "jpcoar:URI", f.uri, "objectType", "fulltext")
		if f.mime != "" {
			w.leaf(2, "jpcoar:mimeType", f.mime)
		}
		w.end(1, "jpcoar:file")
	}
}
