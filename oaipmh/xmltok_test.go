package oaipmh

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/rsbridge/rsbridge/rsync/xmltext"
)

// xmlTokens lists the tokens encoding/xml's RawToken (Strict, no
// CharsetReader, as the decoder used it for records) reads from b, one per
// line, up to and including the first error. A Directive is written as the
// error the record tokenizer reports for it (the one documented difference).
func xmlTokens(b []byte) string {
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = true
	var out strings.Builder
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			out.WriteString("EOF\n")
			return out.String()
		}
		if err != nil {
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				fmt.Fprintf(&out, "error %s\n", se.Msg)
			} else {
				fmt.Fprintf(&out, "error %s\n", strings.TrimPrefix(err.Error(), "xml: "))
			}
			return out.String()
		}
		switch t := tok.(type) {
		case xml.StartElement:
			fmt.Fprintf(&out, "start %s", xmltext.QName(t.Name.Space, t.Name.Local))
			for _, a := range t.Attr {
				fmt.Fprintf(&out, " %s=%q", xmltext.QName(a.Name.Space, a.Name.Local), a.Value)
			}
			out.WriteString("\n")
		case xml.EndElement:
			fmt.Fprintf(&out, "end %s\n", xmltext.QName(t.Name.Space, t.Name.Local))
		case xml.CharData:
			fmt.Fprintf(&out, "text %q\n", []byte(t))
		case xml.Comment, xml.ProcInst:
			out.WriteString("other\n")
		case xml.Directive:
			fmt.Fprintf(&out, "error %s\n", msgDeclaration)
			return out.String()
		}
	}
}

// tokTokens lists the tokens xmlTok reads from b, in the form of xmlTokens.
func tokTokens(b []byte, check bool) string {
	var z xmlTok
	z.reset(b, check)
	var out strings.Builder
	for {
		k, err := z.next()
		if err == io.EOF {
			out.WriteString("EOF\n")
			return out.String()
		}
		if err != nil {
			var te *tokError
			if !errors.As(err, &te) {
				return fmt.Sprintf("error of type %T: %v", err, err)
			}
			fmt.Fprintf(&out, "error %s\n", te.Msg)
			return out.String()
		}
		switch k {
		case tkStart:
			fmt.Fprintf(&out, "start %s", z.name)
			for _, a := range z.attrs {
				fmt.Fprintf(&out, " %s=%q", a.name, z.value(a))
			}
			out.WriteString("\n")
		case tkEnd:
			fmt.Fprintf(&out, "end %s\n", z.name)
		case tkText:
			fmt.Fprintf(&out, "text %q\n", z.text)
		case tkOther:
			out.WriteString("other\n")
		default:
			return fmt.Sprintf("token of kind %d", k)
		}
	}
}

// dumpDecode decodes a page and writes down everything the handlers and the
// response carry, for comparing two item decoders.
func dumpDecode(b []byte, items itemDecoder, maxRecord, maxID int) string {
	var out strings.Builder
	d := newDecoder(bytes.NewReader(b), maxRecord)
	d.maxID = maxID
	d.items = items
	header := func(h *Header) {
		fmt.Fprintf(&out, "  id %q datestamp %q %v sets %q deleted %v\n", h.Identifier, h.DatestampRaw, h.Datestamp, h.SetSpecs, h.Deleted)
	}
	resp, err := d.decode(handlers{
		record: func(r *Record) error {
			out.WriteString("record\n")
			header(&r.Header)
			if r.Header.Err != nil {
				fmt.Fprintf(&out, "  header error %+v\n", *r.Header.Err)
			}
			fmt.Fprintf(&out, "  metadata %v %q\n  namespace %q\n  repairs %q\n", r.Metadata != nil, r.Metadata, r.MetadataNamespace, r.Repairs)
			if r.Err != nil {
				fmt.Fprintf(&out, "  error %+v\n", *r.Err)
			}
			return nil
		},
		header: func(h *Header) error {
			out.WriteString("header\n")
			header(h)
			if h.Err != nil {
				fmt.Fprintf(&out, "  error %+v\n", *h.Err)
			}
			return nil
		},
	})
	fmt.Fprintf(&out, "err %v\ncount %d quarantined %d repaired %d bad datestamps %d stripped %d\nwarnings %q\nerrors %v\nresponseDate %q %v\n",
		err, resp.count, resp.quarantined, resp.repaired, resp.badDatestamps, resp.stripped, resp.warnings, resp.errs, resp.responseDateRaw, resp.responseDate)
	if resp.token != nil {
		fmt.Fprintf(&out, "token %+v\n", *resp.token)
	}
	return out.String()
}

// checkSameAsReference decodes page with the record tokenizer and with the
// encoding/xml reference, at two record limits, and fails on any difference.
func checkSameAsReference(t *testing.T, name string, page []byte) {
	t.Helper()
	for _, lim := range []struct{ maxRecord, maxID int }{{1 << 20, defaultMaxIdentifierBytes}, {4096, 512}} {
		got := dumpDecode(page, &itemReader{checkAll: true}, lim.maxRecord, lim.maxID)
		want := dumpDecode(page, &refItems{}, lim.maxRecord, lim.maxID)
		if got != want {
			t.Fatalf("%s (max_record_bytes %d): the record tokenizer and encoding/xml differ\n--- tokenizer\n%.4000s\n--- encoding/xml\n%.4000s\n--- page\n%.2000q", name, lim.maxRecord, got, want, page)
		}
		if trusted := dumpDecode(page, &itemReader{}, lim.maxRecord, lim.maxID); trusted != got {
			t.Fatalf("%s: trusting repaired characters changes the result\n--- trusted\n%.4000s\n--- checked\n%.4000s", name, trusted, got)
		}
	}
}

// checkTokensSameAsXML compares the tokens of b with encoding/xml's, and the
// two character modes on repaired bytes.
func checkTokensSameAsXML(t *testing.T, b []byte) {
	t.Helper()
	if got, want := tokTokens(b, true), xmlTokens(b); got != want {
		t.Fatalf("tokens of %q\n--- tokenizer\n%.3000s\n--- encoding/xml\n%.3000s", b, got, want)
	}
	fixed, _, _ := repairItem(b, len(b)+64)
	if checked, trusted := tokTokens(fixed, true), tokTokens(fixed, false); checked != trusted {
		t.Fatalf("tokens of repaired %q depend on checking characters\n--- checked\n%.3000s\n--- trusted\n%.3000s", fixed, checked, trusted)
	}
}

// tokenCases are record fragments for the tokenizer, each a hard case for one
// rule of the tokenizer (xmltok.go, tok*.go).
var tokenCases = []string{
	// names
	`<a/>`, `<a:b/>`, `<:a/>`, `<a:/>`, `<a:b:c/>`, `<1a/>`, `<.a/>`, `<-a/>`, `<_a.b-c1/>`, `< a/>`, `<a` + "\t\n\r" + `/>`,
	`<日本/>`, `<é:ü/>`, `<a·b/>`, `<·a/>`, "<a\xffb/>", "<a\u00d7/>", "<\u0e01/>", "<a\u0e33/>", "<a\U00010000/>", "<\u3005/>", "<a\u309b/>",
	`<a></a>`, `<a></a >`, `<a></a x>`, `<a></ a>`, `<a></a:b:c>`, `<a></>`, `<a:b></a:b>`, `<a:b></a:c>`, `<a></a`, `</`, `<`, `<a`, `<a `, `<a/`, `<a/x>`,
	// attributes
	`<a x="1"/>`, `<a x='1'/>`, `<a x="1"y="2"/>`, `<a x = "1" />`, `<a x="1" x="2"/>`, `<a x/>`, `<a x=1/>`, `<a x=/>`, `<a ="1"/>`, `<a x:y:z="1"/>`,
	`<a x="<"/>`, `<a x="a>b"/>`, `<a x='"'/>`, `<a x="'"/>`, `<a x="&amp;&lt;&gt;&apos;&quot;"/>`, `<a x="&nbsp;"/>`, `<a x="&#65;&#x41;"/>`,
	"<a x=\"a\rb\r\nc\n\"/>", "<a x=\"a\x01b\"/>", "<a x=\"a\xffb\"/>", "<a x=\"a\uFFFEb\"/>", `<a x="&#1;"/>`, `<a x="1`, `<a x="1"`, `<a x="&am`, `<a x="]]>"/>`,
	`<a xmlns="urn:x" xmlns:p="urn:p" p:x="1" xml:lang="en"/>`, `<a xmlns:="x"/>`, `<a :xmlns="x"/>`,
	// character data
	`<a>text</a>`, `<a>a &amp; b</a>`, `<a>&lt;&gt;&apos;&quot;</a>`, `<a>&nbsp;</a>`, `<a>&amp</a>`, `<a>&amp </a>`, `<a>& b</a>`, `<a>&;</a>`, `<a>&#;</a>`, `<a>&#x;</a>`,
	`<a>&#65;</a>`, `<a>&#x41;</a>`, `<a>&#X41;</a>`, `<a>&#x4g;</a>`, `<a>&#0065;</a>`, `<a>&#99999999999999999999999;</a>`, `<a>&#x110000;</a>`, `<a>&#x10FFFF;</a>`,
	`<a>&#1;</a>`, `<a>&#0;</a>`, `<a>&#xD800;</a>`, `<a>&#xDFFF;</a>`, `<a>&#xFFFE;</a>`, `<a>&#xFFFD;</a>`, `<a>&#9;&#10;&#13;</a>`, `<a>&#1;&nbsp;</a>`, "<a>\x01&nbsp;</a>",
	"<a>\xff&#1;</a>", "<a>&#1;\xff</a>", `<a>&a` + "\xff" + `;</a>`, `<a>&ampx;</a>`, `<a>&#65`, `<a>&`, `<a>&#`, `<a>&#x`, `<a>&am`,
	`<a>]]></a>`, `<a>]]]></a>`, `<a>] ]></a>`, `<a>]&amp;]></a>`, `<a>&amp;]]></a>`, `<a>]]</a>`, `<a>></a>`, `<a>]></a>`,
	"<a>a\rb\r\nc\n\rd\r\r\ne</a>", "<a>\r&amp;\n</a>", "<a>a\x0bb</a>", "<a>a\x00b</a>", "<a>a\xffb</a>", "<a>a\xc0\x80b</a>", "<a>a\xed\xa0\x80b</a>", "<a>a\uFFFEb</a>",
	"<a>a\U0001FFFEb</a>", "<a>\x85\u2028</a>", "<a>\x7f\u0080\u009f</a>", "<a>text", "text", "a<", "<a>12345678<b/>12345678&amp;1234567></a>",
	// CDATA sections
	`<a><![CDATA[x < & ]] > ]]></a>`, `<a><![CDATA[]]></a>`, `<a><![CDATA[&#1;]]></a>`, "<a><![CDATA[a\rb\r\n]]></a>", "<a><![CDATA[\x01]]></a>", "<a><![CDATA[\xff]]></a>",
	`<a><![CDATA[x`, `<a><![CDATA[x]]`, `<a><![CDAT[x]]></a>`, `<a><![cdata[x]]></a>`, `<a><![CD`, `<a><![`, `<a>]]><![CDATA[x]]>></a>`,
	// comments
	`<a><!-- x --></a>`, `<a><!----></a>`, `<a><!-- - --></a>`, `<a><!-- -- --></a>`, `<a><!-- ---></a>`, `<a><!---></a>`, `<a><!-x--></a>`, `<a><!--x`, `<a><!--x--`, `<a><!-`,
	"<a><!-- \x01\xff\uFFFE --></a>", `<a><!-- &nbsp; < --></a>`,
	// processing instructions
	`<a><?pi x?></a>`, `<a><?pi?></a>`, `<a><? pi?></a>`, `<a><??></a>`, `<a><?pi x ? >?></a>`, `<a><?a:b:c?></a>`, `<a><?1pi?></a>`, `<a><?pi`, `<a><?pi ?`, `<a><?pi=x?></a>`,
	`<?xml version="1.0"?><a/>`, `<?xml version="1.1"?><a/>`, `<?xml version='1.0' encoding='utf-8'?><a/>`, `<?xml encoding="UTF-8"?><a/>`, `<?xml encoding="Utf-8"?><a/>`,
	`<?xml version="1.0" encoding="ISO-8859-1"?><a/>`, `<?xml encoding=ISO-8859-1?><a/>`, `<?xml version="1.0" encoding="x?><a/>`, `<?XML encoding="latin1"?><a/>`, `<?xml-stylesheet href="x"?><a/>`,
	"<?pi \x01\xff?><a/>",
	// declarations
	`<a><!DOCTYPE a></a>`, `<!DOCTYPE a [<!ENTITY e "x">]><a/>`, `<a><!ENTITY e "x"></a>`, `<a><!x></a>`, `<a><!></a>`, `<a><!DOCTYPE a "x>"></a>`, `<a><!DOCTYPE a <!-- > --> ></a>`,
	`<a><!DOCTYPE a <b>></a>`, `<a><!DOCTYPE a`, `<a><!DOCTYPE a <!-- x`, `<a><!">"></a>`, `<a><!DOCTYPE a <!x>></a>`, `<a><!`,
	// structure the tokenizer leaves to the item reader
	`</a>`, `<a><b></a>`, `<a/><b/>`, `text<a/>`,
}

// TestTokenizerMatchesEncodingXML: token for token, with the same error, the
// record tokenizer reads what encoding/xml's RawToken reads.
func TestTokenizerMatchesEncodingXML(t *testing.T) {
	for _, c := range tokenCases {
		checkTokensSameAsXML(t, []byte(c))
	}
	for _, tc := range hostileCases() {
		checkTokensSameAsXML(t, []byte(tc.mid))
	}
	files, _ := filepath.Glob("testdata/*")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkTokensSameAsXML(t, b)
	}
}

// TestTokenizerErrors pins the messages a quarantined record shows for the
// common problems (they are encoding/xml's, so reasons did not change).
func TestTokenizerErrors(t *testing.T) {
	cases := []struct{ in, want string }{
		{`<a>&nbsp;</a>`, "invalid character entity &nbsp;"},
		{`<a>&amp</a>`, "invalid character entity &amp (no semicolon)"},
		{`<a x="a<b"/>`, "unescaped < inside quoted string"},
		{`<a>x]]>y</a>`, "unescaped ]]> not in CDATA section"},
		{`<a>&#1;</a>`, "illegal character code U+0001"},
		{"<a>\xff</a>", "invalid UTF-8"},
		{`<a x=1/>`, "unquoted or missing attribute value in element"},
		{`<a x/>`, "attribute name without = in element"},
		{`<1/>`, "invalid XML name: 1"},
		{`<a:b:c/>`, "expected element name after <"},
		{`<a><!-- -- --></a>`, `invalid sequence "--" not allowed in comments`},
		{`<a><![CDATA[x`, "unexpected EOF in CDATA section"},
		{`<a><!DOCTYPE a></a>`, msgDeclaration},
		{`<?xml version="1.0" encoding="ISO-8859-1"?>`, `encoding "ISO-8859-1" declared but Decoder.CharsetReader is nil`},
		{`<a x="1`, "unexpected EOF"},
	}
	for _, c := range cases {
		got := tokTokens([]byte(c.in), true)
		if !strings.HasSuffix(got, "error "+c.want+"\n") {
			t.Errorf("%q: got\n%s\nwant error %q", c.in, got, c.want)
		}
	}
}

// TestNameTablesMatchEncodingXML: the tokenizer accepts every
// character as encoding/xml does, as the first character and as a later one.
func TestNameTablesMatchEncodingXML(t *testing.T) {
	if testing.Short() {
		t.Skip("tries every character")
	}
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		if r > 0x10000 && r%97 != 0 { // the tables end below 0x10000; sample the rest
			continue
		}
		for _, name := range []string{string(r), "a" + string(r)} {
			doc := []byte("<" + name + "/>")
			want := !strings.Contains(xmlTokens(doc), "error")
			var z xmlTok
			z.reset(doc, true)
			_, err := z.next()
			if got := err == nil; got != want {
				t.Fatalf("name %q (%U): tokenizer accepts %v, encoding/xml %v", name, r, got, want)
			}
		}
	}
}

// differentialPages are the pages decoded by both item readers: the corpus,
// every hostile case, FuzzDecode's seeds and the token cases as metadata, in
// the header and in <about>.
func differentialPages(t testing.TB) map[string][]byte {
	pages := map[string][]byte{}
	files, _ := filepath.Glob("testdata/*")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pages[filepath.Base(f)] = b
	}
	for _, tc := range hostileCases() {
		pages["hostile "+tc.name] = []byte(hostilePage(tc.mid))
	}
	listIDs := func(s string) string { return strings.Replace(s, "ListRecords", "ListIdentifiers", -1) }
	for i, c := range tokenCases {
		pages[fmt.Sprintf("token case %d as metadata", i)] = []byte(hostilePage(hrec("oai:x:2", "<oai_dc:dc>"+c+"</oai_dc:dc>")))
		pages[fmt.Sprintf("token case %d as the metadata root", i)] = []byte(hostilePage(hrec("oai:x:2", c)))
		pages[fmt.Sprintf("token case %d in the identifier", i)] = []byte(hostilePage(hrec("oai:x:2"+c, dcMeta("t"))))
		pages[fmt.Sprintf("token case %d in about", i)] = []byte(hostilePage(hrecHeader("<identifier>oai:x:2</identifier>", dcMeta("t")+"</metadata><about>"+c+"</about><metadata>")))
		pages[fmt.Sprintf("token case %d in a ListIdentifiers header", i)] = []byte(listIDs(hostileHead) + "<header><identifier>a" + c + "</identifier><setSpec>s</setSpec></header>\n" + listIDs(hostileTail))
	}
	// Namespaces: declarations on every level, redeclared, undeclared, empty,
	// with references and CRs in their values.
	pages["namespaces"] = []byte(`<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/" xmlns:a="urn:a&amp;1" xmlns:x="urn:root"><ListRecords xmlns:a="urn:a2" xmlns:b="urn:b` + "\r\n\t" + `&#x9;&quot;&lt;"><record xmlns:c="urn:c" xmlns:a="urn:a3"><header><identifier>i</identifier></header>` +
		`<metadata xmlns="" xmlns:d="urn:d"><x:m xmlns:c="urn:own" xmlns:x="urn:x2"><y/></x:m></metadata></record>` +
		`<record><header status=" deleted "><identifier>j</identifier></header></record>` +
		`<record><header><identifier>k</identifier></header><metadata xmlns="urn:def"><m/></metadata></record>` +
		`<record><header><identifier>l</identifier></header><metadata><xml:m/></metadata></record>` +
		`<record><header><identifier>m</identifier></header><metadata><q:m/><second/></metadata></record>` +
		`<record xmlns="urn:other"><header><identifier>n</identifier></header></record>` +
		`<oai:record xmlns:oai="http://www.openarchives.org/OAI/2.0/"><oai:header><oai:identifier>o</oai:identifier><x:setSpec>s</x:setSpec><x:setSpec>s</x:setSpec></oai:header><oai:metadata><m xmlns:a="urn:a" a:b="1"/></oai:metadata></oai:record>` +
		`</ListRecords></OAI-PMH>`)
	pages["FuzzDecode seed"] = []byte(`<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/" xmlns:dc="http://purl.org/dc/elements/1.1/"><ListRecords xmlns:o="http://www.openarchives.org/OAI/2.0/oai_dc/"><record xmlns:x="urn:x"><header status="deleted"><identifier>a</identifier><datestamp>2020-01-01</datestamp><setSpec>s:t</setSpec></header></record><record><header><identifier>b</identifier><datestamp>2020-01-01T00:00:00Z</datestamp></header><metadata xmlns:m="urn:m"><o:dc x:a="1"><dc:title>&amp;&#x41;</dc:title><m:n xmlns=""/></o:dc></metadata></record><resumptionToken cursor="0">t</resumptionToken></ListRecords></OAI-PMH>`)
	return pages
}

// TestRecordTokenizerMatchesEncodingXML: every page of differentialPages
// decodes to the same records, headers, quarantine reasons, repairs, counts
// and warnings with the record tokenizer as with encoding/xml.
func TestRecordTokenizerMatchesEncodingXML(t *testing.T) {
	for name, page := range differentialPages(t) {
		checkSameAsReference(t, name, page)
	}
}

// TestDeclarationInRecordQuarantined: the documented difference from
// encoding/xml — a DOCTYPE inside a record quarantines it (it used to end up
// inside the stored metadata).
func TestDeclarationInRecordQuarantined(t *testing.T) {
	for _, meta := range []string{
		`<oai_dc:dc><!DOCTYPE x [<!ENTITY e "boom">]><dc:title>t</dc:title></oai_dc:dc>`,
		`<oai_dc:dc><dc:title>t<!ELEMENT x ANY></dc:title></oai_dc:dc>`,
	} {
		_, recs, err := decodePage(t, strings.NewReader(hostilePage(hrec("oai:x:2", meta))), 1<<20)
		if err != nil || len(recs) != 3 {
			t.Fatalf("%v, %d records", err, len(recs))
		}
		if e := recs[1].Err; e == nil || e.Reason != "malformed XML: "+msgDeclaration || e.Identifier != "oai:x:2" || recs[1].Metadata != nil {
			t.Errorf("%s: got %+v", meta, recs[1])
		}
		checkIntact(t, recs[2], "oai:x:3", dcWant("third"))
	}
}

// FuzzRecordTokenizer: on any bytes the record tokenizer reads the tokens and
// errors encoding/xml reads (in both character modes on repaired bytes), and
// any page — the input as it is, as the records of a ListRecords page and as
// the headers of a ListIdentifiers page — decodes with the tokenizer exactly as
// with the encoding/xml reference.
func FuzzRecordTokenizer(f *testing.F) {
	for _, c := range tokenCases {
		f.Add([]byte(c))
	}
	for _, tc := range hostileCases() {
		if len(tc.mid) < 1500 {
			f.Add([]byte(tc.mid))
		}
	}
	for _, page := range differentialPages(f) {
		if len(page) < 4<<10 {
			f.Add(page)
		}
	}
	f.Add([]byte(hrec("oai:x:2", `<oai_dc:dc xmlns:q="urn:&#x71;"><dc:title q:x="&lt;">t &amp;&#x3042;<![CDATA[<]]></dc:title><!--c--><?p d?></oai_dc:dc>`)))
	f.Add([]byte("<header><identifier>a\r\nb</identifier><datestamp> 2024-01-02 </datestamp><setSpec>s</setSpec><setSpec> s </setSpec></header>\n"))
	listIDs := func(s string) string { return strings.Replace(s, "ListRecords", "ListIdentifiers", -1) }
	f.Fuzz(func(t *testing.T, b []byte) {
		checkTokensSameAsXML(t, b)
		checkSameAsReference(t, "the input", b)
		checkSameAsReference(t, "the input as records", []byte(hostileHead+string(b)+hostileTail))
		checkSameAsReference(t, "the input as headers", []byte(listIDs(hostileHead)+string(b)+listIDs(hostileTail)))
	})
}
