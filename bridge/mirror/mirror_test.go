package mirror

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/bridge"
	"github.com/rsbridge/rsbridge/bridge/dumps"
	"github.com/rsbridge/rsbridge/bridge/harvest"
	"github.com/rsbridge/rsbridge/bridge/mirror/mirrortest"
	"github.com/rsbridge/rsbridge/bridge/notify"
	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/bridge/websub"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/store"
)

// rsbridgeSource is a running rsbridge over a synthetic repository: the
// source a mirror follows in these tests.
type rsbridgeSource struct {
	t        testing.TB
	clk      *oaiserver.Clock
	up       *oaiserver.Synthetic
	cfg      *config.Config
	db       *store.DB
	src      *source.Source
	h        *harvest.Harvester
	srv      *httptest.Server
	dumps    string
	notifier *notify.Notifier
	gets     sync.Map // resource path → *atomic.Int64: its GETs
}

func newRsbridge(t testing.TB, records int) *rsbridgeSource {
	return newRsbridgeWith(t, oaiserver.Options{Records: records, PageSize: 50, SetCount: -1}, "")
}

// newRsbridgeSets is newRsbridge with OAI sets (-1: none), each published
// as a resource set beside all records.
func newRsbridgeSets(t testing.TB, records, sets int) *rsbridgeSource {
	return newRsbridgeWith(t, oaiserver.Options{Records: records, PageSize: 50, SetCount: sets}, "")
}

// newRsbridgeWith serves the synthetic repository o describes, with the
// store in storeDir ("" = in memory).
func newRsbridgeWith(t testing.TB, o oaiserver.Options, storeDir string) *rsbridgeSource {
	return newRsbridgeFull(t, o, storeDir, "")
}

// newRsbridgeFull is newRsbridgeWith with more configuration (YAML, at the
// top level).
func newRsbridgeFull(t testing.TB, o oaiserver.Options, storeDir, extra string) *rsbridgeSource {
	t.Helper()
	s := &rsbridgeSource{t: t, clk: oaiserver.NewClock(time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)), dumps: t.TempDir()}
	o.Now = s.clk.Now
	s.up = oaiserver.New(o)
	upSrv := httptest.NewServer(s.up)
	t.Cleanup(upSrv.Close)
	s.srv = httptest.NewUnstartedServer(nil)
	cfg, err := config.ParseAndValidate(strings.NewReader(fmt.Sprintf(
		"base_url: http://%s\ndefaults:\n  delay: 0s\nresourcesync:\n  changelist_period: 1h\n  dump_sets: all-records\n%srepositories:\n  - name: demo\n    base_url: %s/oai\n",
		s.srv.Listener.Addr(), extra, upSrv.URL)))
	if err != nil {
		t.Fatal(err)
	}
	s.cfg = cfg
	if s.db, err = store.Open(store.Options{InMemory: storeDir == "", Dir: storeDir, Now: s.clk.Now, ChangeListLimit: 50000, ChangeListPeriod: time.Hour}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.db.Close() })
	s.src = source.New(cfg, s.db)
	var obs harvest.Observer
	if cfg.Notification.On() {
		// Notifications: the notifier wakes on every commit with changes
		// and publishes through the embedded hub (or notification.hub_url).
		if s.notifier, err = notify.New(s.src, s.db, notify.Options{Now: s.clk.Now,
			HubOptions: func(o *websub.Options) { o.AllowPrivateCallbacks = true }}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { s.notifier.Run(ctx) })
		t.Cleanup(func() { cancel(); wg.Wait() })
		obs = harvest.OnChange(s.notifier)
	}
	if s.h, err = harvest.New(cfg, cfg.Repositories[0], s.db, harvest.Options{Now: s.clk.Now, Observer: obs}); err != nil {
		t.Fatal(err)
	}
	server, err := bridge.NewServer(cfg, s.db, bridge.ServerOptions{Source: s.src, DumpDir: s.dumps, Now: s.clk.Now, Notifier: s.notifier})
	if err != nil {
		t.Fatal(err)
	}
	h := server.Handler()
	s.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/resource/") {
			n, _ := s.gets.LoadOrStore(r.URL.Path, new(atomic.Int64))
			n.(*atomic.Int64).Add(1)
		}
		h.ServeHTTP(w, r)
	})
	s.srv.Start()
	t.Cleanup(s.srv.Close)
	s.harvest()
	return s
}

func (s *rsbridgeSource) harvest() {
	s.t.Helper()
	if _, err := s.h.Harvest(context.Background(), harvest.HarvestOptions{}); err != nil {
		s.t.Fatal(err)
	}
}

func (s *rsbridgeSource) dump() {
	s.t.Helper()
	d := dumps.New(s.src, s.db, dumps.Options{Dir: s.dumps, Now: s.clk.Now})
	if err := d.BuildResourceDump(context.Background(), s.src.All(s.cfg.Repositories[0], "oai_dc")); err != nil {
		s.t.Fatal(err)
	}
}

// openMirror opens a mirror of s (into o.Dir, or a new directory) that
// closes with the test.
func openMirror(t *testing.T, s *rsbridgeSource, o Options) (*Mirror, string) {
	t.Helper()
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	o.Now = s.clk.Now
	m, err := New(t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, o.Dir
}

// mustRun runs the mirror once over s.
func mustRun(t *testing.T, m *Mirror, s *rsbridgeSource) {
	t.Helper()
	if err := m.Run(context.Background(), s.srv.URL); err != nil {
		t.Fatal(err)
	}
}

// resourceURL is where the source serves a record of the synthetic
// repository.
func (s *rsbridgeSource) resourceURL(id string) string {
	return source.ResourceURL(s.src.Base(), "demo", "oai_dc", id)
}

// getsOf is how many GETs the source answered for one resource path.
func (s *rsbridgeSource) getsOf(path string) int64 {
	if v, ok := s.gets.Load(path); ok {
		return v.(*atomic.Int64).Load()
	}
	return 0
}

// resourceGETs is how many resource GETs the source answered.
func (s *rsbridgeSource) resourceGETs() (total int64, most int64) {
	s.gets.Range(func(_, v any) bool {
		n := v.(*atomic.Int64).Load()
		total += n
		most = max(most, n)
		return true
	})
	return total, most
}

// checkCopy compares the copy with the source's live records: same files,
// same bytes, nothing else.
func (s *rsbridgeSource) checkCopy(dir string) {
	s.t.Helper()
	for _, d := range s.differences(dir) {
		s.t.Error(d)
	}
}

// url is where the source publishes a record.
func (s *rsbridgeSource) url(repo, prefix, id string) string {
	return source.ResourceURL(s.src.Base(), repo, prefix, id)
}

// differences lists how the copy differs from the source's live records.
func (s *rsbridgeSource) differences(dir string) []string {
	s.t.Helper()
	return mirrortest.Differences(s.t, s.db, []mirrortest.Format{{Repo: "demo", Prefix: "oai_dc"}}, dir, s.url, Path)
}

// TestMirrorFollowsRsbridge: a baseline from the Resource Dump (no
// resource GETs), then changes from the Change Lists with deletions; a run
// with nothing new fetches nothing; the change log holds one line per
// change.
func TestMirrorFollowsRsbridge(t *testing.T) {
	s := newRsbridge(t, 120)
	s.dump()
	logPath := filepath.Join(t.TempDir(), "changes.jsonl")
	m, dir := openMirror(t, s, Options{Log: logPath, Delete: true})
	mustRun(t, m, s)
	s.checkCopy(dir)
	if c := m.Counts(); c.FromDump != 120 || c.Fetched != 0 || c.Created != 120 {
		t.Errorf("baseline: %+v; want all 120 from the dump", c)
	}
	if n, _ := s.resourceGETs(); n != 0 {
		t.Errorf("baseline from the dump made %d resource GETs", n)
	}

	// Changes upstream: 5 new, 10 updated, 7 deleted.
	at := s.clk.Add(time.Minute)
	for range 5 {
		s.up.Add(at)
	}
	for i := range 10 {
		s.up.Update(i, at)
	}
	for i := 20; i < 27; i++ {
		s.up.Delete(i, at)
	}
	s.clk.Add(time.Minute)
	s.harvest()
	mustRun(t, m, s)
	s.checkCopy(dir)
	c := m.Counts()
	if c.Created != 125 || c.Updated != 10 || c.Deleted != 7 {
		t.Errorf("after the changes: %+v; want 5 more created, 10 updated, 7 deleted", c)
	}
	if n, most := s.resourceGETs(); n != 15 || most != 1 {
		t.Errorf("catching up made %d resource GETs (at most %d of one), want 15, one each", n, most)
	}
	// Nothing new: nothing fetched, nothing logged.
	before, _ := s.resourceGETs()
	mustRun(t, m, s)
	if n, _ := s.resourceGETs(); n != before {
		t.Errorf("a run with nothing new made %d resource GETs", n-before)
	}
	logged, _ := os.ReadFile(logPath)
	if lines := bytes.Count(logged, []byte("\n")); lines != 120+15+7 {
		t.Errorf("change log: %d lines, want %d", lines, 120+15+7)
	}
}

// TestMirrorSharesAcrossSets: with OAI sets, every record is in the
// all-records set and in its OAI sets; the copy holds one file per
// resource, fetched or unpacked once, and a deletion removes it once every
// set has deleted it.
func TestMirrorSharesAcrossSets(t *testing.T) {
	s := newRsbridgeSets(t, 60, 3)
	m, dir := openMirror(t, s, Options{Delete: true})
	mustRun(t, m, s)
	s.checkCopy(dir)
	c := m.Counts()
	if c.Sets < 2 || c.Shared == 0 || c.Fetched+c.FromDump != 60 {
		t.Errorf("baseline over %d sets: %+v; want each of the 60 records taken once, the other sets sharing it", c.Sets, c)
	}
	at := s.clk.Add(time.Minute)
	for i := range 6 {
		s.up.Delete(i, at)
	}
	s.clk.Add(time.Minute)
	s.harvest()
	mustRun(t, m, s)
	s.checkCopy(dir)
	if n, _ := s.resourceGETs(); n != 60 {
		t.Errorf("%d resource GETs in all, want 60 (one per record, none after the deletions)", n)
	}
}

// TestMirrorResumesWhereItStopped: runs cut short at several points (a
// cancel, as a kill would stop them, in the baseline by GET and in the
// changes) leave a copy the next run completes, and no resource the state
// committed before a cut is fetched again unless the source changed it.
func TestMirrorResumesWhereItStopped(t *testing.T) {
	s := newRsbridge(t, 300)
	dir, state := t.TempDir(), t.TempDir()
	ctx := context.Background()
	committedAt := map[string]int64{} // resource path → its GETs when the state first held it
	changed := map[string]bool{}
	cuts := 0
	for cut := 1; ; cut++ {
		runCtx, cancel := context.WithCancel(ctx)
		m, err := New(state, Options{Dir: dir, Delete: true, Batch: 16, Workers: 4, Now: s.clk.Now, Progress: func(c Counts) {
			if c.Created+c.Updated == 40 {
				cancel() // mid-run: some batches committed, one in flight
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		err = m.Run(runCtx, s.srv.URL)
		cancel()
		m.state.Resources(ctx, s.src.All(s.cfg.Repositories[0], "oai_dc").CapabilityList(), func(r *store.MirrorResource) error {
			u, _ := neturl.Parse(r.URI)
			if _, seen := committedAt[u.Path]; !seen {
				n, _ := s.gets.Load(u.Path)
				committedAt[u.Path] = n.(*atomic.Int64).Load()
			}
			return nil
		})
		m.Close()
		if err == nil {
			break
		}
		cuts++
		if cut > 20 {
			t.Fatalf("still not done after %d cut-short runs: %v", cut, err)
		}
		if cut == 3 {
			// Changes arrive while the mirror is behind.
			at := s.clk.Add(time.Minute)
			for i := range 20 {
				s.up.Update(i, at)
				u, _ := neturl.Parse(source.ResourceURL(s.src.Base(), "demo", "oai_dc", s.up.Identifier(i)))
				changed[u.Path] = true
			}
			s.clk.Add(time.Minute)
			s.harvest()
		}
	}
	s.checkCopy(dir)
	for p, then := range committedAt {
		n, _ := s.gets.Load(p)
		if now := n.(*atomic.Int64).Load(); now != then && !changed[p] {
			t.Errorf("%s: fetched %d times, %d of them after the state held it", p, now, now-then)
		}
	}
	if len(committedAt) != 300 || cuts < 4 {
		t.Errorf("the state holds %d resources after %d cut-short runs, want 300 after at least 4", len(committedAt), cuts)
	}
}

// TestMirrorCatchesUpFromChangeDumps: once its Change List is closed and
// dumped, a mirror catches up from the Change Dump package (no resource
// GET), deletions included; the closed list is not read again by later
// runs.
func TestMirrorCatchesUpFromChangeDumps(t *testing.T) {
	s := newRsbridge(t, 50)
	s.dump()
	m, dir := openMirror(t, s, Options{Delete: true})
	mustRun(t, m, s)
	ctx := context.Background()
	at := s.clk.Add(time.Minute)
	for i := range 8 {
		s.up.Update(i, at)
	}
	s.up.Delete(10, at)
	s.up.Add(at)
	s.clk.Add(time.Minute)
	s.harvest()
	// The hour passes: the list with these changes closes and is dumped.
	s.clk.Add(2 * time.Hour)
	d := dumps.New(s.src, s.db, dumps.Options{Dir: s.dumps, Now: s.clk.Now})
	d.Work(ctx)
	if err := d.LastError(); err != nil {
		t.Fatal(err)
	}
	before := m.Counts()
	mustRun(t, m, s)
	s.checkCopy(dir)
	c := m.Counts()
	if got := c.FromDump - before.FromDump; got != 9 || c.Deleted != 1 {
		t.Errorf("catch-up: %d files from the Change Dump, %d deleted; want 9 and 1 (%+v)", got, c.Deleted, c)
	}
	if n, _ := s.resourceGETs(); n != 0 {
		t.Errorf("%d resource GETs; the Change Dump holds every change", n)
	}
	var listGETs atomic.Int64
	inner := s.srv.Config.Handler
	s.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/changelist-") {
			listGETs.Add(1)
		}
		inner.ServeHTTP(w, r)
	})
	mustRun(t, m, s)
	if n := listGETs.Load(); n > 1 {
		t.Errorf("a later run read %d Change Lists; closed ones are applied, only the open one is read", n)
	}
}

// TestAuditAndRepair: an audit reads every file of the copy against the
// Resource List and finds what is missing, damaged, changed at the source
// and gone from it; -repair fixes each and a second audit finds nothing.
func TestAuditAndRepair(t *testing.T) {
	s := newRsbridge(t, 50)
	m, dir := openMirror(t, s, Options{Delete: true})
	mustRun(t, m, s)
	ctx := context.Background()
	if rep, err := m.Audit(ctx, s.srv.URL, false); err != nil || rep.Good != 50 || rep.Listed != 50 {
		t.Fatalf("audit of a fresh copy: %+v %v", rep, err)
	}
	path := func(i int) string {
		p, _ := Path(s.resourceURL(s.up.Identifier(i)))
		return filepath.Join(dir, p)
	}
	os.Remove(path(1))                                 // lost
	os.WriteFile(path(2), []byte("<damaged/>"), 0o644) // damaged
	at := s.clk.Add(time.Minute)
	s.up.Update(3, at) // changed at the source, not yet mirrored
	s.up.Delete(4, at) // gone from the source, not yet mirrored
	s.clk.Add(time.Second)
	s.harvest()
	rep, err := m.Audit(ctx, s.srv.URL, false)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Listed != 49 || rep.Good != 46 || rep.Missing != 1 || rep.Differing != 2 || rep.Extra != 1 || rep.Repaired != 0 {
		t.Errorf("audit: %+v; want 49 listed, 46 good, 1 missing, 2 differing, 1 extra", rep)
	}
	rep, err = m.Audit(ctx, s.srv.URL, true)
	if err != nil || rep.Repaired != 4 {
		t.Fatalf("repair: %+v %v; want 4 repaired", rep, err)
	}
	s.checkCopy(dir)
	if rep, err := m.Audit(ctx, s.srv.URL, false); err != nil || rep.Good != 49 || rep.Missing+rep.Differing+rep.Extra != 0 {
		t.Errorf("audit after the repair: %+v %v", rep, err)
	}
}

// TestHookPerBatch: the hook gets each committed batch's change-log lines,
// every change once, whether or not a change log is kept.
func TestHookPerBatch(t *testing.T) {
	s := newRsbridge(t, 70)
	out := filepath.Join(t.TempDir(), "hooked")
	m, _ := openMirror(t, s, Options{Batch: 16, Hook: []string{"sh", "-c", "cat >> " + out + "; echo batch >> " + out + ".n"}})
	mustRun(t, m, s)
	lines, _ := os.ReadFile(out)
	batches, _ := os.ReadFile(out + ".n")
	if n := bytes.Count(lines, []byte("\n")); n != 70 || !bytes.Contains(lines, []byte(`"change":"created"`)) {
		t.Errorf("the hook saw %d lines, want 70 created", n)
	}
	if n := bytes.Count(batches, []byte("\n")); n < 5 {
		t.Errorf("the hook ran %d times for 70 changes in batches of 16", n)
	}
}

// TestNoDumps: with NoDumps the baseline is taken by GET even where the
// source has a Resource Dump.
func TestNoDumps(t *testing.T) {
	s := newRsbridge(t, 30)
	s.dump()
	m, dir := openMirror(t, s, Options{NoDumps: true})
	mustRun(t, m, s)
	s.checkCopy(dir)
	if c := m.Counts(); c.FromDump != 0 || c.Fetched != 30 {
		t.Errorf("%+v; want all 30 by GET", c)
	}
}

// TestAuditPagesThroughExtras: the audit reads the state a page at a time
// for what no list names, and with repair deletes each page's extras
// before reading the next; pages of 5 over 50 resources, 12 of them
// extras, some at page edges.
func TestAuditPagesThroughExtras(t *testing.T) {
	s := newRsbridge(t, 50)
	m, dir := openMirror(t, s, Options{Delete: true})
	m.auditPage = 5
	mustRun(t, m, s)
	at := s.clk.Add(time.Minute)
	for _, i := range []int{0, 4, 5, 9, 10, 11, 12, 13, 14, 30, 48, 49} {
		s.up.Delete(i, at)
	}
	s.clk.Add(time.Second)
	s.harvest()
	ctx := context.Background()
	rep, err := m.Audit(ctx, s.srv.URL, false)
	if err != nil || rep.Listed != 38 || rep.Good != 38 || rep.Extra != 12 {
		t.Fatalf("audit: %+v %v; want 38 listed and good, 12 extra", rep, err)
	}
	rep, err = m.Audit(ctx, s.srv.URL, true)
	if err != nil || rep.Extra != 12 || rep.Repaired != 12 {
		t.Fatalf("repair: %+v %v; want 12 extra, 12 repaired", rep, err)
	}
	s.checkCopy(dir)
	if rep, err := m.Audit(ctx, s.srv.URL, false); err != nil || rep.Good != 38 || rep.Missing+rep.Differing+rep.Extra+rep.Stray != 0 {
		t.Errorf("audit after the repair: %+v %v", rep, err)
	}
}
