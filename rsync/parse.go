package rsync

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
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
func Parse(r io.Reader) (*Document, error) {
	d := xml.NewDecoder(r)
	doc := &Document{}
	var cur *Entry
	var text strings.Builder
	inLoc, inLastmod := false, false
	depth := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			if depth != 0 || (doc.MD == MD{} && len(doc.Entries) == 0) {
				return nil, fmt.Errorf("rsync: incomplete document")
			}
			return doc, nil
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
			depth++
			switch {
			case depth == 1:
				if t.Name.Space != SitemapNS || (t.Name.Local != "urlset" && t.Name.Local != "sitemapindex") {
					return nil, fmt.Errorf("rsync: root element {%s}%s is not a sitemap", t.Name.Space, t.Name.Local)
				}
				doc.Index = t.Name.Local == "sitemapindex"
			case t.Name.Space == RSNS && t.Name.Local == "md":
				m, err := parseMD(t.Attr)
				if err != nil {
					return nil, err
				}
				if cur != nil {
					cur.MD = &m
				} else {
					doc.MD = m
				}
			case t.Name.Space == RSNS && t.Name.Local == "ln":
				l, err := parseLink(t.Attr)
				if err != nil {
					return nil, err
				}
				if cur != nil {
					cur.Links = append(cur.Links, l)
				} else {
					doc.Links = append(doc.Links, l)
				}
			case t.Name.Space == SitemapNS && depth == 2 && (t.Name.Local == "url" || t.Name.Local == "sitemap"):
				cur = &Entry{}
			case t.Name.Space == SitemapNS && t.Name.Local == "loc":
				inLoc = true
				text.Reset()
			case t.Name.Space == SitemapNS && t.Name.Local == "lastmod":
				inLastmod = true
				text.Reset()
			}
		case xml.CharData:
			if inLoc || inLastmod {
				text.Write(t)
			}
		case xml.EndElement:
			depth--
			switch {
			case inLoc && t.Name.Local == "loc":
				inLoc = false
				if cur != nil {
					cur.Loc = strings.TrimSpace(text.String())
				}
			case inLastmod && t.Name.Local == "lastmod":
				inLastmod = false
				if cur != nil {
					v, err := ParseTime(text.String())
					if err != nil {
						return nil, err
					}
					cur.LastMod = v
				}
			case cur != nil && depth == 1:
				if cur.Loc == "" {
					return nil, fmt.Errorf("rsync: entry without <loc>")
				}
				doc.Entries = append(doc.Entries, *cur)
				cur = nil
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
			m.Hash = strings.Join(strings.Fields(a.Value), " ")
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
