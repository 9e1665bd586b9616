package rsync

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Document is a parsed ResourceSync document, for destinations and tests.
type Document struct {
	Index   bool // <sitemapindex> rather than <urlset>
	MD      MD
	Links   []Link
	Entries []Entry
}

// Link returns the first root link with the relation, or "".
func (d *Document) Link(rel string) string {
	for _, l := range d.Links {
		if l.Rel == rel {
			return l.Href
		}
	}
	return ""
}

// Parse reads a whole document. Elements are matched by namespace, never by
// prefix; <loc> values are trimmed (real sources pad them with white space).
//
// The document is read into memory and parsed by parseFast, a scanner for the
// XML that sitemaps are written in; what it does not handle (CDATA sections,
// character references, DOCTYPEs, carriage returns, non-ASCII names, anything
// malformed) it leaves to encoding/xml, from the start, so Parse answers for
// every input exactly as encoding/xml does (FuzzParse checks it).
func Parse(r io.Reader) (*Document, error) {
	b, err := readAll(r)
	if err != nil {
		return nil, fmt.Errorf("rsync: %w", err)
	}
	if doc, ok, err := parseFast(b); ok {
		return doc, err
	}
	return parseXML(bytes.NewReader(b))
}

// readAll reads r to its end. Unlike io.ReadAll, which doubles its buffer
// (a 20 MB manifest cost as much to read as to parse), it reads into 1 MiB
// chunks and copies them once into a buffer of the right size, or reads
// straight into one when r knows its length (bytes.Reader, strings.Reader).
func readAll(r io.Reader) ([]byte, error) {
	if l, ok := r.(interface{ Len() int }); ok {
		b := make([]byte, l.Len()+1) // +1: EOF is seen without growing
		n, err := io.ReadFull(r, b)
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			return b[:n], nil
		}
		if err != nil {
			return nil, err
		}
		rest, err := io.ReadAll(r) // it grew meanwhile
		return append(b, rest...), err
	}
	var chunks [][]byte
	total := 0
	for {
		c := make([]byte, 1<<20)
		n, err := io.ReadFull(r, c)
		chunks, total = append(chunks, c[:n]), total+n
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if len(chunks) == 1 {
		return chunks[0], nil
	}
	b := make([]byte, 0, total)
	for _, c := range chunks {
		b = append(b, c...)
	}
	return b, nil
}

// builder turns a document's elements into a Document; parseXML and
// parseFast feed it the same events for the same input.
type builder struct {
	doc              Document
	emit             func(*Document, Entry) error // Stream: entries go here, not into doc
	cur              *Entry
	text             []byte
	inLoc, inLastmod bool
	depth            int
	count            int // entries emitted
}

// start is an element's start; attrs are only needed for rs:md and rs:ln.
func (p *builder) start(space, local string, attrs []xml.Attr) error {
	p.depth++
	switch {
	case p.depth == 1:
		if space != SitemapNS || (local != "urlset" && local != "sitemapindex") {
			return fmt.Errorf("rsync: root element {%s}%s is not a sitemap", space, local)
		}
		p.doc.Index = local == "sitemapindex"
	case space == RSNS && local == "md":
		m, err := parseMD(attrs)
		if err != nil {
			return err
		}
		if p.cur != nil {
			p.cur.MD = &m
		} else {
			p.doc.MD = m
		}
	case space == RSNS && local == "ln":
		l, err := parseLink(attrs)
		if err != nil {
			return err
		}
		if p.cur != nil {
			p.cur.Links = append(p.cur.Links, l)
		} else {
			p.doc.Links = append(p.doc.Links, l)
		}
	case space == SitemapNS && p.depth == 2 && (local == "url" || local == "sitemap"):
		p.cur = &Entry{}
	case space == SitemapNS && local == "loc":
		p.inLoc = true
		p.text = p.text[:0]
	case space == SitemapNS && local == "lastmod":
		p.inLastmod = true
		p.text = p.text[:0]
	}
	return nil
}

// chars is character data (decoded).
func (p *builder) chars(t []byte) {
	if p.inLoc || p.inLastmod {
		p.text = append(p.text, t...)
	}
}

func (p *builder) end(local string) error {
	p.depth--
	switch {
	case p.inLoc && local == "loc":
		p.inLoc = false
		if p.cur != nil {
			p.cur.Loc = string(bytes.TrimSpace(p.text))
		}
	case p.inLastmod && local == "lastmod":
		p.inLastmod = false
		if p.cur != nil {
			v, err := ParseTime(string(p.text))
			if err != nil {
				return err
			}
			p.cur.LastMod = v
		}
	case p.cur != nil && p.depth == 1:
		if p.cur.Loc == "" {
			return fmt.Errorf("rsync: entry without <loc>")
		}
		if p.emit != nil {
			if err := p.emit(&p.doc, *p.cur); err != nil {
				return err
			}
			p.count++
		} else {
			p.doc.Entries = append(p.doc.Entries, *p.cur)
		}
		p.cur = nil
	}
	return nil
}

func (p *builder) finish() (*Document, error) {
	if p.depth != 0 || (p.doc.MD == MD{} && len(p.doc.Entries) == 0 && p.count == 0) {
		return nil, fmt.Errorf("rsync: incomplete document")
	}
	return &p.doc, nil
}

// Stream reads a document entry by entry, in constant memory: each entry
// goes to fn as soon as it is read, with the document's root rs:md and
// links as read so far (sitemaps put them before the entries), and the
// Document returned holds no entries. An error from fn stops the read and
// is returned. It reads with encoding/xml, several times slower than
// Parse, for documents too large to hold (a 50,000-entry list is 50 MB of
// XML and more once parsed).
func Stream(r io.Reader, fn func(*Document, Entry) error) (*Document, error) {
	return decode(r, &builder{emit: fn})
}

// parseXML parses with encoding/xml.
func parseXML(r io.Reader) (*Document, error) { return decode(r, &builder{}) }

func decode(r io.Reader, p *builder) (*Document, error) {
	d := xml.NewDecoder(r)
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return p.finish()
		}
		if err != nil {
			return nil, fmt.Errorf("rsync: %w", err)
		}
		switch t := tok.(type) {
		case xml.ProcInst:
			if t.Target == "xml" && d.InputOffset() > int64(len("<?xml ?>")+len(t.Inst)) {
				return nil, fmt.Errorf("rsync: XML declaration not at the start of the document")
			}
		case xml.StartElement:
			if err := p.start(t.Name.Space, t.Name.Local, t.Attr); err != nil {
				return nil, err
			}
		case xml.CharData:
			p.chars(t)
		case xml.EndElement:
			if err := p.end(t.Name.Local); err != nil {
				return nil, err
			}
		}
	}
}

// ParseTime reads a W3C datetime as the XSD dateTime type allows it (a full date
// and time with an optional fraction and zone).
func ParseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	// Zone-less and space-separated forms occur in real documents (CORE); they are
	// read as UTC.
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("rsync: invalid datetime %q", s)
}

func parseMD(attrs []xml.Attr) (MD, error) {
	var m MD
	for _, a := range attrs {
		if a.Name.Space != "" {
			continue
		}
		var err error
		switch a.Name.Local {
		case "capability":
			m.Capability = a.Value
		case "change":
			m.Change = a.Value
		case "at":
			m.At, err = ParseTime(a.Value)
		case "completed":
			m.Completed, err = ParseTime(a.Value)
		case "from":
			m.From, err = ParseTime(a.Value)
		case "until":
			m.Until, err = ParseTime(a.Value)
		case "datetime":
			m.DateTime, err = ParseTime(a.Value)
		case "hash":
			m.Hash = normalizeSpace(a.Value)
		case "length":
			m.Length, err = strconv.ParseInt(strings.TrimSpace(a.Value), 10, 64)
			m.HasLength = true
		case "type":
			m.Type = a.Value
		case "encoding":
			m.Encoding = a.Value
		case "path":
			m.Path = a.Value
		}
		if err != nil {
			return m, fmt.Errorf("rsync: rs:md/@%s: %w", a.Name.Local, err)
		}
	}
	return m, nil
}

func parseLink(attrs []xml.Attr) (Link, error) {
	var l Link
	for _, a := range attrs {
		if a.Name.Space != "" {
			continue
		}
		var err error
		switch a.Name.Local {
		case "rel":
			l.Rel = a.Value
		case "href":
			l.Href = strings.TrimSpace(a.Value)
		case "type":
			l.Type = a.Value
		case "modified":
			l.Modified, err = ParseTime(a.Value)
		case "hash":
			l.Hash = a.Value
		case "length":
			l.Length, err = strconv.ParseInt(strings.TrimSpace(a.Value), 10, 64)
			l.HasLength = true
		case "pri":
			l.Pri, err = strconv.Atoi(a.Value)
		case "profile":
			l.Profile = a.Value
		}
		if err != nil {
			return l, fmt.Errorf("rsync: rs:ln/@%s: %w", a.Name.Local, err)
		}
	}
	return l, nil
}

// normalizeSpace collapses runs of white space to one space and trims the
// ends, without allocating when s is already so.
func normalizeSpace(s string) string {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			if i == 0 || i == len(s)-1 || s[i+1] == ' ' || s[i+1] == '\t' || s[i+1] == '\n' || s[i+1] == '\r' {
				return strings.Join(strings.Fields(s), " ")
			}
		case '\t', '\n', '\r', '\v', '\f':
			return strings.Join(strings.Fields(s), " ")
		default:
			if s[i] >= utf8.RuneSelf {
				return strings.Join(strings.Fields(s), " ")
			}
		}
	}
	return s
}

// HashValue returns the hex digest for an algorithm ("md5", "sha-256") from a
// hash attribute, or "".
func HashValue(hash, alg string) string {
	for _, f := range strings.Fields(hash) {
		if v, ok := strings.CutPrefix(f, alg+":"); ok {
			return v
		}
	}
	return ""
}
