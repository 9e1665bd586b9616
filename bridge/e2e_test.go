package bridge

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/bridge/dumps"
	"github.com/rsbridge/rsbridge/bridge/harvest"
	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/store"
)

// source is an upstream, a store, a harvester and the ResourceSync server, all
// on one controllable clock.
type fixture struct {
	t       testing.TB
	up      *oaiserver.Synthetic
	clock   *oaiserver.Clock
	db      *store.DB
	cfg     *config.Config
	srv     *httptest.Server
	upSrv   *httptest.Server
	h       *harvest.Harvester
	prefix  []string
	dumpDir string
}

func newFixture(t testing.TB, o oaiserver.Options, pageLimit int, period time.Duration) *fixture {
	t.Helper()
	s := &fixture{t: t, clock: oaiserver.NewClock(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))}
	o.Now = s.clock.Now
	if len(o.Prefixes) == 0 {
		o.Prefixes = []string{"oai_dc"}
	}
	s.up = oaiserver.New(o)
	s.prefix = o.Prefixes
	s.upSrv = httptest.NewServer(s.up)
	t.Cleanup(s.upSrv.Close)
	var handler http.Handler
	var mu sync.Mutex
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		h := handler
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.srv.Close)
	y := fmt.Sprintf("base_url: %s\ndefaults:\n  delay: 0s\nresourcesync:\n  page_limit: %d\n  changelist_period: %s\nrepositories:\n  - name: demo\n    base_url: %s/oai\n    metadata_prefixes: [%s]\n",
		s.srv.URL, pageLimit, period, s.upSrv.URL, strings.Join(o.Prefixes, ", "))
	cfg, err := config.Parse(strings.NewReader(y))
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		t.Fatal(err)
	}
	s.cfg = cfg
	s.db, err = store.Open(store.Options{InMemory: true, Now: s.clock.Now, ChangeListLimit: pageLimit, ChangeListPeriod: period})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.db.Close() })
	s.h, err = harvest.New(cfg, cfg.Repositories[0], s.db, harvest.Options{Now: s.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	s.dumpDir = t.TempDir()
	mu.Lock()
	handler = mustServer(t, cfg, s.db, ServerOptions{Now: s.clock.Now, DumpDir: s.dumpDir, CacheDir: t.TempDir()}).Handler()
	mu.Unlock()
	return s
}

// dumper builds the source's dumps on its clock.
func (s *fixture) dumper() *dumps.Dumper {
	return dumps.New(source.New(s.cfg, s.db), s.db, dumps.Options{Now: s.clock.Now, Dir: s.dumpDir})
}

func (s *fixture) harvest() {
	s.t.Helper()
	if _, err := s.h.Harvest(context.Background(), harvest.HarvestOptions{}); err != nil {
		s.t.Fatal(err)
	}
}

// advance moves the shared clock; the harvester's events get times after it.
func (s *fixture) advance(d time.Duration) time.Time {
	s.clock.Set(s.clock.Now().Add(d))
	return s.clock.Now()
}

// expected is what a destination of a resource set must hold: loc -> bytes.
func (s *fixture) expected(prefix, set string) map[string][]byte {
	out := map[string][]byte{}
	for i := 0; i < s.up.Len(); i++ {
		it, ok := s.up.Item(i, prefix)
		if !ok || it.Deleted {
			continue
		}
		if set != store.AllSet && !slices.Contains(store.ExpandSets(it.Sets), set) {
			continue
		}
		out[source.ResourceURL(s.srv.URL, "demo", prefix, it.Identifier)] = it.Metadata
	}
	return out
}

// destination is a ResourceSync client that keeps a copy of every resource set
// it discovers, driven only by the documents the source serves.
type destination struct {
	t        *testing.T
	hc       *http.Client
	docs     map[string][]byte // every document fetched, for schema validation
	mirror   map[string]map[string][]byte
	since    map[string]time.Time // newest change datetime processed, per Capability List
	capLists []string
	links    map[string]int // which related links resource list entries carried
	mu       sync.Mutex
}

func linkKinds(ls []rsync.Link) string {
	var k []string
	for _, l := range ls {
		if l.Rel == "via" && (l.Modified.IsZero() || !strings.Contains(l.Href, "verb=GetRecord")) {
			k = append(k, "bad-via")
			continue
		}
		if l.Rel == "alternate" && l.Type != "application/xml" {
			k = append(k, "bad-alternate")
			continue
		}
		k = append(k, l.Rel)
	}
	return strings.Join(k, ",")
}

func newDestination(t *testing.T) *destination {
	// Like the reference client, never ask for gzip (Go's client would).
	return &destination{t: t, hc: &http.Client{Transport: &http.Transport{DisableCompression: true}}, docs: map[string][]byte{}, mirror: map[string]map[string][]byte{}, since: map[string]time.Time{}, links: map[string]int{}}
}

func (d *destination) get(u string) (*http.Response, []byte) {
	d.t.Helper()
	resp, err := d.hc.Get(u)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		d.t.Fatal(err)
	}
	return resp, b
}

func (d *destination) doc(u string) *rsync.Document {
	d.t.Helper()
	resp, b := d.get(u)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/xml" || resp.Header.Get("Content-Encoding") != "" {
		d.t.Fatalf("GET %s: %d %s %q\n%s", u, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Content-Encoding"), b)
	}
	doc, err := rsync.Parse(bytes.NewReader(b))
	if err != nil {
		d.t.Fatalf("GET %s: %v\n%s", u, err, b)
	}
	d.docs[u] = b
	if !doc.Index && len(doc.Entries) > rsync.MaxEntries || doc.Index && len(doc.Entries) > rsync.MaxEntries {
		d.t.Errorf("%s: %d entries", u, len(doc.Entries))
	}
	return doc
}

// fetch dereferences a resource and checks it against what the list said.
func (d *destination) fetch(loc string, md *rsync.MD) []byte {
	d.t.Helper()
	resp, b := d.get(loc)
	if resp.StatusCode != 200 {
		d.t.Fatalf("GET %s: %d %s", loc, resp.StatusCode, b)
	}
	sh := sha256.Sum256(b)
	mh := md5.Sum(b)
	if rsync.HashValue(md.Hash, "sha-256") != hex.EncodeToString(sh[:]) || rsync.HashValue(md.Hash, "md5") != hex.EncodeToString(mh[:]) ||
		md.Length != int64(len(b)) || resp.Header.Get("Content-Length") != fmt.Sprint(len(b)) || resp.Header.Get("ETag") != `"`+hex.EncodeToString(sh[:])+`"` {
		d.t.Fatalf("%s: served %d bytes sha-256 %x, list says %q length %d", loc, len(b), sh, md.Hash, md.Length)
	}
	return b
}

// discover reads the Source Description and every Capability List.
func (d *destination) discover(base string) map[string]*rsync.Document {
	sd := d.doc(base + "/.well-known/resourcesync")
	if sd.MD.Capability != rsync.Description || sd.Link("describedby") == "" || len(sd.Entries) == 0 {
		d.t.Fatalf("source description %+v", sd)
	}
	caps := map[string]*rsync.Document{}
	for _, e := range sd.Entries {
		if e.MD == nil || e.MD.Capability != rsync.CapabilityList || len(e.Links) == 0 || e.Links[0].Rel != "describedby" {
			d.t.Fatalf("SD entry %+v", e)
		}
		cl := d.doc(e.Loc)
		if cl.MD.Capability != rsync.CapabilityList || cl.Link("up") != base+"/.well-known/resourcesync" || cl.Link("describedby") != e.Links[0].Href {
			d.t.Fatalf("capability list %s: %+v", e.Loc, cl)
		}
		if resp, _ := d.get(cl.Link("describedby")); resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			d.t.Fatalf("describedby %s: %d", cl.Link("describedby"), resp.StatusCode)
		}
		caps[e.Loc] = cl
	}
	return caps
}

func capability(cl *rsync.Document, c string) string {
	for _, e := range cl.Entries {
		if e.MD != nil && e.MD.Capability == c {
			return e.Loc
		}
	}
	return ""
}

// baseline copies every resource set from its Resource List (or Index), then
// notes how far the Change Lists already go, so later syncs start after it.
func (d *destination) baseline(base string) {
	caps := d.discover(base)
	for capURL, cl := range caps {
		mirror := map[string][]byte{}
		rlURL := capability(cl, rsync.ResourceList)
		rl := d.doc(rlURL)
		parts := []*rsync.Document{rl}
		if rl.Index {
			if rl.MD.At.IsZero() || rl.Link("up") != capURL {
				d.t.Fatalf("resource list index %s: %+v", rlURL, rl)
			}
			for _, e := range rl.Entries {
				p := d.doc(e.Loc)
				if p.Index || p.Link("index") != rlURL || p.Link("up") != capURL {
					d.t.Fatalf("resource list page %s: %+v", e.Loc, p)
				}
				parts = append(parts, p)
			}
			parts = parts[1:]
		}
		for _, p := range parts {
			if p.MD.Capability != rsync.ResourceList || p.MD.At.IsZero() {
				d.t.Fatalf("resource list %+v", p.MD)
			}
			for _, e := range p.Entries {
				if _, dup := mirror[e.Loc]; dup {
					d.t.Fatalf("%s listed twice", e.Loc)
				}
				if e.LastMod.IsZero() || e.MD == nil || e.MD.Type != "application/xml" {
					d.t.Fatalf("entry %+v", e)
				}
				d.links[linkKinds(e.Links)]++
				mirror[e.Loc] = d.fetch(e.Loc, e.MD)
			}
		}
		d.mirror[capURL] = mirror
		// Changes up to now are in the baseline.
		d.changes(capURL, cl, func(*rsync.Entry) {})
	}
}

// changes walks a set's Change List Index in URL order (which must be time
// order) and hands over every entry newer than the last one processed.
func (d *destination) changes(capURL string, cl *rsync.Document, apply func(*rsync.Entry)) {
	cliURL := capability(cl, rsync.ChangeList)
	cli := d.doc(cliURL)
	if !cli.Index || cli.MD.Capability != rsync.ChangeList || cli.MD.From.IsZero() || cli.Link("up") != capURL {
		d.t.Fatalf("change list index %s: %+v", cliURL, cli)
	}
	locs := make([]string, len(cli.Entries))
	for i, e := range cli.Entries {
		locs[i] = e.Loc
	}
	if !sort.StringsAreSorted(locs) {
		d.t.Fatalf("change list URLs do not sort in time order: %v", locs)
	}
	var prevUntil time.Time
	for i, e := range cli.Entries {
		open := i == len(cli.Entries)-1
		if e.MD == nil || e.MD.From.IsZero() || (e.MD.Until.IsZero() != open) {
			d.t.Fatalf("index entry %d of %d: %+v (only the last may be open)", i, len(cli.Entries), e.MD)
		}
		if i > 0 && !e.MD.From.Equal(prevUntil) {
			d.t.Fatalf("change lists not contiguous: from %v after until %v", e.MD.From, prevUntil)
		}
		prevUntil = e.MD.Until
		l := d.doc(e.Loc)
		if l.Index || l.MD.Capability != rsync.ChangeList || !l.MD.From.Equal(e.MD.From) || !l.MD.Until.Equal(e.MD.Until) || l.Link("index") != cliURL || l.Link("up") != capURL {
			d.t.Fatalf("change list %s: %+v %+v", e.Loc, l.MD, l.Links)
		}
		var prev time.Time
		for _, c := range l.Entries {
			dt := c.MD.DateTime
			if dt.Before(l.MD.From) || (!l.MD.Until.IsZero() && dt.After(l.MD.Until)) || !dt.After(prev) {
				d.t.Fatalf("%s: datetime %v outside [%v, %v] or not after %v", e.Loc, dt, l.MD.From, l.MD.Until, prev)
			}
			prev = dt
			if len(c.Links) == 0 || c.Links[0].Rel != "via" || c.Links[0].Modified.IsZero() {
				d.t.Fatalf("change entry without via link: %+v", c)
			}
			if dt.After(d.since[capURL]) {
				apply(&c)
				d.since[capURL] = dt
			}
		}
	}
}

// sync applies all new changes of every set, fetching created and updated
// resources and dropping deleted ones (which must answer 410).
func (d *destination) sync(base string) {
	for capURL, cl := range d.discover(base) {
		mirror := d.mirror[capURL]
		if mirror == nil {
			mirror = map[string][]byte{}
			d.mirror[capURL] = mirror
		}
		d.changes(capURL, cl, func(e *rsync.Entry) {
			switch e.MD.Change {
			case "created", "updated":
				mirror[e.Loc] = d.fetch(e.Loc, e.MD)
			case "deleted":
				delete(mirror, e.Loc)
				if e.MD.Hash != "" || e.MD.HasLength {
					d.t.Errorf("deleted entry with hash or length: %+v", e.MD)
				}
			default:
				d.t.Fatalf("change %q", e.MD.Change)
			}
		})
	}
}

// validate runs the XSDs over every document fetched.
func (d *destination) validate() {
	d.t.Helper()
	validateDocs(d.t, d.docs)
	d.docs = map[string][]byte{}
}

// validateXSD runs the XSDs over one document.
func validateXSD(t *testing.T, name string, doc []byte) {
	t.Helper()
	validateDocs(t, map[string][]byte{name: doc})
}

// validateDocs runs the XSDs (../shared/xsd/validate.sh) over documents. The
// sitemaps.org schema demands at least one <url> in a <urlset>, while
// ResourceSync allows empty lists (an empty Change List, an empty
// notification): such a document is validated with one placeholder <url>
// added, so everything else in it is checked, and the test says how many
// there were.
func validateDocs(t *testing.T, docs map[string][]byte) {
	t.Helper()
	script, _ := filepath.Abs("../../shared/xsd/validate.sh")
	skip := func(why string) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s: CI must validate against the XSDs", why)
		}
		t.Log(why + ": schema validation skipped")
	}
	if _, err := exec.LookPath("xmllint"); err != nil {
		skip("xmllint missing (install libxml2-utils)")
		return
	}
	if _, err := os.Stat(script); err != nil {
		skip("../shared/xsd missing")
		return
	}
	dir := t.TempDir()
	var files []string
	empty := 0
	for _, b := range docs {
		if bytes.Contains(b, []byte("<urlset")) && !bytes.Contains(b, []byte("<url>")) {
			// Valid ResourceSync, rejected by the sitemap XSD (minOccurs 1).
			empty++
			b = bytes.Replace(b, []byte("</urlset>"), []byte("<url><loc>http://placeholder.test/empty-list</loc></url></urlset>"), 1)
		}
		f := filepath.Join(dir, fmt.Sprintf("doc%04d.xml", len(files)+1))
		os.WriteFile(f, b, 0o644)
		files = append(files, f)
	}
	t.Logf("validating %d documents against the XSDs (%d empty <urlset>s, legal in ResourceSync, with a placeholder <url> for the sitemap XSD)", len(files), empty)
	for start := 0; start < len(files); start += 200 {
		out, err := exec.Command(script, files[start:min(start+200, len(files))]...).CombinedOutput()
		if err != nil {
			t.Fatalf("schema validation: %v\n%s", err, out)
		}
	}
}

// check compares every mirrored set with the upstream.
func (d *destination) check(s *fixture) {
	d.t.Helper()
	total := 0
	defer func() {
		d.t.Logf("destination matches upstream: %d resources in %d resource sets", total, len(d.mirror))
	}()
	for _, rs := range mustSets(s) {
		got := d.mirror[rs.CapabilityList()]
		want := s.expected(rs.Prefix, rs.Spec)
		total += len(want)
		if len(got) != len(want) {
			d.t.Errorf("%s: destination holds %d resources, upstream %d", rs.CapabilityList(), len(got), len(want))
		}
		for loc, b := range want {
			if !bytes.Equal(got[loc], b) {
				d.t.Errorf("%s: %s differs or is missing", rs.CapabilityList(), loc)
			}
		}
	}
}

func mustSets(s *fixture) []source.Set {
	sets, err := source.New(s.cfg, s.db).Sets(context.Background())
	if err != nil {
		s.t.Fatal(err)
	}
	return sets
}

// TestEndToEndSync: baseline from Resource Lists (an index with a small page
// limit), then incremental syncs driven only by Change Lists reproduce the
// upstream exactly for every set and for all records, across creates, updates,
// deletes, restores, set moves and datestamp bumps, including the rollover of
// Change Lists from open to closed by size and by period.
func TestEndToEndSync(t *testing.T) {
	s := newFixture(t, oaiserver.Options{Records: 60, PageSize: 25, SetCount: 3, DeletedEvery: 9, Prefixes: []string{"oai_dc", "jpcoar_2.0"}}, 7, time.Hour)
	s.harvest()
	dest := newDestination(t)
	dest.baseline(s.srv.URL)
	dest.check(s)
	dest.validate()
	// Every entry carries via, alternate (both formats are live), describes
	// (both formats name the landing page) and collection (its Resource Map).
	if len(dest.links) != 1 || dest.links["via,alternate,describes,collection"] == 0 {
		t.Errorf("related links on resource list entries: %v", dest.links)
	}

	step := func(mutate func(at time.Time)) {
		at := s.advance(time.Minute)
		mutate(at)
		s.advance(time.Minute)
		s.harvest()
		dest.sync(s.srv.URL)
		dest.check(s)
	}
	step(func(at time.Time) {
		for i := 0; i < 12; i++ { // more changes than one list holds
			s.up.Update(i, at)
		}
		s.up.Add(at)
		s.up.Delete(20, at)
		s.up.Touch(21, at)                             // datestamp bump: no event
		s.up.SetSets(22, []string{"s2"}, at, true)     // set move
		s.up.SetSets(23, []string{"s0:sub"}, at, true) // into a child set (and its parent)
	})
	closedURL, closedBody := firstClosedList(t, dest, s)
	s.advance(2 * time.Hour) // the open list's period ends: it closes
	step(func(at time.Time) {
		s.up.Restore(20, at)
		s.up.Delete(24, at)
		s.up.Update(25, at)
	})
	// A closed list never changes.
	if _, b := dest.get(closedURL); !bytes.Equal(b, closedBody) {
		t.Errorf("closed change list %s changed", closedURL)
	}
	dest.validate()
}

// firstClosedList returns a closed Change List of the all-records set of oai_dc.
func firstClosedList(t *testing.T, d *destination, s *fixture) (string, []byte) {
	cli := d.doc(s.srv.URL + "/demo/oai_dc/all/changelist.xml")
	for _, e := range cli.Entries {
		if !e.MD.Until.IsZero() {
			_, b := d.get(e.Loc)
			return e.Loc, b
		}
	}
	t.Fatalf("no closed change list after more changes than the page limit: %+v", cli.Entries)
	return "", nil
}

// mustServer is NewServer for tests.
func mustServer(t testing.TB, cfg *config.Config, db *store.DB, o ServerOptions) *Server {
	t.Helper()
	s, err := NewServer(cfg, db, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
