package crosswalk

import (
	"encoding/xml"
	"strings"

	"github.com/rsbridge/rsbridge/rsync/xmltext"
)

// The per-record XML parser. CheckJPCOAR, CheckJunii2 and Junii2ToJPCOAR2
// parse every harvested record, and encoding/xml's Decoder (a byte at a
// time through an interface, an allocation per token, copies of every name
// and value) took most of their CPU. scanner walks one in-memory copy of
// the document and returns substrings of it, so names, plain attribute
// values and plain text cost no allocation.
//
// Its contract is encoding/xml's Decoder.Token as this package used it
// (Strict, no CharsetReader, no DefaultSpace): the same elements, text and
// namespace translation, and the same errors, worded alike and on the same
// line, so that a record is not-well-formed exactly when and as it was.
// That keeps encoding/xml's leniencies too: an unbound prefix becomes the
// name's space, duplicate attributes are accepted, white space between
// attributes is optional, attribute values are not normalised, a reference
// to a surrogate decodes to U+FFFD, comments, processing instructions and
// directives (<!DOCTYPE …>, whose internal subset is ignored) may appear
// anywhere and their content is not checked. Comments, processing
// instructions and directives are read and dropped. FuzzParseTree holds the
// contract against the encoding/xml implementation kept in the tests.

// tokenKind is what scanner.next read.
type tokenKind uint8

const (
	tokNone  tokenKind = iota // internal: markup skipped, or an error
	tokStart                  // a start tag: space, local, qname, attrs
	tokEnd                    // an end tag (or the end of <name/>)
	tokText                   // character data or a CDATA section: text
	tokEOF                    // the end of the input, outside any element
)

// msgEOF is encoding/xml's message for input that ends inside a token.
const msgEOF = "unexpected EOF"

// scanner reads one document. Token data stay valid after the next token,
// except attrs, which the next start tag reuses.
type scanner struct {
	src string // the document: one copy, which token strings share
	pos int    // the next byte to read
	err error  // sticky

	space, local string     // tokStart: the element's name, translated
	qname        string     // tokStart: the element's name as written
	attrs        []xml.Attr // tokStart: the attributes, names translated
	text         string     // tokText: the text, references decoded
	selfClose    bool       // the start tag was <name/>: tokEnd is next

	open    []openTag      // the elements not yet closed, innermost last
	ns      []binding      // the namespace declarations in scope, innermost last
	nsIndex map[string]int // prefix → its innermost declaration in ns, once ns grows long
	buf     []byte         // scratch for decoding text
	last    nameVerdict    // the last non-ASCII name encoding/xml judged
}

// openTag is an open element: its name as written, which the end tag must
// repeat, and where its namespace declarations start in scanner.ns.
type openTag struct {
	qname string
	mark  int
}

// newScanner starts reading a copy of doc: the token strings share it, and
// the caller's bytes stay the caller's.
func newScanner(doc []byte) scanner {
	return scanner{
		src:   string(doc),
		attrs: make([]xml.Attr, 0, 16),
		open:  make([]openTag, 0, 8),
		ns:    make([]binding, 0, 16),
	}
}

// fail records a syntax error found when the bytes before at had been read:
// encoding/xml reports the line it had reached.
func (s *scanner) fail(at int, msg string) tokenKind {
	s.err = &xml.SyntaxError{Msg: msg, Line: 1 + strings.Count(s.src[:at], "\n")}
	return tokNone
}

// failEOF is the error of input that ends inside a token.
func (s *scanner) failEOF() tokenKind { return s.fail(len(s.src), msgEOF) }

// next reads the next token, skipping comments, processing instructions
// and directives. At the end of the input it returns tokEOF, or the error
// encoding/xml gives when elements are still open.
func (s *scanner) next() (tokenKind, error) {
	for s.err == nil {
		if s.selfClose {
			s.selfClose = false
			s.closeTop()
			return tokEnd, nil
		}
		if s.pos >= len(s.src) {
			if len(s.open) > 0 {
				s.failEOF()
				break
			}
			return tokEOF, nil
		}
		var k tokenKind
		if s.src[s.pos] != '<' {
			k = s.charData()
		} else {
			k = s.markup()
		}
		if k != tokNone {
			return k, nil
		}
	}
	return tokNone, s.err
}

// markup reads the markup at s.pos ('<').
func (s *scanner) markup() tokenKind {
	i := s.pos + 1
	if i >= len(s.src) {
		return s.failEOF()
	}
	switch s.src[i] {
	case '/':
		return s.endTag(i + 1)
	case '?':
		return s.procInst(i + 1)
	case '!':
		return s.bang(i + 1)
	}
	return s.startTag(i)
}

// startTag reads a start tag whose name starts at src[i].
func (s *scanner) startTag(i int) tokenKind {
	j, qname, ok := s.readName(i, "expected element name after <", true)
	if !ok {
		return tokNone
	}
	s.attrs = s.attrs[:0]
	for {
		j = s.skipSpace(j)
		if j >= len(s.src) {
			return s.failEOF()
		}
		switch s.src[j] {
		case '/':
			if j+1 >= len(s.src) {
				return s.failEOF()
			}
			if s.src[j+1] != '>' {
				return s.fail(j+2, "expected /> in element")
			}
			s.selfClose = true
			return s.opened(qname, j+2)
		case '>':
			return s.opened(qname, j+1)
		}
		if j, ok = s.attribute(j); !ok {
			return tokNone
		}
	}
}

// attribute reads name="value" at src[i:] into s.attrs, with the prefix
// as the name's space until opened translates it.
func (s *scanner) attribute(i int) (int, bool) {
	j, qname, ok := s.readName(i, "expected attribute name in element", true)
	if !ok {
		return 0, false
	}
	j = s.skipSpace(j)
	switch {
	case j >= len(s.src):
		s.failEOF()
		return 0, false
	case s.src[j] != '=':
		s.fail(j+1, "attribute name without = in element")
		return 0, false
	}
	j = s.skipSpace(j + 1)
	switch {
	case j >= len(s.src):
		s.failEOF()
		return 0, false
	case s.src[j] != '"' && s.src[j] != '\'':
		s.fail(j+1, "unquoted or missing attribute value in element")
		return 0, false
	}
	end, value, ok := s.attrValue(j+1, s.src[j])
	if !ok {
		return 0, false
	}
	prefix, local := splitName(qname)
	s.attrs = append(s.attrs, xml.Attr{Name: xml.Name{Space: prefix, Local: local}, Value: value})
	return end, true
}

// opened finishes a start tag that ends before src[end]: its namespace
// declarations apply to its own name and attributes, so they are bound
// first, then every name is translated.
func (s *scanner) opened(qname string, end int) tokenKind {
	s.pos = end
	s.open = append(s.open, openTag{qname: qname, mark: len(s.ns)})
	for _, a := range s.attrs {
		switch {
		case a.Name.Space == "xmlns":
			s.bind(a.Name.Local, a.Value)
		case a.Name.Space == "" && a.Name.Local == "xmlns":
			s.bind("", a.Value)
		}
	}
	prefix, local := splitName(qname)
	s.qname, s.local = qname, local
	s.space = s.translate(prefix, local, true)
	for i := range s.attrs {
		n := &s.attrs[i].Name
		n.Space = s.translate(n.Space, n.Local, false)
	}
	return tokStart
}

// endTag reads an end tag whose name starts at src[i] and closes the
// innermost open element, which must have the same name as written.
func (s *scanner) endTag(i int) tokenKind {
	j, qname, ok := s.readName(i, "expected element name after </", true)
	if !ok {
		return tokNone
	}
	j = s.skipSpace(j)
	if j >= len(s.src) {
		return s.failEOF()
	}
	prefix, local := splitName(qname)
	if s.src[j] != '>' {
		return s.fail(j+1, "invalid characters between </"+local+" and >")
	}
	s.pos = j + 1
	if len(s.open) == 0 {
		return s.fail(s.pos, "unexpected end element </"+local+">")
	}
	if top := s.open[len(s.open)-1].qname; top != qname {
		return s.mismatch(top, prefix, local)
	}
	s.closeTop()
	return tokEnd
}

// mismatch reports an end tag that does not close the open element, in
// encoding/xml's words: by local name first, then by prefix.
func (s *scanner) mismatch(open, prefix, local string) tokenKind {
	openPrefix, openLocal := splitName(open)
	if openLocal != local {
		return s.fail(s.pos, "element <"+openLocal+"> closed by </"+local+">")
	}
	if prefix == "" {
		prefix = `""`
	}
	return s.fail(s.pos, "element <"+openLocal+"> in space "+openPrefix+" closed by </"+local+"> in space "+prefix)
}

// closeTop closes the innermost element and unbinds its declarations.
func (s *scanner) closeTop() {
	top := s.open[len(s.open)-1]
	s.open = s.open[:len(s.open)-1]
	s.unbind(top.mark)
}

func (s *scanner) skipSpace(i int) int {
	for i < len(s.src) && xmltext.IsSpace(s.src[i]) {
		i++
	}
	return i
}
