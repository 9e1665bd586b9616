package oaipmh

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/antchfx/xmlquery"
)

// Identify is what a repository says about itself (OAI-PMH §4.2).
type Identify struct {
	RepositoryName       string
	BaseURL              string
	ProtocolVersion      string
	EarliestDatestamp    time.Time
	EarliestRaw          string
	DeletedRecord        string // no | transient | persistent
	Granularity          Granularity
	GranularityRaw       string
	AdminEmails          []string
	Compression          []string
	RepositoryIdentifier string // from an oai-identifier description, if any
	ResponseDate         time.Time
	Warnings             []string // tolerated problems, for the log
}

// MetadataFormat is one entry of ListMetadataFormats.
type MetadataFormat struct {
	Prefix    string
	Schema    string
	Namespace string
}

// Set is one entry of ListSets.
type Set struct {
	Spec        string
	Name        string
	Description string   // text of any dc:description in the setDescription containers
	Containers  []string // each setDescription container as XML
}

// Query holds the arguments of a list request. With Token set, only the verb and
// the token are sent (resumptionToken is exclusive).
type Query struct {
	MetadataPrefix string
	Set            string
	From, Until    time.Time // zero = absent
	Granularity    Granularity
	Token          string
}

func (q Query) values(verb string) url.Values {
	v := url.Values{"verb": {verb}}
	if q.Token != "" {
		v.Set("resumptionToken", q.Token)
		return v
	}
	v.Set("metadataPrefix", q.MetadataPrefix)
	if q.Set != "" {
		v.Set("set", q.Set)
	}
	if !q.From.IsZero() {
		v.Set("from", q.Granularity.Format(q.From))
	}
	if !q.Until.IsZero() {
		v.Set("until", q.Granularity.Format(q.Until))
	}
	return v
}

// RequestURL is the URL of a list request (for logs and messages).
func (c *Client) RequestURL(verb string, q Query) string { return c.URL(q.values(verb)) }

// Page describes one list response.
type Page struct {
	URL          string
	ResponseDate time.Time // zero if missing or unparsable
	Token        ResumptionToken
	Count        int // records or headers in the page, quarantined ones included
	Stripped     int // illegal control characters removed from the body
	// Quarantined counts the records (or ListIdentifiers headers) handed over
	// with Err set; Repaired those with Repairs; BadDatestamps the usable ones
	// whose datestamp was missing or did not parse (their Datestamp is zero).
	Quarantined   int
	Repaired      int
	BadDatestamps int
	Warnings      []string
}

// Done reports whether the list is complete: an empty token or no token at all.
func (p *Page) Done() bool { return p.Token.Value == "" }

// ListRecords fetches one page and hands every record to fn as it is decoded; the
// page is never held in memory. If the body breaks off mid-page the page is fetched
// again, and fn sees its first records a second time: handle them idempotently.
// noRecordsMatch is an empty, complete page. A record that cannot be used reaches
// fn with Err set (quarantined) and the page goes on; check Err first.
func (c *Client) ListRecords(ctx context.Context, q Query, fn func(*Record) error) (*Page, error) {
	return c.list(ctx, "ListRecords", q, handlers{record: fn})
}

// ListIdentifiers is ListRecords for headers only; a header that cannot be used
// reaches fn with Err set.
func (c *Client) ListIdentifiers(ctx context.Context, q Query, fn func(*Header) error) (*Page, error) {
	return c.list(ctx, "ListIdentifiers", q, handlers{header: fn})
}

func (c *Client) list(ctx context.Context, verb string, q Query, h handlers) (*Page, error) {
	page := &Page{}
	u, err := c.do(ctx, q.values(verb), func(body io.Reader) error {
		resp, err := c.newDecoder(body).decode(h)
		if err != nil {
			return err
		}
		if len(resp.errs) > 0 && !(len(resp.errs) == 1 && resp.errs[0].Code == NoRecordsMatch) {
			return resp.errs
		}
		if len(resp.errs) == 0 && resp.verb != verb {
			return &FormatError{Reason: fmt.Sprintf("expected a <%s> element, found none", verb)}
		}
		*page = Page{ResponseDate: resp.responseDate, Count: resp.count, Stripped: resp.stripped,
			Quarantined: resp.quarantined, Repaired: resp.repaired, BadDatestamps: resp.badDatestamps, Warnings: resp.warnings}
		if resp.token != nil {
			page.Token = *resp.token
		} else {
			page.Token = ResumptionToken{Cursor: -1, CompleteListSize: -1}
		}
		return nil
	})
	page.URL = u
	if err != nil {
		return page, err
	}
	if page.Stripped > 0 {
		c.log.Warn("removed illegal control characters from response", "url", u, "count", page.Stripped)
	}
	return page, nil
}

// newDecoder reads one response body with the client's limits.
func (c *Client) newDecoder(body io.Reader) *decoder {
	d := newDecoder(body, c.opts.MaxRecordBytes)
	d.maxID = c.opts.MaxIdentifierBytes
	return d
}

// GetRecord fetches one record. A quarantined record is an error that wraps its
// *RecordError (naming the identifier and the reason); the record is returned
// too, with its header as far as it was read.
func (c *Client) GetRecord(ctx context.Context, identifier, prefix string) (*Record, error) {
	var rec *Record
	args := url.Values{"verb": {"GetRecord"}, "identifier": {identifier}, "metadataPrefix": {prefix}}
	_, err := c.do(ctx, args, func(body io.Reader) error {
		resp, err := c.newDecoder(body).decode(handlers{record: func(r *Record) error {
			if rec == nil {
				rec = r
			}
			return nil
		}})
		if err != nil {
			return err
		}
		if len(resp.errs) > 0 {
			return resp.errs
		}
		if rec == nil {
			return &FormatError{Reason: "GetRecord response holds no record"}
		}
		if rec.Err != nil {
			if rec.Err.Identifier == "" {
				rec.Err.Identifier = readableID(identifier)
			}
			return rec.Err
		}
		return nil
	})
	return rec, err
}

// small fetches a small document (Identify, ListMetadataFormats, ListSets pages):
// it is checked by the streaming decoder, then parsed into a tree with xmlquery.
func (c *Client) small(ctx context.Context, args url.Values) (*xmlquery.Node, *response, string, error) {
	var doc *xmlquery.Node
	var resp *response
	u, err := c.do(ctx, args, func(body io.Reader) error {
		var buf bytes.Buffer
		r, err := c.newDecoder(io.TeeReader(body, &buf)).decode(handlers{})
		if err != nil {
			return err
		}
		if len(r.errs) > 0 {
			return r.errs
		}
		resp = r
		d, err := xmlquery.Parse(bytes.NewReader(stripControl(buf.Bytes())))
		if err != nil {
			return &FormatError{Reason: "malformed XML", Err: err, Snippet: snippet(buf.Bytes())}
		}
		doc = d
		return nil
	})
	return doc, resp, u, err
}

func stripControl(b []byte) []byte {
	w := 0
	for _, c := range b {
		if isCtrl(c) {
			continue
		}
		b[w] = c
		w++
	}
	return b[:w]
}

// element returns the first child element with the local name.
func element(n *xmlquery.Node, local string) *xmlquery.Node {
	if n == nil {
		return nil
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == xmlquery.ElementNode && c.Data == local {
			return c
		}
	}
	return nil
}

func elements(n *xmlquery.Node, local string) []*xmlquery.Node {
	var out []*xmlquery.Node
	if n == nil {
		return nil
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == xmlquery.ElementNode && c.Data == local {
			out = append(out, c)
		}
	}
	return out
}

func textOf(n *xmlquery.Node) string {
	if n == nil {
		return ""
	}
	return strings.TrimSpace(n.InnerText())
}

func rootOf(doc *xmlquery.Node) *xmlquery.Node {
	for c := doc.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == xmlquery.ElementNode {
			return c
		}
	}
	return nil
}

// Identify asks the repository about itself. A missing or unknown granularity falls
// back to day granularity, which every repository must support.
func (c *Client) Identify(ctx context.Context) (*Identify, error) {
	doc, resp, u, err := c.small(ctx, url.Values{"verb": {"Identify"}})
	if err != nil {
		return nil, err
	}
	id := element(rootOf(doc), "Identify")
	if id == nil {
		return nil, &RequestError{c.opts.Repository, u, &FormatError{Reason: "no <Identify> element"}}
	}
	out := &Identify{
		RepositoryName:  textOf(element(id, "repositoryName")),
		BaseURL:         textOf(element(id, "baseURL")),
		ProtocolVersion: textOf(element(id, "protocolVersion")),
		EarliestRaw:     textOf(element(id, "earliestDatestamp")),
		DeletedRecord:   textOf(element(id, "deletedRecord")),
		GranularityRaw:  textOf(element(id, "granularity")),
		ResponseDate:    resp.responseDate,
		Warnings:        resp.warnings,
	}
	for _, e := range elements(id, "adminEmail") {
		out.AdminEmails = append(out.AdminEmails, textOf(e))
	}
	for _, e := range elements(id, "compression") {
		out.Compression = append(out.Compression, textOf(e))
	}
	if t, err := ParseDatestamp(out.EarliestRaw); err == nil {
		out.EarliestDatestamp = t
	} else {
		out.Warnings = append(out.Warnings, fmt.Sprintf("unparsable earliestDatestamp %q", out.EarliestRaw))
	}
	if g, err := ParseGranularity(out.GranularityRaw); err == nil {
		out.Granularity = g
	} else {
		out.Granularity = GranularityDay
		out.Warnings = append(out.Warnings, fmt.Sprintf("unknown granularity %q, using YYYY-MM-DD", out.GranularityRaw))
	}
	switch out.DeletedRecord {
	case "no", "transient", "persistent":
	default:
		out.Warnings = append(out.Warnings, fmt.Sprintf("unknown deletedRecord %q, treating as \"no\"", out.DeletedRecord))
		out.DeletedRecord = "no"
	}
	if out.ProtocolVersion != "2.0" {
		out.Warnings = append(out.Warnings, fmt.Sprintf("protocolVersion is %q, not 2.0", out.ProtocolVersion))
	}
	for _, d := range elements(id, "description") {
		if oi := element(d, "oai-identifier"); oi != nil {
			out.RepositoryIdentifier = textOf(element(oi, "repositoryIdentifier"))
		}
	}
	return out, nil
}

// ListMetadataFormats lists the formats of the repository (identifier == "") or of
// one item.
func (c *Client) ListMetadataFormats(ctx context.Context, identifier string) ([]MetadataFormat, error) {
	args := url.Values{"verb": {"ListMetadataFormats"}}
	if identifier != "" {
		args.Set("identifier", identifier)
	}
	doc, _, _, err := c.small(ctx, args)
	if err != nil {
		return nil, err
	}
	var out []MetadataFormat
	for _, f := range elements(element(rootOf(doc), "ListMetadataFormats"), "metadataFormat") {
		out = append(out, MetadataFormat{
			Prefix:    textOf(element(f, "metadataPrefix")),
			Schema:    textOf(element(f, "schema")),
			Namespace: textOf(element(f, "metadataNamespace")),
		})
	}
	return out, nil
}

// ListSets pages through every set, calling fn for each. A repository without sets
// (noSetHierarchy) yields none and no error.
func (c *Client) ListSets(ctx context.Context, maxEmptyPages int, fn func(Set) error) error {
	guard := Guard{MaxEmptyPages: maxEmptyPages}
	args := url.Values{"verb": {"ListSets"}}
	for {
		doc, resp, u, err := c.small(ctx, args)
		if IsCode(err, NoSetHierarchy) {
			return nil
		}
		if err != nil {
			return err
		}
		ls := element(rootOf(doc), "ListSets")
		sets := elements(ls, "set")
		for _, s := range sets {
			set := Set{Spec: textOf(element(s, "setSpec")), Name: textOf(element(s, "setName"))}
			for _, d := range elements(s, "setDescription") {
				for ch := d.FirstChild; ch != nil; ch = ch.NextSibling {
					if ch.Type == xmlquery.ElementNode {
						set.Containers = append(set.Containers, ch.OutputXML(true))
						if desc := xmlquery.FindOne(ch, "//*[local-name()='description']"); desc != nil && set.Description == "" {
							set.Description = textOf(desc)
						}
					}
				}
			}
			if set.Spec == "" {
				continue
			}
			if err := fn(set); err != nil {
				return err
			}
		}
		page := &Page{URL: u, ResponseDate: resp.responseDate, Count: len(sets), Token: ResumptionToken{Cursor: -1, CompleteListSize: -1}}
		if rt := element(ls, "resumptionToken"); rt != nil {
			page.Token.Value = textOf(rt)
		}
		if err := guard.Check(args.Get("resumptionToken"), page); err != nil {
			return &RequestError{c.opts.Repository, u, err}
		}
		if page.Done() {
			return nil
		}
		args = url.Values{"verb": {"ListSets"}, "resumptionToken": {page.Token.Value}}
	}
}

// Guard stops resumption-token sequences that cannot make progress: a token that
// was already used in the sequence (the same one back, or a cycle A→B→A), a run of
// empty pages that still carry a token, or more pages than any real list has.
type Guard struct {
	MaxEmptyPages int // default 10
	MaxPages      int // default 10,000,000
	empty         int
	pages         int
	seen          map[uint64]struct{} // FNV-64 of every token sent: 8 bytes a page
}

// Check inspects the page returned for a request that sent token sent ("" for the
// first request of a sequence).
func (g *Guard) Check(sent string, p *Page) error {
	g.pages++
	if g.seen == nil {
		g.seen = map[uint64]struct{}{}
	}
	if sent != "" {
		g.seen[tokenHash(sent)] = struct{}{}
	}
	if p.Done() {
		return nil
	}
	if sent != "" && p.Token.Value == sent {
		return &GuardError{Reason: fmt.Sprintf("the repository returned the resumption token %q that was just sent (a loop)", p.Token.Value)}
	}
	if _, ok := g.seen[tokenHash(p.Token.Value)]; ok {
		return &GuardError{Reason: fmt.Sprintf("the repository returned the resumption token %q, which this list already used (a cycle)", p.Token.Value)}
	}
	maxPages := g.MaxPages
	if maxPages <= 0 {
		maxPages = 10_000_000
	}
	if g.pages >= maxPages {
		return &GuardError{Reason: fmt.Sprintf("more than %d pages in one list", maxPages)}
	}
	max := g.MaxEmptyPages
	if max <= 0 {
		max = 10
	}
	if p.Count == 0 {
		g.empty++
		if g.empty >= max {
			return &GuardError{Reason: fmt.Sprintf("%d consecutive pages without records but with a resumption token", g.empty)}
		}
	} else {
		g.empty = 0
	}
	return nil
}

func tokenHash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
