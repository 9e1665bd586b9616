package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/store"
)

// Sets at scale: a WEKO3 / JAIRO Cloud index tree can have thousands of OAI
// sets, and with sets: [] each becomes a resource set with its own
// Capability List. The fixture below stores such a tree the way a harvest
// does (ListSets through ReplaceSets, records naming their sets in their
// headers) and serves it.

// setsRepo and setsPrefixes are the repository of the fixture.
const setsRepo = "weko"

var setsPrefixes = []string{"oai_dc", "jpcoar_2.0"}

// setTree returns n hierarchical setSpecs like an index tree: ten top-level
// indexes "1".."10", ten children each ("1:1".."10:10") and the rest as
// leaves spread over those children ("1:2:37"), in creation order. Leaves
// are the specs of depth 3.
func setTree(n int) (specs, leaves []string) {
	for a := 1; a <= 10 && len(specs) < n; a++ {
		specs = append(specs, fmt.Sprint(a))
	}
	for a := 1; a <= 10 && len(specs) < n; a++ {
		for b := 1; b <= 10 && len(specs) < n; b++ {
			specs = append(specs, fmt.Sprintf("%d:%d", a, b))
		}
	}
	for c := 1; len(specs) < n; c++ {
		for a := 1; a <= 10 && len(specs) < n; a++ {
			for b := 1; b <= 10 && len(specs) < n; b++ {
				leaf := fmt.Sprintf("%d:%d:%d", a, b, c)
				specs = append(specs, leaf)
				leaves = append(leaves, leaf)
			}
		}
	}
	return specs, leaves
}

// buildSets stores the set descriptions of the tree and records records in
// every format, record i in leaf i mod len(leaves) and every seventh one in
// a second leaf too (an item listed under two indexes). No events: the
// documents measured here do not read them.
func buildSets(tb testing.TB, db *store.DB, specs, leaves []string, records int) {
	tb.Helper()
	infos := make([]store.SetInfo, len(specs))
	for i, spec := range specs {
		infos[i] = store.SetInfo{Spec: spec, Name: "Index " + spec, Description: "An index of the repository's tree"}
	}
	if err := db.ReplaceSets(setsRepo, infos); err != nil {
		tb.Fatal(err)
	}
	if len(leaves) == 0 {
		leaves = specs
	}
	meta := []byte(`<oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>` + strings.Repeat("x", 200) + `</dc:title></oai_dc:dc>`)
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	for _, prefix := range setsPrefixes {
		for i := 0; i < records; {
			batch, err := db.NewBatch(setsRepo, prefix)
			if err != nil {
				tb.Fatal(err)
			}
			for j := 0; j < 1000 && i < records; j, i = j+1, i+1 {
				sets := []string{leaves[i%len(leaves)]}
				if i%7 == 0 {
					sets = append(sets, leaves[(i/7)%len(leaves)])
				}
				rec := &store.Record{Identifier: fmt.Sprintf("oai:weko.example:%08d", i), Datestamp: now, Sets: sets,
					Length: int64(len(meta)), MD5: "0123456789abcdef0123456789abcdef", SHA256: strings.Repeat("ab", 32),
					Modified: now, FirstSeen: now, Landing: fmt.Sprintf("https://weko.example/records/%d", i)}
				if err := batch.Apply(rec, meta, nil); err != nil {
					tb.Fatal(err)
				}
			}
			if err := batch.Commit(); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

// setsServer parses the configuration (the repository section gets extra,
// e.g. "    max_sets: 10\n"; server gets the server section) and serves db
// with it at a real address, so every URL in the documents is fetchable.
func setsServer(tb testing.TB, db *store.DB, extra, server string) (*Server, *httptest.Server) {
	tb.Helper()
	srv := httptest.NewUnstartedServer(nil)
	y := "base_url: http://" + srv.Listener.Addr().String() + "\n" + server +
		"repositories:\n  - name: " + setsRepo + "\n    base_url: https://weko.example/oai\n    metadata_prefixes: [" + strings.Join(setsPrefixes, ", ") + "]\n    sets: []\n" + extra
	cfg, err := config.ParseAndValidate(strings.NewReader(y))
	if err != nil {
		srv.Close()
		tb.Fatalf("%v\n%s", err, y)
	}
	s := mustServer(tb, cfg, db, ServerOptions{})
	srv.Config.Handler = s.Handler()
	srv.Start()
	tb.Cleanup(srv.Close)
	return s, srv
}

func setURL(base, prefix, spec string) source.Set {
	repo := config.Repository{Name: setsRepo}
	return source.New(&config.Config{BaseURL: base}, nil).Set(repo, prefix, spec)
}

// getBody GETs u without compression and returns the status and body.
func getBody(tb testing.TB, hc *http.Client, u string) (int, []byte) {
	tb.Helper()
	resp, err := hc.Get(u)
	return readBody(tb, resp, err)
}

// readBody returns the status and body of a response, failing tb on err.
func readBody(tb testing.TB, resp *http.Response, err error) (int, []byte) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp.StatusCode, body
}

// TestSetsAtScaleDocuments serves a repository with 5,000 OAI sets and
// checks what each document makes of them: every set in the Source
// Description, a short home page, robots.txt naming only the all-records
// Resource Lists, set_patterns and max_sets, 404 for unpublished sets, and
// the published sets following the store's set list.
func TestSetsAtScaleDocuments(t *testing.T) {
	const nSets = 5000
	db := openStore(t, store.Options{InMemory: true})
	specs, leaves := setTree(nSets)
	if len(specs) != nSets {
		t.Fatalf("tree of %d sets", len(specs))
	}
	buildSets(t, db, specs, leaves, 1000) // few records: the race detector slows writes down most
	hc := &http.Client{Transport: &http.Transport{DisableCompression: true}}

	_, srv := setsServer(t, db, "", "")
	get := func(path string) (int, []byte) { return getBody(t, hc, srv.URL+path) }

	// The Source Description: all records plus every set, per format.
	wantLocs := map[string]bool{}
	for _, p := range setsPrefixes {
		wantLocs[setURL(srv.URL, p, store.AllSet).CapabilityList()] = true
		for _, spec := range specs {
			wantLocs[setURL(srv.URL, p, spec).CapabilityList()] = true
		}
	}
	code, body := get("/.well-known/resourcesync")
	if code != 200 {
		t.Fatalf("source description: %d %s", code, body)
	}
	sd, err := rsync.Parse(strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	perPrefix := map[string]int{}
	for _, e := range sd.Entries {
		if !wantLocs[e.Loc] {
			t.Errorf("source description lists %s", e.Loc)
		}
		delete(wantLocs, e.Loc)
		for _, p := range setsPrefixes {
			if strings.Contains(e.Loc, "/"+setsRepo+"/"+p+"/") {
				perPrefix[p]++
			}
		}
		if len(e.Links) != 1 || e.Links[0].Rel != "describedby" || !strings.HasSuffix(e.Links[0].Href, "/about.html") {
			t.Errorf("%s: links %+v", e.Loc, e.Links)
		}
	}
	for _, p := range setsPrefixes {
		if perPrefix[p] != nSets+1 {
			t.Errorf("source description: %d Capability Lists of %s, want %d", perPrefix[p], p, nSets+1)
		}
	}
	if len(wantLocs) > 0 {
		t.Errorf("source description misses %d Capability Lists", len(wantLocs))
	}
	t.Logf("source description: %d entries, %d bytes", len(sd.Entries), len(body))

	// The home page: all records and the first homeSetsShown sets per
	// format, then a note pointing to the Source Description.
	code, body = get("/")
	if code != 200 {
		t.Fatalf("home: %d %s", code, body)
	}
	home := string(body)
	for _, p := range setsPrefixes {
		links := regexp.MustCompile(`<a href="[^"]*/`+regexp.QuoteMeta(setsRepo+"/"+p)+`/(?:all|set/[^"/]+)/capabilitylist\.xml">`).FindAllString(home, -1)
		if len(links) != homeSetsShown+1 {
			t.Errorf("home page: %d Capability List links for %s, want %d", len(links), p, homeSetsShown+1)
		}
	}
	more := fmt.Sprintf("and %s more sets", num(nSets-homeSetsShown))
	if n := strings.Count(home, more); n != len(setsPrefixes) {
		t.Errorf("home page: %q %d times, want %d", more, n, len(setsPrefixes))
	}
	if !strings.Contains(home, `href="`+srv.URL+`/.well-known/resourcesync"`) {
		t.Error("home page does not link the Source Description")
	}
	t.Logf("home page: %d bytes", len(home))

	// status.json counts the resource sets.
	code, body = get("/status.json")
	var st Status
	if err := json.Unmarshal(body, &st); code != 200 || err != nil {
		t.Fatalf("status.json: %d %v", code, err)
	}
	for _, fr := range st.Repositories[0].Formats {
		if fr.ResourceSets != nSets+1 {
			t.Errorf("status.json: %s has %d resource sets, want %d", fr.Prefix, fr.ResourceSets, nSets+1)
		}
	}

	// robots.txt: by default only the all-records Resource Lists.
	code, body = get("/robots.txt")
	sitemaps := regexp.MustCompile(`(?m)^Sitemap: (.*)$`).FindAllStringSubmatch(string(body), -1)
	if code != 200 || len(sitemaps) != len(setsPrefixes) {
		t.Errorf("robots.txt (%d): %d Sitemaps, want %d:\n%.500s", code, len(sitemaps), len(setsPrefixes), body)
	}
	for _, m := range sitemaps {
		if !strings.HasSuffix(m[1], "/all/resourcelist.xml") {
			t.Errorf("robots.txt names %s", m[1])
		}
	}

	// A published set's documents, and the 404 of one that is not a set.
	leaf := setURL(srv.URL, "oai_dc", leaves[3])
	for _, u := range []string{leaf.CapabilityList(), leaf.ResourceList(), leaf.About()} {
		if code, body := getBody(t, hc, u); code != 200 {
			t.Errorf("GET %s: %d %s", u, code, body)
		}
	}
	// Records 3 and 3+len(leaves)*k are in leaves[3]; with 1,000 records
	// only record 3 (and record 21, 7*3, through its second leaf).
	_, body = getBody(t, hc, leaf.ResourceList())
	if rl, err := rsync.Parse(strings.NewReader(string(body))); err != nil || len(rl.Entries) != 2 {
		t.Errorf("Resource List of %s: %v\n%.1000s", leaves[3], err, body)
	}
	if code, _ := getBody(t, hc, setURL(srv.URL, "oai_dc", "99:1").CapabilityList()); code != 404 {
		t.Errorf("set 99:1, not in the tree: %d, want 404", code)
	}

	// robots all and none.
	_, all := setsServer(t, db, "", "server:\n  robots: all\n")
	_, body = getBody(t, hc, all.URL+"/robots.txt")
	if n := strings.Count(string(body), "Sitemap: "); n != len(setsPrefixes)*(nSets+1) {
		t.Errorf("robots: all: %d Sitemaps, want %d", n, len(setsPrefixes)*(nSets+1))
	}
	t.Logf("robots.txt with robots: all: %d bytes", len(body))
	_, none := setsServer(t, db, "", "server:\n  robots: none\n")
	_, body = getBody(t, hc, none.URL+"/robots.txt")
	if strings.Contains(string(body), "Sitemap:") {
		t.Errorf("robots: none:\n%s", body)
	}

	// set_patterns and max_sets: of the sets matching 1:2*, the first ten in
	// setSpec (byte) order.
	var match []string
	for _, spec := range specs {
		if strings.HasPrefix(spec, "1:2") {
			match = append(match, spec)
		}
	}
	slices.Sort(match)
	want := match[:10]
	sel, selSrv := setsServer(t, db, "    set_patterns: [\"1:2*\"]\n    max_sets: 10\n", "")
	got, err := sel.src.Published(context.Background(), sel.cfg().Repositories[0])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("set_patterns [1:2*], max_sets 10: published %q, want %q", got, want)
	}
	code, body = getBody(t, hc, selSrv.URL+"/.well-known/resourcesync")
	sd, err = rsync.Parse(strings.NewReader(string(body)))
	if code != 200 || err != nil {
		t.Fatalf("source description: %d %v", code, err)
	}
	var sdSets []string
	for _, e := range sd.Entries {
		if strings.Contains(e.Loc, "/oai_dc/") {
			sdSets = append(sdSets, e.Loc)
		}
	}
	wantLocsSel := []string{setURL(selSrv.URL, "oai_dc", store.AllSet).CapabilityList()}
	for _, spec := range want {
		wantLocsSel = append(wantLocsSel, setURL(selSrv.URL, "oai_dc", spec).CapabilityList())
	}
	if !slices.Equal(sdSets, wantLocsSel) {
		t.Errorf("source description with set_patterns: %q, want %q", sdSets, wantLocsSel)
	}
	for spec, wantCode := range map[string]int{
		want[0]: 200, want[9]: 200,
		match[10]: 404, // matches, beyond max_sets
		"1:3":     404, // does not match
		"2:2:1":   404,
		"1":       404, // an ancestor of published sets, not published itself
		"1:2:999": 404, // not a set at all
	} {
		for _, p := range setsPrefixes {
			rs := setURL(selSrv.URL, p, spec)
			for _, u := range []string{rs.CapabilityList(), rs.ResourceList(), rs.About()} {
				if code, body := getBody(t, hc, u); code != wantCode {
					t.Errorf("set_patterns [1:2*], max_sets 10: GET %s: %d, want %d: %.200s", u, code, wantCode, body)
				}
			}
		}
	}
	_, body = getBody(t, hc, selSrv.URL+"/")
	if strings.Contains(string(body), "more sets") {
		t.Error("home page with 10 sets announces more")
	}

	// The published sets follow the store's set list: a set ListSets no
	// longer reports is gone at once, a new one is there.
	gone := leaves[len(leaves)-1]
	var next []store.SetInfo
	for _, spec := range specs {
		if spec != gone {
			next = append(next, store.SetInfo{Spec: spec})
		}
	}
	next = append(next, store.SetInfo{Spec: "11"})
	if err := db.ReplaceSets(setsRepo, next); err != nil {
		t.Fatal(err)
	}
	if code, _ := get("/" + setsRepo + "/oai_dc/set/" + gone + "/capabilitylist.xml"); code != 404 {
		t.Errorf("set %s after ListSets dropped it: %d, want 404", gone, code)
	}
	if code, body := get("/" + setsRepo + "/oai_dc/set/11/capabilitylist.xml"); code != 200 {
		t.Errorf("set 11 after ListSets added it: %d %s", code, body)
	}
	code, body = get("/.well-known/resourcesync")
	if sd, err = rsync.Parse(strings.NewReader(string(body))); code != 200 || err != nil {
		t.Fatalf("source description: %d %v", code, err)
	}
	if len(sd.Entries) != len(setsPrefixes)*(nSets+1) {
		t.Errorf("source description after ListSets changed: %d entries, want %d", len(sd.Entries), len(setsPrefixes)*(nSets+1))
	}
}

// BenchmarkSetsAtScale serves a repository of two formats whose index tree
// has 500 or 5,000 OAI sets (every one a resource set: sets: []), with
// 20,000 records per format (RSBRIDGE_BENCH_SET_RECORDS to change it) in an
// on-disk store, and measures the documents a destination or a person reads
// first, one leaf set's Capability List and Resource List, and the Resource
// List of a top-level set (a tenth of the records). The document cache is
// off, so every request renders. Each sub-benchmark reports ms/op and the
// document's bytes. The Catalog sub-benchmarks compare the published-set
// lookup every per-set request makes with the cache (one catalog) and
// without it (a fresh catalog per lookup, as before the cache). Run:
//
//	go test -run '^$' -bench SetsAtScale -benchtime 20x ./bridge/
func BenchmarkSetsAtScale(b *testing.B) {
	records := 20000
	if v, err := strconv.Atoi(os.Getenv("RSBRIDGE_BENCH_SET_RECORDS")); err == nil && v > 0 {
		records = v
	}
	for _, nSets := range []int{500, 5000} {
		b.Run(fmt.Sprintf("sets=%d", nSets), func(b *testing.B) {
			db := openStore(b, store.Options{Dir: b.TempDir()})
			specs, leaves := setTree(nSets)
			started := time.Now()
			buildSets(b, db, specs, leaves, records)
			b.Logf("%d sets, %d records per format stored in %v", nSets, records, time.Since(started).Round(time.Millisecond))
			s, srv := setsServer(b, db, "", "")
			// Like the reference client: no Accept-Encoding.
			hc := &http.Client{Transport: &http.Transport{DisableCompression: true}}
			leaf := setURL(srv.URL, "oai_dc", leaves[len(leaves)/2])
			top := setURL(srv.URL, "oai_dc", "1")
			cases := []struct{ name, url string }{
				{"SourceDescription", srv.URL + "/.well-known/resourcesync"},
				{"Home", srv.URL + "/"},
				{"StatusJSON", srv.URL + "/status.json"},
				{"Robots", srv.URL + "/robots.txt"},
				{"CapabilityListOfOneSet", leaf.CapabilityList()},
				{"ResourceListOfOneSet", leaf.ResourceList()},
				{"ResourceListOfTopSet", top.ResourceList()},
			}
			for _, c := range cases {
				b.Run(c.name, func(b *testing.B) {
					getBody(b, hc, c.url) // warm: fills the catalog's cache
					var size int
					for b.Loop() {
						code, body := getBody(b, hc, c.url)
						if code != 200 {
							b.Fatalf("GET %s: %d %.300s", c.url, code, body)
						}
						size = len(body)
					}
					b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
					b.ReportMetric(float64(size), "doc-bytes")
				})
			}
			ctx := context.Background()
			repo := s.cfg().Repositories[0]
			spec := leaves[len(leaves)/2]
			b.Run("CatalogCached", func(b *testing.B) {
				cat := source.New(s.cfg(), db)
				cat.IsPublished(ctx, repo, spec) // warm
				for b.Loop() {
					if ok, err := cat.IsPublished(ctx, repo, spec); err != nil || !ok {
						b.Fatal(ok, err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1000/float64(b.N), "µs/op")
			})
			b.Run("CatalogUncached", func(b *testing.B) {
				for b.Loop() {
					cat := source.New(s.cfg(), db)
					if ok, err := cat.IsPublished(ctx, repo, spec); err != nil || !ok {
						b.Fatal(ok, err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1000/float64(b.N), "µs/op")
			})
		})
	}
}

// TestSourceDescriptionIndex: past 50,000 Capability Lists (25,001 sets in
// two formats) the Source Description becomes a Source Description Index
// (RS-057) whose pages list every Capability List once (issue 16, finding 4:
// the Capability Lists past the limit were dropped).
func TestSourceDescriptionIndex(t *testing.T) {
	if testing.Short() {
		t.Skip("serves a 10 MB Source Description")
	}
	db, err := store.Open(store.Options{InMemory: true, ChangeListLimit: 1000, ChangeListPeriod: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	specs, _ := setTree(25001)
	buildSets(t, db, specs, nil, 0)
	_, srv := setsServer(t, db, "", "")
	seen := readSourceDescription(t, srv, 2)
	if len(seen) != 2*(25001+1) {
		t.Fatalf("the pages list %d Capability Lists, want %d", len(seen), 2*(25001+1))
	}
	for _, p := range setsPrefixes {
		if !seen[setURL(srv.URL, p, store.AllSet).CapabilityList()] {
			t.Errorf("the all-records Capability List of %s is missing", p)
		}
	}
}

// readSourceDescription reads the Source Description Index and its pages
// (wantPages of them) and returns the Capability Lists they name, failing on
// one named twice.
func readSourceDescription(t *testing.T, srv *httptest.Server, wantPages int) map[string]bool {
	t.Helper()
	code, body := getBody(t, srv.Client(), srv.URL+"/.well-known/resourcesync")
	idx, err := rsync.Parse(bytes.NewReader(body))
	if code != 200 || err != nil || !idx.Index || idx.MD.Capability != rsync.Description || len(idx.Entries) != wantPages {
		t.Fatalf("source description index: %d %v, index %v, md %+v, %d pages (want %d)", code, err, idx != nil && idx.Index, idx.MD, len(idx.Entries), wantPages)
	}
	seen := map[string]bool{}
	for _, e := range idx.Entries {
		code, body := getBody(t, srv.Client(), e.Loc)
		page, err := rsync.Parse(bytes.NewReader(body))
		if code != 200 || err != nil || page.Index || page.MD.Capability != rsync.Description || page.Link("index") != srv.URL+"/.well-known/resourcesync" {
			t.Fatalf("page %s: %d %v %+v", e.Loc, code, err, page)
		}
		for _, c := range page.Entries {
			if seen[c.Loc] {
				t.Fatalf("%s is on two pages", c.Loc)
			}
			seen[c.Loc] = true
		}
	}
	return seen
}

// TestSourceDescriptionIndexPages: the index's pages are key ranges, so a
// set published while a destination walks them lands on one page (with the
// limit lowered to 4 Capability Lists, pages of 3).
func TestSourceDescriptionIndexPages(t *testing.T) {
	db, err := store.Open(store.Options{InMemory: true, ChangeListLimit: 1000, ChangeListPeriod: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	specs, _ := setTree(9)
	buildSets(t, db, specs, nil, 0)
	s, srv := setsServer(t, db, "", "")
	s.src.LimitSourceDescription(4)
	before := readSourceDescription(t, srv, 7) // 2 formats x 10 sets = 20, pages of 3
	if len(before) != 20 {
		t.Fatalf("%d Capability Lists, want 20", len(before))
	}
	_, body := getBody(t, srv.Client(), srv.URL+"/.well-known/resourcesync")
	idx, _ := rsync.Parse(bytes.NewReader(body))
	// A set is published between the index and its pages: "a" sorts first.
	var sets []store.SetInfo
	db.View(context.Background(), func(snap *store.Snap) error { sets, err = snap.Sets(setsRepo); return err })
	if err := db.ReplaceSets(setsRepo, append(sets, store.SetInfo{Spec: "a"})); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	docs := map[string][]byte{"index": body}
	for _, e := range idx.Entries {
		_, body := getBody(t, srv.Client(), e.Loc)
		docs[e.Loc] = body
		page, err := rsync.Parse(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range page.Entries {
			seen[c.Loc]++
		}
	}
	for loc := range before {
		if seen[loc] != 1 {
			t.Errorf("%s is on %d pages of the index read before a set was published", loc, seen[loc])
		}
	}
	if len(seen) != 22 {
		t.Errorf("the pages name %d Capability Lists, want 22", len(seen))
	}
	validateDocs(t, docs)
}
