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
	"unicode/utf8"
)

// Namespace is the OAI-PMH 2.0 namespace.
const Namespace = "http://www.openarchives.org/OAI/2.0/"

// Header is a record header.
type Header struct {
	Identifier   string    // "" when missing, or when unusable (then Err says why)
	Datestamp    time.Time // zero when DatestampRaw is missing or did not parse (and for 0001-01-01T00:00:00Z)
	DatestampRaw string
	SetSpecs     []string
	Deleted      bool
	// Err is set on a ListIdentifiers header that cannot be used (see
	// RecordError); the fields above are then as far as they were read, and
	// Identifier is empty if the identifier itself is the problem. Records of
	// ListRecords and GetRecord report problems in Record.Err instead.
	Err *RecordError
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
	// Err is non-nil when the record is quarantined: it could not be used (see
	// RecordError). Metadata is then nil and Header is as far as it was read, with
	// an empty Identifier if the identifier itself is the problem.
	Err *RecordError
	// Repairs lists the safe repairs made to the record's bytes, one line per
	// kind with its count, e.g. "3 invalid UTF-8 sequences replaced by U+FFFD".
	// When it is not empty, Metadata differs from what the repository sent.
	Repairs []string
	// LongIdentifier is the whole identifier of a record quarantined for its
	// length alone (max_identifier_bytes): with a higher limit, GetRecord of
	// it can succeed. "" otherwise.
	LongIdentifier string
}

// RecordError describes a record (or a ListIdentifiers header) that was
// quarantined: a problem confined to it — bad bytes in the header, malformed XML,
// an identifier too long to be a key, a record larger than MaxRecordBytes — so the
// rest of the page was still harvested.
type RecordError struct {
	Identifier string // as far as it was read ("" if unknown), shortened for messages
	Offset     int64  // byte offset of the record in the (decompressed) body
	Reason     string // what is wrong, e.g. "invalid UTF-8 in the identifier"
}

// Error names the record, says why it was skipped and what can be done.
func (e *RecordError) Error() string {
	what := "record"
	if e.Identifier != "" {
		what = fmt.Sprintf("record %q", e.Identifier)
	}
	hint := "ask the repository to fix the record"
	switch {
	case strings.Contains(e.Reason, "max_record_bytes"):
		hint = "raise max_record_bytes to harvest it"
	case strings.Contains(e.Reason, "max_identifier_bytes"):
		hint = "ask the repository to shorten it; max_identifier_bytes can be raised up to 30000"
	}
	return fmt.Sprintf("%s at byte %d of the response skipped: %s (%s)", what, e.Offset, e.Reason, hint)
}

// readableID shortens an identifier for messages.
func readableID(s string) string {
	const max = 200
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:cut], len(s))
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
		top := qname(p.stack[len(p.stack)-1].name)
		return nil, off, &xml.SyntaxError{Msg: fmt.Sprintf("unexpected EOF: <%s> is not closed (truncated body?)", top), Line: p.line()}
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
	l, _ := p.env.InputPos()
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

// handlers receive list items as they are decoded.
type handlers struct {
	record func(*Record) error
	header func(*Header) error
}

// decode reads one whole response. Problems in the envelope are returned as
// *FormatError with the first bytes of the body; problems inside one record only
// quarantine that record. Errors returned by handlers come back as handlerError;
// anything else is a transport error from the body.
func (p *decoder) decode(h handlers) (*response, error) {
	resp := &response{}
	err := p.decodeEnvelope(resp, h)
	resp.stripped += p.sc.stripped
	if resp.moreWarnings > 0 {
		resp.warnings = append(resp.warnings, fmt.Sprintf("and %d more warnings", resp.moreWarnings))
	}
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
	var tl *tokenTooLargeError
	if errors.As(err, &tl) {
		return resp, &FormatError{Reason: "a token is too large", Snippet: p.sc.rr.snippet(), Err: err}
	}
	var le *limitError
	if errors.As(err, &le) {
		return resp, &FormatError{Reason: "too complex", Snippet: p.sc.rr.snippet(), Err: err}
	}
	var se *xml.SyntaxError
	var sce *scanError
	if errors.As(err, &se) || errors.As(err, &sce) || strings.HasPrefix(err.Error(), "xml:") {
		return resp, &FormatError{Reason: "malformed XML", Snippet: p.sc.rr.snippet(), Err: err}
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
			return &FormatError{Reason: "empty body", Snippet: p.sc.rr.snippet()}
		}
		if err != nil {
			return err
		}
		if t, ok := tok.(xml.StartElement); ok {
			root = t
			break
		}
		if cd, ok := tok.(xml.CharData); ok && len(bytes.TrimSpace(cd)) > 0 {
			return &FormatError{Reason: "text before the root element", Snippet: p.sc.rr.snippet()}
		}
	}
	if root.Name.Local != "OAI-PMH" {
		return &FormatError{Reason: fmt.Sprintf("root element is <%s>, not <OAI-PMH>", qname(root.Name)), Snippet: p.sc.rr.snippet()}
	}
	if ns := p.resolve(root.Name); ns != Namespace {
		if ns != "" {
			return &FormatError{Reason: fmt.Sprintf("root element is in namespace %q, not %q", ns, Namespace), Snippet: p.sc.rr.snippet()}
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
			if len(resp.errs) < maxErrors {
				resp.errs = append(resp.errs, &Error{Code: code, Message: strings.Join(strings.Fields(msg), " ")})
			}
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
		tok, err := p.env.RawToken()
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
	textWarned := false
	for {
		tok, _, err := p.next()
		if err != nil {
			return err
		}
		if len(p.stack) < depth {
			return nil
		}
		switch t := tok.(type) {
		case xml.CharData:
			if len(p.stack) == depth && !textWarned {
				if s := bytes.TrimSpace(t); len(s) > 0 {
					textWarned = true
					resp.warn(fmt.Sprintf("ignored text between the records: %q", snippet(s[:min(len(s), 60)])))
				}
			}
		case xml.ProcInst:
			if t.Target == markerTarget && p.sc.ready && len(p.stack) == depth {
				if err := p.decodeItem(resp, h); err != nil {
					return err
				}
			}
		case xml.StartElement:
			if len(p.stack) != depth+1 {
				continue
			}
			switch {
			case p.isOAI(t, "resumptionToken"):
				rt, err := p.decodeToken(t)
				if err != nil {
					return err
				}
				resp.token = rt
			case p.isOAI(t, "record"), p.isOAI(t, "header"):
				// The scanner cuts every item out; one that reaches the envelope
				// means the two disagree about this (odd) markup.
				resp.warn(fmt.Sprintf("skipped a <%s> the decoder could not separate", qname(t.Name)))
				if err := p.skip(); err != nil {
					return err
				}
			default:
				if err := p.skip(); err != nil {
					return err
				}
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

// itemState is what is learnt while one item is read.
type itemState struct {
	it        scanItem
	fixed     []byte // the item's bytes after repair
	edits     []edit
	reason    string // why the item is quarantined; "" if it is not
	rawID     string // the identifier as read, when it is unusable
	longID    bool   // rawID was refused for its length only
	hasHeader bool
	dsOK      bool
	hdrCtrl   int // control characters removed from header fields
	mFrom     int // range of the metadata element in fixed
	mTo       int
}

// errQuarantine stops reading an item whose problem is already known.
var errQuarantine = errors.New("quarantined")

func (st *itemState) stop(reason string) error {
	if st.reason == "" {
		st.reason = reason
	}
	return errQuarantine
}

func xmlReason(err error) string {
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		return "malformed XML: " + se.Msg
	}
	var tl *tokenTooLargeError
	if errors.As(err, &tl) {
		return fmt.Sprintf("a text longer than max_record_bytes (%s)", fmtSize(int64(tl.max)))
	}
	return "malformed XML: " + strings.TrimPrefix(err.Error(), "xml: ")
}

// decodeItem reads the list item the scanner just cut out and hands it to the
// handler, quarantined if anything in it is wrong. It returns handler errors, and
// a FormatError for junk that is not the rest of a broken record.
func (p *decoder) decodeItem(resp *response, h handlers) error {
	st := &p.st
	*st = itemState{it: p.sc.take()}
	if st.it.junk {
		return p.junk(resp, st.it)
	}
	raw := st.it.raw
	if st.it.limit != "" {
		// What a decoder would build from the rest is not bounded by its
		// size: read only the part before, for the header.
		raw = raw[:st.it.limitAt]
	}
	fixed, edits, truncated := repairItem(raw, p.maxRecord)
	st.fixed, st.edits = fixed, edits
	for _, e := range edits {
		if e.kind == editCtrl {
			resp.stripped++
		}
	}

	rec, hdr, clean, err := p.items.read(st, p.stack, p.maxRecord, p.maxID)
	if rec == nil && hdr == nil {
		return nil // not an OAI-PMH record or header
	}

	switch {
	case err == nil && !clean:
		st.stop(fmt.Sprintf("malformed XML: content after </%s>", st.it.name))
	case err != nil && err != errQuarantine:
		st.stop(xmlReason(err))
	}
	switch {
	case st.it.over:
		st.reason = fmt.Sprintf("record of %s exceeds max_record_bytes (%s)", fmtSize(st.it.total), fmtSize(int64(p.maxRecord)))
	case st.it.limit != "":
		st.reason = st.it.limit
	case truncated:
		st.reason = fmt.Sprintf("record exceeds max_record_bytes (%s) once its invalid bytes are replaced", fmtSize(int64(p.maxRecord)))
	case st.it.open != "":
		st.reason = fmt.Sprintf("malformed XML: <%s> is not closed before %s", st.it.name, st.it.open)
	}
	quarantine := func(id string) *RecordError {
		if st.rawID != "" {
			id = st.rawID
		}
		resp.quarantined++
		return &RecordError{Identifier: readableID(id), Offset: st.it.off, Reason: st.reason}
	}
	resp.count++
	if rec != nil {
		if st.reason != "" {
			rec.Err = quarantine(rec.Header.Identifier)
			if st.longID {
				rec.LongIdentifier = st.rawID
			}
			rec.Metadata, rec.MetadataNamespace = nil, ""
		} else {
			if rec.Header.Deleted {
				rec.Metadata, rec.MetadataNamespace = nil, ""
			}
			if rec.Metadata != nil {
				rec.Repairs = repairNotes(editsIn(edits, st.mFrom, st.mTo), "")
			}
			if st.hdrCtrl > 0 {
				rec.Repairs = append(rec.Repairs, fmt.Sprintf("%s removed from the header", plural(st.hdrCtrl, "C0 control character")))
			}
			if len(rec.Repairs) > 0 {
				resp.repaired++
			}
			if st.hasHeader && !st.dsOK {
				resp.badDatestamps++
			}
		}
		if h.record != nil {
			if err := h.record(rec); err != nil {
				return handlerError{err}
			}
		}
		return nil
	}
	if st.reason != "" {
		hdr.Err = quarantine(hdr.Identifier)
	} else if !st.dsOK {
		resp.badDatestamps++
	}
	if h.header != nil {
		if err := h.header(hdr); err != nil {
			return handlerError{err}
		}
	}
	return nil
}

// junk handles end tags the scanner found between items: the rest of a record
// that a stray end tag ended early is skipped with a warning; anything else is
// broken markup outside the records and fails the page.
func (p *decoder) junk(resp *response, it scanItem) error {
	if it.open != "" {
		return &FormatError{Reason: fmt.Sprintf("stray markup between the records at byte %d (%q…), up to %s", it.off, snippet(it.raw[:min(len(it.raw), 40)]), it.open), Snippet: p.sc.rr.snippet()}
	}
	resp.warn(fmt.Sprintf("skipped %s of stray text and end tags at byte %d, up to </%s>: the rest of a record that a stray </%s> ended early", fmtSize(it.total), it.off, it.name, it.name))
	return nil
}
