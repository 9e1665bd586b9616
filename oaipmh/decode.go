package oaipmh

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rsbridge/rsbridge/rsync/xmltext"
)

// response is what the decoder learned about the envelope.
type response struct {
	responseDate    time.Time
	responseDateRaw string
	verb            string
	errs            Errors
	token           *ResumptionToken
	count           int
	stripped        int
	quarantined     int
	repaired        int
	badDatestamps   int
	warnings        []string
	moreWarnings    int
}

// warn keeps the first maxWarnings warnings and counts the rest.
func (r *response) warn(w string) {
	if len(r.warnings) < maxWarnings {
		r.warnings = append(r.warnings, w)
		return
	}
	r.moreWarnings++
}

// maxErrors caps the error elements kept from one response, maxWarnings its
// warnings, maxSetSpecs the setSpecs of one header (more quarantine it).
const (
	maxErrors   = 100
	maxWarnings = 20
	maxSetSpecs = 1000
)

type nsDecl struct{ prefix, uri string }

type frame struct {
	name  xml.Name // raw: Space is the prefix
	decls []nsDecl
}

const (
	defaultMaxRecordBytes     = 16 << 20
	defaultMaxIdentifierBytes = 8192
	maxIdentifierBytesCap     = 30000
)

// decoder walks an OAI-PMH response as a token stream, checking nesting itself
// (RawToken does not) and tracking namespace scopes, so it can resolve names and
// make metadata standalone. The envelope is read by env, encoding/xml over the
// scanner; each list item the scanner cut out is read by items, over the item's
// bytes (scan.go explains why, xmltok.go how).
type decoder struct {
	sc        *scanner
	env       *xml.Decoder
	stack     []frame
	maxRecord int
	maxID     int
	items     itemDecoder
	st        itemState // the item being read, reused
}

func newDecoder(r io.Reader, maxRecord int) *decoder {
	if maxRecord <= 0 {
		maxRecord = defaultMaxRecordBytes
	}
	sc := newScanner(newRawReader(r), maxRecord)
	d := xml.NewDecoder(sc)
	d.Strict = true
	d.CharsetReader = func(label string, input io.Reader) (io.Reader, error) {
		l := strings.ToLower(strings.TrimSpace(label))
		if l == "utf-8" || l == "utf8" || l == "us-ascii" || l == "ascii" {
			return input, nil
		}
		return nil, fmt.Errorf("unsupported encoding %q (OAI-PMH requires UTF-8)", label)
	}
	return &decoder{sc: sc, env: d, maxRecord: maxRecord, maxID: defaultMaxIdentifierBytes, items: &itemReader{}}
}

// next returns the next token of the envelope and the offset at which it starts.
func (p *decoder) next() (xml.Token, int64, error) {
	off := p.env.InputOffset()
	tok, err := p.env.RawToken()
	if err == io.EOF && len(p.stack) > 0 {
		top := p.stack[len(p.stack)-1].name
		return nil, off, &xml.SyntaxError{Msg: fmt.Sprintf("unexpected EOF: <%s> is not closed (truncated body?)", xmltext.QName(top.Space, top.Local)), Line: p.line()}
	}
	if err != nil {
		return nil, off, err
	}
	switch t := tok.(type) {
	case xml.StartElement:
		f := frame{name: t.Name}
		for _, a := range t.Attr {
			switch {
			case a.Name.Space == "xmlns":
				f.decls = append(f.decls, nsDecl{a.Name.Local, a.Value})
			case a.Name.Space == "" && a.Name.Local == "xmlns":
				f.decls = append(f.decls, nsDecl{"", a.Value})
			}
		}
		p.stack = append(p.stack, f)
	case xml.EndElement:
		if len(p.stack) == 0 {
			return nil, off, &xml.SyntaxError{Msg: "unexpected end element </" + xmltext.QName(t.Name.Space, t.Name.Local) + ">", Line: p.line()}
		}
		top := p.stack[len(p.stack)-1]
		if top.name != t.Name {
			return nil, off, &xml.SyntaxError{Msg: fmt.Sprintf("element <%s> closed by </%s>", xmltext.QName(top.name.Space, top.name.Local), xmltext.QName(t.Name.Space, t.Name.Local)), Line: p.line()}
		}
		p.stack = p.stack[:len(p.stack)-1]
	}
	return tok, off, nil
}

func (p *decoder) line() int {
	l, _ := p.env.InputPos()
	return l
}

// resolve returns the namespace URI of a raw element name in the current scope.
func (p *decoder) resolve(n xml.Name) string {
	prefix := n.Space
	if prefix == "xml" {
		return "http://www.w3.org/XML/1998/namespace"
	}
	for i := len(p.stack) - 1; i >= 0; i-- {
		for _, d := range p.stack[i].decls {
			if d.prefix == prefix {
				return d.uri
			}
		}
	}
	return ""
}

// isOAI reports whether the start element is the named element of the OAI namespace.
// Elements with no namespace at all are accepted too, for repositories that strip it.
func (p *decoder) isOAI(t xml.StartElement, local string) bool {
	if t.Name.Local != local {
		return false
	}
	ns := p.resolve(t.Name)
	return ns == Namespace || ns == ""
}

// skip consumes the rest of the element whose start was just read.
func (p *decoder) skip() error {
	depth := len(p.stack)
	for len(p.stack) >= depth {
		if _, _, err := p.next(); err != nil {
			return err
		}
	}
	return nil
}

// text reads the character data of the element just started, skipping children.
// It holds at most MaxRecordBytes.
func (p *decoder) text() (string, error) {
	depth := len(p.stack)
	var b strings.Builder
	for {
		tok, off, err := p.next()
		if err != nil {
			return "", err
		}
		if len(p.stack) < depth {
			return b.String(), nil
		}
		if cd, ok := tok.(xml.CharData); ok && len(p.stack) == depth {
			if b.Len()+len(cd) > p.maxRecord {
				return "", &tokenTooLargeError{off: off, max: p.maxRecord}
			}
			b.Write(cd)
		}
	}
}

func attr(t xml.StartElement, local string) (string, bool) {
	for _, a := range t.Attr {
		if a.Name.Space == "" && a.Name.Local == local {
			return a.Value, true
		}
	}
	return "", false
}
