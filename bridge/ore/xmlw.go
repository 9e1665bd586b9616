package ore

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// xmlWriter streams hand-written XML. The first write error sticks; flush
// returns it. Text and attribute values are escaped, and characters XML 1.0 does
// not allow (controls, invalid UTF-8, U+FFFE/U+FFFF) become U+FFFD, so the output
// is well-formed whatever the Map holds.
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

// escape writes s escaped for element content (attr false) or a double-quoted
// attribute value (attr true).
func (w *xmlWriter) escape(s string, attr bool) {
	last := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		var rep string
		switch {
		case r == '&':
			rep = "&amp;"
		case r == '<':
			rep = "&lt;"
		case r == '>':
			rep = "&gt;"
		case r == '"' && attr:
			rep = "&quot;"
		case r == '\t' && attr:
			rep = "&#x9;"
		case r == '\n' && attr:
			rep = "&#xA;"
		case r == '\r':
			rep = "&#xD;"
		case r == utf8.RuneError && size == 1, !isXMLChar(r):
			rep = "\uFFFD"
		default:
			i += size
			continue
		}
		w.raw(s[last:i])
		w.raw(rep)
		i += size
		last = i
	}
	w.raw(s[last:])
}

func isXMLChar(r rune) bool {
	return r == 0x9 || r == 0xA || r == 0xD ||
		(r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
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
