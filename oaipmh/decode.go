package oaipmh

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Namespace is the OAI-PMH 2.0 namespace.
const Namespace = "http://www.openarchives.org/OAI/2.0/"

// Header is a record header.
type Header struct {
	Identifier   string
	Datestamp    time.Time // zero when DatestampRaw did not parse
	DatestampRaw string
	SetSpecs     []string
	Deleted      bool
}

// Record is one harvested record. Metadata is the child of <metadata> as a
// standalone XML document: the original bytes, with every namespace declaration in
// scope at <metadata> (from the OAI-PMH root, the list element, record or metadata)
// added to its start tag unless the element declares that prefix itself. It is nil
// for deleted records.
type Record struct {
	Header            Header
	Metadata          []byte
	MetadataNamespace string // namespace URI of the metadata root element
}

// ResumptionToken is the flow-control element of a list response.
type ResumptionToken struct {
	Value            string
	Cursor           int64 // -1 when absent
	CompleteListSize int64 // -1 when absent
	ExpirationDate   time.Time
}

// response is what the decoder learned about the envelope.
type response struct {
	responseDate    time.Time
	responseDateRaw string
	verb            string
	errs            Errors
	token           *ResumptionToken
	count           int
	stripped        int
	warnings        []string
}

type nsDecl struct{ prefix, uri string }

type frame struct {
	name  xml.Name // raw: Space is the prefix
	decls []nsDecl
}

// decoder walks an OAI-PMH response as a token stream, checking nesting itself
// (RawToken does not) and tracking namespace scopes, so it can resolve names and
// make metadata standalone.
type decoder struct {
	d     *xml.Decoder
	rr    *rawReader
	stack []frame
}

func newDecoder(r io.Reader, maxRecord int) *decoder {
	rr := newRawReader(r, maxRecord)
	d := xml.NewDecoder(rr)
	d.Strict = true
	d.CharsetReader = func(label string, input io.Reader) (io.Reader, error) {
		l := strings.ToLower(strings.TrimSpace(label))
		if l == "utf-8" || l == "utf8" || l == "us-ascii" || l == "ascii" {
			return input, nil
		}
		return nil, fmt.Errorf("unsupported encoding %q (OAI-PMH requires UTF-8)", label)
	}
	return &decoder{d: d, rr: rr}
}

// next returns the next token and the decoder offset at which it starts.
func (p *decoder) next() (xml.Token, int64, error) {
	off := p.d.InputOffset()
	tok, err := p.d.RawToken()
	if err == io.EOF && len(p.stack) > 0 {
		return nil, off, &xml.SyntaxError{Msg: fmt.Sprintf("unexpected EOF: <%s> is not closed (truncated body?)", qname(p.stack[len(p.stack)-1].name)), Line: p.line()}
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
			return nil, off, &xml.SyntaxError{Msg: "unexpected end element </" + qname(t.Name) + ">", Line: p.line()}
		}
		top := p.stack[len(p.stack)-1]
		if top.name != t.Name {
			return nil, off, &xml.SyntaxError{Msg: fmt.Sprintf("element <%s> closed by </%s>", qname(top.name), qname(t.Name)), Line: p.line()}
		}
		p.stack = p.stack[:len(p.stack)-1]
	}
	return tok, off, nil
}

func (p *decoder) line() int {
	l, _ := p.d.InputPos()
	return l
}

func qname(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
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
func (p *decoder) text() (string, error) {
	depth := len(p.stack)
	var b strings.Builder
	for {
		tok, _, err := p.next()
		if err != nil {
			return "", err
		}
		if len(p.stack) < depth {
			return b.String(), nil
		}
		if cd, ok := tok.(xml.CharData); ok && len(p.stack) == depth {
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

// handlers receive list items as they are decoded.
type handlers struct {
	record func(*Record) error
	header func(*Header) error
}

// decode reads one whole response. Syntax errors are returned as *FormatError with
// the first bytes of the body; errors returned by handlers come back as handlerError;
// anything else is a transport error from the body.
func (p *decoder) decode(h handlers) (*response, error) {
	resp := &response{}
	err := p.decodeEnvelope(resp, h)
	resp.stripped = p.rr.stripped
	if err == nil {
		return resp, nil
	}
	var he handlerError
	if errors.As(err, &he) {
		return resp, he
	}
	var fe *FormatError
	if errors.As(err, &fe) {
		return resp, err
	}
	var se *xml.SyntaxError
	if errors.As(err, &se) || errors.Is(err, errCaptureTooLarge) || strings.HasPrefix(err.Error(), "xml:") {
		reason := "malformed XML"
		if errors.Is(err, errCaptureTooLarge) {
			reason = "a record exceeds the record size limit"
		}
		return resp, &FormatError{Reason: reason, Snippet: snippet(p.rr.head), Err: err}
	}
	return resp, err // transport error while reading the body
}

type handlerError struct{ err error }

func (e handlerError) Error() string { return e.err.Error() }

func (p *decoder) decodeEnvelope(resp *response, h handlers) error {
	// Find the root element.
	var root xml.StartElement
	for {
		tok, _, err := p.next()
		if err == io.EOF {
			return &FormatError{Reason: "empty body", Snippet: snippet(p.rr.head)}
		}
		if err != nil {
			return err
		}
		if t, ok := tok.(xml.StartElement); ok {
			root = t
			break
		}
		if cd, ok := tok.(xml.CharData); ok && len(bytes.TrimSpace(cd)) > 0 {
			return &FormatError{Reason: "text before the root element", Snippet: snippet(p.rr.head)}
		}
	}
	if root.Name.Local != "OAI-PMH" {
		return &FormatError{Reason: fmt.Sprintf("root element is <%s>, not <OAI-PMH>", qname(root.Name)), Snippet: snippet(p.rr.head)}
	}
	if ns := p.resolve(root.Name); ns != Namespace {
		if ns != "" {
			return &FormatError{Reason: fmt.Sprintf("root element is in namespace %q, not %q", ns, Namespace), Snippet: snippet(p.rr.head)}
		}
		resp.warnings = append(resp.warnings, "root element <OAI-PMH> has no namespace")
	}
	for {
		tok, _, err := p.next()
		if err != nil {
			return err
		}
		if len(p.stack) == 0 { // root closed
			break
		}
		t, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch {
		case p.isOAI(t, "responseDate"):
			s, err := p.text()
			if err != nil {
				return err
			}
			resp.responseDateRaw = strings.TrimSpace(s)
			if d, err := ParseDatestamp(s); err == nil {
				resp.responseDate = d
			} else {
				resp.warnings = append(resp.warnings, fmt.Sprintf("unparsable responseDate %q", s))
			}
		case p.isOAI(t, "error"):
			code, _ := attr(t, "code")
			msg, err := p.text()
			if err != nil {
				return err
			}
			resp.errs = append(resp.errs, &Error{Code: code, Message: strings.Join(strings.Fields(msg), " ")})
		case p.isOAI(t, "ListRecords"), p.isOAI(t, "GetRecord"), p.isOAI(t, "ListIdentifiers"):
			resp.verb = t.Name.Local
			if err := p.decodeList(resp, h); err != nil {
				return err
			}
		default:
			if err := p.skip(); err != nil {
				return err
			}
		}
	}
	// Nothing but comments, PIs and white space may follow the root.
	for {
		tok, err := p.d.RawToken()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement, xml.EndElement:
			return &xml.SyntaxError{Msg: "content after the root element", Line: p.line()}
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return &xml.SyntaxError{Msg: "text after the root element", Line: p.line()}
			}
		}
	}
}

func (p *decoder) decodeList(resp *response, h handlers) error {
	depth := len(p.stack)
	for {
		tok, _, err := p.next()
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
		switch {
		case p.isOAI(t, "record"):
			rec, err := p.decodeRecord()
			if err != nil {
				return err
			}
			resp.count++
			if h.record != nil {
				if err := h.record(rec); err != nil {
					return handlerError{err}
				}
			}
		case p.isOAI(t, "header"):
			hd, err := p.decodeHeader(t)
			if err != nil {
				return err
			}
			resp.count++
			if h.header != nil {
				if err := h.header(hd); err != nil {
					return handlerError{err}
				}
			}
		case p.isOAI(t, "resumptionToken"):
			rt, err := p.decodeToken(t)
			if err != nil {
				return err
			}
			resp.token = rt
		default:
			if err := p.skip(); err != nil {
				return err
			}
		}
	}
}

func (p *decoder) decodeToken(t xml.StartElement) (*ResumptionToken, error) {
	rt := &ResumptionToken{Cursor: -1, CompleteListSize: -1}
	if v, ok := attr(t, "cursor"); ok {
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			rt.Cursor = n
		}
	}
	if v, ok := attr(t, "completeListSize"); ok {
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			rt.CompleteListSize = n
		}
	}
	if v, ok := attr(t, "expirationDate"); ok {
		if d, err := ParseDatestamp(v); err == nil {
			rt.ExpirationDate = d
		}
	}
	s, err := p.text()
	if err != nil {
		return nil, err
	}
	rt.Value = strings.TrimSpace(s)
	return rt, nil
}

func (p *decoder) decodeHeader(t xml.StartElement) (*Header, error) {
	h := &Header{}
	if v, ok := attr(t, "status"); ok && strings.TrimSpace(v) == "deleted" {
		h.Deleted = true
	}
	depth := len(p.stack)
	for {
		tok, _, err := p.next()
		if err != nil {
			return nil, err
		}
		if len(p.stack) < depth {
			return h, nil
		}
		c, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		s, err := p.text()
		if err != nil {
			return nil, err
		}
		switch c.Name.Local {
		case "identifier":
			h.Identifier = strings.TrimSpace(s)
		case "datestamp":
			h.DatestampRaw = strings.TrimSpace(s)
			h.Datestamp, _ = ParseDatestamp(s)
		case "setSpec":
			if spec := strings.TrimSpace(s); spec != "" && !contains(h.SetSpecs, spec) {
				h.SetSpecs = append(h.SetSpecs, spec)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func (p *decoder) decodeRecord() (*Record, error) {
	rec := &Record{}
	depth := len(p.stack)
	p.rr.startCapture()
	defer p.rr.stopCapture()
	for {
		tok, _, err := p.next()
		if err != nil {
			return nil, err
		}
		if len(p.stack) < depth {
			break
		}
		t, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch {
		case p.isOAI(t, "header"):
			h, err := p.decodeHeader(t)
			if err != nil {
				return nil, err
			}
			rec.Header = *h
		case p.isOAI(t, "metadata"):
			if err := p.decodeMetadata(rec); err != nil {
				return nil, err
			}
		default: // about, and anything unexpected
			if err := p.skip(); err != nil {
				return nil, err
			}
		}
	}
	if rec.Header.Deleted {
		rec.Metadata, rec.MetadataNamespace = nil, ""
	}
	return rec, nil
}

// decodeMetadata slices the first child element of <metadata> out of the input and
// makes it standalone.
func (p *decoder) decodeMetadata(rec *Record) error {
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
		rec.MetadataNamespace = p.resolve(t.Name)
		inherited := p.inherited()
		if err := p.skip(); err != nil {
			return err
		}
		raw, err := p.rr.slice(off, p.d.InputOffset())
		if err != nil {
			return err
		}
		rec.Metadata = injectNamespaces(raw, inherited)
	}
}

// inherited lists the namespace bindings in scope at the element on top of the
// stack that it does not declare itself: outermost ancestors first, each element's
// declarations in document order; a prefix redeclared further in keeps its first
// position and takes the innermost value.
func (p *decoder) inherited() []nsDecl {
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

// injectNamespaces inserts declarations right after the element name of the start
// tag at the beginning of raw.
func injectNamespaces(raw []byte, decls []nsDecl) []byte {
	if len(decls) == 0 {
		return raw
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
		escapeAttr(&b, d.uri)
		b.WriteByte('"')
	}
	b.Write(raw[end:])
	return b.Bytes()
}

func escapeAttr(b *bytes.Buffer, s string) {
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
