package export

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/bridge/export/objstore"
	"github.com/rsbridge/rsbridge/bridge/export/objstore/objstoretest"
	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/rsync"
)

// head GETs a URL and returns its status, Content-Type and Cache-Control.
func head(t *testing.T, u string) (int, string, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control")
}

// TestExportBehindNginx: Debian's nginx serves the exported directory with
// the settings NginxServer gives; a destination (rsbridge mirror) takes its
// baseline from it and follows 200 changes, with deletions, set moves and
// identifiers with slashes.
func TestExportBehindNginx(t *testing.T) {
	root := t.TempDir()
	base := objstoretest.Nginx(t, root, NginxServer)
	f := newFixture(t, base, oaiserver.Options{Records: 600, PageSize: 100, SetCount: 3, Prefixes: []string{"oai_dc", "jpcoar_2.0"}}, "")
	f.dump()
	st, err := objstore.OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	e := f.exporter(st, Options{})
	f.export(e)
	copyDir, stateDir := t.TempDir(), t.TempDir()
	f.mirrorFrom(t, base, copyDir, stateDir)

	id := f.up.Identifier(1)
	for _, c := range []struct{ url, typ, cache string }{
		{source.ResourceURL(base, "demo", "oai_dc", id), "application/xml", "public, max-age=60"},
		{source.MapURL(base, "demo", id), "application/atom+xml", "public, max-age=60"},
		{base + "/.well-known/resourcesync", "application/xml", "public, max-age=60"},
		{f.src.All(f.cfg.Repositories[0], "oai_dc").About(), "text/html", "public, max-age=60"},
	} {
		code, typ, cache := head(t, c.url)
		if code != 200 || !strings.HasPrefix(typ, c.typ) || cache != c.cache {
			t.Errorf("GET %s: %d, Content-Type %q, Cache-Control %q; want 200, %q, %q", c.url, code, typ, cache, c.typ, c.cache)
		}
	}
	if code, _, _ := head(t, base+"/.rsbridge-tmp/.lock"); code != http.StatusNotFound {
		t.Errorf("nginx serves the export's staging directory: %d", code)
	}
	f.churn(200, rand.New(rand.NewPCG(3, 4)))
	f.export(e)
	f.mirrorFrom(t, base, copyDir, stateDir)
}

// TestExportToVersity: an S3-compatible server (versitygw) holds the
// export; a destination reads the bucket anonymously over HTTP, path-style.
// An incremental export after changes writes only what changed: the PUTs
// the server saw are what the report counts, far fewer than the first.
//
// -export.records and -export.changes size it (the figures in the note of
// issue 19: 100,000 and 1,000).
func TestExportToVersity(t *testing.T) {
	vgw := objstoretest.Versity(t)
	vgw.MakeBucket(t, "rsb")
	proxy := vgw.Proxy(t)
	base := vgw.Endpoint + "/rsb/pub"
	f := newFixture(t, base, oaiserver.Options{Records: *versityRecords, PageSize: 500, SetCount: 2}, "")
	f.dump()
	cfg := vgw.Config("rsb", "pub")
	cfg.Endpoint = proxy.URL // writes go through the counting proxy
	st, err := objstore.OpenS3(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e := f.exporter(st, Options{})
	proxy.Reset()
	began := time.Now()
	first := f.export(e)
	firstTook := time.Since(began)
	if got := proxy.Count(http.MethodPut); int64(got) < first.Objects {
		t.Errorf("first export: the server saw %d PUTs, the report says %d objects", got, first.Objects)
	}
	copyDir, stateDir := t.TempDir(), t.TempDir()
	f.mirrorFrom(t, base, copyDir, stateDir)
	code, typ, cache := head(t, f.src.All(f.cfg.Repositories[0], "oai_dc").CapabilityList())
	if code != 200 || typ != "application/xml" || cache != "public, max-age=60" {
		t.Errorf("Capability List from the bucket: %d %q %q", code, typ, cache)
	}

	f.churn(*versityChanges, rand.New(rand.NewPCG(5, 6)))
	proxy.Reset()
	began = time.Now()
	inc := f.export(e)
	incTook := time.Since(began)
	puts := proxy.Count(http.MethodPut)
	t.Logf("first export %d objects in %v; after %d upstream changes (%d change events) %d PUTs in %v (%d unchanged documents skipped, %d removed)",
		first.Objects, firstTook.Round(time.Millisecond), *versityChanges, inc.Changes, puts, incTook.Round(time.Millisecond), inc.Skipped, inc.Deleted)
	if int64(puts) != inc.Objects || puts == 0 || puts > int(first.Objects)/4 {
		t.Errorf("incremental export: %d PUTs, report %d objects, first export %d", puts, inc.Objects, first.Objects)
	}
	f.mirrorFrom(t, base, copyDir, stateDir)
	// A closed Change List is immutable: close the hour, export, look.
	f.clk.Add(2 * time.Hour)
	f.export(e)
	resp, err := http.Get(f.src.All(f.cfg.Repositories[0], "oai_dc").ChangeListIndex())
	if err != nil {
		t.Fatal(err)
	}
	index, err := rsync.Parse(resp.Body)
	resp.Body.Close()
	if err != nil || len(index.Entries) == 0 {
		t.Fatalf("Change List Index: %v, %d lists", err, len(index.Entries))
	}
	if code, _, cache := head(t, index.Entries[0].Loc); code != 200 || cache != immutable {
		t.Errorf("closed Change List %s: %d, Cache-Control %q", index.Entries[0].Loc, code, cache)
	}
}

var (
	versityRecords = flag.Int("export.records", 500, "records of the source in TestExportToVersity")
	versityChanges = flag.Int("export.changes", 50, "upstream changes before TestExportToVersity's incremental export")
)

// TestTwoInstancesOneSource: two rsbridge stores with different
// repositories export to one bucket at once; the Source Description lists
// the Capability Lists of both.
func TestTwoInstancesOneSource(t *testing.T) {
	vgw := objstoretest.Versity(t)
	vgw.MakeBucket(t, "shared")
	base := vgw.Endpoint + "/shared"
	a := newFixture(t, base, oaiserver.Options{Records: 120, PageSize: 50, SetCount: -1}, "", "alpha")
	b := newFixture(t, base, oaiserver.Options{Records: 80, PageSize: 50, SetCount: 2}, "", "beta")
	var exps []*Exporter
	for i, f := range []*fixture{a, b} {
		st, err := objstore.OpenS3(context.Background(), vgw.Config("shared", ""))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		exps = append(exps, f.exporter(st, Options{Instance: fmt.Sprintf("i%d", i)}))
	}
	for range 3 { // concurrent runs race on the Source Description
		var wg sync.WaitGroup
		for i, e := range exps {
			wg.Go(func() {
				if _, err := e.Run(context.Background()); err != nil {
					t.Errorf("instance %d: %v", i, err)
				}
			})
		}
		wg.Wait()
	}
	resp, err := http.Get(base + "/.well-known/resourcesync")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := rsync.Parse(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range []*fixture{a, b} {
		sets, err := f.src.SortedSets(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, rs := range sets {
			want = append(want, rs.CapabilityList())
		}
	}
	var got []string
	for _, e := range doc.Entries {
		got = append(got, e.Loc)
	}
	if fmt.Sprint(got) != fmt.Sprint(slices.Sorted(slices.Values(want))) {
		t.Errorf("Source Description lists\n%q\nwant\n%q", got, slices.Sorted(slices.Values(want)))
	}
}
