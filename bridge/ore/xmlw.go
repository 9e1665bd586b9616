package ore

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"github.com/rsbridge/rsbridge/rsync/xmltext"
)

// xmlWriter streams hand-written XML. The first write error sticks; flush
// returns it. Text and attribute values go through xmltext.Escape, which also
// turns what XML 1.0 cannot carry into U+FFFD, so the output is well-formed
// whatever the Map holds.
type xmlWriter struct {
	bw  *bufio.Writer
	err error
}

func newXMLWriter(w io.Writer) *xmlWriter {
	return &xmlWriter{bw: bufio.NewWriterSize(w, 16<<10)}
}

func (w *xmlWriter) raw(s string) {
	if w.err == nil {
		_, w.err = w.bw.WriteString(s)
	}
}

func (w *xmlWriter) flush() error {
	if w.err == nil {
		w.err = w.bw.Flush()
	}
	return w.err
}

func (w *xmlWriter) indent(n int) {
	w.raw("\n")
	w.raw(strings.Repeat("  ", n))
}

// escape writes s escaped by the project's one rule (xmltext.Escape) for
// element content (attr false) or a double-quoted attribute value (attr true).
func (w *xmlWriter) escape(s string, attr bool) {
	if w.err == nil {
		w.err = xmltext.Escape(w.bw, s, attr)
	}
}

// attr writes ` name="value"`; an empty value writes nothing.
func (w *xmlWriter) attr(name, value string) {
	if value == "" {
		return
	}
	w.raw(" ")
	w.raw(name)
	w.raw(`="`)
	w.escape(value, true)
	w.raw(`"`)
}

// elem writes <name>text</name> on a new line at depth n.
func (w *xmlWriter) elem(n int, name, text string) {
	w.indent(n)
	w.raw("<" + name + ">")
	w.escape(text, false)
	w.raw("</" + name + ">")
}

// link is an atom:link.
type link struct {
	rel, href, typ, title string
	length                int64
}

// link writes an atom:link whose href is l.href made an IRI (iri); a link
// whose href cannot be one is left out.
func (w *xmlWriter) link(n int, l link) {
	href := iri(l.href)
	if href == "" {
		return
	}
	w.indent(n)
	w.raw("<link")
	w.attr("rel", l.rel)
	w.attr("href", href)
	w.attr("type", l.typ)
	w.attr("title", l.title)
	if l.length > 0 {
		w.attr("length", strconv.FormatInt(l.length, 10))
	}
	w.raw("/>")
}

// person writes an Atom Person construct (author); its uri is a.URI made an
// IRI (iri), left out when it cannot be one.
func (w *xmlWriter) person(n int, name string, a Agent) {
	w.indent(n)
	w.raw("<" + name + ">")
	w.elem(n+1, "name", a.Name)
	if u := iri(a.URI); u != "" {
		w.elem(n+1, "uri", u)
	}
	w.indent(n)
	w.raw("</" + name + ">")
}

// category writes an atom:category.
func (w *xmlWriter) category(n int, scheme, term, label string) {
	w.indent(n)
	w.raw("<category")
	w.attr("scheme", scheme)
	w.attr("term", term)
	w.attr("label", label)
	w.raw("/>")
}

// resourceElem writes <name rdf:resource="uri"/>, uri made an IRI (iri); it
// writes nothing when uri cannot be one.
func (w *xmlWriter) resourceElem(n int, name, uri string) {
	ref := iri(uri)
	if ref == "" {
		return
	}
	w.indent(n)
	w.raw("<" + name)
	w.attr("rdf:resource", ref)
	w.raw("/>")
}
