package ore

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rsbridge/rsbridge/rsync/xmltext"
)

type nsDecl struct{ prefix, uri string }

type frame struct {
	name  xml.Name // raw: Space is the prefix
	decls []nsDecl
}

// tokens wraps RawToken with the checks it leaves out (matching end tags, end of
// input inside an element) and resolves namespace prefixes from the
// declarations in scope (RawToken leaves them unresolved).
type tokens struct {
	d     *xml.Decoder
	stack []frame
}

func (r *tokens) next() (xml.Token, error) {
	tok, err := r.d.RawToken()
	if err != nil {
		if errors.Is(err, io.EOF) {
			if len(r.stack) > 0 {
				open := r.stack[len(r.stack)-1].name
				return nil, fmt.Errorf("%w: document ends inside <%s>", ErrNotWellFormed, xmltext.QName(open.Space, open.Local))
			}
			return nil, io.EOF
		}
		return nil, fmt.Errorf("%w: %w", ErrNotWellFormed, err)
	}
	switch t := tok.(type) {
	case xml.StartElement:
		var decls []nsDecl
		for _, a := range t.Attr {
			if a.Name.Space == "xmlns" {
				decls = append(decls, nsDecl{a.Name.Local, a.Value})
			} else if a.Name.Space == "" && a.Name.Local == "xmlns" {
				decls = append(decls, nsDecl{"", a.Value})
			}
		}
		r.stack = append(r.stack, frame{name: t.Name, decls: decls})
	case xml.EndElement:
		if len(r.stack) == 0 {
			return nil, fmt.Errorf("%w: end tag </%s> without a start tag", ErrNotWellFormed, xmltext.QName(t.Name.Space, t.Name.Local))
		}
		if open := r.stack[len(r.stack)-1].name; open != t.Name {
			return nil, fmt.Errorf("%w: <%s> closed by </%s>", ErrNotWellFormed, xmltext.QName(open.Space, open.Local), xmltext.QName(t.Name.Space, t.Name.Local))
		}
		r.stack = r.stack[:len(r.stack)-1]
	}
	return tok, nil
}

// resolve returns the namespace bound to prefix ("" for the default namespace)
// in the current scope, or "" when it is unbound. Within one start tag the last
// declaration of a prefix wins.
func (r *tokens) resolve(prefix string) string {
	for i := len(r.stack) - 1; i >= 0; i-- {
		decls := r.stack[i].decls
		for j := len(decls) - 1; j >= 0; j-- {
			if decls[j].prefix == prefix {
				return decls[j].uri
			}
		}
	}
	return ""
}

// attrNS is the namespace of an attribute with the given prefix: none without a
// prefix, the XML namespace for xml:.
func (r *tokens) attrNS(prefix string) string {
	switch prefix {
	case "":
		return ""
	case "xml":
		return nsXML
	}
	return r.resolve(prefix)
}

// text reads the element just started through its end tag and returns its own
// character data (not that of child elements), as Landing's elementText does.
func (r *tokens) text() (string, error) {
	var b strings.Builder
	depth := len(r.stack)
	for {
		tok, err := r.next()
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.EndElement:
			if len(r.stack) < depth {
				return b.String(), nil
			}
		case xml.CharData:
			if len(r.stack) == depth {
				b.Write(t)
			}
		}
	}
}

// skip reads the element just started through its end tag.
func (r *tokens) skip() error {
	depth := len(r.stack)
	for len(r.stack) >= depth {
		if _, err := r.next(); err != nil {
			return err
		}
	}
	return nil
}

// children calls fn for each child element of the element just started, which
// fn must read through its end tag, and returns after the element's end tag.
func (r *tokens) children(fn func(t xml.StartElement, ns string) error) error {
	depth := len(r.stack)
	for {
		tok, err := r.next()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if err := fn(t, r.resolve(t.Name.Space)); err != nil {
				return err
			}
		case xml.EndElement:
			if len(r.stack) < depth {
				return nil
			}
		}
	}
}

func attr(t xml.StartElement, local string) string {
	for _, a := range t.Attr {
		if a.Name.Space == "" && a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// blank reports whether text outside the root element may be ignored: XML
// white space (xmltext.AllSpace) or, as Extract has always allowed, Unicode
// white space around a run of byte order marks (encoding/xml hands a leading
// BOM over as text).
func blank(b []byte) bool {
	return xmltext.AllSpace(b) || len(bytes.TrimLeft(bytes.TrimSpace(b), "\ufeff")) == 0
}
