package oaiserver

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// t0 is the default Start.
func t0() time.Time { return time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC) }

func fixedClock(t time.Time) func() time.Time { return func() time.Time { return t } }

func TestErrors(t *testing.T) {
	s := New(Options{Records: 50, Prefixes: []string{"oai_dc", "jpcoar_2.0"}, Now: fixedClock(t0().AddDate(1, 0, 0))})
	day := New(Options{Records: 50, Granularity: "YYYY-MM-DD"})
	noSets := New(Options{Records: 50, SetCount: -1})
	gone := New(Options{Records: 50, DeletedEvery: 5, DeletedRecord: "no"})

	small := New(Options{Records: 300})
	recTok := get(t, small, q("verb", "ListRecords", "metadataPrefix", "oai_dc")).ListRecords.Token.Value

	cases := []struct {
		name  string
		s     *Synthetic
		query string
		codes []string
		echo  bool // request element carries attributes
	}{
		{"no verb", s, "", []string{"badVerb"}, false},
		{"unknown verb", s, "verb=Foo", []string{"badVerb"}, false},
		{"lower-case verb", s, "verb=listrecords&metadataPrefix=oai_dc", []string{"badVerb"}, false},
		{"repeated verb", s, "verb=Identify&verb=Identify", []string{"badVerb"}, false},
		{"Identify with argument", s, "verb=Identify&metadataPrefix=oai_dc", []string{"badArgument"}, false},
		{"unknown argument", s, "verb=ListRecords&metadataPrefix=oai_dc&foo=bar", []string{"badArgument"}, false},
		{"capitalised ResumptionToken", s, "verb=ListRecords&ResumptionToken=abc", []string{"badArgument"}, false},
		{"missing metadataPrefix", s, "verb=ListRecords", []string{"badArgument"}, false},
		{"ListIdentifiers missing metadataPrefix", s, "verb=ListIdentifiers&from=2020-01-01", []string{"badArgument"}, false},
		{"empty metadataPrefix", s, "verb=ListRecords&metadataPrefix=", []string{"badArgument"}, false},
		{"repeated metadataPrefix", s, "verb=ListRecords&metadataPrefix=oai_dc&metadataPrefix=oai_dc", []string{"badArgument"}, false},
		{"token plus other args", s, "verb=ListRecords&metadataPrefix=oai_dc&resumptionToken=abc", []string{"badArgument"}, false},
		{"from after until", s, "verb=ListRecords&metadataPrefix=oai_dc&from=2020-01-02&until=2020-01-01", []string{"badArgument"}, false},
		{"from after until seconds", s, "verb=ListRecords&metadataPrefix=oai_dc&from=2020-01-01T00:00:02Z&until=2020-01-01T00:00:01Z", []string{"badArgument"}, false},
		{"mixed granularities", s, "verb=ListRecords&metadataPrefix=oai_dc&from=2020-01-01&until=2020-01-02T00:00:00Z", []string{"badArgument"}, false},
		{"bad month", s, "verb=ListRecords&metadataPrefix=oai_dc&from=2020-13-01", []string{"badArgument"}, false},
		{"bad day", s, "verb=ListRecords&metadataPrefix=oai_dc&from=2021-02-29", []string{"badArgument"}, false},
		{"fractional seconds", s, "verb=ListRecords&metadataPrefix=oai_dc&from=2020-01-01T00:00:00.5Z", []string{"badArgument"}, false},
		{"no Z", s, "verb=ListRecords&metadataPrefix=oai_dc&from=2020-01-01T00:00:00", []string{"badArgument"}, false},
		{"offset", s, "verb=ListRecords&metadataPrefix=oai_dc&from=2020-01-01T00:00:00%2B01:00", []string{"badArgument"}, false},
		{"short year", s, "verb=ListRecords&metadataPrefix=oai_dc&until=20-01-01", []string{"badArgument"}, false},
		{"seconds on day repository", day, "verb=ListRecords&metadataPrefix=oai_dc&from=2020-01-01T00:00:00Z", []string{"badArgument"}, false},
		{"until seconds on day repository", day, "verb=ListIdentifiers&metadataPrefix=oai_dc&until=2020-01-01T00:00:00Z", []string{"badArgument"}, false},
		{"bad escape", s, "verb=ListRecords&metadataPrefix=oai_dc&set=%zz", []string{"badArgument"}, false},
		{"unknown format", s, "verb=ListRecords&metadataPrefix=marc21", []string{"cannotDisseminateFormat"}, true},
		{"unknown format ListIdentifiers", s, "verb=ListIdentifiers&metadataPrefix=junii2", []string{"cannotDisseminateFormat"}, true},
		{"format not offered", small, "verb=ListRecords&metadataPrefix=jpcoar_2.0", []string{"cannotDisseminateFormat"}, true},
		{"GetRecord no identifier", s, "verb=GetRecord&metadataPrefix=oai_dc", []string{"badArgument"}, false},
		{"GetRecord no prefix", s, q("verb", "GetRecord", "identifier", s.Identifier(1)), []string{"badArgument"}, false},
		{"GetRecord unknown id", s, q("verb", "GetRecord", "identifier", "oai:other:1", "metadataPrefix", "oai_dc"), []string{"idDoesNotExist"}, true},
		{"GetRecord non-canonical id", s, q("verb", "GetRecord", "identifier", "oai:demo.rsbridge.example:item-7", "metadataPrefix", "oai_dc"), []string{"idDoesNotExist"}, true},
		{"GetRecord leading zero", s, q("verb", "GetRecord", "identifier", "oai:demo.rsbridge.example:item-01", "metadataPrefix", "oai_dc"), []string{"idDoesNotExist"}, true},
		{"GetRecord out of range", s, q("verb", "GetRecord", "identifier", s.Identifier(50), "metadataPrefix", "oai_dc"), []string{"idDoesNotExist"}, true},
		{"GetRecord both wrong", s, q("verb", "GetRecord", "identifier", "nope", "metadataPrefix", "nope"), []string{"idDoesNotExist", "cannotDisseminateFormat"}, true},
		{"GetRecord vanished", gone, q("verb", "GetRecord", "identifier", gone.Identifier(4), "metadataPrefix", "oai_dc"), []string{"idDoesNotExist"}, true},
		{"GetRecord bad format", s, q("verb", "GetRecord", "identifier", s.Identifier(3), "metadataPrefix", "mods"), []string{"cannotDisseminateFormat"}, true},
		{"ListMetadataFormats unknown id", s, q("verb", "ListMetadataFormats", "identifier", "oai:x:y"), []string{"idDoesNotExist"}, true},
		{"ListMetadataFormats bad arg", s, "verb=ListMetadataFormats&metadataPrefix=oai_dc", []string{"badArgument"}, false},
		{"noRecordsMatch future", s, "verb=ListRecords&metadataPrefix=oai_dc&from=2030-01-01", []string{"noRecordsMatch"}, true},
		{"noRecordsMatch past", s, "verb=ListIdentifiers&metadataPrefix=oai_dc&until=2019-12-31", []string{"noRecordsMatch"}, true},
		{"noRecordsMatch unknown set", s, "verb=ListRecords&metadataPrefix=oai_dc&set=nope", []string{"noRecordsMatch"}, true},
		{"noRecordsMatch s4 not a set", s, "verb=ListRecords&metadataPrefix=oai_dc&set=s4", []string{"noRecordsMatch"}, true},
		{"noRecordsMatch s01", s, "verb=ListRecords&metadataPrefix=oai_dc&set=s01", []string{"noRecordsMatch"}, true},
		{"noSetHierarchy ListSets", noSets, "verb=ListSets", []string{"noSetHierarchy"}, true},
		{"noSetHierarchy ListRecords", noSets, "verb=ListRecords&metadataPrefix=oai_dc&set=s0", []string{"noSetHierarchy"}, true},
		{"noSetHierarchy ListIdentifiers", noSets, "verb=ListIdentifiers&metadataPrefix=oai_dc&set=s0", []string{"noSetHierarchy"}, true},
		{"ListSets bad token", s, "verb=ListSets&resumptionToken=abc", []string{"badResumptionToken"}, true},
		{"ListSets with other arg", s, "verb=ListSets&set=s0", []string{"badArgument"}, false},
		{"garbage token", s, "verb=ListRecords&resumptionToken=abc", []string{"badResumptionToken"}, true},
		{"token for other verb", small, q("verb", "ListIdentifiers", "resumptionToken", recTok), []string{"badResumptionToken"}, true},
		{"token unescaped", small, "verb=ListRecords&resumptionToken=" + recTok, []string{"badResumptionToken"}, true},
		{"token tampered", small, q("verb", "ListRecords", "resumptionToken", tamper(recTok)), []string{"badResumptionToken"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := get(t, c.s, c.query)
			if !slices.Equal(r.codes(), c.codes) {
				t.Fatalf("codes %v, want %v\n%s", r.codes(), c.codes, r.raw)
			}
			if got := len(r.Request.Attrs) > 0; got != c.echo {
				t.Fatalf("request attributes %v, want echo=%v", r.Request.Attrs, c.echo)
			}
			if r.Request.URL != "http://demo.example/oai" {
				t.Fatalf("request URL %q", r.Request.URL)
			}
			if r.ListRecords != nil || r.ListIdentifiers != nil || r.GetRecord != nil || r.Identify != nil || r.ListSets != nil {
				t.Fatalf("error response has a verb element:\n%s", r.raw)
			}
		})
	}
}

func tamper(tok string) string {
	b := []byte(tok)
	if b[10] == 'A' {
		b[10] = 'B'
	} else {
		b[10] = 'A'
	}
	return string(b)
}

func TestTokenExpiry(t *testing.T) {
	now := t0().AddDate(1, 0, 0)
	var mu sync.Mutex
	s := New(Options{Records: 300, Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }})
	tok := get(t, s, q("verb", "ListIdentifiers", "metadataPrefix", "oai_dc")).ListIdentifiers.Token
	if tok.ExpirationDate != "2021-01-01T01:00:00Z" {
		t.Fatalf("expirationDate %q", tok.ExpirationDate)
	}
	mu.Lock()
	now = now.Add(59 * time.Minute)
	mu.Unlock()
	if r := get(t, s, q("verb", "ListIdentifiers", "resumptionToken", tok.Value)); len(r.Errors) != 0 {
		t.Fatalf("valid token rejected: %v", r.codes())
	}
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	if r := get(t, s, q("verb", "ListIdentifiers", "resumptionToken", tok.Value)); !slices.Equal(r.codes(), []string{"badResumptionToken"}) {
		t.Fatalf("expired token: %v", r.codes())
	}
}

func TestIdentifyAndFormats(t *testing.T) {
	s := New(Options{Records: 10, Prefixes: []string{"oai_dc", "jpcoar_2.0"}, Granularity: "YYYY-MM-DD", DeletedRecord: "transient",
		Start: time.Date(2021, 3, 4, 5, 6, 7, 0, time.UTC), RepositoryName: "Test & <Repo>"})
	r := get(t, s, "verb=Identify")
	id := r.Identify
	if id == nil {
		t.Fatalf("no Identify:\n%s", r.raw)
	}
	if id.RepositoryName != "Test & <Repo>" || id.BaseURL != "http://demo.example/oai" || id.ProtocolVersion != "2.0" ||
		id.EarliestDatestamp != "2021-03-04" || id.DeletedRecord != "transient" || id.Granularity != "YYYY-MM-DD" {
		t.Fatalf("Identify: %+v", id)
	}
	if !bytes.Contains(r.raw, []byte("<sampleIdentifier>oai:demo.rsbridge.example:item-1</sampleIdentifier>")) {
		t.Fatal("no oai-identifier description")
	}
	r = get(t, s, "verb=ListMetadataFormats")
	if len(r.ListMetadataFormats.Formats) != 2 || r.ListMetadataFormats.Formats[1].Namespace != "https://github.com/JPCOAR/schema/blob/master/2.0/" {
		t.Fatalf("formats %+v", r.ListMetadataFormats)
	}
	r = get(t, s, q("verb", "ListMetadataFormats", "identifier", s.Identifier(7)))
	if len(r.ListMetadataFormats.Formats) != 2 || r.ListMetadataFormats.Formats[0].Prefix != "oai_dc" {
		t.Fatalf("formats %+v", r.ListMetadataFormats)
	}
	d := New(Options{})
	if r := get(t, d, "verb=Identify"); r.Identify.Granularity != "YYYY-MM-DDThh:mm:ssZ" || r.Identify.DeletedRecord != "persistent" ||
		r.Identify.EarliestDatestamp != "2020-01-01T00:00:00Z" || r.Identify.RepositoryName != "rsbridge demo repository" {
		t.Fatalf("defaults: %+v", r.Identify)
	}
	if d.Len() != 1000 {
		t.Fatalf("default Len %d", d.Len())
	}
	if r := get(t, d, "verb=ListMetadataFormats"); len(r.ListMetadataFormats.Formats) != 1 {
		t.Fatalf("default formats %+v", r.ListMetadataFormats)
	}
}

func TestPOST(t *testing.T) {
	s := New(Options{Records: 250})
	r := post(t, s, q("verb", "ListRecords", "metadataPrefix", "oai_dc"))
	if len(r.ListRecords.Records) != 100 {
		t.Fatalf("POST page: %d records", len(r.ListRecords.Records))
	}
	r = post(t, s, q("verb", "ListRecords", "resumptionToken", r.ListRecords.Token.Value))
	if len(r.ListRecords.Records) != 100 || r.ListRecords.Token.Cursor != "100" {
		t.Fatalf("POST resume: %d records, token %+v", len(r.ListRecords.Records), r.ListRecords.Token)
	}
	r = post(t, s, q("verb", "GetRecord", "metadataPrefix", "oai_dc", "identifier", s.Identifier(14)))
	if len(r.GetRecord.Records) != 1 || r.GetRecord.Records[0].Header.Identifier != "oai:demo.rsbridge.example:dept/論文 14:v1" {
		t.Fatalf("POST GetRecord:\n%s", r.raw)
	}
}

// harvested is one header (with metadata) as a harvester sees it.
type harvested struct {
	header   headerT
	metadata []byte // standalone, nil without metadata
}

// harvestAll follows resumption tokens (properly escaped) and checks the
// token attributes along the way.
func harvestAll(t testing.TB, s *Synthetic, verb string, args ...string) ([]harvested, []*oaiResp) {
	t.Helper()
	var out []harvested
	var pages []*oaiResp
	r := get(t, s, q(append([]string{"verb", verb}, args...)...))
	for n := 0; ; n++ {
		if n > 100000 {
			t.Fatal("too many pages")
		}
		pages = append(pages, r)
		if len(r.Errors) == 1 && r.Errors[0].Code == "noRecordsMatch" && n == 0 {
			return nil, pages
		}
		if len(r.Errors) > 0 {
			t.Fatalf("page %d: errors %v", n, r.codes())
		}
		lb := r.list()
		md := standaloneFromResponse(t, r.raw)
		mi := 0
		if verb == "ListRecords" {
			for _, rec := range lb.Records {
				h := harvested{header: rec.Header}
				if rec.Metadata != nil {
					h.metadata = md[mi]
					mi++
				}
				out = append(out, h)
			}
		} else {
			for _, hd := range lb.Headers {
				out = append(out, harvested{header: hd})
			}
		}
		if mi != len(md) {
			t.Fatalf("metadata count mismatch")
		}
		tok := lb.Token
		if tok == nil {
			if n != 0 {
				t.Fatalf("page %d of a resumed list has no resumptionToken", n)
			}
			return out, pages
		}
		if cur, _ := strconv.Atoi(tok.Cursor); cur != len(out)-len(lb.Records)-len(lb.Headers) {
			t.Fatalf("page %d: cursor %s, want %d", n, tok.Cursor, len(out)-len(lb.Records)-len(lb.Headers))
		}
		if tok.Value == "" {
			if tok.ExpirationDate != "" {
				t.Fatal("empty token with expirationDate")
			}
			return out, pages
		}
		if !strings.ContainsAny(tok.Value, "+") || !strings.Contains(tok.Value, "/") || !strings.HasSuffix(tok.Value, "=") {
			t.Fatalf("token %q lacks characters that need escaping", tok.Value)
		}
		r = get(t, s, q("verb", verb, "resumptionToken", tok.Value))
	}
}

// expected computes by brute force (via Item) which items a list request
// must return.
func expected(s *Synthetic, prefix string, from, until time.Time, set string) map[string]Item {
	want := map[string]Item{}
	for i := 0; i < s.Len(); i++ {
		it, ok := s.Item(i, prefix)
		if !ok {
			continue
		}
		if !from.IsZero() && it.Datestamp.Before(from) {
			continue
		}
		if !until.IsZero() && it.Datestamp.After(until) {
			continue
		}
		if set != "" && !slices.ContainsFunc(it.Sets, func(sp string) bool { return inSet(sp, set) }) {
			continue
		}
		want[it.Identifier] = it
	}
	return want
}

func checkHarvest(t *testing.T, s *Synthetic, verb, prefix string, got []harvested, want map[string]Item) {
	t.Helper()
	seen := map[string]bool{}
	for _, h := range got {
		id := h.header.Identifier
		if seen[id] {
			t.Fatalf("%s delivered twice", id)
		}
		seen[id] = true
		it, ok := want[id]
		if !ok {
			t.Fatalf("unexpected %s %+v", id, h.header)
		}
		ds := it.Datestamp.Format(s.layout())
		if h.header.Datestamp != ds || (h.header.Status == "deleted") != it.Deleted || !slices.Equal(h.header.SetSpecs, it.Sets) {
			t.Fatalf("%s: header %+v, item %+v", id, h.header, it)
		}
		if verb == "ListRecords" && !bytes.Equal(h.metadata, it.Metadata) {
			t.Fatalf("%s: metadata differs\nserved standalone: %s\nItem:              %s", id, h.metadata, it.Metadata)
		}
	}
	if len(seen) != len(want) {
		t.Fatalf("harvested %d items, want %d", len(seen), len(want))
	}
}

func TestHarvestAll(t *testing.T) {
	for _, deleted := range []string{"persistent", "no"} {
		for _, prefix := range []string{"oai_dc", "jpcoar_2.0"} {
			for _, verb := range []string{"ListRecords", "ListIdentifiers"} {
				t.Run(deleted+"/"+prefix+"/"+verb, func(t *testing.T) {
					s := New(Options{Records: 1234, DeletedEvery: 5, DeletedRecord: deleted, PageSize: 100,
						Prefixes: []string{"oai_dc", "jpcoar_2.0"}, RecordBytes: 1000})
					got, pages := harvestAll(t, s, verb, "metadataPrefix", prefix)
					want := expected(s, prefix, time.Time{}, time.Time{}, "")
					checkHarvest(t, s, verb, prefix, got, want)
					live := 1234 - 1234/5
					if deleted == "persistent" {
						live = 1234
					}
					if len(want) != live {
						t.Fatalf("want %d items, brute force gives %d", live, len(want))
					}
					if len(pages) != (live+99)/100 {
						t.Fatalf("%d pages", len(pages))
					}
					for _, p := range pages {
						if cls := p.list().Token.CompleteListSize; cls != strconv.Itoa(live) {
							t.Fatalf("completeListSize %s, want %d", cls, live)
						}
					}
					last := pages[len(pages)-1].list().Token
					if last.Value != "" || last.Cursor != strconv.Itoa(live/100*100) {
						t.Fatalf("last token %+v", last)
					}
				})
			}
		}
	}
}

func TestSinglePageHasNoToken(t *testing.T) {
	s := New(Options{Records: 10})
	r := get(t, s, q("verb", "ListIdentifiers", "metadataPrefix", "oai_dc"))
	if len(r.ListIdentifiers.Headers) != 10 || r.ListIdentifiers.Token != nil {
		t.Fatalf("single page: %d headers, token %+v", len(r.ListIdentifiers.Headers), r.ListIdentifiers.Token)
	}
	// exactly PageSize items: still one page, no token
	s = New(Options{Records: 100})
	r = get(t, s, q("verb", "ListIdentifiers", "metadataPrefix", "oai_dc"))
	if len(r.ListIdentifiers.Headers) != 100 || r.ListIdentifiers.Token != nil {
		t.Fatalf("single full page: %d headers, token %+v", len(r.ListIdentifiers.Headers), r.ListIdentifiers.Token)
	}
}

func TestStandaloneForm(t *testing.T) {
	s := New(Options{Records: 10, Prefixes: []string{"jpcoar_2.0", "oai_dc"}})
	it, ok := s.Item(1, "oai_dc")
	if !ok {
		t.Fatal("no item")
	}
	wantDC := `<oai_dc:dc xmlns="http://www.openarchives.org/OAI/2.0/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/" xsi:schemaLocation="http://www.openarchives.org/OAI/2.0/oai_dc/ http://www.openarchives.org/OAI/2.0/oai_dc.xsd">`
	if !bytes.HasPrefix(it.Metadata, []byte(wantDC)) || !bytes.HasSuffix(it.Metadata, []byte("</oai_dc:dc>")) {
		t.Fatalf("oai_dc standalone:\n%s", it.Metadata)
	}
	if !bytes.Contains(it.Metadata, []byte("<dc:title>Fish &amp; Chips &lt;Volume 1&gt; &amp; more</dc:title>")) {
		t.Fatalf("escaped title missing:\n%s", it.Metadata)
	}
	it, _ = s.Item(1, "jpcoar_2.0")
	wantJP := `<jpcoar:jpcoar xmlns="http://www.openarchives.org/OAI/2.0/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:datacite="https://schema.datacite.org/meta/kernel-4/" xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:jpcoar="https://github.com/JPCOAR/schema/blob/master/2.0/" xmlns:dc="http://purl.org/dc/elements/1.1/" xsi:schemaLocation="https://github.com/JPCOAR/schema/blob/master/2.0/ https://github.com/JPCOAR/schema/blob/master/2.0/jpcoar_scm.xsd">`
	if !bytes.HasPrefix(it.Metadata, []byte(wantJP)) {
		t.Fatalf("jpcoar standalone:\n%s", it.Metadata)
	}
	for _, want := range []string{`<dc:title xml:lang="ja">`, `<dc:title xml:lang="en">`, `<jpcoar:creatorName xml:lang="ja">`,
		`<dc:type rdf:resource="http://purl.org/coar/resource_type/c_6501">`, `<jpcoar:identifier identifierType="URI">https://demo.rsbridge.example/records/1</jpcoar:identifier>`,
		`<jpcoar:URI objectType="fulltext" label="item-1.pdf">https://demo.rsbridge.example/records/1/files/item-1.pdf</jpcoar:URI>`} {
		if !bytes.Contains(it.Metadata, []byte(want)) {
			t.Fatalf("jpcoar lacks %s:\n%s", want, it.Metadata)
		}
	}
	// GetRecord serves the same element, and the standalone rule applied to
	// the served bytes reproduces Item.
	for _, p := range []string{"oai_dc", "jpcoar_2.0"} {
		for _, i := range []int{0, 1, 7} {
			r := get(t, s, q("verb", "GetRecord", "metadataPrefix", p, "identifier", s.Identifier(i)))
			md := standaloneFromResponse(t, r.raw)
			it, _ := s.Item(i, p)
			if len(md) != 1 || !bytes.Equal(md[0], it.Metadata) {
				t.Fatalf("GetRecord %s %d: %s\nvs\n%s", p, i, md, it.Metadata)
			}
		}
	}
}

func TestRecordSize(t *testing.T) {
	s := New(Options{Records: 1000})
	for _, i := range []int{0, 1, 2, 3, 4, 5, 77, 999} {
		it, _ := s.Item(i, "oai_dc")
		r := get(t, s, q("verb", "GetRecord", "metadataPrefix", "oai_dc", "identifier", s.Identifier(i)))
		served := len(r.GetRecord.Records[0].Metadata.Inner)
		if served < 1900 || served > 2200 {
			t.Fatalf("item %d: served metadata %d bytes", i, served)
		}
		if len(it.Metadata) <= served {
			t.Fatal("standalone form not longer")
		}
	}
	s = New(Options{Records: 10, RecordBytes: 10000})
	it, _ := s.Item(3, "oai_dc")
	if n := len(it.Metadata); n < 9800 || n > 10400 {
		t.Fatalf("RecordBytes 10000: %d", n)
	}
}

func TestIdentifiers(t *testing.T) {
	s := New(Options{Records: 30})
	for i := 0; i < 30; i++ {
		id := s.Identifier(i)
		if i%7 == 0 {
			if !strings.ContainsAny(id, "/ ") || !strings.Contains(id, "論文") || strings.Count(id, ":") < 3 {
				t.Fatalf("identifier %d not hostile: %q", i, id)
			}
		} else if id != "oai:demo.rsbridge.example:item-"+strconv.Itoa(i) {
			t.Fatalf("identifier %d: %q", i, id)
		}
		if j, ok := parseIdentifier(id); !ok || j != i {
			t.Fatalf("parse %q: %d %v", id, j, ok)
		}
	}
	for _, bad := range []string{"", "oai:demo.rsbridge.example:", "oai:demo.rsbridge.example:item-", "oai:demo.rsbridge.example:item-x",
		"oai:demo.rsbridge.example:item-14", "oai:demo.rsbridge.example:dept/論文 15:v1", "oai:demo.rsbridge.example:dept/論文 14",
		"oai:demo.rsbridge.example:item--1", "oai:demo.rsbridge.example:item-99999999999999999999"} {
		if _, ok := parseIdentifier(bad); ok {
			t.Fatalf("parsed %q", bad)
		}
	}
}

func TestDateBoundaries(t *testing.T) {
	type tc struct {
		opts        Options
		from, until string
		first, last int // inclusive expected index range
	}
	sec := Options{Records: 100}
	day := Options{Records: 100, Step: 6 * time.Hour, Granularity: "YYYY-MM-DD"}
	daySecRepo := Options{Records: 100, Step: 6 * time.Hour}
	frac := Options{Records: 100, Step: 1500 * time.Millisecond}
	cases := []tc{
		{sec, "2020-01-01T00:02:00Z", "2020-01-01T00:05:00Z", 2, 5},
		{sec, "2020-01-01T00:01:59Z", "2020-01-01T00:05:59Z", 2, 5},
		{sec, "2020-01-01T00:02:01Z", "2020-01-01T00:04:59Z", 3, 4},
		{sec, "2020-01-01T00:05:00Z", "2020-01-01T00:05:00Z", 5, 5},
		{sec, "", "2020-01-01T00:00:00Z", 0, 0},
		{sec, "2020-01-01T01:39:00Z", "", 99, 99},
		{sec, "2019-12-31", "2020-01-01", 0, 99},
		{day, "2020-01-02", "2020-01-02", 4, 7},
		{day, "", "2020-01-02", 0, 7},
		{day, "2020-01-02", "", 4, 99},
		{day, "2020-01-25", "", 96, 99},
		{daySecRepo, "2020-01-02", "2020-01-02", 4, 7},
		{daySecRepo, "2020-01-02T06:00:00Z", "2020-01-02T17:59:59Z", 5, 6},
		{frac, "2020-01-01T00:00:03Z", "2020-01-01T00:00:04Z", 2, 3},
		{frac, "2020-01-01T00:00:02Z", "2020-01-01T00:00:02Z", 2, 2}, // 1.5s -> :01, 3.0s -> :03
	}
	for n, c := range cases {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			c.opts.PageSize = 7
			s := New(c.opts)
			args := []string{"metadataPrefix", "oai_dc"}
			if c.from != "" {
				args = append(args, "from", c.from)
			}
			if c.until != "" {
				args = append(args, "until", c.until)
			}
			got, _ := harvestAll(t, s, "ListIdentifiers", args...)
			var ids []string
			for _, h := range got {
				ids = append(ids, h.header.Identifier)
			}
			var want []string
			for i := c.first; i <= c.last; i++ {
				want = append(want, s.Identifier(i))
			}
			if c.first == 2 && c.last == 2 && c.opts.Step == 1500*time.Millisecond {
				want = nil // no item has datestamp :02
			}
			if !slices.Equal(ids, want) {
				t.Fatalf("got %v\nwant %v", ids, want)
			}
		})
	}
}

// TestListsAgainstBruteForce compares many random list requests with the
// brute-force expectation, including after mutations.
func TestListsAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 12; round++ {
		opts := Options{
			Records:       50 + rng.Intn(400),
			Step:          time.Duration(1+rng.Intn(300)) * time.Second,
			DeletedEvery:  rng.Intn(5),
			SetCount:      []int{-1, 1, 2, 3, 4, 5}[rng.Intn(6)],
			PageSize:      1 + rng.Intn(60),
			DeletedRecord: []string{"persistent", "transient", "no"}[rng.Intn(3)],
			Prefixes:      []string{"oai_dc", "jpcoar_2.0"},
			RecordBytes:   -1,
		}
		if rng.Intn(2) == 0 {
			opts.Granularity = "YYYY-MM-DD"
			opts.Step *= 300
		}
		s := New(opts)
		end := t0().Add(time.Duration(opts.Records) * opts.Step)
		span := end.Sub(t0())
		randTime := func() time.Time { return t0().Add(time.Duration(rng.Int63n(int64(span)))) }
		for m := 0; m < rng.Intn(40); m++ {
			i := rng.Intn(s.Len())
			at := end.Add(time.Duration(rng.Intn(100)) * opts.Step / 3)
			switch rng.Intn(7) {
			case 0:
				s.Add(at)
			case 1:
				s.Update(i, at)
			case 2:
				s.Touch(i, at)
			case 3:
				s.Delete(i, at)
			case 4:
				s.Restore(i, at)
			case 5:
				s.SetSets(i, [][]string{{"s1"}, {"x:y", "x"}, nil, {"s0:sub", "z"}}[rng.Intn(4)], at, rng.Intn(2) == 0)
			case 6:
				s.Touch(i, randTime()) // back-dated
			}
		}
		for k := 0; k < 15; k++ {
			prefix := []string{"oai_dc", "jpcoar_2.0"}[rng.Intn(2)]
			args := []string{"metadataPrefix", prefix}
			var from, until time.Time
			layout := s.layout()
			if rng.Intn(2) == 0 {
				from = randTime().Truncate(s.unit())
				args = append(args, "from", from.Format(layout))
			}
			if rng.Intn(2) == 0 {
				u := randTime().Truncate(s.unit())
				if !from.IsZero() && u.Before(from) {
					u = from
				}
				args = append(args, "until", u.Format(layout))
				until = u.Add(s.unit() - time.Second)
			}
			set := ""
			if opts.SetCount > 0 && rng.Intn(2) == 0 {
				set = []string{"s0", "s0:sub", "s1", "x", "x:y", "z", "s" + strconv.Itoa(opts.SetCount-1)}[rng.Intn(7)]
				args = append(args, "set", set)
			}
			verb := []string{"ListRecords", "ListIdentifiers"}[rng.Intn(2)]
			want := expected(s, prefix, from, until, set)
			name := fmt.Sprintf("round%d/%d %s %v", round, k, verb, args)
			got, pages := harvestAll(t, s, verb, args...)
			if len(want) == 0 {
				if len(pages) != 1 || !slices.Equal(pages[0].codes(), []string{"noRecordsMatch"}) {
					t.Fatalf("%s: want noRecordsMatch, got %v", name, pages[0].codes())
				}
				continue
			}
			t.Run(name, func(t *testing.T) {
				checkHarvest(t, s, verb, prefix, got, want)
				if tok := pages[0].list().Token; tok != nil && tok.CompleteListSize != strconv.Itoa(len(want)) {
					t.Fatalf("completeListSize %s, want %d", tok.CompleteListSize, len(want))
				}
			})
		}
	}
}

func TestCountBoth(t *testing.T) {
	for m := 1; m <= 12; m++ {
		for k := 1; k <= 12; k++ {
			for r := 0; r < m; r++ {
				for lo := 0; lo < 30; lo += 7 {
					for hi := lo; hi < 90; hi += 11 {
						want := 0
						for i := lo; i < hi; i++ {
							if i%m == r && i%k == k-1 {
								want++
							}
						}
						if got := countBoth(lo, hi, m, r, k, k-1); got != want {
							t.Fatalf("countBoth(%d,%d,%d,%d,%d): %d, want %d", lo, hi, m, r, k, got, want)
						}
					}
				}
			}
		}
	}
}

func TestSets(t *testing.T) {
	s := New(Options{Records: 100, PageSize: 2})
	// ListSets paging
	var specs []string
	r := get(t, s, "verb=ListSets")
	for n := 0; ; n++ {
		for _, st := range r.ListSets.Sets {
			specs = append(specs, st.Spec)
		}
		tok := r.ListSets.Token
		if tok == nil || tok.Value == "" {
			if tok == nil || tok.CompleteListSize != "5" {
				t.Fatalf("last ListSets token %+v", tok)
			}
			break
		}
		r = get(t, s, q("verb", "ListSets", "resumptionToken", tok.Value))
	}
	if !slices.Equal(specs, []string{"s0", "s0:sub", "s1", "s2", "s3"}) {
		t.Fatalf("sets %v", specs)
	}
	if !bytes.Contains(r.raw, []byte("<setDescription>")) && len(r.ListSets.Sets) > 0 {
		t.Fatal("no setDescription")
	}
	setOf := func(set string) []int {
		got, _ := harvestAll(t, s, "ListIdentifiers", "metadataPrefix", "oai_dc", "set", set)
		var idx []int
		for _, h := range got {
			for i := 0; i < s.Len(); i++ {
				if s.Identifier(i) == h.header.Identifier {
					idx = append(idx, i)
				}
			}
		}
		slices.Sort(idx)
		return idx
	}
	want := func(pred func(i int) bool) []int {
		var out []int
		for i := 0; i < s.Len(); i++ {
			if pred(i) {
				out = append(out, i)
			}
		}
		return out
	}
	if got := setOf("s0"); !slices.Equal(got, want(func(i int) bool { return i%4 == 0 })) {
		t.Fatalf("s0: %v", got)
	}
	if got := setOf("s0:sub"); !slices.Equal(got, want(func(i int) bool { return i%8 == 0 })) {
		t.Fatalf("s0:sub: %v", got)
	}
	if got := setOf("s3"); !slices.Equal(got, want(func(i int) bool { return i%4 == 3 })) {
		t.Fatalf("s3: %v", got)
	}
	it, _ := s.Item(16, "oai_dc")
	if !slices.Equal(it.Sets, []string{"s0:sub"}) {
		t.Fatalf("item 16 sets %v", it.Sets)
	}
	it, _ = s.Item(4, "oai_dc")
	if !slices.Equal(it.Sets, []string{"s0"}) {
		t.Fatalf("item 4 sets %v", it.Sets)
	}
	// set moves
	s.SetSets(5, []string{"x", "x:y", "x:y"}, t0(), false) // s1 -> x:y, no datestamp change
	s.SetSets(6, nil, t0(), false)                         // no set at all
	it, _ = s.Item(5, "oai_dc")
	if !slices.Equal(it.Sets, []string{"x:y"}) || !it.Datestamp.Equal(t0().Add(5*time.Minute)) {
		t.Fatalf("moved item: %+v", it)
	}
	if got := setOf("x"); !slices.Equal(got, []int{5}) {
		t.Fatalf("x: %v", got)
	}
	if got := setOf("s1"); slices.Contains(got, 5) {
		t.Fatalf("s1 still has 5")
	}
	if got := setOf("s2"); slices.Contains(got, 6) {
		t.Fatalf("s2 still has 6")
	}
	all, _ := harvestAll(t, s, "ListIdentifiers", "metadataPrefix", "oai_dc")
	if len(all) != 100 {
		t.Fatalf("unfiltered %d", len(all))
	}
	specs = nil
	s2 := New(Options{Records: 100, PageSize: 100})
	s2.SetSets(5, []string{"x:y"}, t0(), false)
	for _, st := range get(t, s2, "verb=ListSets").ListSets.Sets {
		specs = append(specs, st.Spec)
	}
	if !slices.Equal(specs, []string{"s0", "s0:sub", "s1", "s2", "s3", "x", "x:y"}) {
		t.Fatalf("sets after move %v", specs)
	}
	// SetCount -1 but a set assigned: the repository now has sets
	s3 := New(Options{Records: 10, SetCount: -1})
	s3.SetSets(2, []string{"late"}, t0(), true)
	if r := get(t, s3, "verb=ListSets"); len(r.ListSets.Sets) != 1 {
		t.Fatalf("late set: %s", r.raw)
	}
}

func TestMutations(t *testing.T) {
	for _, deleted := range []string{"persistent", "no"} {
		t.Run(deleted, func(t *testing.T) {
			s := New(Options{Records: 500, DeletedRecord: deleted, Prefixes: []string{"oai_dc", "jpcoar_2.0"}})
			full, _ := harvestAll(t, s, "ListRecords", "metadataPrefix", "oai_dc")
			before := map[string][]byte{}
			for _, h := range full {
				before[h.header.Identifier] = h.metadata
			}
			at := time.Date(2021, 6, 1, 12, 0, 0, 0, time.UTC)
			before3, _ := s.Item(3, "oai_dc")
			added := s.Add(at)
			s.Update(10, at.Add(time.Second))
			s.Touch(11, at.Add(2*time.Second))
			s.Delete(12, at.Add(3*time.Second))
			s.Delete(3, at.Add(4*time.Second))
			s.Restore(3, at.Add(5*time.Second))
			s.SetSets(13, []string{"s2"}, at.Add(6*time.Second), true)
			s.SetSets(14, []string{"s2"}, at.Add(7*time.Second), false)
			s.Restore(15, at.Add(8*time.Second)) // not deleted: no-op
			s.Update(9999, at)                   // out of range: no-op
			if s.Len() != 501 || added != 500 {
				t.Fatalf("Len %d added %d", s.Len(), added)
			}
			inc, _ := harvestAll(t, s, "ListRecords", "metadataPrefix", "oai_dc", "from", "2021-06-01T12:00:00Z")
			var ids []string
			got := map[string]harvested{}
			for _, h := range inc {
				ids = append(ids, h.header.Identifier)
				got[h.header.Identifier] = h
			}
			want := []string{s.Identifier(500), s.Identifier(10), s.Identifier(11), s.Identifier(12), s.Identifier(3), s.Identifier(13)}
			if deleted == "no" {
				want = slices.Delete(want, 3, 4)
			}
			if !slices.Equal(ids, want) {
				t.Fatalf("incremental %v\nwant %v", ids, want)
			}
			if bytes.Equal(got[s.Identifier(10)].metadata, before[s.Identifier(10)]) {
				t.Fatal("Update did not change metadata")
			}
			if !bytes.Equal(got[s.Identifier(11)].metadata, before[s.Identifier(11)]) {
				t.Fatal("Touch changed metadata")
			}
			if !bytes.Equal(got[s.Identifier(3)].metadata, before3.Metadata) {
				t.Fatal("Restore changed metadata")
			}
			if deleted == "persistent" {
				h := got[s.Identifier(12)]
				if h.header.Status != "deleted" || h.metadata != nil {
					t.Fatalf("deleted record %+v", h)
				}
				it, ok := s.Item(12, "oai_dc")
				if !ok || !it.Deleted || it.Metadata != nil {
					t.Fatalf("Item deleted: %+v %v", it, ok)
				}
				r := get(t, s, q("verb", "GetRecord", "metadataPrefix", "jpcoar_2.0", "identifier", s.Identifier(12)))
				if rec := r.GetRecord.Records[0]; rec.Header.Status != "deleted" || rec.Metadata != nil {
					t.Fatalf("GetRecord deleted:\n%s", r.raw)
				}
			} else {
				if _, ok := s.Item(12, "oai_dc"); ok {
					t.Fatal("vanished item still visible")
				}
				all, _ := harvestAll(t, s, "ListIdentifiers", "metadataPrefix", "oai_dc")
				if len(all) != 500 {
					t.Fatalf("full list %d", len(all))
				}
			}
			if h := got[s.Identifier(13)]; !slices.Equal(h.header.SetSpecs, []string{"s2"}) {
				t.Fatalf("set move with bump: %+v", h.header)
			}
			it14, _ := s.Item(14, "oai_dc")
			if !slices.Equal(it14.Sets, []string{"s2"}) || !it14.Datestamp.Equal(t0().Add(14*time.Minute)) {
				t.Fatalf("set move without bump: %+v", it14)
			}
			// Touch only: jpcoar bytes identical too
			a, _ := s.Item(11, "jpcoar_2.0")
			b, _ := New(Options{Records: 500, Prefixes: []string{"jpcoar_2.0"}}).Item(11, "jpcoar_2.0")
			if !bytes.Equal(a.Metadata, b.Metadata) || a.Datestamp.Equal(b.Datestamp) {
				t.Fatal("Touch jpcoar")
			}
			// every item still delivered exactly once in a full harvest
			all, _ := harvestAll(t, s, "ListRecords", "metadataPrefix", "jpcoar_2.0")
			checkHarvest(t, s, "ListRecords", "jpcoar_2.0", all, expected(s, "jpcoar_2.0", time.Time{}, time.Time{}, ""))
		})
	}
}

func TestDeletedEveryTombstones(t *testing.T) {
	s := New(Options{Records: 40, DeletedEvery: 4})
	it, ok := s.Item(3, "oai_dc")
	if !ok || !it.Deleted || it.Metadata != nil {
		t.Fatalf("tombstone %+v", it)
	}
	s.Restore(3, t0().AddDate(0, 1, 0))
	it, _ = s.Item(3, "oai_dc")
	if it.Deleted || it.Metadata == nil {
		t.Fatalf("restored %+v", it)
	}
	// all base items vanish: still answers quickly and correctly
	s = New(Options{Records: 2_000_000, DeletedEvery: 1, DeletedRecord: "no"})
	if r := get(t, s, q("verb", "ListIdentifiers", "metadataPrefix", "oai_dc")); !slices.Equal(r.codes(), []string{"noRecordsMatch"}) {
		t.Fatalf("codes %v", r.codes())
	}
	s.Add(t0().AddDate(5, 0, 0))
	if r := get(t, s, q("verb", "ListIdentifiers", "metadataPrefix", "oai_dc")); len(r.ListIdentifiers.Headers) != 1 {
		t.Fatalf("after Add:\n%s", r.raw)
	}
	// set whose members are all vanished: s1 with SetCount 2, DeletedEvery 2
	s = New(Options{Records: 2_000_000, DeletedEvery: 2, DeletedRecord: "no", SetCount: 2})
	if r := get(t, s, q("verb", "ListIdentifiers", "metadataPrefix", "oai_dc", "set", "s1")); !slices.Equal(r.codes(), []string{"noRecordsMatch"}) {
		t.Fatalf("codes %v", r.codes())
	}
}

func TestTokenEscaping(t *testing.T) {
	s := New(Options{Records: 300})
	r := get(t, s, q("verb", "ListIdentifiers", "metadataPrefix", "oai_dc"))
	tok := r.ListIdentifiers.Token.Value
	if !strings.HasPrefix(tok, "+/") || !strings.HasSuffix(tok, "==") {
		t.Fatalf("token %q", tok)
	}
	// properly escaped: works (GET and POST)
	if r := get(t, s, "verb=ListIdentifiers&resumptionToken="+url.QueryEscape(tok)); len(r.Errors) != 0 || r.ListIdentifiers.Token.Cursor != "100" {
		t.Fatalf("escaped token: %v", r.codes())
	}
	if r := get(t, s, "resumptionToken="+url.PathEscape(tok)+"&verb=ListIdentifiers"); len(r.Errors) == 0 {
		// PathEscape leaves '+' unescaped, which decodes to a space
		t.Fatalf("PathEscape'd token accepted")
	}
	// raw: '+' becomes a space
	if r := get(t, s, "verb=ListIdentifiers&resumptionToken="+tok); !slices.Equal(r.codes(), []string{"badResumptionToken"}) {
		t.Fatalf("raw token: %v", r.codes())
	}
	// '/' and '=' escaped but '+' raw
	half := strings.NewReplacer("/", "%2F", "=", "%3D").Replace(tok)
	if r := get(t, s, "verb=ListIdentifiers&resumptionToken="+half); !slices.Equal(r.codes(), []string{"badResumptionToken"}) {
		t.Fatalf("half-escaped token: %v", r.codes())
	}
	// echoed in the request element
	r = get(t, s, q("verb", "ListIdentifiers", "resumptionToken", tok))
	found := false
	for _, a := range r.Request.Attrs {
		if a.Name.Local == "resumptionToken" && a.Value == tok {
			found = true
		}
	}
	if !found {
		t.Fatalf("token not echoed: %v", r.Request.Attrs)
	}
	// re-issuing the same token gives the same page
	a := get(t, s, q("verb", "ListIdentifiers", "resumptionToken", tok))
	if !slices.EqualFunc(a.ListIdentifiers.Headers, r.ListIdentifiers.Headers, func(x, y headerT) bool { return x.Identifier == y.Identifier }) {
		t.Fatal("re-issued token gives a different page")
	}
}

// goTB reports failures from a non-test goroutine.
type goTB struct {
	testing.TB
	errs chan<- string
}

func (g goTB) Fatalf(format string, args ...any) {
	g.errs <- fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestConcurrency(t *testing.T) {
	s := New(Options{Records: 3000, PageSize: 50, DeletedEvery: 9, Prefixes: []string{"oai_dc", "jpcoar_2.0"}, RecordBytes: 300})
	// Items >= 1500 are never mutated: every harvest must deliver each of
	// them exactly once, whatever happens to the others meanwhile.
	var wg sync.WaitGroup
	errs := make(chan string, 100)
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(w)))
			at := t0().AddDate(1, 0, 0)
			for n := 0; n < 600; n++ {
				i := rng.Intn(1500)
				at = at.Add(time.Second)
				switch n % 6 {
				case 0:
					s.Update(i, at)
				case 1:
					s.Touch(i, at)
				case 2:
					s.Delete(i, at)
				case 3:
					s.Restore(i, at)
				case 4:
					s.SetSets(i, []string{"s1", "moved"}, at, n%2 == 0)
				case 5:
					s.Add(at)
				}
				_, _ = s.Item(i, "oai_dc")
				_ = s.Len()
				if n%20 == 0 {
					time.Sleep(time.Millisecond)
				}
			}
		}(w)
	}
	for h := 0; h < 4; h++ {
		wg.Add(1)
		go func(h int) {
			defer wg.Done()
			g := goTB{t, errs}
			verb := []string{"ListRecords", "ListIdentifiers"}[h%2]
			prefix := []string{"oai_dc", "jpcoar_2.0"}[h/2]
			got, _ := harvestAll(g, s, verb, "metadataPrefix", prefix)
			count := map[string]int{}
			for _, x := range got {
				count[x.header.Identifier]++
			}
			for i := 1500; i < 3000; i++ {
				if c := count[s.Identifier(i)]; c != 1 {
					errs <- fmt.Sprintf("%s %s: item %d delivered %d times", verb, prefix, i, c)
					return
				}
			}
			_ = get(g, s, "verb=ListSets")
		}(h)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if s.Requests() < 4*60 {
		t.Fatalf("Requests %d", s.Requests())
	}
	// after the dust settles, a full harvest matches Item exactly
	all, _ := harvestAll(t, s, "ListRecords", "metadataPrefix", "oai_dc")
	checkHarvest(t, s, "ListRecords", "oai_dc", all, expected(s, "oai_dc", time.Time{}, time.Time{}, ""))
}

func TestRequestsCounter(t *testing.T) {
	s := New(Options{Records: 10})
	for i := 0; i < 5; i++ {
		get(t, s, "verb=Identify")
	}
	if s.Requests() != 5 {
		t.Fatalf("Requests %d", s.Requests())
	}
}

func TestEscape(t *testing.T) {
	var b bytes.Buffer
	newXW(&b).attr("n", "a&b<c>d\"e\tf\ng\rh\x01i\xffj\uFFFEk'l")
	if got := b.String(); got != " n=\"a&amp;b&lt;c&gt;d&quot;e&#x9;f&#xA;g&#xD;h\uFFFDi\uFFFDj\uFFFDk&apos;l\"" {
		t.Fatalf("attr escape %q", got)
	}
	b.Reset()
	newXW(&b).text("a&b\"\t\n\r論文'")
	if got := b.String(); got != "a&amp;b\"\t\n&#xD;論文&apos;" {
		t.Fatalf("text escape %q", got)
	}
	// hostile request values are echoed well-formed
	s := New(Options{Records: 10})
	r := get(t, s, q("verb", "GetRecord", "metadataPrefix", "oai_dc", "identifier", "a\"<&>\x00\x07b"))
	if !slices.Equal(r.codes(), []string{"idDoesNotExist"}) {
		t.Fatalf("codes %v", r.codes())
	}
}

// TestRealHTTP harvests over a real HTTP server with net/http's client, at a
// non-root path, following escaped tokens.
func TestRealHTTP(t *testing.T) {
	s := New(Options{Records: 250, RecordBytes: 500})
	srv := httptest.NewServer(s)
	defer srv.Close()
	base := srv.URL + "/some/path/oai"
	v := url.Values{"verb": {"ListRecords"}, "metadataPrefix": {"oai_dc"}}
	n := 0
	for pages := 0; pages < 10; pages++ {
		resp, err := http.Get(base + "?" + v.Encode())
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var r oaiResp
		if err := xml.Unmarshal(body, &r); err != nil {
			t.Fatal(err)
		}
		if r.Request.URL != base {
			t.Fatalf("request URL %q, want %q", r.Request.URL, base)
		}
		n += len(r.ListRecords.Records)
		if r.ListRecords.Token.Value == "" {
			break
		}
		v = url.Values{"verb": {"ListRecords"}, "resumptionToken": {r.ListRecords.Token.Value}}
	}
	if n != 250 || s.Requests() != 3 {
		t.Fatalf("%d records in %d requests", n, s.Requests())
	}
	resp, err := http.Post(base, "text/plain", strings.NewReader("verb=Identify"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Fatalf("POST text/plain: %d", resp.StatusCode)
	}
	resp, err = http.Head(base + "?verb=Identify")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/xml; charset=utf-8" {
		t.Fatalf("HEAD: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}
