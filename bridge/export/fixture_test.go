package export

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/bridge/dumps"
	"github.com/rsbridge/rsbridge/bridge/export/objstore"
	"github.com/rsbridge/rsbridge/bridge/harvest"
	"github.com/rsbridge/rsbridge/bridge/mirror"
	"github.com/rsbridge/rsbridge/bridge/mirror/mirrortest"
	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/store"
)

// fixture is an rsbridge store harvested from a synthetic repository,
// published at base by an export (no rsbridge server: a static server or
// the bucket answers).
type fixture struct {
	t     testing.TB
	clk   *oaiserver.Clock
	up    *oaiserver.Synthetic
	cfg   *config.Config
	db    *store.DB
	src   *source.Source
	hs    []*harvest.Harvester
	dumps string
	base  string
	yaml  string // the configuration
}

// newFixture harvests the synthetic repositories of o (one per name) into
// a store whose base_url is base; extra is more configuration at the top
// level, or, indented by two spaces, in the resourcesync block.
func newFixture(t testing.TB, base string, o oaiserver.Options, extra string, repos ...string) *fixture {
	return newFixtureAt(t, "", base, o, extra, repos...)
}

// newFixtureAt is newFixture with the store in dir ("" = in memory).
func newFixtureAt(t testing.TB, dir, base string, o oaiserver.Options, extra string, repos ...string) *fixture {
	t.Helper()
	if len(repos) == 0 {
		repos = []string{"demo"}
	}
	f := &fixture{t: t, clk: oaiserver.NewClock(time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)), dumps: t.TempDir(), base: base}
	o.Now = f.clk.Now
	f.up = oaiserver.New(o)
	up := httptest.NewServer(f.up)
	t.Cleanup(up.Close)
	var yaml strings.Builder
	rsExtra := ""
	if strings.HasPrefix(extra, "  ") { // keys of the resourcesync block
		rsExtra, extra = extra, ""
	}
	fmt.Fprintf(&yaml, "base_url: %s\ndefaults:\n  delay: 0s\nresourcesync:\n  changelist_period: 1h\n  dump_sets: all-records\n%s%srepositories:\n", base, rsExtra, extra)
	for _, name := range repos {
		fmt.Fprintf(&yaml, "  - name: %s\n    base_url: %s/oai\n", name, up.URL)
		if len(o.Prefixes) > 0 {
			fmt.Fprintf(&yaml, "    metadata_prefixes: [%s]\n", strings.Join(o.Prefixes, ", "))
		}
	}
	cfg, err := config.ParseAndValidate(strings.NewReader(yaml.String()))
	if err != nil {
		t.Fatal(err)
	}
	f.cfg, f.yaml = cfg, yaml.String()
	if f.db, err = store.Open(store.Options{InMemory: dir == "", Dir: dir, Now: f.clk.Now, ChangeListLimit: 50000, ChangeListPeriod: time.Hour}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.db.Close() })
	f.src = source.New(cfg, f.db)
	f.rebindHarvesters()
	f.harvest()
	return f
}

// rebindHarvesters makes the harvesters write to f.db (after a reopen).
func (f *fixture) rebindHarvesters() {
	f.t.Helper()
	f.hs = nil
	for _, repo := range f.cfg.Repositories {
		h, err := harvest.New(f.cfg, repo, f.db, harvest.Options{Now: f.clk.Now})
		if err != nil {
			f.t.Fatal(err)
		}
		f.hs = append(f.hs, h)
	}
}

func (f *fixture) harvest() {
	f.t.Helper()
	for _, h := range f.hs {
		if _, err := h.Harvest(context.Background(), harvest.HarvestOptions{}); err != nil {
			f.t.Fatal(err)
		}
	}
}

// dump builds the Resource Dump of every all-records set.
func (f *fixture) dump() {
	f.t.Helper()
	d := dumps.New(f.src, f.db, dumps.Options{Dir: f.dumps, Now: f.clk.Now})
	for _, repo := range f.cfg.Repositories {
		for _, p := range repo.MetadataPrefixes {
			if err := d.BuildResourceDump(context.Background(), f.src.All(repo, p)); err != nil {
				f.t.Fatal(err)
			}
		}
	}
}

func (f *fixture) exporter(st objstore.Store, o Options) *Exporter {
	o.DumpDir = f.dumps
	o.Now = f.clk.Now
	o.TempDir = f.t.TempDir()
	return New(f.src, f.db, st, o)
}

func (f *fixture) export(e *Exporter) *Report {
	f.t.Helper()
	rep, err := e.Run(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
	return rep
}

// churn makes n random upstream changes (updates, deletions, additions,
// set moves) and harvests them.
func (f *fixture) churn(n int, rng *rand.Rand) {
	f.t.Helper()
	for range n {
		at := f.clk.Add(time.Second)
		i := rng.IntN(f.up.Len())
		switch rng.IntN(10) {
		case 0, 1:
			f.up.Delete(i, at)
		case 2:
			f.up.Add(at)
		case 3:
			f.up.SetSets(i, []string{fmt.Sprintf("set%d", rng.IntN(3))}, at, true)
		default:
			f.up.Update(i, at)
		}
	}
	f.clk.Add(time.Second)
	f.harvest()
}

// mirrorFrom takes (or updates) a copy of the exported source with
// rsbridge mirror, reading base over HTTP, and checks it holds every live
// record of the store with its bytes, and nothing else.
func (f *fixture) mirrorFrom(t *testing.T, base, copyDir, stateDir string) {
	t.Helper()
	m, err := mirror.New(stateDir, mirror.Options{Dir: copyDir, Delete: true, Force: true, Now: f.clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Run(context.Background(), base+"/.well-known/resourcesync"); err != nil {
		t.Fatal(err)
	}
	for _, d := range f.differences(copyDir) {
		t.Error(d)
	}
}

// differences lists how a mirror's copy differs from the store's live
// records of every repository and format (the first ten).
func (f *fixture) differences(dir string) []string {
	f.t.Helper()
	var formats []mirrortest.Format
	for _, repo := range f.cfg.Repositories {
		for _, p := range repo.MetadataPrefixes {
			formats = append(formats, mirrortest.Format{Repo: repo.Name, Prefix: p})
		}
	}
	url := func(repo, prefix, id string) string { return source.ResourceURL(f.src.Base(), repo, prefix, id) }
	out := mirrortest.Differences(f.t, f.db, formats, dir, url, mirror.Path)
	if len(out) > 10 {
		out = append(out[:10], fmt.Sprintf("and %d more differences", len(out)-10))
	}
	return out
}

// fileServer is a plain static server over a directory (Go's), for tests
// that do not need nginx; it binds 127.0.0.1 and its URL is known before
// the store is configured.
func fileServer(t testing.TB, root string) string {
	srv := httptest.NewServer(http.FileServer(http.Dir(root)))
	t.Cleanup(srv.Close)
	return srv.URL
}

// dirFixture is a fixture whose export goes to a directory that a Go
// static server serves at its base URL: the fixture, the directory target
// and its root.
func dirFixture(t testing.TB, o oaiserver.Options, extra string) (*fixture, *objstore.Dir, string) {
	t.Helper()
	root := t.TempDir()
	f := newFixture(t, fileServer(t, root), o, extra)
	st, err := objstore.OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	return f, st, root
}
