package oaipmh

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func decodeBytes(t testing.TB, b []byte) (*response, []*Record, []*Header, error) {
	t.Helper()
	var recs []*Record
	var hdrs []*Header
	resp, err := newDecoder(bytes.NewReader(b), 1<<20).decode(handlers{
		record: func(r *Record) error { recs = append(recs, r); return nil },
		header: func(h *Header) error { hdrs = append(hdrs, h); return nil },
	})
	return resp, recs, hdrs, err
}

// TestNamespacesFromAncestors: declarations on the root, the list element, the
// record and <metadata> all reach the standalone document, in that order; the
// element's own declarations are not repeated, and an inner redeclaration wins.
func TestNamespacesFromAncestors(t *testing.T) {
	doc := `<?xml version="1.0"?>
<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:x="urn:root-x">
<responseDate>2024-01-02T03:04:05Z</responseDate>
<ListRecords xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/">
 <record xmlns:x="urn:record-x">
  <header><identifier>oai:a:1</identifier><datestamp>2024-01-01</datestamp><setSpec>a:b</setSpec></header>
  <metadata xmlns:jp="urn:jp">
   <oai_dc:dc xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><dc:title x:lang="ja">T &amp; U</dc:title><jp:n/></oai_dc:dc>
  </metadata>
 </record>
 <record><header><identifier>oai:a:2</identifier><datestamp>2024-01-01</datestamp></header>
  <metadata><dc:dc xmlns:dc="urn:own">x</dc:dc></metadata></record>
 <resumptionToken cursor="0" completeListSize="9">tok+/=</resumptionToken>
</ListRecords>
</OAI-PMH>`
	resp, recs, _, err := decodeBytes(t, []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("got %d records", len(recs))
	}
	want := `<oai_dc:dc xmlns="http://www.openarchives.org/OAI/2.0/" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:x="urn:record-x" xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/" xmlns:jp="urn:jp" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><dc:title x:lang="ja">T &amp; U</dc:title><jp:n/></oai_dc:dc>`
	if got := string(recs[0].Metadata); got != want {
		t.Errorf("standalone metadata\n got %s\nwant %s", got, want)
	}
	if recs[0].MetadataNamespace != "http://www.openarchives.org/OAI/2.0/oai_dc/" {
		t.Errorf("namespace %q", recs[0].MetadataNamespace)
	}
	if got := string(recs[1].Metadata); !strings.HasPrefix(got, `<dc:dc xmlns="http://www.openarchives.org/OAI/2.0/" xmlns:x="urn:root-x" xmlns:oai_dc=`) || strings.Count(got, "xmlns:dc=") != 1 {
		t.Errorf("own prefix must not be repeated: %s", got)
	}
	if h := recs[0].Header; h.Identifier != "oai:a:1" || h.Datestamp.Format("2006-01-02") != "2024-01-01" || len(h.SetSpecs) != 1 || h.SetSpecs[0] != "a:b" {
		t.Errorf("header %+v", h)
	}
	if resp.token == nil || resp.token.Value != "tok+/=" || resp.token.CompleteListSize != 9 || resp.token.Cursor != 0 {
		t.Errorf("token %+v", resp.token)
	}
	// Every standalone document parses on its own with the same element namespaces.
	for _, r := range recs {
		assertStandalone(t, r.Metadata)
	}
}

func assertStandalone(t *testing.T, b []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("standalone document does not parse: %v\n%s", err, b)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Space == "" {
			t.Errorf("element %s has no namespace in standalone form", se.Name.Local)
		}
	}
}

var (
	reRecord = regexp.MustCompile(`<(oai:)?record[ >]`)
	reHeader = regexp.MustCompile(`<(oai:)?header[ >]`)
)

// TestCorpus decodes real responses: counts must match the document, every record
// with metadata must become a standalone document, and broken pages must fail with
// a FormatError that shows the first bytes.
func TestCorpus(t *testing.T) {
	files, _ := filepath.Glob("testdata/*")
	if len(files) < 20 {
		t.Fatalf("corpus missing: %d files", len(files))
	}
	broken := map[string]string{
		"sickle__ListRecordsBroken.xml":                         "text before the root element",
		"krikri__indiana-dl__ListRecords-deleted-MALFORMED.xml": "closed by </request>",
		"scythe__httpbun__Identify-html.html":                   "root element is <html>",
		"pyoai__broken-undefined-entity__Identify.xml":          "malformed XML",
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			resp, recs, hdrs, err := decodeBytes(t, b)
			if want, ok := broken[name]; ok {
				var fe *FormatError
				if !errors.As(err, &fe) || !strings.Contains(err.Error(), want) || fe.Snippet == "" {
					t.Fatalf("want FormatError containing %q, got %v", want, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != len(reRecord.FindAll(b, -1)) {
				t.Errorf("records: decoded %d, document has %d", len(recs), len(reRecord.FindAll(b, -1)))
			}
			if len(recs) == 0 && len(hdrs) != len(reHeader.FindAll(b, -1)) {
				t.Errorf("headers: decoded %d, document has %d", len(hdrs), len(reHeader.FindAll(b, -1)))
			}
			for _, r := range recs {
				if r.Header.Deleted {
					if r.Metadata != nil {
						t.Errorf("%s: deleted record kept metadata", r.Header.Identifier)
					}
					continue
				}
				if r.Metadata != nil {
					assertStandaloneParses(t, r.Metadata)
				}
			}
			_ = resp
		})
	}
}

func assertStandaloneParses(t *testing.T, b []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("standalone document does not parse: %v\n%.300s", err, b)
		}
	}
}

func TestCorpusDetails(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// WEKO3: the jpcoar namespace is bound both to a prefix and as default.
	_, recs, _, err := decodeBytes(t, read("jpcoar-validator__tsukuba-weko3__GetRecord-jpcoar_2.0.xml"))
	if err != nil || len(recs) != 1 {
		t.Fatal(err)
	}
	if recs[0].MetadataNamespace != "https://github.com/JPCOAR/schema/blob/master/2.0/" || recs[0].Header.SetSpecs[0] != "3:62:1722555831928" {
		t.Errorf("%q %v", recs[0].MetadataNamespace, recs[0].Header.SetSpecs)
	}
	// BnF Gallica: dc and oai_dc are declared only on the OAI-PMH root.
	_, recs, _, _ = decodeBytes(t, read("phpoaipmh__bnf-gallica__ListRecords.xml"))
	if m := string(recs[0].Metadata); !strings.Contains(m, `xmlns:dc="http://purl.org/dc/elements/1.1/"`) || !strings.Contains(m, `xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/"`) {
		t.Errorf("ancestor namespaces lost: %.200s", m)
	}
	assertStandalone(t, recs[0].Metadata)
	if recs[0].Header.Identifier != "oai:bnf.fr:gallica/ark:/12148/bpt6k5440618t" {
		t.Errorf("id %q", recs[0].Header.Identifier)
	}
	// A header without identifier decodes with an empty identifier; the caller skips it.
	_, recs, _, _ = decodeBytes(t, read("sickle__ListRecords4.xml"))
	if recs[0].Header.Identifier != "" || !recs[0].Header.Deleted {
		t.Errorf("%+v", recs[0].Header)
	}
	// Two error elements in one response.
	resp, _, _, err := decodeBytes(t, read("weko-document__weko3__error-badArgument-two-errors.xml"))
	if err != nil || len(resp.errs) != 2 || resp.errs[0].Code != BadArgument {
		t.Errorf("%v %v", err, resp.errs)
	}
	// Zenodo's non-conforming deleted record with metadata: deleted wins.
	_, recs, _, _ = decodeBytes(t, read("scythe__zenodo__ListRecords-resumed-deleted-with-metadata.xml"))
	n := 0
	for _, r := range recs {
		if r.Header.Deleted {
			n++
			if r.Metadata != nil {
				t.Error("deleted record kept metadata")
			}
		}
	}
	if n != 1 {
		t.Errorf("deleted: %d", n)
	}
	// No completeListSize on the token.
	resp, _, _, _ = decodeBytes(t, read("krikri__huygens__ListRecords-token-no-completeListSize.xml"))
	if resp.token == nil || resp.token.CompleteListSize != -1 || resp.token.Cursor != 1 || resp.token.Value == "" {
		t.Errorf("%+v", resp.token)
	}
	// Empty self-closing token on the last page.
	resp, _, hdrs, _ := decodeBytes(t, read("phpoaipmh__nsdl__ListIdentifiers_page4.xml"))
	if resp.token == nil || resp.token.Value != "" || resp.token.CompleteListSize != 733 || len(hdrs) != 133 {
		t.Errorf("%+v %d", resp.token, len(hdrs))
	}
}

func TestControlCharactersStripped(t *testing.T) {
	doc := "<OAI-PMH xmlns=\"http://www.openarchives.org/OAI/2.0/\"><ListRecords><record><header><identifier>oai:x:1</identifier><datestamp>2020-01-01</datestamp></header><metadata><t xmlns=\"urn:t\">a\x01b\x0bc\x1f</t></metadata></record></ListRecords></OAI-PMH>"
	resp, recs, _, err := decodeBytes(t, []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if resp.stripped != 3 || string(recs[0].Metadata) != `<t xmlns="urn:t">abc</t>` {
		t.Errorf("stripped=%d metadata=%q", resp.stripped, recs[0].Metadata)
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct{ name, doc, want string }{
		{"html", "<!DOCTYPE html><html><body>Login</body></html>", "root element is <html>"},
		{"plain text", "Service temporarily down", "text before the root element"},
		{"empty", "", "empty body"},
		{"wrong namespace", `<OAI-PMH xmlns="urn:other"/>`, "namespace"},
		{"truncated", `<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><ListRecords><record>`, "unexpected EOF"},
		{"mismatch", `<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><ListRecords></record></ListRecords></OAI-PMH>`, "closed by </record>"},
		{"illegal char ref", `<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><ListRecords>&#1;</ListRecords></OAI-PMH>`, "illegal character"},
		{"latin1", `<?xml version="1.0" encoding="ISO-8859-1"?><OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"/>`, "requires UTF-8"},
		{"garbage after root", `<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"></OAI-PMH><x/>`, "after the root"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, _, err := decodeBytes(t, []byte(c.doc))
			var fe *FormatError
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want FormatError with %q, got %v", c.want, err)
			}
		})
	}
}

// TestRecordTooLarge: a record over the limit no longer fails the page; it is
// quarantined with its identifier (read from the part that was kept).
func TestRecordTooLarge(t *testing.T) {
	big := strings.Repeat("x", 5000)
	doc := `<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><ListRecords><record><header><identifier>i</identifier><datestamp>2020-01-01</datestamp></header><metadata><t xmlns="urn:t">` + big + `</t></metadata></record></ListRecords></OAI-PMH>`
	var recs []*Record
	resp, err := newDecoder(strings.NewReader(doc), 1000).decode(handlers{record: func(r *Record) error { recs = append(recs, r); return nil }})
	if err != nil || len(recs) != 1 || resp.quarantined != 1 {
		t.Fatalf("got %v, %d records", err, len(recs))
	}
	if e := recs[0].Err; e == nil || e.Identifier != "i" || !strings.Contains(e.Reason, "exceeds max_record_bytes") || recs[0].Metadata != nil {
		t.Fatalf("got %+v", recs[0])
	}
}

// FuzzDecode: the decoder never panics; whatever it accepts as metadata is a
// well-formed standalone document; a quarantined record has no metadata and a
// usable header identifier is valid UTF-8 within the limit; the counts agree with
// what the handler saw; and the result does not depend on how reads split the
// body (the scanner is a resumable state machine).
func FuzzDecode(f *testing.F) {
	// Small seeds: minimising a large interesting input takes most of a short
	// CI fuzzing budget.
	files, _ := filepath.Glob("testdata/*.xml")
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err == nil && len(b) < 8<<10 {
			f.Add(b)
		}
	}
	f.Add([]byte(`<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/" xmlns:dc="http://purl.org/dc/elements/1.1/"><ListRecords xmlns:o="http://www.openarchives.org/OAI/2.0/oai_dc/"><record xmlns:x="urn:x"><header status="deleted"><identifier>a</identifier><datestamp>2020-01-01</datestamp><setSpec>s:t</setSpec></header></record><record><header><identifier>b</identifier><datestamp>2020-01-01T00:00:00Z</datestamp></header><metadata xmlns:m="urn:m"><o:dc x:a="1"><dc:title>&amp;&#x41;</dc:title><m:n xmlns=""/></o:dc></metadata></record><resumptionToken cursor="0">t</resumptionToken></ListRecords></OAI-PMH>`))
	for _, tc := range hostileCases() {
		if page := hostilePage(tc.mid); len(page) < 1500 {
			f.Add([]byte(page))
		}
	}
	f.Add([]byte(hostileHead + hrec("oai:x:1", dcMeta("one")) + hrec("oai:x:2", `<record xmlns="urn:marc">`) + hostileTail))
	f.Add([]byte(strings.Replace(hostileHead, "ListRecords", "ListIdentifiers", -1) + "<header><identifier>a\xff</identifier></header>\n<header><identifier>b</identifer></header></ListIdentifiers></OAI-PMH>"))
	f.Fuzz(func(t *testing.T, b []byte) {
		const maxRecord, maxID = 4096, 512
		run := func(r io.Reader) string {
			var out strings.Builder
			var recs, quarantined, repaired int
			d := newDecoder(r, maxRecord)
			d.maxID = maxID
			resp, err := d.decode(handlers{
				record: func(r *Record) error {
					recs++
					if r.Err != nil {
						quarantined++
						if r.Metadata != nil || r.Repairs != nil {
							t.Fatalf("quarantined record with metadata or repairs: %+v", r)
						}
						if !utf8.ValidString(r.Err.Identifier) || len(r.Err.Identifier) > 300 || !utf8.ValidString(r.Err.Error()) {
							t.Fatalf("unreadable quarantine identifier %q", r.Err.Identifier)
						}
					} else if len(r.Repairs) > 0 {
						repaired++
					}
					if id := r.Header.Identifier; !utf8.ValidString(id) || len(id) > maxID {
						t.Fatalf("unusable identifier handed over: %q", id)
					}
					if r.Metadata != nil {
						if err := assertWellFormed(r.Metadata); err != nil {
							t.Fatalf("accepted metadata is not well-formed: %v\n%q", err, r.Metadata)
						}
					}
					fmt.Fprintf(&out, "R %+v %q %q %v\n", r.Header, r.Metadata, r.MetadataNamespace, r.Repairs)
					if r.Err != nil {
						fmt.Fprintf(&out, "  %s\n", r.Err)
					}
					return nil
				},
				header: func(h *Header) error {
					recs++
					if h.Err != nil {
						quarantined++
					}
					if !utf8.ValidString(h.Identifier) || len(h.Identifier) > maxID {
						t.Fatalf("unusable identifier handed over: %q", h.Identifier)
					}
					fmt.Fprintf(&out, "H %+v\n", *h)
					return nil
				},
			})
			if resp.count != recs || resp.quarantined != quarantined || resp.repaired != repaired {
				t.Fatalf("counts %d/%d/%d, handler saw %d/%d/%d", resp.count, resp.quarantined, resp.repaired, recs, quarantined, repaired)
			}
			fmt.Fprintf(&out, "%v %v %d %d %q", err, resp.errs, resp.badDatestamps, len(resp.warnings), resp.warnings)
			if err == nil { // how far the envelope was read before a failure depends on the reads
				fmt.Fprintf(&out, " stripped %d", resp.stripped)
			}
			if resp.token != nil {
				fmt.Fprintf(&out, " %+v", *resp.token)
			}
			return out.String()
		}
		whole := run(bytes.NewReader(b))
		n := 1 + len(b)%8
		if split := run(&chunkReader{b: b, n: n}); split != whole {
			t.Fatalf("result depends on how reads split the body:\nwhole: %.2000s\n%d bytes per read: %.2000s", whole, n, split)
		}
	})
}

// chunkReader returns n bytes per Read.
type chunkReader struct {
	b []byte
	n int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), r.n)], r.b)
	r.b = r.b[k:]
	return k, nil
}
