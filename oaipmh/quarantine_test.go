package oaipmh

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	"unicode/utf8"

	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
)

// A page of three records with the hostile one in the middle. Namespaces are
// declared on the root and the list element, so the standalone metadata depends
// on the envelope as well as on the record.
const (
	hostileHead = `<?xml version="1.0" encoding="UTF-8"?>
<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
<responseDate>2024-05-01T00:00:00Z</responseDate>
<request verb="ListRecords" metadataPrefix="oai_dc">http://repo.example/oai</request>
<ListRecords xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/">
`
	hostileTail = `<resumptionToken cursor="0" completeListSize="3">tok-2</resumptionToken>
</ListRecords>
</OAI-PMH>
`
	dcStandalone = `<oai_dc:dc xmlns="http://www.openarchives.org/OAI/2.0/" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/">`
)

// hrec is a record with the given identifier and metadata element.
func hrec(id, meta string) string {
	return hrecHeader("<identifier>"+id+"</identifier><datestamp>2024-01-02T03:04:05Z</datestamp><setSpec>a:b</setSpec>", meta)
}

func hrecHeader(header, meta string) string {
	return "<record>\n <header>" + header + "</header>\n <metadata>" + meta + "</metadata>\n</record>\n"
}

// dcMeta is an oai_dc element with one title; dcWant is its standalone form.
func dcMeta(title string) string {
	return `<oai_dc:dc><dc:title xml:lang="en">` + title + `</dc:title></oai_dc:dc>`
}

func dcWant(title string) string {
	return dcStandalone + `<dc:title xml:lang="en">` + title + `</dc:title></oai_dc:dc>`
}

func hostilePage(mid string) string {
	return hostileHead + hrec("oai:x:1", dcMeta("first &amp; one")) + mid + hrec("oai:x:3", dcMeta("third")) + hostileTail
}

type hostileCase struct {
	name       string
	mid        string // the middle record
	max        int    // MaxRecordBytes; 0 = default
	quarantine string // part of Err.Reason; "" = not quarantined
	id         string // expected Err.Identifier (quarantined) or Header.Identifier
	repair     string // part of one of Repairs; "" = no repairs
	meta       string // expected metadata of the middle record, when not quarantined
	stripped   int
	warn       string // part of a page warning
}

func hostileCases() []hostileCase {
	bigID := "oai:x:" + strings.Repeat("9", 70000-6)
	bigRec := hrec("oai:x:2", `<oai_dc:dc>`+strings.Repeat("<dc:subject>s</dc:subject>\n", 4000)+`</oai_dc:dc>`)
	bigText := hrec("oai:x:2", dcMeta(strings.Repeat("x", 200<<10)))
	return []hostileCase{
		{name: "invalid UTF-8 in text", mid: hrec("oai:x:2", dcMeta("a\xff\xfeb")), id: "oai:x:2",
			repair: "2 invalid UTF-8 sequences replaced by U+FFFD", meta: dcWant("a\uFFFD\uFFFDb")},
		{name: "invalid UTF-8 in an attribute", mid: hrec("oai:x:2", "<oai_dc:dc><dc:title xml:lang=\"e\xffn\">t</dc:title></oai_dc:dc>"), id: "oai:x:2",
			repair: "1 invalid UTF-8 sequence replaced by U+FFFD", meta: dcStandalone + `<dc:title xml:lang="e` + "\uFFFD" + `n">t</dc:title></oai_dc:dc>`},
		{name: "overlong NUL", mid: hrec("oai:x:2", dcMeta("a\xc0\x80b")), id: "oai:x:2",
			repair: "2 invalid UTF-8 sequences", meta: dcWant("a\uFFFD\uFFFDb")},
		{name: "UTF-8-encoded surrogate", mid: hrec("oai:x:2", dcMeta("a\xed\xa0\x80b")), id: "oai:x:2",
			repair: "3 invalid UTF-8 sequences", meta: dcWant("a\uFFFD\uFFFD\uFFFDb")},
		{name: "raw U+FFFE and U+FFFF", mid: hrec("oai:x:2", dcMeta("a\uFFFEb\uFFFFc")), id: "oai:x:2",
			repair: "2 non-characters (U+FFFE, U+FFFF) replaced by U+FFFD", meta: dcWant("a\uFFFDb\uFFFDc")},
		{name: "reference to U+0001", mid: hrec("oai:x:2", dcMeta("a&#1;b")), id: "oai:x:2",
			repair: "1 reference to characters XML forbids (such as &#1;) replaced by &#xFFFD;", meta: dcWant("a&#xFFFD;b")},
		{name: "references to U+FFFE and a surrogate", mid: hrec("oai:x:2", dcMeta("a&#xFFFE;b&#55296;c&#x110000;")), id: "oai:x:2",
			repair: "3 references", meta: dcWant("a&#xFFFD;b&#xFFFD;c&#xFFFD;")},
		{name: "reference in a CDATA section is text", mid: hrec("oai:x:2", dcMeta("<![CDATA[a&#1;b]]>&#65;")), id: "oai:x:2",
			meta: dcWant("<![CDATA[a&#1;b]]>&#65;")},
		{name: "control characters in metadata", mid: hrec("oai:x:2", dcMeta("a\x01b\x0b")), id: "oai:x:2",
			repair: "2 C0 control characters removed", meta: dcWant("ab"), stripped: 2},
		{name: "invalid UTF-8 in a comment in metadata", mid: hrec("oai:x:2", `<oai_dc:dc><!-- a`+"\xff"+` --><dc:title xml:lang="en">t</dc:title></oai_dc:dc>`), id: "oai:x:2",
			repair: "1 invalid UTF-8 sequence", meta: dcStandalone + "<!-- a\uFFFD --><dc:title xml:lang=\"en\">t</dc:title></oai_dc:dc>"},
		{name: "invalid UTF-8 in about is not stored", mid: "<record><header><identifier>oai:x:2</identifier><datestamp>2024-01-02</datestamp></header><metadata>" + dcMeta("t") + "</metadata><about><x xmlns=\"urn:x\">\xff</x></about></record>", id: "oai:x:2",
			meta: dcWant("t")},
		{name: "control character in the identifier", mid: hrec("oai:x:\x012", dcMeta("t")), id: "oai:x:2",
			repair: "1 C0 control character removed from the header", meta: dcWant("t"), stripped: 1},

		{name: "invalid UTF-8 in the identifier", mid: hrec("oai:x:\xff2", dcMeta("t")), id: "oai:x:\uFFFD2",
			quarantine: "invalid UTF-8 in the identifier"},
		{name: "reference to U+0001 in the identifier", mid: hrec("oai:x:&#1;2", dcMeta("t")), id: "oai:x:\uFFFD2",
			quarantine: "a reference to a character XML forbids (such as &#1;) in the identifier"},
		{name: "U+FFFF in a setSpec", mid: hrecHeader("<identifier>oai:x:2</identifier><datestamp>2024-01-02</datestamp><setSpec>a\uFFFF</setSpec>", dcMeta("t")), id: "oai:x:2",
			quarantine: "a non-character (U+FFFE or U+FFFF) in a setSpec"},
		{name: "invalid UTF-8 in the datestamp", mid: hrecHeader("<identifier>oai:x:2</identifier><datestamp>2024-01-0\xff</datestamp>", dcMeta("t")), id: "oai:x:2",
			quarantine: "invalid UTF-8 in the datestamp"},
		{name: "invalid UTF-8 in the status attribute", mid: "<record><header status=\"del\xffeted\"><identifier>oai:x:2</identifier></header></record>\n",
			quarantine: "invalid UTF-8 in the header's attributes"},
		{name: "identifier of 70,000 bytes", mid: hrec(bigID, dcMeta("t")), id: readableID(bigID),
			quarantine: "identifier of 70000 bytes exceeds the 8192-byte limit (max_identifier_bytes)"},
		{name: "setSpec of 70,000 bytes", mid: hrecHeader("<identifier>oai:x:2</identifier><setSpec>"+bigID+"</setSpec>", dcMeta("t")), id: "oai:x:2",
			quarantine: "setSpec of 70000 bytes exceeds"},
		{name: "mismatched end tag in metadata", mid: hrec("oai:x:2", `<oai_dc:dc><dc:title>t</dc:titel></oai_dc:dc>`), id: "oai:x:2",
			quarantine: "malformed XML: element <dc:title> closed by </dc:titel>"},
		{name: "unclosed element in metadata", mid: hrec("oai:x:2", `<oai_dc:dc><dc:title>t</oai_dc:dc>`), id: "oai:x:2",
			quarantine: "malformed XML: element <dc:title> closed by </oai_dc:dc>"},
		{name: "undefined entity in metadata", mid: hrec("oai:x:2", dcMeta("a&nbsp;b")), id: "oai:x:2",
			quarantine: "malformed XML: invalid character entity &nbsp;"},
		{name: "unescaped < and a stray quote", mid: hrec("oai:x:2", dcMeta(`a < b's "c`)), id: "oai:x:2",
			quarantine: "malformed XML"},
		{name: "< in an attribute value", mid: hrec("oai:x:2", `<oai_dc:dc><dc:title a="x<y">t</dc:title></oai_dc:dc>`), id: "oai:x:2",
			quarantine: "malformed XML: unescaped < inside quoted string"},
		{name: "mismatched tag in the header", mid: hrecHeader("<identifier>oai:x:2</identifier><datestamp>2024-01-02</datestmp>", dcMeta("t")), id: "oai:x:2",
			quarantine: "malformed XML: element <datestamp> closed by </datestmp>"},
		{name: "XML declaration with another encoding inside a record", mid: hrec("oai:x:2", `<?xml version="1.0" encoding="ISO-8859-1"?>`+dcMeta("t")), id: "oai:x:2",
			quarantine: "malformed XML"},
		{name: "oversize record", mid: bigRec, max: 64 << 10, id: "oai:x:2",
			quarantine: "record of " + fmtSize(int64(len(bigRec)-1)) + " exceeds max_record_bytes (64 KiB)"},
		{name: "oversize token", mid: bigText, max: 64 << 10, id: "oai:x:2",
			quarantine: "record of " + fmtSize(int64(len(bigText)-1)) + " exceeds max_record_bytes (64 KiB)"},
		{name: "oversize after repair", mid: hrec("oai:x:2", dcMeta(strings.Repeat("\xff", 30<<10))), max: 64 << 10, id: "oai:x:2",
			quarantine: "record exceeds max_record_bytes (64 KiB) once its invalid bytes are replaced"},
		{name: "oversize record whose header is past the limit", mid: "<record><about>" + strings.Repeat("a", 70<<10) + "</about>" + hrec("oai:x:2", "")[len("<record>"):], max: 64 << 10, id: "",
			quarantine: "exceeds max_record_bytes (64 KiB)"},

		{name: "</record> in an attribute value", mid: hrec("oai:x:2", `<oai_dc:dc><dc:title a="</record>">t</dc:title></oai_dc:dc>`), id: "oai:x:2",
			quarantine: "malformed XML: unescaped < inside quoted string", warn: "stray text and end tags at byte"},
		{name: "stray </record> in metadata", mid: hrec("oai:x:2", `<oai_dc:dc><dc:title>t</record></dc:title></oai_dc:dc>`), id: "oai:x:2",
			quarantine: "malformed XML: element <dc:title> closed by </record>", warn: "up to </record>: the rest of a record that a stray </record> ended early"},
		{name: "an extra </record> after a record", mid: hrec("oai:x:2", dcMeta("t")) + "</record>\n", id: "oai:x:2",
			meta: dcWant("t"), warn: "skipped 9 bytes of stray text and end tags"},
		{name: "text after a record is ignored, as before", mid: hrec("oai:x:2", dcMeta("t")) + "Warning: x in oai.php\n", id: "oai:x:2",
			meta: dcWant("t"), warn: `ignored text between the records: "Warning: x in oai.php"`},
		{name: "elements nested 1001 deep", mid: hrec("oai:x:2", `<oai_dc:dc>`+strings.Repeat("<a>", 999)+strings.Repeat("</a>", 999)+`</oai_dc:dc>`), id: "oai:x:2",
			quarantine: "elements nested more than 1000 deep"},
		{name: "elements nested 1000 deep", mid: hrec("oai:x:2", `<oai_dc:dc>`+strings.Repeat("<a>", 997)+strings.Repeat("</a>", 997)+`</oai_dc:dc>`), id: "oai:x:2",
			meta: dcStandalone + strings.Repeat("<a>", 997) + strings.Repeat("</a>", 997) + `</oai_dc:dc>`},
		{name: "an element with 1001 attributes", mid: hrec("oai:x:2", `<oai_dc:dc>`+manyAttrs(1001)+`</oai_dc:dc>`), id: "oai:x:2",
			quarantine: "an element with more than 1000 attributes"},
		{name: "an element with 1000 attributes", mid: hrec("oai:x:2", `<oai_dc:dc>`+manyAttrs(1000)+`</oai_dc:dc>`), id: "oai:x:2",
			meta: dcStandalone + manyAttrs(1000) + `</oai_dc:dc>`},
		{name: "1001 setSpecs", mid: hrecHeader("<identifier>oai:x:2</identifier>"+manySets(1001), dcMeta("t")), id: "oai:x:2",
			quarantine: "more than 1000 setSpecs"},
		{name: "nested element with the record's name", mid: hrec("oai:x:2", `<record xmlns="http://www.loc.gov/MARC21/slim"><leader>x</leader><record/></record>`), id: "oai:x:2",
			meta: `<record xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/" xmlns="http://www.loc.gov/MARC21/slim"><leader>x</leader><record/></record>`},
		{name: "end tags in a comment, CDATA and a PI", mid: hrec("oai:x:2", `<oai_dc:dc><!-- </record></ListRecords> --><dc:title>a<![CDATA[</record>]]></dc:title><?pi </record>?></oai_dc:dc>`), id: "oai:x:2",
			meta: dcStandalone + `<!-- </record></ListRecords> --><dc:title>a<![CDATA[</record>]]></dc:title><?pi </record>?></oai_dc:dc>`},
		{name: "> and quotes in attribute values", mid: hrec("oai:x:2", `<oai_dc:dc><dc:title a='x>"y' b="'>">t</dc:title></oai_dc:dc>`), id: "oai:x:2",
			meta: dcStandalone + `<dc:title a='x>"y' b="'>">t</dc:title></oai_dc:dc>`},
	}
}

func manyAttrs(n int) string {
	var b strings.Builder
	b.WriteString("<dc:title")
	for i := range n {
		fmt.Fprintf(&b, ` a%d="%d"`, i, i)
	}
	b.WriteString(">t</dc:title>")
	return b.String()
}

func manySets(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "<setSpec>s%d</setSpec>", i)
	}
	return b.String()
}

// decodePage decodes a page with a reader and returns what the handler saw.
func decodePage(t *testing.T, r io.Reader, max int) (*response, []*Record, error) {
	t.Helper()
	var recs []*Record
	resp, err := newDecoder(r, max).decode(handlers{record: func(r *Record) error { recs = append(recs, r); return nil }})
	return resp, recs, err
}

// TestHostileRecordsQuarantinedOrRepaired: one bad record in the middle of a page
// costs that record only. The first and third arrive byte for byte, the middle
// one is quarantined or repaired, the counts and the token are right, and the
// page is no error. The same page decoded one byte per Read gives the same result.
func TestHostileRecordsQuarantinedOrRepaired(t *testing.T) {
	for _, tc := range hostileCases() {
		t.Run(tc.name, func(t *testing.T) {
			body := hostilePage(tc.mid)
			c, sl, _ := newTestClient(t, &script{steps: []func(http.ResponseWriter, *http.Request){xmlBody(200, body)}}, func(o *Options) { o.MaxRecordBytes = tc.max })
			var recs []*Record
			page, err := c.ListRecords(context.Background(), Query{MetadataPrefix: "oai_dc"}, func(r *Record) error { recs = append(recs, r); return nil })
			if err != nil {
				t.Fatalf("page failed: %v", err)
			}
			if len(sl.d) != 0 {
				t.Errorf("retried: %v", sl.d)
			}
			if len(recs) != 3 {
				t.Fatalf("got %d records", len(recs))
			}
			checkIntact(t, recs[0], "oai:x:1", dcWant("first &amp; one"))
			checkIntact(t, recs[2], "oai:x:3", dcWant("third"))
			mid := recs[1]
			wantQ, wantR := 0, 0
			if tc.quarantine != "" {
				wantQ = 1
				e := mid.Err
				if e == nil {
					t.Fatalf("not quarantined: %+v (repairs %v)", mid.Header, mid.Repairs)
				}
				if !strings.Contains(e.Reason, tc.quarantine) || e.Identifier != tc.id || mid.Metadata != nil || mid.Repairs != nil {
					t.Errorf("quarantined as %q (id %q, metadata %d bytes, repairs %v)\nwant reason %q, id %q", e.Reason, e.Identifier, len(mid.Metadata), mid.Repairs, tc.quarantine, tc.id)
				}
				if want := int64(strings.Index(body, tc.mid)); e.Offset != want {
					t.Errorf("offset %d, want %d", e.Offset, want)
				}
				if !utf8.ValidString(e.Error()) || !strings.Contains(e.Error(), e.Reason) {
					t.Errorf("message %q", e.Error())
				}
				if h := mid.Header.Identifier; h != "" && (h != tc.id || !utf8.ValidString(h)) {
					t.Errorf("an unusable identifier was kept in the header: %q", h)
				}
			} else {
				if mid.Err != nil {
					t.Fatalf("quarantined: %v", mid.Err)
				}
				if mid.Header.Identifier != tc.id {
					t.Errorf("identifier %q, want %q", mid.Header.Identifier, tc.id)
				}
				if tc.repair != "" {
					wantR = 1
					if !strings.Contains(strings.Join(mid.Repairs, "\n"), tc.repair) {
						t.Errorf("repairs %q, want %q", mid.Repairs, tc.repair)
					}
				} else if mid.Repairs != nil {
					t.Errorf("unexpected repairs %q", mid.Repairs)
				}
				if string(mid.Metadata) != tc.meta {
					t.Errorf("metadata\n got %q\nwant %q", mid.Metadata, tc.meta)
				}
				assertStandaloneParses(t, mid.Metadata)
			}
			if w := strings.Join(page.Warnings, "\n"); (tc.warn == "") != (w == "") || !strings.Contains(w, tc.warn) {
				t.Errorf("warnings %q, want %q", page.Warnings, tc.warn)
			}
			if page.Count != 3 || page.Quarantined != wantQ || page.Repaired != wantR || page.Stripped != tc.stripped || page.Token.Value != "tok-2" || page.Token.CompleteListSize != 3 {
				t.Errorf("page %+v", page)
			}

			// The scanner and the decoder must not care where reads split the body.
			resp, recs1, err := decodePage(t, iotest.OneByteReader(strings.NewReader(body)), tc.max)
			if err != nil || len(recs1) != 3 || resp.quarantined != wantQ || resp.repaired != wantR || resp.token == nil || resp.token.Value != "tok-2" {
				t.Fatalf("one byte at a time: %v, %d records, %+v", err, len(recs1), resp)
			}
			for i := range recs {
				if a, b := fmt.Sprintf("%+v %q %v", recs[i].Header, recs[i].Metadata, recs[i].Repairs), fmt.Sprintf("%+v %q %v", recs1[i].Header, recs1[i].Metadata, recs1[i].Repairs); a != b {
					t.Errorf("record %d differs one byte at a time:\n%.300s\n%.300s", i, a, b)
				}
			}
		})
	}
}

func checkIntact(t *testing.T, r *Record, id, meta string) {
	t.Helper()
	if r.Err != nil || r.Repairs != nil || r.Header.Identifier != id || string(r.Metadata) != meta ||
		r.Header.Datestamp != time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC) || len(r.Header.SetSpecs) != 1 || r.MetadataNamespace != "http://www.openarchives.org/OAI/2.0/oai_dc/" {
		t.Errorf("record %s not intact: err %v, repairs %v, header %+v\nmetadata %q\n    want %q", id, r.Err, r.Repairs, r.Header, r.Metadata, meta)
	}
}

// TestUnclosedRecordKeepsTheToken: a record whose own element is never closed
// (its metadata opens an element of the same name) runs into the next records;
// the scanner stops it at <resumptionToken>, so the token is still read.
func TestUnclosedRecordKeepsTheToken(t *testing.T) {
	body := hostileHead + hrec("oai:x:1", dcMeta("one")) + hrec("oai:x:2", `<record xmlns="urn:marc"><leader>x</leader>`) + hrec("oai:x:3", dcMeta("t")) + hostileTail
	for _, r := range []io.Reader{strings.NewReader(body), iotest.OneByteReader(strings.NewReader(body))} {
		resp, recs, err := decodePage(t, r, 1<<20)
		if err != nil || resp.token == nil || resp.token.Value != "tok-2" || len(recs) != 2 || resp.quarantined != 1 {
			t.Fatalf("%v %d %+v", err, len(recs), resp)
		}
		checkIntact(t, recs[0], "oai:x:1", dcWant("one"))
		if e := recs[1].Err; e == nil || e.Identifier != "oai:x:2" || e.Reason != "malformed XML: <record> is not closed before <resumptionToken>" {
			t.Errorf("%+v", e)
		}
	}
	// The same before </ListRecords> when there is no token.
	body = hostileHead + hrec("oai:x:1", dcMeta("one")) + hrec("oai:x:2", `<record xmlns="urn:marc">`) + "</ListRecords></OAI-PMH>"
	resp, recs, err := decodePage(t, strings.NewReader(body), 1<<20)
	if err != nil || resp.token != nil || len(recs) != 2 || recs[1].Err == nil || !strings.Contains(recs[1].Err.Reason, "before </ListRecords>") {
		t.Fatalf("%v %d %+v", err, len(recs), resp)
	}
}

// TestHostileHeaders: ListIdentifiers quarantines a header it cannot use and goes
// on with the next one.
func TestHostileHeaders(t *testing.T) {
	hdr := func(inner string) string { return "<header>" + inner + "</header>\n" }
	ok := func(id string) string {
		return hdr("<identifier>" + id + "</identifier><datestamp>2024-01-02</datestamp><setSpec>s</setSpec>")
	}
	cases := []struct {
		name, mid, quarantine, id string
		bad                       int // BadDatestamps
	}{
		{"invalid UTF-8 in the identifier", ok("oai:x:\xff"), "invalid UTF-8 in the identifier", "oai:x:\uFFFD", 0},
		{"identifier of 70,000 bytes", ok(strings.Repeat("i", 70000)), "identifier of 70000 bytes exceeds the 8192-byte limit", readableID(strings.Repeat("i", 70000)), 0},
		{"mismatched end tag", hdr("<identifier>oai:x:2</identifer>"), "malformed XML: element <identifier> closed by </identifer>", "", 0},
		{"undefined entity", hdr("<identifier>oai:x:2</identifier><setSpec>&foo;</setSpec>"), "invalid character entity &foo;", "oai:x:2", 0},
		{"reference to U+FFFE", hdr("<identifier>oai:x:2&#xFFFE;</identifier>"), "a reference to a character XML forbids", "oai:x:2\uFFFD", 0},
		{"control character (removed, as before)", ok("oai:x:\x022"), "", "oai:x:2", 0},
		{"unparsable datestamp", hdr("<identifier>oai:x:2</identifier><datestamp>2024-02-30</datestamp>"), "", "oai:x:2", 1},
		{"missing datestamp", hdr("<identifier>oai:x:2</identifier>"), "", "oai:x:2", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := strings.Replace(hostileHead, "ListRecords", "ListIdentifiers", -1) + ok("oai:x:1") + tc.mid + ok("oai:x:3") + strings.Replace(hostileTail, "ListRecords", "ListIdentifiers", -1)
			c, _, _ := newTestClient(t, &script{steps: []func(http.ResponseWriter, *http.Request){xmlBody(200, body)}}, nil)
			var hs []*Header
			page, err := c.ListIdentifiers(context.Background(), Query{MetadataPrefix: "oai_dc"}, func(h *Header) error { hs = append(hs, h); return nil })
			if err != nil || len(hs) != 3 {
				t.Fatalf("%v, %d headers", err, len(hs))
			}
			for i, want := range map[int]string{0: "oai:x:1", 2: "oai:x:3"} {
				if h := hs[i]; h.Err != nil || h.Identifier != want || h.Datestamp.IsZero() || len(h.SetSpecs) != 1 {
					t.Errorf("header %d: %+v", i, h)
				}
			}
			q := 0
			if tc.quarantine != "" {
				q = 1
				if e := hs[1].Err; e == nil || !strings.Contains(e.Reason, tc.quarantine) || e.Identifier != tc.id {
					t.Errorf("got %+v, want %q for %q", e, tc.quarantine, tc.id)
				}
			} else if hs[1].Err != nil || hs[1].Identifier != tc.id {
				t.Errorf("got %+v", hs[1])
			}
			if page.Count != 3 || page.Quarantined != q || page.BadDatestamps != tc.bad || page.Token.Value != "tok-2" {
				t.Errorf("page %+v", page)
			}
		})
	}
}

// TestEnvelopeErrorsStillFailThePage: a page whose envelope cannot be trusted
// fails as a whole, with the first bytes of the body.
func TestEnvelopeErrorsStillFailThePage(t *testing.T) {
	rec1 := hrec("oai:x:1", dcMeta("one"))
	cases := []struct {
		name, body, want string
		max              int
	}{
		{"mismatched list end tag", hostileHead + rec1 + "</ListRecord></OAI-PMH>", `stray markup between the records at byte 566 ("</ListRecord>"…), up to </OAI-PMH>`, 0},
		{"stray end tag before a record", hostileHead + rec1 + "</x>\n" + hrec("oai:x:2", dcMeta("t")) + hostileTail, `stray markup between the records at byte 566 ("</x>\n"…), up to <record>`, 0},
		{"mismatched list end tag first", hostileHead + "</ListRecord></OAI-PMH>", "element <ListRecords> closed by </ListRecord>", 0},
		{"truncated inside a record", hostileHead + rec1 + "<record><header><identifier>oai:x:2</ident", "unexpected EOF inside <record> that starts at byte", 0},
		{"truncated between records", hostileHead + rec1, "unexpected EOF: <ListRecords> is not closed", 0},
		{"bad resumptionToken", hostileHead + rec1 + "<resumptionToken>a&b</resumptionToken></ListRecords></OAI-PMH>", "invalid character entity &b", 0},
		{"reference to U+0001 in the token", hostileHead + rec1 + "<resumptionToken>a&#1;</resumptionToken></ListRecords></OAI-PMH>", "illegal character code U+0001", 0},
		{"invalid UTF-8 in responseDate", strings.Replace(hostileHead, "2024-05-01", "2024-05-0\xff", 1) + rec1 + hostileTail, "invalid UTF-8", 0},
		{"oversize text outside the records", strings.Replace(hostileHead, "http://repo.example/oai", strings.Repeat("u", 100<<10), 1) + rec1 + hostileTail, "a token is too large", 64 << 10},
		{"oversize comment outside the records", hostileHead + "<!--" + strings.Repeat("c", 100<<10) + "-->" + rec1 + hostileTail, "larger than max_record_bytes (64 KiB)", 64 << 10},
		{"oversize text in pieces", strings.Replace(hostileHead, "2024-05-01T00:00:00Z", strings.Repeat("uuuuuuuuuu<!---->", 10<<10), 1) + rec1 + hostileTail, "a token is too large", 64 << 10},
		{"HTML", "<html><body><header>x</header></body></html>", "root element is <html>", 0},
		{"elements nested 1001 deep outside the records", strings.Replace(hostileHead, "http://repo.example/oai", strings.Repeat("<a>", 999)+strings.Repeat("</a>", 999), 1) + rec1 + hostileTail, "too complex: elements nested more than 1000 deep at byte", 0},
		{"an element with 1001 attributes outside the records", strings.Replace(hostileHead, "<request ", "<request "+manyAttrs(1001)[len("<dc:title"):len(manyAttrs(1001))-len(">t</dc:title>")]+" ", 1) + rec1 + hostileTail, "an element with more than 1000 attributes at byte", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, sl, _ := newTestClient(t, &script{steps: []func(http.ResponseWriter, *http.Request){xmlBody(200, tc.body)}}, func(o *Options) { o.MaxRecordBytes = tc.max })
			_, err := c.ListRecords(context.Background(), Query{MetadataPrefix: "oai_dc"}, func(*Record) error { return nil })
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Snippet == "" || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want FormatError with %q, got %v", tc.want, err)
			}
			if len(sl.d) != 0 {
				t.Errorf("retried: %v", sl.d)
			}
			for _, n := range []int{1, 7, 4096} { // however reads split the body
				_, _, err := decodePage(t, &chunkReader{b: []byte(tc.body), n: n}, tc.max)
				if !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%d bytes per read: want FormatError with %q, got %v", n, tc.want, err)
				}
			}
		})
	}
}

// TestGetRecordQuarantined: GetRecord of a record that cannot be used is an error
// naming the repository, the URL and the identifier, and is not retried.
func TestGetRecordQuarantined(t *testing.T) {
	body := strings.Replace(strings.Replace(hostileHead, "ListRecords", "GetRecord", -1), `<request verb="GetRecord"`, `<request verb="GetRecord" identifier="oai:x:2"`, 1) +
		hrec("oai:x:2", dcMeta("a&nbsp;b")) + "</GetRecord></OAI-PMH>"
	c, sl, srv := newTestClient(t, &script{steps: []func(http.ResponseWriter, *http.Request){xmlBody(200, body)}}, nil)
	rec, err := c.GetRecord(context.Background(), "oai:x:2", "oai_dc")
	var re *RecordError
	var rqe *RequestError
	if !errors.As(err, &re) || !errors.As(err, &rqe) || re.Identifier != "oai:x:2" || rqe.Repository != "test" || !strings.HasPrefix(rqe.URL, srv.URL) {
		t.Fatalf("got %v", err)
	}
	for _, want := range []string{"repository test", `record "oai:x:2"`, "invalid character entity &nbsp;", "ask the repository to fix the record"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if rec == nil || rec.Err != re || rec.Header.Identifier != "oai:x:2" || len(sl.d) != 0 {
		t.Errorf("rec %+v, waits %v", rec, sl.d)
	}
}

// TestBadDatestampsCounted: records whose datestamp is missing or unparsable are
// counted (the harvest warns once with the count); quarantined ones are not.
func TestBadDatestampsCounted(t *testing.T) {
	body := hostileHead +
		hrecHeader("<identifier>oai:x:1</identifier><datestamp>2024-01-02</datestamp>", dcMeta("a")) +
		hrecHeader("<identifier>oai:x:2</identifier><datestamp>2024-13-45</datestamp>", dcMeta("b")) +
		hrecHeader("<identifier>oai:x:3</identifier>", dcMeta("c")) +
		hrecHeader("<identifier>oai:x:4</identifier><datestamp>yesterday</datestamp>", dcMeta("a&bogus;")) +
		hrecHeader("<identifier>oai:x:5</identifier><datestamp>0001-01-01T00:00:00Z</datestamp>", dcMeta("e")) +
		hostileTail
	c, _, _ := newTestClient(t, &script{steps: []func(http.ResponseWriter, *http.Request){xmlBody(200, body)}}, nil)
	var recs []*Record
	page, err := c.ListRecords(context.Background(), Query{MetadataPrefix: "oai_dc"}, func(r *Record) error { recs = append(recs, r); return nil })
	if err != nil || page.BadDatestamps != 2 || page.Quarantined != 1 || page.Count != 5 {
		t.Fatalf("%v %+v", err, page)
	}
	if r := recs[1].Header; !r.Datestamp.IsZero() || r.DatestampRaw != "2024-13-45" {
		t.Errorf("%+v", r)
	}
}

// TestParseDatestamp: every valid OAI-PMH datestamp, years 0001-9999 at both
// granularities, parses to the instant it names, including years outside the
// range of UnixNano (1678-2262).
func TestParseDatestamp(t *testing.T) {
	cases := []struct {
		in   string
		want time.Time // zero with ok false: must not parse
		ok   bool
	}{
		{"2024-01-02", time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC), true},
		{"2024-01-02T03:04:05Z", time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), true},
		{" 2024-01-02T03:04:05Z\n", time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), true},
		{"0001-01-01", time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), true},
		{"0001-01-01T00:00:01Z", time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC), true},
		{"0999-12-31", time.Date(999, 12, 31, 0, 0, 0, 0, time.UTC), true},
		{"1677-09-21T00:12:43Z", time.Date(1677, 9, 21, 0, 12, 43, 0, time.UTC), true},
		{"1066-10-14", time.Date(1066, 10, 14, 0, 0, 0, 0, time.UTC), true},
		{"2262-04-11T23:47:17Z", time.Date(2262, 4, 11, 23, 47, 17, 0, time.UTC), true},
		{"2263-01-01", time.Date(2263, 1, 1, 0, 0, 0, 0, time.UTC), true},
		{"9999-12-31T23:59:59Z", time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), true},
		{"2024-02-29", time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), true},
		{"2024-01-02T03:04:05.25Z", time.Date(2024, 1, 2, 3, 4, 5, 250e6, time.UTC), true},
		{"2024-01-02T09:04:05+09:00", time.Date(2024, 1, 2, 0, 4, 5, 0, time.UTC), true},
		{"2024-01-02T03:04:05", time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), true},
		{"2023-02-29", time.Time{}, false},
		{"2024-13-01", time.Time{}, false},
		{"2024-1-2", time.Time{}, false},
		{"10000-01-01", time.Time{}, false},
		{"2024-01-02T24:00:01Z", time.Time{}, false},
		{"", time.Time{}, false},
		{"yesterday", time.Time{}, false},
	}
	for _, tc := range cases {
		got, err := ParseDatestamp(tc.in)
		if (err == nil) != tc.ok || !got.Equal(tc.want) || got.Location() != time.UTC {
			t.Errorf("ParseDatestamp(%q) = %v, %v; want %v ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
		if tc.ok && got.Year() != tc.want.Year() {
			t.Errorf("%q: year %d", tc.in, got.Year())
		}
	}
}

// TestRepairedMetadataIsWellFormed: whatever the repair pass does to bytes, the
// result parses with encoding/xml (table of raw byte soups in text, attributes,
// comments and CDATA).
func TestRepairedMetadataIsWellFormed(t *testing.T) {
	soups := []string{"\xff", "\xc0\x80", "\xed\xa0\x80", "\xef\xbf\xbe", "\xef\xbf", "\xf4\x90\x80\x80", "\x01", "&#0;", "&#x1F;", "&#xD800;", "&#1114112;", "&#99999999999999999999;"}
	for _, s := range soups {
		for _, meta := range []string{
			dcMeta("a" + s + "b"),
			`<oai_dc:dc><dc:title a="` + s + `">t</dc:title></oai_dc:dc>`,
			`<oai_dc:dc><!--` + s + `--><dc:title><![CDATA[` + s + `]]></dc:title><?pi ` + s + `?></oai_dc:dc>`,
		} {
			_, recs, err := decodePage(t, strings.NewReader(hostilePage(hrec("oai:x:2", meta))), 1<<20)
			if err != nil || len(recs) != 3 {
				t.Fatalf("%q: %v", meta, err)
			}
			if r := recs[1]; r.Err == nil {
				assertStandaloneParses(t, r.Metadata)
				if r.Repairs == nil && !bytes.Contains(r.Metadata, []byte(s)) {
					t.Errorf("%q changed without a repair note: %q", meta, r.Metadata)
				}
			}
		}
	}
}

// assertWellFormed reports whether b is a well-formed document for encoding/xml.
func assertWellFormed(b []byte) error {
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// TestSyntheticHostileProvider: every kind of oaiserver.Hostility, harvested
// through HTTP, ends as documented: the quarantined kinds are quarantined, the
// repaired kinds arrive as Item says a harvester stores them, and every other
// record arrives byte for byte.
func TestSyntheticHostileProvider(t *testing.T) {
	kinds := map[int]oaiserver.Hostility{
		2: oaiserver.HostileInvalidUTF8, 3: oaiserver.HostileCharRef, 5: oaiserver.HostileBadDatestamp,
		8: oaiserver.HostileMalformed, 9: oaiserver.HostileBadIdentifier, 11: oaiserver.HostileLongIdentifier,
		13: oaiserver.HostileOversize, 14: oaiserver.HostileInvalidUTF8,
	}
	for _, prefix := range []string{"oai_dc", "jpcoar_2.0"} {
		t.Run(prefix, func(t *testing.T) {
			up := oaiserver.New(oaiserver.Options{Records: 20, PageSize: 8, Prefixes: []string{"oai_dc", "jpcoar_2.0"}, OversizeBytes: 80 << 10,
				Hostile: func(i int) oaiserver.Hostility { return kinds[i] }})
			c, _, _ := newTestClient(t, up, func(o *Options) { o.MaxRecordBytes = 64 << 10 })
			var recs []*Record
			var pages []*Page
			q := Query{MetadataPrefix: prefix}
			for {
				p, err := c.ListRecords(context.Background(), q, func(r *Record) error { recs = append(recs, r); return nil })
				if err != nil {
					t.Fatal(err)
				}
				pages = append(pages, p)
				if p.Done() {
					break
				}
				q = Query{Token: p.Token.Value}
			}
			if len(recs) != 20 || len(pages) != 3 {
				t.Fatalf("%d records in %d pages", len(recs), len(pages))
			}
			var quarantined, repaired, bad int
			for _, p := range pages {
				quarantined, repaired, bad = quarantined+p.Quarantined, repaired+p.Repaired, bad+p.BadDatestamps
			}
			if quarantined != 4 || repaired != 3 || bad != 1 {
				t.Errorf("quarantined %d, repaired %d, bad datestamps %d", quarantined, repaired, bad)
			}
			for i, r := range recs {
				it, _ := up.Item(i, prefix)
				switch {
				case it.Hostile.Quarantined():
					if r.Err == nil || r.Metadata != nil {
						t.Errorf("item %d (%v) not quarantined", i, it.Hostile)
					}
				case r.Err != nil || r.Header.Identifier != it.Identifier || !bytes.Equal(r.Metadata, it.Metadata):
					t.Errorf("item %d (%v): err %v, id %q\n got %q\nwant %q", i, it.Hostile, r.Err, r.Header.Identifier, r.Metadata, it.Metadata)
				case (it.Hostile == oaiserver.HostileInvalidUTF8 || it.Hostile == oaiserver.HostileCharRef) != (len(r.Repairs) == 1):
					t.Errorf("item %d (%v): repairs %q", i, it.Hostile, r.Repairs)
				case (it.Hostile == oaiserver.HostileBadDatestamp) != r.Header.Datestamp.IsZero():
					t.Errorf("item %d (%v): datestamp %v", i, it.Hostile, r.Header.Datestamp)
				}
			}
		})
	}
}

func TestRecordErrorMessage(t *testing.T) {
	cases := []struct {
		e    RecordError
		want string
	}{
		{RecordError{Identifier: "oai:x:1", Offset: 42, Reason: "malformed XML: invalid character entity &nbsp;"},
			`record "oai:x:1" at byte 42 of the response skipped: malformed XML: invalid character entity &nbsp; (ask the repository to fix the record)`},
		{RecordError{Offset: 7, Reason: "record of 20 MiB exceeds max_record_bytes (16 MiB)"},
			`record at byte 7 of the response skipped: record of 20 MiB exceeds max_record_bytes (16 MiB) (raise max_record_bytes to harvest it)`},
		{RecordError{Identifier: "oai:x:9… (70000 bytes)", Offset: 0, Reason: "identifier of 70000 bytes exceeds the 8192-byte limit (max_identifier_bytes)"},
			`record "oai:x:9… (70000 bytes)" at byte 0 of the response skipped: identifier of 70000 bytes exceeds the 8192-byte limit (max_identifier_bytes) (ask the repository to shorten it; max_identifier_bytes can be raised up to 30000)`},
	}
	for _, tc := range cases {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
	if got := readableID(strings.Repeat("é", 150)); !strings.HasSuffix(got, "… (300 bytes)") || !utf8.ValidString(got) || len(got) > 220 {
		t.Errorf("readableID: %q", got)
	}
}

func TestLimitOptions(t *testing.T) {
	c, err := NewClient(Options{Repository: "r", BaseURL: "http://127.0.0.1/oai"})
	if err != nil || c.opts.MaxRecordBytes != 16<<20 || c.opts.MaxIdentifierBytes != 8192 {
		t.Fatalf("defaults: %v %+v", err, c.opts)
	}
	_, err = NewClient(Options{Repository: "r", BaseURL: "http://127.0.0.1/oai", MaxIdentifierBytes: 40000})
	if err == nil || !strings.Contains(err.Error(), "repository r: max_identifier_bytes 40000 is above 30000") {
		t.Fatalf("got %v", err)
	}
	// A smaller limit applies to the decoder.
	body := hostilePage(hrec("oai:x:"+strings.Repeat("2", 100), dcMeta("t")))
	c2, _, _ := newTestClient(t, &script{steps: []func(http.ResponseWriter, *http.Request){xmlBody(200, body)}}, func(o *Options) { o.MaxIdentifierBytes = 64 })
	p, err := c2.ListRecords(context.Background(), Query{MetadataPrefix: "oai_dc"}, func(*Record) error { return nil })
	if err != nil || p.Quarantined != 1 {
		t.Fatalf("%v %+v", err, p)
	}
}
