package oaipmh

// The reference implementation: the encoding/xml reader of list items that
// itemReader (item.go, over xmltok.go) replaced, kept verbatim but for one
// documented difference (a declaration inside a record is an error, see
// next). The differential tests and FuzzRecordTokenizer decode the same pages
// with both and require the same records, headers, quarantine reasons,
// repairs, counts and warnings.

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/rsbridge/rsbridge/rsync/xmltext"
)

// refItems reads items with encoding/xml, as the decoder did before.
type refItems struct {
	stack     []frame
	maxRecord int
	maxID     int

	src    byteSrc
	rd     *xml.Decoder
	rdOK   bool // rd stopped cleanly after its last item and can read the next
	rdBase int64
}

func (p *refItems) read(st *itemState, env []frame, maxRecord, maxID int) (*Record, *Header, bool, error) {
	p.maxRecord, p.maxID = maxRecord, maxID
	p.stack = append(p.stack[:0], env...)
	if p.rd == nil || !p.rdOK {
		p.rd = xml.NewDecoder(&p.src)
		p.rd.Strict = true
	}
	p.src.reset(st.fixed)
	p.rdBase = p.rd.InputOffset()
	rec, hdr, err := p.readItem(st)
	clean := err == nil && p.src.pos == len(st.fixed)
	p.src.reset(nil)
	// A decoder that read a large item keeps a large buffer: start afresh.
	p.rdOK = clean && len(st.fixed) <= 1<<20
	return rec, hdr, clean, err
}

// offset is the position of the token reader in the item.
func (p *refItems) offset() int64 { return p.rd.InputOffset() - p.rdBase }

// byteSrc feeds one record's bytes to encoding/xml. It implements io.ByteReader,
// so the decoder uses it without a buffer of its own and its InputOffset counts
// exactly the bytes handed out: the metadata element is sliced from the record by
// those offsets.
type byteSrc struct {
	b   []byte
	pos int
}

func (s *byteSrc) reset(b []byte) { s.b, s.pos = b, 0 }

// ReadByte implements io.ByteReader.
func (s *byteSrc) ReadByte() (byte, error) {
	if s.pos >= len(s.b) {
		return 0, io.EOF
	}
	c := s.b[s.pos]
	s.pos++
	return c, nil
}

// Read implements io.Reader; encoding/xml uses ReadByte.
func (s *byteSrc) Read(p []byte) (int, error) {
	if s.pos >= len(s.b) {
		return 0, io.EOF
	}
	n := copy(p, s.b[s.pos:])
	s.pos += n
	return n, nil
}

// readItem tokenises one item: a record or a header. Both are nil when the item
// turned out to be an element of another namespace.
func (p *refItems) readItem(st *itemState) (*Record, *Header, error) {
	tok, _, err := p.next()
	t, ok := tok.(xml.StartElement)
	if err != nil || !ok {
		if err == nil {
			err = &xml.SyntaxError{Msg: fmt.Sprintf("<%s> does not start with a tag", st.it.name)}
		}
		if st.it.local == "header" {
			return nil, &Header{}, err
		}
		return &Record{}, nil, err
	}
	switch {
	case p.isOAI(t, "record"):
		rec := &Record{}
		return rec, nil, p.readRecord(rec, st)
	case p.isOAI(t, "header"):
		hdr := &Header{}
		if err := p.readHeader(hdr, t, 0, st); err != nil {
			return nil, hdr, err
		}
		return nil, hdr, nil
	}
	return nil, nil, nil
}

func (p *refItems) readRecord(rec *Record, st *itemState) error {
	depth := len(p.stack)
	for {
		tok, off, err := p.next()
		if err != nil {
			return err
		}
		if len(p.stack) < depth {
			return nil
		}
		t, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch {
		case p.isOAI(t, "header"):
			if err := p.readHeader(&rec.Header, t, off, st); err != nil {
				return err
			}
		case p.isOAI(t, "metadata"):
			if err := p.readMetadata(rec, st); err != nil {
				return err
			}
		default: // about, and anything unexpected
			if err := p.skip(); err != nil {
				return err
			}
		}
	}
}

// readHeader reads a header whose start tag (beginning at tagFrom) was just read.
// Changes made by the repair pass to the header are not accepted silently: bad
// bytes in the identifier, datestamp, a setSpec or the header's attributes
// quarantine the item, since a repaired identifier would be another identifier.
func (p *refItems) readHeader(h *Header, t xml.StartElement, tagFrom int64, st *itemState) error {
	st.hasHeader = true
	if v, ok := attr(t, "status"); ok && strings.TrimSpace(v) == "deleted" {
		h.Deleted = true
	}
	n := editsIn(st.edits, int(tagFrom), int(p.offset()))
	if why := unusable(n, "the header's attributes"); why != "" {
		return st.stop(why)
	}
	st.hdrCtrl += n[editCtrl]
	depth := len(p.stack)
	for {
		tok, off, err := p.next()
		if err != nil {
			return err
		}
		if len(p.stack) < depth {
			return nil
		}
		c, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		s, err := p.text()
		if err != nil {
			return err
		}
		n := editsIn(st.edits, int(off), int(p.offset()))
		switch c.Name.Local {
		case "identifier":
			id := strings.TrimSpace(s)
			if why := unusable(n, "the identifier"); why != "" {
				st.rawID = id
				return st.stop(why)
			}
			if len(id) > p.maxID {
				st.rawID = id
				return st.stop(fmt.Sprintf("identifier of %d bytes exceeds the %d-byte limit (max_identifier_bytes)", len(id), p.maxID))
			}
			h.Identifier = id
		case "datestamp":
			if why := unusable(n, "the datestamp"); why != "" {
				return st.stop(why)
			}
			h.DatestampRaw = strings.TrimSpace(s)
			d, err := ParseDatestamp(s)
			h.Datestamp, st.dsOK = d, err == nil
		case "setSpec":
			if why := unusable(n, "a setSpec"); why != "" {
				return st.stop(why)
			}
			spec := strings.TrimSpace(s)
			if len(spec) > p.maxID {
				return st.stop(fmt.Sprintf("setSpec of %d bytes exceeds the %d-byte limit (max_identifier_bytes)", len(spec), p.maxID))
			}
			if spec != "" && !refContains(h.SetSpecs, spec) {
				if len(h.SetSpecs) == maxSetSpecs {
					return st.stop(fmt.Sprintf("more than %d setSpecs", maxSetSpecs))
				}
				h.SetSpecs = append(h.SetSpecs, spec)
			}
		default:
			continue
		}
		st.hdrCtrl += n[editCtrl]
	}
}

func refContains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// readMetadata slices the first child element of <metadata> out of the item and
// makes it standalone.
func (p *refItems) readMetadata(rec *Record, st *itemState) error {
	depth := len(p.stack)
	for {
		tok, off, err := p.next()
		if err != nil {
			return err
		}
		if len(p.stack) < depth {
			return nil
		}
		t, ok := tok.(xml.StartElement)
		if !ok || len(p.stack) != depth+1 {
			continue
		}
		if rec.Metadata != nil { // a second root: not allowed, keep the first
			if err := p.skip(); err != nil {
				return err
			}
			continue
		}
		ns := p.resolve(t.Name)
		inherited := p.inherited()
		if err := p.skip(); err != nil {
			return err
		}
		end := p.offset()
		rec.MetadataNamespace = ns
		rec.Metadata = refInject(st.fixed[off:end], inherited)
		st.mFrom, st.mTo = int(off), int(end)
	}
}

// inherited lists the namespace bindings in scope at the element on top of the
// stack that it does not declare itself: outermost ancestors first, each element's
// declarations in document order; a prefix redeclared further in keeps its first
// position and takes the innermost value.
func (p *refItems) inherited() []nsDecl {
	top := len(p.stack) - 1
	own := map[string]bool{}
	for _, d := range p.stack[top].decls {
		own[d.prefix] = true
	}
	var out []nsDecl
	idx := map[string]int{}
	for i := 0; i < top; i++ {
		for _, d := range p.stack[i].decls {
			if own[d.prefix] {
				continue
			}
			if j, ok := idx[d.prefix]; ok {
				out[j].uri = d.uri
				continue
			}
			idx[d.prefix] = len(out)
			out = append(out, d)
		}
	}
	// An empty default namespace in scope needs no declaration.
	kept := out[:0]
	for _, d := range out {
		if d.prefix == "" && d.uri == "" {
			continue
		}
		kept = append(kept, d)
	}
	return kept
}

// refInject inserts declarations right after the element name of the start
// tag at the beginning of raw.
// It always returns a new slice: raw belongs to a reused buffer.
func refInject(raw []byte, decls []nsDecl) []byte {
	if len(decls) == 0 {
		return bytes.Clone(raw)
	}
	end := 1
	for end < len(raw) {
		c := raw[end]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '/' || c == '>' {
			break
		}
		end++
	}
	var b bytes.Buffer
	b.Grow(len(raw) + 64*len(decls))
	b.Write(raw[:end])
	for _, d := range decls {
		if d.prefix == "" {
			b.WriteString(` xmlns="`)
		} else {
			b.WriteString(` xmlns:` + d.prefix + `="`)
		}
		refEscapeAttr(&b, d.uri)
		b.WriteByte('"')
	}
	b.Write(raw[end:])
	return b.Bytes()
}

func refEscapeAttr(b *bytes.Buffer, s string) {
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '"':
			b.WriteString("&quot;")
		case '\t':
			b.WriteString("&#x9;")
		case '\n':
			b.WriteString("&#xA;")
		case '\r':
			b.WriteString("&#xD;")
		default:
			b.WriteRune(r)
		}
	}
}

// next returns the next token and the offset at which it starts in the item.
func (p *refItems) next() (xml.Token, int64, error) {
	off := p.offset()
	tok, err := p.rd.RawToken()
	if err == io.EOF && len(p.stack) > 0 {
		top := p.stack[len(p.stack)-1].name
		return nil, off, &xml.SyntaxError{Msg: fmt.Sprintf("<%s> is not closed", xmltext.QName(top.Space, top.Local))}
	}
	if err != nil {
		return nil, off, err
	}
	if _, ok := tok.(xml.Directive); ok {
		// The one documented difference (xmltok.go): a declaration inside a
		// record is malformed XML.
		return nil, off, &xml.SyntaxError{Msg: msgDeclaration}
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
			return nil, off, &xml.SyntaxError{Msg: "unexpected end element </" + xmltext.QName(t.Name.Space, t.Name.Local) + ">"}
		}
		top := p.stack[len(p.stack)-1]
		if top.name != t.Name {
			return nil, off, &xml.SyntaxError{Msg: fmt.Sprintf("element <%s> closed by </%s>", xmltext.QName(top.name.Space, top.name.Local), xmltext.QName(t.Name.Space, t.Name.Local))}
		}
		p.stack = p.stack[:len(p.stack)-1]
	}
	return tok, off, nil
}

// resolve returns the namespace URI of a raw element name in the current scope.
func (p *refItems) resolve(n xml.Name) string {
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
func (p *refItems) isOAI(t xml.StartElement, local string) bool {
	if t.Name.Local != local {
		return false
	}
	ns := p.resolve(t.Name)
	return ns == Namespace || ns == ""
}

// skip consumes the rest of the element whose start was just read.
func (p *refItems) skip() error {
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
func (p *refItems) text() (string, error) {
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
