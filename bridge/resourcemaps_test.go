package bridge

import (
	"bytes"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/store"
)

// atomLink is an Atom link as the tests read it.
type atomLink struct {
	Rel  string `xml:"rel,attr"`
	Href string `xml:"href,attr"`
	Type string `xml:"type,attr"`
}

type atomEntry struct {
	XMLName xml.Name   `xml:"http://www.w3.org/2005/Atom entry"`
	ID      string     `xml:"id"`
	Title   string     `xml:"title"`
	Updated string     `xml:"updated"`
	Links   []atomLink `xml:"link"`
}

type atomFeed struct {
	XMLName xml.Name    `xml:"http://www.w3.org/2005/Atom feed"`
	Links   []atomLink  `xml:"link"`
	Entries []atomEntry `xml:"entry"`
}

func linksOf(ls []atomLink, rel string) []atomLink {
	var out []atomLink
	for _, l := range ls {
		if l.Rel == rel {
			out = append(out, l)
		}
	}
	return out
}

// xmllintWellFormed checks a document with xmllint --noout when it is
// installed; under CI it must be.
func xmllintWellFormed(t *testing.T, name string, doc []byte) {
	t.Helper()
	if _, err := exec.LookPath("xmllint"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("xmllint is required under CI (apt-get install libxml2-utils)")
		}
		return
	}
	path := filepath.Join(t.TempDir(), "doc.xml")
	os.WriteFile(path, doc, 0o644)
	if out, err := exec.Command("xmllint", "--noout", path).CombinedOutput(); err != nil {
		t.Errorf("%s is not well-formed: %v\n%s", name, err, out)
	}
}

// TestResourceMaps: every Resource List entry's collection link names an
// Aggregation whose Resource Map (ORE 1.0, with the 0.2 profile as alternate)
// aggregates the record in every format, its landing page and its file; maps
// answer conditional requests and change when a part changes; deleted items
// answer 410 and unknown ones 404.
func TestResourceMaps(t *testing.T) {
	s := newFixture(t, oaiserver.Options{Records: 12, PageSize: 5, SetCount: 2, DeletedEvery: 5, Prefixes: []string{"oai_dc", "jpcoar_2.0"}}, 50, time.Hour)
	s.harvest()
	get := func(u string, hdr ...string) (*http.Response, []byte) {
		req, _ := http.NewRequest("GET", u, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	_, rl := get(s.srv.URL + "/demo/jpcoar_2.0/all/resourcelist.xml")
	doc, err := rsync.Parse(strings.NewReader(string(rl)))
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Entries) == 0 {
		t.Fatal("empty resource list")
	}
	for _, e := range doc.Entries {
		var coll string
		for _, l := range e.Links {
			if l.Rel == "collection" {
				coll = l.Href
			}
		}
		mapURI, ok := strings.CutSuffix(coll, "#aggregation")
		if !ok {
			t.Fatalf("%s: collection link %q", e.Loc, coll)
		}
		resp, body := get(mapURI)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/atom+xml" || resp.Header.Get("ETag") == "" ||
			strings.Contains(resp.Header.Get("Link"), `rel="resourcesync"`) {
			t.Fatalf("GET %s: %d %v", mapURI, resp.StatusCode, resp.Header)
		}
		xmllintWellFormed(t, mapURI, body)
		var entry atomEntry
		if err := xml.Unmarshal(body, &entry); err != nil {
			t.Fatalf("%s: %v", mapURI, err)
		}
		self, describes := linksOf(entry.Links, "self"), linksOf(entry.Links, "http://www.openarchives.org/ore/terms/describes")
		if entry.ID == "" || entry.Title == "" || entry.Updated == "" || len(self) != 1 || self[0].Href != mapURI ||
			len(describes) != 1 || describes[0].Href != coll {
			t.Fatalf("%s: required elements: %+v", mapURI, entry)
		}
		var aggregated []string
		for _, l := range linksOf(entry.Links, "http://www.openarchives.org/ore/terms/aggregates") {
			aggregated = append(aggregated, l.Href)
		}
		id := strings.TrimPrefix(e.Loc, s.srv.URL+"/demo/jpcoar_2.0/resource/")
		oai := source.ResourceURL(s.srv.URL, "demo", "oai_dc", "") + id
		if !slices.Contains(aggregated, e.Loc) || !slices.Contains(aggregated, oai) || len(aggregated) != 4 {
			t.Errorf("%s aggregates %v: want both metadata records, the landing page and the PDF", mapURI, aggregated)
		}
		if !slices.ContainsFunc(aggregated, func(u string) bool { return strings.HasSuffix(u, ".pdf") }) {
			t.Errorf("%s: no full-text file among %v", mapURI, aggregated)
		}
		// The 0.2 profile: one entry per aggregated resource.
		alt := linksOf(entry.Links, "alternate")
		var alt02 string
		for _, l := range alt {
			if l.Type == "application/atom+xml" {
				alt02 = l.Href
			}
		}
		resp, body = get(alt02)
		if resp.StatusCode != 200 {
			t.Fatalf("GET 0.2 map %q: %d", alt02, resp.StatusCode)
		}
		xmllintWellFormed(t, alt02, body)
		var feed atomFeed
		if err := xml.Unmarshal(body, &feed); err != nil {
			t.Fatal(err)
		}
		if len(feed.Entries) != 4 || len(linksOf(feed.Links, "describes")) != 1 || linksOf(feed.Links, "describes")[0].Href != alt02+"#aggregation" ||
			!slices.Contains(linksOf(feed.Links, "related"), atomLink{Rel: "related", Href: coll}) {
			t.Errorf("0.2 map %s: %d entries, links %+v", alt02, len(feed.Entries), feed.Links)
		}
	}

	// Conditional requests, and a change of any part changes the map.
	id := s.up.Identifier(1)
	mapURI := source.MapURL(s.srv.URL, "demo", id)
	resp, _ := get(mapURI)
	etag := resp.Header.Get("ETag")
	if r, _ := get(mapURI, "If-None-Match", etag); r.StatusCode != 304 {
		t.Errorf("If-None-Match: %d", r.StatusCode)
	}
	if r, _ := get(mapURI, "If-Modified-Since", resp.Header.Get("Last-Modified")); r.StatusCode != 304 {
		t.Errorf("If-Modified-Since: %d", r.StatusCode)
	}
	at := s.advance(time.Minute)
	s.up.Update(1, at)
	s.advance(time.Minute)
	s.harvest()
	if r, _ := get(mapURI, "If-None-Match", etag); r.StatusCode != 200 || r.Header.Get("ETag") == etag {
		t.Errorf("after an update: %d, ETag %s", r.StatusCode, r.Header.Get("ETag"))
	}
	at = s.advance(time.Minute)
	s.up.Delete(1, at)
	s.advance(time.Minute)
	s.harvest()
	if r, _ := get(mapURI); r.StatusCode != 410 {
		t.Errorf("deleted item: %d", r.StatusCode)
	}
	if r, _ := get(source.MapURL(s.srv.URL, "demo", "oai:nowhere:1")); r.StatusCode != 404 {
		t.Errorf("unknown item: %d", r.StatusCode)
	}
}

// TestResourceMapRightsLinksAndIRIs: both documents carry the repository's
// metadata_rights (from defaults:, or the repository's own) as atom:rights;
// neither they nor their responses link rel="resourcesync" (RS-046); each
// describes its own URL + #aggregation and the 0.2 feed names the 1.0 URI-A,
// which the Resource List's collection link names, as related; hrefs made of
// an identifier and file URL with spaces and quotes are IRIs.
func TestResourceMapRightsLinksAndIRIs(t *testing.T) {
	const (
		cc0  = "https://creativecommons.org/publicdomain/zero/1.0/"
		ccBY = "https://creativecommons.org/licenses/by/4.0/"
		id   = `oai:repo.test:a b"<1>`
		base = "http://rs.test"
	)
	cfg, err := config.ParseAndValidate(strings.NewReader(`base_url: ` + base + `
defaults:
  metadata_rights: ` + cc0 + `
repositories:
  - name: demo
    base_url: https://repo.test/oai
  - name: other
    base_url: https://other.test/oai
    metadata_rights: ` + ccBY + `
  - name: none
    base_url: https://none.test/oai
    metadata_rights: ""
`))
	if err != nil {
		t.Fatal(err)
	}
	db := openStore(t, store.Options{InMemory: true})
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	meta := []byte(`<oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/" xmlns:dc="http://purl.org/dc/elements/1.1/">` +
		`<dc:title>t</dc:title><dc:identifier>https://repo.test/items/1</dc:identifier>` +
		`<dc:identifier>https://repo.test/files/full text "1".pdf</dc:identifier></oai_dc:dc>`)
	for _, repo := range []string{"demo", "other", "none"} {
		b, err := db.NewBatch(repo, "oai_dc")
		if err != nil {
			t.Fatal(err)
		}
		rec := &store.Record{Identifier: id, Datestamp: now, Namespace: "http://www.openarchives.org/OAI/2.0/oai_dc/", Length: int64(len(meta)),
			MD5: strings.Repeat("a", 32), SHA256: strings.Repeat("b", 64), Modified: now, FirstSeen: now}
		if err := b.Apply(rec, meta, nil); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(mustServer(t, cfg, db, ServerOptions{DumpDir: t.TempDir()}).Handler())
	t.Cleanup(srv.Close)
	get := func(u string) (*http.Response, []byte) {
		t.Helper()
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", u, resp.StatusCode, body)
		}
		return resp, body
	}
	type doc struct {
		Links  []atomLink `xml:"link"`
		Rights []string   `xml:"rights"`
	}
	for _, c := range []struct{ repo, rights string }{{"demo", cc0}, {"other", ccBY}, {"none", ""}} {
		uri, uri02 := source.MapURL(base, c.repo, id), source.Map02URL(base, c.repo, id)
		for _, u := range []string{uri, uri02} {
			resp, body := get(srv.URL + strings.TrimPrefix(u, base))
			if l := resp.Header.Values("Link"); slices.ContainsFunc(l, func(v string) bool { return strings.Contains(v, "resourcesync") }) {
				t.Errorf("GET %s: Link %q: a Resource Map is in no Capability List (RS-046)", u, l)
			}
			xmllintWellFormed(t, u, body)
			var d doc
			if err := xml.Unmarshal(body, &d); err != nil {
				t.Fatalf("%s: %v", u, err)
			}
			if want := []string{c.rights}; (c.rights == "" && len(d.Rights) != 0) || (c.rights != "" && !slices.Equal(d.Rights, want)) {
				t.Errorf("%s: rights %q, want %q (ORE-018)", u, d.Rights, c.rights)
			}
			if l := linksOf(d.Links, "resourcesync"); len(l) > 0 {
				t.Errorf("%s: resourcesync link %+v (RS-046)", u, l)
			}
			self := linksOf(d.Links, "self")
			describes := append(linksOf(d.Links, "describes"), linksOf(d.Links, "http://www.openarchives.org/ore/terms/describes")...)
			if len(self) != 1 || self[0].Href != u || len(describes) != 1 || describes[0].Href != u+"#aggregation" {
				t.Errorf("%s: self %+v describes %+v: want the document's own URL + #aggregation (ORE-015)", u, self, describes)
			}
			var related []string
			for _, l := range linksOf(d.Links, "related") {
				related = append(related, l.Href)
			}
			wantRelated := []string{`oai:repo.test:a%20b%22%3C1%3E`}
			if u == uri02 {
				wantRelated = append([]string{source.AggregationURL(base, c.repo, id)}, wantRelated...)
			}
			if !slices.Equal(related, wantRelated) {
				t.Errorf("%s: related %q, want %q", u, related, wantRelated)
			}
			for _, l := range d.Links {
				if strings.ContainsAny(l.Href, " \"<>\t") {
					t.Errorf("%s: href %q is not an IRI", u, l.Href)
				}
			}
			if !bytes.Contains(body, []byte(`href="https://repo.test/files/full%20text%20%221%22.pdf"`)) {
				t.Errorf("%s: the file's href is not escaped:\n%s", u, body)
			}
		}
	}
	// The collection link of the Resource List names the 1.0 URI-A.
	_, rl := get(srv.URL + "/demo/oai_dc/all/resourcelist.xml")
	list, err := rsync.Parse(bytes.NewReader(rl))
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Entries) != 1 || !slices.ContainsFunc(list.Entries[0].Links, func(l rsync.Link) bool {
		return l.Rel == "collection" && l.Href == source.AggregationURL(base, "demo", id)
	}) {
		t.Errorf("resource list entries %+v: no collection link to %s", list.Entries, source.AggregationURL(base, "demo", id))
	}
}

// TestResourceMapMetadataOnly: an item whose records name no landing page and
// no file still gets a valid map of its metadata documents.
func TestResourceMapMetadataOnly(t *testing.T) {
	srv, _, _ := limitsServer(t, 3, 4, 5*time.Second, nil)
	resp, err := http.Get(srv.URL + "/demo/map/oai:limits:0000001")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	xmllintWellFormed(t, "metadata-only map", body)
	var entry atomEntry
	if err := xml.Unmarshal(body, &entry); err != nil {
		t.Fatal(err)
	}
	agg := linksOf(entry.Links, "http://www.openarchives.org/ore/terms/aggregates")
	if len(agg) != 1 || !strings.HasSuffix(agg[0].Href, "/demo/oai_dc/resource/oai:limits:0000001") {
		t.Errorf("aggregates %+v", agg)
	}
}
