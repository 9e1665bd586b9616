package bridge

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/rsync"
)

func TestResourceHTTP(t *testing.T) {
	s := newFixture(t, oaiserver.Options{Records: 10, PageSize: 5, SetCount: 2}, 50, time.Hour)
	s.harvest()
	id := s.up.Identifier(7) // slashes, spaces, a colon and non-ASCII
	loc := source.ResourceURL(s.srv.URL, "demo", "oai_dc", id)
	it, _ := s.up.Item(7, "oai_dc")
	do := func(method, u string, hdr map[string]string) (*http.Response, string) {
		req, _ := http.NewRequest(method, u, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := do("GET", loc, nil)
	if resp.StatusCode != 200 || body != string(it.Metadata) || resp.Header.Get("Content-Type") != "application/xml" ||
		resp.Header.Get("Last-Modified") == "" || !strings.Contains(resp.Header.Get("Link"), `/demo/oai_dc/all/capabilitylist.xml>; rel="resourcesync"`) {
		t.Fatalf("GET: %d %v\n%s", resp.StatusCode, resp.Header, body)
	}
	etag := resp.Header.Get("ETag")
	if r, b := do("HEAD", loc, nil); r.StatusCode != 200 || b != "" || r.Header.Get("Content-Length") != resp.Header.Get("Content-Length") {
		t.Errorf("HEAD: %d %v", r.StatusCode, r.Header)
	}
	if r, _ := do("GET", loc, map[string]string{"If-None-Match": etag}); r.StatusCode != 304 {
		t.Errorf("If-None-Match: %d", r.StatusCode)
	}
	if r, _ := do("GET", loc, map[string]string{"If-Modified-Since": resp.Header.Get("Last-Modified")}); r.StatusCode != 304 {
		t.Errorf("If-Modified-Since: %d", r.StatusCode)
	}
	if r, _ := do("GET", loc, map[string]string{"If-None-Match": `"other"`}); r.StatusCode != 200 {
		t.Errorf("stale ETag: %d", r.StatusCode)
	}
	// Deleted: 410; unknown: 404 with a short message.
	at := s.advance(time.Minute)
	s.up.Delete(7, at)
	s.advance(time.Minute)
	s.harvest()
	if r, b := do("GET", loc, nil); r.StatusCode != 410 || !strings.Contains(b, "deleted") {
		t.Errorf("deleted: %d %s", r.StatusCode, b)
	}
	if r, b := do("GET", source.ResourceURL(s.srv.URL, "demo", "oai_dc", "oai:nope:1"), nil); r.StatusCode != 404 || !strings.Contains(b, "unknown resource") {
		t.Errorf("unknown: %d %s", r.StatusCode, b)
	}
	if r, _ := do("GET", s.srv.URL+"/nope/oai_dc/resource/x", nil); r.StatusCode != 404 {
		t.Errorf("unknown repository: %d", r.StatusCode)
	}
	if r, _ := do("POST", loc, nil); r.StatusCode != 405 {
		t.Errorf("POST: %d", r.StatusCode)
	}
}

func TestGzipOnlyWhenAsked(t *testing.T) {
	s := newFixture(t, oaiserver.Options{Records: 5}, 50, time.Hour)
	s.harvest()
	u := s.srv.URL + "/demo/oai_dc/all/resourcelist.xml"
	req, _ := http.NewRequest("GET", u, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("%v %v", err, resp.Header)
	}
	b, _ := io.ReadAll(zr)
	resp.Body.Close()
	if !strings.Contains(string(b), `capability="resourcelist"`) {
		t.Fatalf("%s", b)
	}
	req.Header.Del("Accept-Encoding") // the reference client sends none
	resp, _ = http.DefaultTransport.RoundTrip(req)
	plain, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "" || string(plain) != string(b) {
		t.Fatalf("plain response %v", resp.Header)
	}
	for _, v := range []string{"gzip;q=0", "identity", "br"} {
		req.Header.Set("Accept-Encoding", v)
		resp, _ = http.DefaultTransport.RoundTrip(req)
		resp.Body.Close()
		if resp.Header.Get("Content-Encoding") != "" {
			t.Errorf("Accept-Encoding %q got gzip", v)
		}
	}
}

func TestDiscoveryPages(t *testing.T) {
	s := newFixture(t, oaiserver.Options{Records: 5, SetCount: 2, Prefixes: []string{"oai_dc", "jpcoar_2.0"}}, 50, time.Hour)
	s.harvest()
	get := func(p string) (*http.Response, string) {
		resp, err := http.Get(s.srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, home := get("/")
	// Links: the Source Description and the two all-records Capability Lists.
	if resp.StatusCode != 200 || strings.Contains(home, `rel="resourcesync"`) || !strings.Contains(home, "rsbridge demo repository") ||
		!strings.Contains(home, "<th>last success</th><td>2026-11-22") || !strings.Contains(home, `/demo/jpcoar_2.0/set/s1/capabilitylist.xml">set s1</a>`) {
		t.Errorf("home page:\n%s", home)
	}
	// robots.txt names the all-records Resource Lists by default.
	_, robots := get("/robots.txt")
	if strings.Count(robots, "Sitemap: "+s.srv.URL) != 2 || !strings.Contains(robots, "/demo/jpcoar_2.0/all/resourcelist.xml") {
		t.Errorf("robots.txt:\n%s", robots)
	}
	resp, about := get("/demo/oai_dc/set/s1/about.html")
	if resp.StatusCode != 200 || !strings.Contains(about, "OAI set <code>s1</code>") || !strings.Contains(about, "deletedRecord") || !strings.Contains(about, "is reported as <code>deleted</code>") {
		t.Errorf("about:\n%s", about)
	}
	for _, doc := range []string{"/demo/oai_dc/all/resourcelist.xml", "/demo/oai_dc/set/s1/changelist.xml", "/demo/oai_dc/all/resourcelist-00001.xml"} {
		resp, err := http.Head(s.srv.URL + doc)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || len(b) != 0 || resp.Header.Get("Content-Type") != "application/xml" {
			t.Errorf("HEAD %s: %d, %d body bytes, %q", doc, resp.StatusCode, len(b), resp.Header.Get("Content-Type"))
		}
	}
	if resp, _ := get("/demo/oai_dc/set/nope/capabilitylist.xml"); resp.StatusCode != 404 {
		t.Errorf("unknown set: %d", resp.StatusCode)
	}
	if resp, _ := get("/demo/oai_dc/all/changelist-20990101T000000Z-0001.xml"); resp.StatusCode != 404 {
		t.Errorf("unknown change list: %d", resp.StatusCode)
	}
}

// TestPageLimitIsSitemapLimit: config's largest page_limit is the Sitemap
// protocol's limit, which rsync enforces; the two packages may not import each
// other, so this test keeps the two constants equal.
func TestPageLimitIsSitemapLimit(t *testing.T) {
	if config.DefaultPageLimit != rsync.MaxEntries {
		t.Fatalf("config.DefaultPageLimit %d, rsync.MaxEntries %d", config.DefaultPageLimit, rsync.MaxEntries)
	}
}

// TestDocumentCache: large documents are rendered once per state of the
// store, answer If-None-Match with 304 in both encodings, and change as soon
// as a harvest writes a record (a datestamp bump included).
func TestDocumentCache(t *testing.T) {
	s := newFixture(t, oaiserver.Options{Records: 20, PageSize: 10}, 50, time.Hour)
	s.harvest()
	get := func(path string, hdr ...string) (*http.Response, []byte) {
		req, _ := http.NewRequest("GET", s.srv.URL+path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	const rl = "/demo/oai_dc/all/resourcelist.xml"
	r1, b1 := get(rl)
	r2, b2 := get(rl)
	etag := r1.Header.Get("ETag")
	if etag == "" || r2.Header.Get("ETag") != etag || !bytes.Equal(b1, b2) {
		t.Fatalf("a second GET is not the cached document: %q %q", etag, r2.Header.Get("ETag"))
	}
	if r, _ := get(rl, "If-None-Match", etag); r.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: %d", r.StatusCode)
	}
	rz, bz := get(rl, "Accept-Encoding", "gzip")
	zr, err := gzip.NewReader(bytes.NewReader(bz))
	if err != nil || rz.Header.Get("Content-Encoding") != "gzip" || rz.Header.Get("ETag") == etag {
		t.Fatalf("gzip: %v %v", err, rz.Header)
	}
	unz, _ := io.ReadAll(zr)
	if !bytes.Equal(unz, b1) {
		t.Error("the gzip form differs from the plain one")
	}
	if r, _ := get(rl, "Accept-Encoding", "gzip", "If-None-Match", rz.Header.Get("ETag")); r.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match on the gzip form: %d", r.StatusCode)
	}
	// A datestamp bump writes the record (its via link's modified changes).
	at := s.advance(time.Minute)
	s.up.Touch(3, at)
	s.advance(time.Minute)
	s.harvest()
	r3, b3 := get(rl, "If-None-Match", etag)
	if r3.StatusCode != 200 || r3.Header.Get("ETag") == etag || bytes.Equal(b3, b1) {
		t.Errorf("after a datestamp bump: %d, same ETag %v", r3.StatusCode, r3.Header.Get("ETag") == etag)
	}
}
