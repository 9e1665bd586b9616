package bridge

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/bridge/harvest"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/oaipmh"
	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/store"
)

// fault is a scripted misbehaviour: it sees every request (n counts from 1) and
// returns true when it answered it instead of the upstream.
type fault func(w http.ResponseWriter, r *http.Request, n int) bool

type faultHandler struct {
	mu     sync.Mutex
	next   http.Handler
	faults []fault
	n      int
	log    []string // request queries
}

func (f *faultHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.n++
	n := f.n
	f.log = append(f.log, r.URL.RawQuery)
	faults := slices.Clone(f.faults)
	f.mu.Unlock()
	for _, ft := range faults {
		if ft(w, r, n) {
			return
		}
	}
	f.next.ServeHTTP(w, r)
}

func (f *faultHandler) set(faults ...fault) {
	f.mu.Lock()
	f.faults = faults
	f.mu.Unlock()
}

func (f *faultHandler) queries() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.log)
}

type env struct {
	t        *testing.T
	up       *oaiserver.Synthetic
	upClock  *oaiserver.Clock
	faults   *faultHandler
	srv      *httptest.Server
	db       *store.DB
	cfg      *config.Config
	prefixes []string
	sleeps   []time.Duration
	mu       sync.Mutex
}

func newEnv(t *testing.T, o oaiserver.Options) *env {
	t.Helper()
	e := &env{t: t, upClock: oaiserver.NewClock(time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC))}
	o.Now = e.upClock.Now
	if len(o.Prefixes) == 0 {
		o.Prefixes = []string{"oai_dc"}
	}
	e.prefixes = o.Prefixes
	e.up = oaiserver.New(o)
	e.faults = &faultHandler{next: e.up}
	e.srv = httptest.NewServer(e.faults)
	t.Cleanup(e.srv.Close)
	yaml := fmt.Sprintf(`
data_dir: %s
defaults:
  delay: 0s
  max_retries: 3
  max_empty_pages: 3
repositories:
  - name: demo
    base_url: %s/oai
    metadata_prefixes: [%s]
`, t.TempDir(), e.srv.URL, strings.Join(o.Prefixes, ", "))
	cfg, err := config.Parse(strings.NewReader(yaml))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	e.cfg = cfg
	e.db = openStore(t, store.Options{InMemory: true})
	return e
}

func (e *env) harvester() *harvest.Harvester {
	h, err := harvest.New(e.cfg, e.cfg.Repositories[0], e.db, harvest.Options{ClientOptions: func(o *oaipmh.Options) {
		o.Sleep = func(ctx context.Context, d time.Duration) error {
			e.mu.Lock()
			e.sleeps = append(e.sleeps, d)
			e.mu.Unlock()
			return ctx.Err()
		}
	}})
	if err != nil {
		e.t.Fatal(err)
	}
	return h
}

func (e *env) harvest(full bool) ([]harvest.Result, error) {
	return e.harvester().Harvest(context.Background(), harvest.HarvestOptions{Full: full})
}

func (e *env) mustHarvest() harvest.Counts {
	e.t.Helper()
	res, err := e.harvest(false)
	if err != nil {
		e.t.Fatal(err)
	}
	var c harvest.Counts
	for _, r := range res {
		c.Add(r.Counts)
	}
	return c
}

// assertMirror checks the store holds exactly what the upstream serves.
func (e *env) assertMirror(prefix string) {
	e.t.Helper()
	live := 0
	for i := 0; i < e.up.Len(); i++ {
		it, ok := e.up.Item(i, prefix)
		id := e.up.Identifier(i)
		rec, err := peek(e.db).Record("demo", prefix, id)
		if err != nil {
			e.t.Fatal(err)
		}
		if !ok || it.Deleted {
			if rec != nil && !rec.Deleted {
				e.t.Errorf("%q: deleted upstream, live in store", id)
			}
			continue
		}
		live++
		if rec == nil || rec.Deleted {
			e.t.Errorf("%q: live upstream, missing in store (%+v)", id, rec)
			continue
		}
		meta, _ := peek(e.db).Metadata("demo", prefix, id)
		if string(meta) != string(it.Metadata) {
			e.t.Errorf("%q: metadata differs\nstore    %.200s\nupstream %.200s", id, meta, it.Metadata)
		}
		if !slices.Equal(rec.Members(), store.ExpandSets(it.Sets)) {
			e.t.Errorf("%q: sets %v, upstream %v", id, rec.Sets, it.Sets)
		}
		if !rec.Datestamp.Equal(it.Datestamp) {
			e.t.Errorf("%q: datestamp %v, upstream %v", id, rec.Datestamp, it.Datestamp)
		}
	}
	ctr, _ := peek(e.db).Counter("demo", prefix)
	if ctr.Live != int64(live) {
		t := e.t
		t.Errorf("store counts %d live records, upstream has %d", ctr.Live, live)
	}
}

// events returns "change:identifier" strings after seq.
func (e *env) events(prefix string, after uint64) []*store.Event {
	var out []*store.Event
	if err := peek(e.db).Events("demo", prefix, after, func(ev *store.Event) error { out = append(out, ev); return nil }); err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *env) lastSeq(prefix string) uint64 {
	c, _ := peek(e.db).Counter("demo", prefix)
	return c.Seq
}

// TestInitialHarvestHostileIdentifiers: a full harvest mirrors the upstream
// exactly, one created event per live record, tombstones make no event, and
// identifiers with slashes, colons, spaces and non-ASCII survive.
func TestInitialHarvestHostileIdentifiers(t *testing.T) {
	e := newEnv(t, oaiserver.Options{Records: 250, PageSize: 20, DeletedEvery: 10, Prefixes: []string{"oai_dc", "jpcoar_2.0"}})
	c := e.mustHarvest()
	for _, p := range e.prefixes {
		e.assertMirror(p)
		evs := e.events(p, 0)
		if len(evs) != 225 {
			t.Errorf("%s: %d events, want 225", p, len(evs))
		}
		for _, ev := range evs {
			if ev.Change != store.Created {
				t.Errorf("%v", ev)
			}
		}
	}
	if c.Created != 450 || c.Tombstones != 50 {
		t.Errorf("%+v", c)
	}
	hostile := e.up.Identifier(7)
	if !strings.ContainsAny(hostile, "/ ") || !strings.Contains(hostile, "論文") {
		t.Fatalf("fixture identifier not hostile: %q", hostile)
	}
	if r, _ := peek(e.db).Record("demo", "oai_dc", hostile); r == nil {
		t.Errorf("hostile identifier %q not stored", hostile)
	}
	// A second run with nothing changed makes no events.
	e.upClock.Set(e.upClock.Now().Add(time.Hour))
	before := e.lastSeq("oai_dc")
	e.mustHarvest()
	if got := e.events("oai_dc", before); len(got) != 0 {
		t.Errorf("unchanged upstream made %d events", len(got))
	}
}

// TestIncrementalChanges: create, update, delete, restore, set move with a
// datestamp change and a datestamp bump with unchanged content.
func TestIncrementalChanges(t *testing.T) {
	e := newEnv(t, oaiserver.Options{Records: 100, PageSize: 30, SetCount: 4})
	e.mustHarvest()
	seq := e.lastSeq("oai_dc")
	hw, _ := peek(e.db).Checkpoint("demo", "oai_dc")

	at := e.upClock.Now().Add(time.Hour)
	e.upClock.Set(at.Add(time.Hour))
	added := e.up.Add(at)
	e.up.Update(3, at)
	e.up.Delete(4, at)
	e.up.SetSets(5, []string{"s3"}, at, true) // s1 -> s3
	e.up.Touch(6, at)
	c := e.mustHarvest()

	byID := map[string]*store.Event{}
	for _, ev := range e.events("oai_dc", seq) {
		if byID[ev.Identifier] != nil {
			t.Errorf("two events for %q", ev.Identifier)
		}
		byID[ev.Identifier] = ev
	}
	want := map[int]store.Change{added: store.Created, 3: store.Updated, 4: store.Deleted, 5: store.Updated}
	if len(byID) != len(want) {
		t.Errorf("events %v", byID)
	}
	for i, ch := range want {
		ev := byID[e.up.Identifier(i)]
		if ev == nil || ev.Change != ch {
			t.Errorf("item %d: %+v, want %s", i, ev, ch)
		}
	}
	mv := byID[e.up.Identifier(5)]
	if mv == nil || mv.SetChange("s1") != store.Deleted || mv.SetChange("s3") != store.Created {
		t.Errorf("set move %+v", mv)
	}
	if c.Unchanged == 0 {
		t.Errorf("the touched record should count as unchanged: %+v", c)
	}
	e.assertMirror("oai_dc")

	// The incremental request started one granule before the high-water mark.
	wantFrom := "from=" + strings.ReplaceAll(oaipmh.GranularitySeconds.Format(hw.HighWater.Add(-time.Second)), ":", "%3A")
	found := false
	for _, q := range e.faults.queries() {
		if strings.Contains(q, "verb=ListRecords") && strings.Contains(q, wantFrom) {
			found = true
		}
	}
	if !found {
		t.Errorf("no ListRecords with %s in %v", wantFrom, e.faults.queries())
	}

	// A deleted record comes back: created again.
	at2 := e.upClock.Now().Add(time.Hour)
	e.upClock.Set(at2.Add(time.Hour))
	seq = e.lastSeq("oai_dc")
	e.up.Restore(4, at2)
	e.mustHarvest()
	if evs := e.events("oai_dc", seq); len(evs) != 1 || evs[0].Change != store.Created || evs[0].Identifier != e.up.Identifier(4) {
		t.Errorf("restore: %+v", evs)
	}
	e.assertMirror("oai_dc")
}

func TestDayGranularity(t *testing.T) {
	e := newEnv(t, oaiserver.Options{Records: 40, PageSize: 15, Granularity: "YYYY-MM-DD", Step: time.Hour})
	day := e.upClock.Now()
	e.up.Touch(1, day.Add(-2*time.Hour)) // on the high-water day: it must come again
	e.mustHarvest()
	e.upClock.Set(day.Add(48 * time.Hour))
	e.up.Update(2, day.Add(24*time.Hour))
	seq := e.lastSeq("oai_dc")
	c := e.mustHarvest()
	evs := e.events("oai_dc", seq)
	if len(evs) != 1 || evs[0].Change != store.Updated {
		t.Fatalf("events %+v", evs)
	}
	wantFrom := "from=" + day.Add(-24*time.Hour).Format("2006-01-02") + "&"
	var q string
	for _, s := range e.faults.queries() {
		if strings.Contains(s, "verb=ListRecords") && strings.Contains(s, "from=") {
			q = s
		}
	}
	if !strings.Contains(q, wantFrom) || strings.Contains(q, "T") {
		t.Errorf("incremental request %q, want %s", q, wantFrom)
	}
	if c.Unchanged == 0 {
		t.Errorf("boundary records should come again unchanged: %+v", c)
	}
	e.assertMirror("oai_dc")
}

// brokenPage answers the nth ListRecords request that carries a token with
// broken XML (once the page has started: a record is cut in half).
func brokenPage(nth int) fault {
	seen := 0
	var mu sync.Mutex
	return func(w http.ResponseWriter, r *http.Request, _ int) bool {
		if r.URL.Query().Get("verb") != "ListRecords" || r.URL.Query().Get("resumptionToken") == "" {
			return false
		}
		mu.Lock()
		seen++
		hit := seen == nth
		mu.Unlock()
		if !hit {
			return false
		}
		w.Header().Set("Content-Type", "text/xml")
		fmt.Fprint(w, `<?xml version="1.0"?><OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><responseDate>2024-06-01T12:00:00Z</responseDate><ListRecords>
<record><header><identifier>oai:broken:1</identifier><datestamp>2024-01-01T00:00:00Z</datestamp></header><metadata><x xmlns="urn:x">ok</x></metadata></record>
<record><header><identifier>oai:broken:2</identifier><datestamp>2024-01-01T00:00:00Z</datestamp></header><metadata><x xmlns="urn:x">ok</x></metadata></record>
</ListRecord></OAI-PMH>`) // the envelope is broken: the page cannot be trusted
		return true
	}
}

// TestBrokenPageMidList: the harvest stops with a clear error, nothing of the
// broken page is applied, and the next run resumes at that page.
func TestBrokenPageMidList(t *testing.T) {
	e := newEnv(t, oaiserver.Options{Records: 100, PageSize: 10})
	e.faults.set(brokenPage(3)) // the 4th page
	_, err := e.harvest(false)
	if err == nil || !strings.Contains(err.Error(), "harvest demo oai_dc: list records (page 4)") || !strings.Contains(err.Error(), "stray markup between the records") || !strings.Contains(err.Error(), e.srv.URL) {
		t.Fatalf("got %v", err)
	}
	if r, _ := peek(e.db).Record("demo", "oai_dc", "oai:broken:1"); r != nil {
		t.Fatal("a record of the broken page was applied")
	}
	cp, _ := peek(e.db).Checkpoint("demo", "oai_dc")
	ctr, _ := peek(e.db).Counter("demo", "oai_dc")
	if !cp.InProgress || cp.Token == "" || cp.SeqPages != 3 || ctr.Live != 30 {
		t.Fatalf("checkpoint %+v live %d", cp, ctr.Live)
	}
	e.faults.set()
	res, err := e.harvest(false)
	if err != nil || !res[0].Resumed {
		t.Fatalf("%v %+v", err, res)
	}
	qs := e.faults.queries()
	var resumedWith string
	for _, q := range qs {
		if strings.Contains(q, "ListRecords") {
			resumedWith = q
		}
	}
	_ = resumedWith
	e.assertMirror("oai_dc")
	if n := len(e.events("oai_dc", 0)); n != 100 {
		t.Errorf("%d events, want exactly 100 created", n)
	}
}

// TestTokenExpiresMidList: badResumptionToken restarts the list with the
// original arguments; re-delivered records make no events.
func TestTokenExpiresMidList(t *testing.T) {
	e := newEnv(t, oaiserver.Options{Records: 60, PageSize: 10})
	expired := 0
	e.faults.set(func(w http.ResponseWriter, r *http.Request, _ int) bool {
		q := r.URL.Query()
		if q.Get("verb") == "ListRecords" && q.Get("resumptionToken") != "" && expired == 0 && strings.Contains(strings.Join(e.faults.queries(), "\n"), "resumptionToken") {
			if strings.Count(strings.Join(e.faults.queries(), "\n"), "resumptionToken") == 3 {
				expired++
				w.WriteHeader(422) // as WEKO3 and Zenodo do
				fmt.Fprint(w, `<?xml version="1.0"?><OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><responseDate>2024-06-01T12:00:00Z</responseDate><request>x</request><error code="badResumptionToken">The value of the resumptionToken argument is invalid or expired.</error></OAI-PMH>`)
				return true
			}
		}
		return false
	})
	res, err := e.harvest(false)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Restarts != 1 || expired != 1 {
		t.Fatalf("restarts %d expired %d", res[0].Restarts, expired)
	}
	e.assertMirror("oai_dc")
	if n := len(e.events("oai_dc", 0)); n != 60 {
		t.Errorf("%d events, want 60", n)
	}
}

func xmlResponse(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprint(w, body)
}

// TestRepeatedTokenAndEmptyPages: the guards stop a looping upstream with a
// clear error; what came before is kept.
func TestRepeatedTokenAndEmptyPages(t *testing.T) {
	page := func(token string, records int) string {
		var b strings.Builder
		b.WriteString(`<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><responseDate>2024-06-01T12:00:00Z</responseDate><ListRecords>`)
		for i := 0; i < records; i++ {
			fmt.Fprintf(&b, `<record><header><identifier>oai:loop:%s:%d</identifier><datestamp>2024-01-01T00:00:00Z</datestamp></header><metadata><x xmlns="urn:x">%d</x></metadata></record>`, token, i, i)
		}
		fmt.Fprintf(&b, `<resumptionToken>%s</resumptionToken></ListRecords></OAI-PMH>`, token)
		return b.String()
	}
	cases := []struct {
		name string
		next func(sent string) (string, int)
		want string
	}{
		{"repeated token", func(sent string) (string, int) { return "same", 2 }, `returned the resumption token "same" that was just sent`},
		{"empty pages", func(sent string) (string, int) { return sent + "x", 0 }, "3 consecutive pages without records"},
	}
	for _, cs := range cases {
		t.Run(cs.name, func(t *testing.T) {
			e := newEnv(t, oaiserver.Options{Records: 5})
			e.faults.set(func(w http.ResponseWriter, r *http.Request, _ int) bool {
				q := r.URL.Query()
				if q.Get("verb") != "ListRecords" {
					return false
				}
				sent := q.Get("resumptionToken")
				if sent == "" {
					xmlResponse(w, 200, page("same", 2))
					return true
				}
				tok, n := cs.next(sent)
				xmlResponse(w, 200, page(tok, n))
				return true
			})
			_, err := e.harvest(false)
			if err == nil || !strings.Contains(err.Error(), cs.want) {
				t.Fatalf("got %v", err)
			}
			if ctr, _ := peek(e.db).Counter("demo", "oai_dc"); ctr.Live != 2 {
				t.Errorf("first page lost: %+v", ctr)
			}
		})
	}
}

// TestRetryAfterAnd429: the harvest waits as told and completes.
func TestRetryAfterAnd429(t *testing.T) {
	e := newEnv(t, oaiserver.Options{Records: 30, PageSize: 10})
	date := time.Now().Add(2 * time.Minute).UTC().Format(http.TimeFormat)
	e.faults.set(func(w http.ResponseWriter, r *http.Request, n int) bool {
		switch n {
		case 3:
			w.Header().Set("Retry-After", "11")
			w.WriteHeader(503)
		case 5:
			w.Header().Set("Retry-After", date)
			w.WriteHeader(503)
		case 6:
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(429)
		default:
			return false
		}
		return true
	})
	e.mustHarvest()
	e.assertMirror("oai_dc")
	if len(e.sleeps) != 3 || e.sleeps[0] != 11*time.Second || e.sleeps[1] < 100*time.Second || e.sleeps[2] != 3*time.Second {
		t.Errorf("waits %v", e.sleeps)
	}
}

// TestCannotDisseminateOnePrefix: one format failing (with HTTP 422) does not stop
// the others, and the run reports the failure.
func TestCannotDisseminateOnePrefix(t *testing.T) {
	e := newEnv(t, oaiserver.Options{Records: 20, PageSize: 10, Prefixes: []string{"jpcoar_2.0", "oai_dc"}})
	e.faults.set(func(w http.ResponseWriter, r *http.Request, _ int) bool {
		if r.URL.Query().Get("metadataPrefix") == "jpcoar_2.0" && r.URL.Query().Get("verb") == "ListRecords" {
			xmlResponse(w, 422, `<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><responseDate>2024-06-01T12:00:00Z</responseDate><request>x</request><error code="cannotDisseminateFormat">jpcoar_2.0 is not supported</error></OAI-PMH>`)
			return true
		}
		return false
	})
	res, err := e.harvest(false)
	if err == nil || !strings.Contains(err.Error(), "cannot disseminate") || len(res) != 2 || res[1].Err != nil || res[1].Counts.Created != 20 {
		t.Fatalf("%v %+v", err, res)
	}
	e.assertMirror("oai_dc")
	ri, _ := peek(e.db).RepoInfo("demo")
	if ri.LastHarvestOK || !strings.Contains(ri.LastError, "cannotDisseminateFormat") {
		t.Errorf("%+v", ri)
	}
}

// TestReconcileDeletedRecordNo: deletions in a repository that never reports
// them are found by a complete identifier pass; set moves without a datestamp
// change too; a failed pass deletes nothing.
func TestReconcileDeletedRecordNo(t *testing.T) {
	e := newEnv(t, oaiserver.Options{Records: 80, PageSize: 20, DeletedRecord: "no", SetCount: 4})
	e.mustHarvest()
	at := e.upClock.Now().Add(time.Hour)
	e.upClock.Set(at.Add(time.Hour))
	e.up.Delete(10, at)
	e.up.Delete(11, at)
	e.up.SetSets(12, []string{"s0:sub"}, at, false) // no datestamp change
	c := e.mustHarvest()
	if c.Deleted != 0 || c.Updated != 0 {
		t.Fatalf("an incremental harvest cannot see these: %+v", c)
	}
	h := e.harvester()

	// A pass that breaks off deletes nothing.
	e.faults.set(func(w http.ResponseWriter, r *http.Request, _ int) bool {
		if r.URL.Query().Get("verb") == "ListIdentifiers" && r.URL.Query().Get("resumptionToken") != "" {
			w.WriteHeader(500)
			return true
		}
		return false
	})
	seq := e.lastSeq("oai_dc")
	if _, err := h.Reconcile(context.Background(), harvest.ReconcileOptions{}); err == nil || !strings.Contains(err.Error(), "nothing was deleted") {
		t.Fatalf("got %v", err)
	}
	if evs := e.events("oai_dc", seq); len(evs) != 0 {
		t.Fatalf("a partial pass made events: %+v", evs)
	}
	e.faults.set()
	res, err := h.Reconcile(context.Background(), harvest.ReconcileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Counts.Deleted != 2 || res[0].Counts.Updated != 1 {
		t.Errorf("%+v", res[0].Counts)
	}
	e.assertMirror("oai_dc")
	// Reconciling again changes nothing.
	seq = e.lastSeq("oai_dc")
	if _, err := h.Reconcile(context.Background(), harvest.ReconcileOptions{}); err != nil {
		t.Fatal(err)
	}
	if evs := e.events("oai_dc", seq); len(evs) != 0 {
		t.Errorf("second pass made events: %+v", evs)
	}
}

// TestReconcileSafetyLimit: an endpoint that suddenly lists almost nothing does
// not wipe the store.
func TestReconcileSafetyLimit(t *testing.T) {
	e := newEnv(t, oaiserver.Options{Records: 50, PageSize: 50, DeletedRecord: "transient"})
	e.mustHarvest()
	e.faults.set(func(w http.ResponseWriter, r *http.Request, _ int) bool {
		if r.URL.Query().Get("verb") == "ListIdentifiers" {
			xmlResponse(w, 200, `<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><responseDate>2024-06-01T12:00:00Z</responseDate><request>x</request><error code="noRecordsMatch"/></OAI-PMH>`)
			return true
		}
		return false
	})
	_, err := e.harvester().Reconcile(context.Background(), harvest.ReconcileOptions{})
	if err == nil || !strings.Contains(err.Error(), "listed no identifiers at all but 50 records are live") {
		t.Fatalf("got %v", err)
	}
	if ctr, _ := peek(e.db).Counter("demo", "oai_dc"); ctr.Live != 50 {
		t.Fatal("records were deleted")
	}
	res, err := e.harvester().Reconcile(context.Background(), harvest.ReconcileOptions{Force: true})
	if err != nil || res[0].Counts.Deleted != 50 {
		t.Fatalf("%v %+v", err, res)
	}
}

// TestFullReharvestIsIdempotent: -full fetches everything again and makes no
// events when nothing changed.
func TestFullReharvestIsIdempotent(t *testing.T) {
	e := newEnv(t, oaiserver.Options{Records: 40, PageSize: 10, DeletedEvery: 7})
	e.mustHarvest()
	seq := e.lastSeq("oai_dc")
	res, err := e.harvest(true)
	if err != nil || res[0].Counts.Records != 40 {
		t.Fatalf("%v %+v", err, res)
	}
	if evs := e.events("oai_dc", seq); len(evs) != 0 {
		t.Errorf("%d events", len(evs))
	}
}

// TestSplitPageThenBrokenTail: with a small memtable a 400-record page needs
// several transactions; when its tail is broken on the first attempt, the parts
// already committed hold whole records only, so the rerun leaves every record
// with its bytes and membership and exactly one created event (review finding).
func TestSplitPageThenBrokenTail(t *testing.T) {
	e := newEnv(t, oaiserver.Options{Records: 800, PageSize: 400, SetCount: 3, RecordBytes: 600})
	db := openStore(t, store.Options{Dir: t.TempDir(), MemTableSize: 1 << 20})
	e.db = db
	broke := false
	e.faults.set(func(w http.ResponseWriter, r *http.Request, _ int) bool {
		if broke || r.URL.Query().Get("verb") != "ListRecords" {
			return false
		}
		broke = true
		rec := httptest.NewRecorder()
		e.up.ServeHTTP(rec, r)
		body := rec.Body.String()
		cut := strings.LastIndex(body, "<record>")
		w.Header().Set("Content-Type", "text/xml")
		fmt.Fprint(w, body[:cut]+"<record><header></record>") // the tail is malformed
		return true
	})
	if _, err := e.harvest(false); err == nil {
		t.Fatal("the broken page must fail the harvest")
	}
	ctr, _ := peek(db).Counter("demo", "oai_dc")
	if ctr.Live == 0 {
		t.Fatal("expected committed parts of the split page (the test needs a split)")
	}
	e.mustHarvest()
	e.assertMirror("oai_dc")
	created := map[string]int{}
	for _, ev := range e.events("oai_dc", 0) {
		created[ev.Identifier]++
	}
	for id, n := range created {
		if n != 1 {
			t.Errorf("%q: %d events", id, n)
		}
	}
	for s, want := range map[string]int{"s0": 0, "s1": 0, "s2": 0} {
		_ = want
		n := 0
		n = peek(db).Members("demo", "oai_dc", s)
		live := 0
		for i := 0; i < e.up.Len(); i++ {
			if it, ok := e.up.Item(i, "oai_dc"); ok && !it.Deleted && slices.Contains(store.ExpandSets(it.Sets), s) {
				live++
			}
		}
		if n != live {
			t.Errorf("set %s: %d members, upstream %d", s, n, live)
		}
	}
}

// TestGuardThenResumeKeepsHighWater: a list stopped by the empty-pages guard
// and resumed later that ends short of its completeListSize keeps the old
// high-water mark and makes the next run a full list (review finding: it used
// to log "list complete" with 10 of 30 records and move the mark).
func TestGuardThenResumeKeepsHighWater(t *testing.T) {
	e := newEnv(t, oaiserver.Options{Records: 30, PageSize: 10})
	page := func(token string, first, n int) string {
		var b strings.Builder
		b.WriteString(`<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><responseDate>2024-06-01T12:00:00Z</responseDate><ListRecords>`)
		for i := first; i < first+n; i++ {
			fmt.Fprintf(&b, `<record><header><identifier>%s</identifier><datestamp>2019-01-01T00:00:00Z</datestamp></header><metadata><x xmlns="urn:x">%d</x></metadata></record>`, html.EscapeString(e.up.Identifier(i)), i)
		}
		fmt.Fprintf(&b, `<resumptionToken completeListSize="30">%s</resumptionToken></ListRecords></OAI-PMH>`, token)
		return b.String()
	}
	broken := true
	e.faults.set(func(w http.ResponseWriter, r *http.Request, _ int) bool {
		q := r.URL.Query()
		if q.Get("verb") != "ListRecords" || !broken {
			return false
		}
		switch tok := q.Get("resumptionToken"); {
		case tok == "":
			xmlResponse(w, 200, page("e1", 0, 10))
		case strings.HasPrefix(tok, "e") && len(tok) < 5:
			xmlResponse(w, 200, page(tok+"x", 0, 0)) // empty pages with fresh tokens
		default: // a later resume: the list "ends" at once
			xmlResponse(w, 200, page("", 0, 0))
		}
		return true
	})
	if _, err := e.harvest(false); err == nil || !strings.Contains(err.Error(), "consecutive pages without records") {
		t.Fatalf("want the guard to stop the list, got %v", err)
	}
	cp, _ := peek(e.db).Checkpoint("demo", "oai_dc")
	if !cp.SeqGuarded || !cp.InProgress {
		t.Fatalf("the guard is not recorded: %+v", cp)
	}
	res, err := e.harvest(false) // resumes at the stored token; the list ends short
	if err != nil || !res[0].Resumed || !res[0].Incomplete {
		t.Fatalf("resume: %v %+v", err, res)
	}
	cp, _ = peek(e.db).Checkpoint("demo", "oai_dc")
	if !cp.HighWater.IsZero() || !cp.FullNext || cp.InProgress {
		t.Fatalf("the high-water mark moved or no full run is due: %+v", cp)
	}
	broken = false
	e.mustHarvest()
	var full bool
	for _, q := range e.faults.queries() {
		if strings.Contains(q, "verb=ListRecords") && strings.Contains(q, "metadataPrefix") && !strings.Contains(q, "from=") {
			full = true
		}
	}
	cp, _ = peek(e.db).Checkpoint("demo", "oai_dc")
	if !full || cp.FullNext || cp.HighWater.IsZero() {
		t.Fatalf("the third run was not a full list: %+v", cp)
	}
	e.assertMirror("oai_dc")
}

// TestReconcileRefusesWithUnreadableHeaders: a pass that listed a header it
// could not read (no usable identifier) deletes nothing: the record it names
// may be one of those not seen.
func TestReconcileRefusesWithUnreadableHeaders(t *testing.T) {
	e := newEnv(t, oaiserver.Options{Records: 30, PageSize: 10, DeletedRecord: "transient"})
	e.mustHarvest()
	before, _ := peek(e.db).Counter("demo", "oai_dc")
	e.up.Delete(3, e.upClock.Now())
	e.faults.set(func(w http.ResponseWriter, r *http.Request, _ int) bool {
		if r.URL.Query().Get("verb") != "ListIdentifiers" || r.URL.Query().Get("resumptionToken") != "" {
			return false
		}
		xmlResponse(w, 200, `<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><responseDate>2024-06-01T12:00:00Z</responseDate><ListIdentifiers>`+
			`<header><identifier>`+html.EscapeString(e.up.Identifier(1))+`</identifier><datestamp>2020-01-01T00:00:00Z</datestamp></header>`+
			"<header><identifier>oai:bad:\xff</identifier><datestamp>2020-01-01T00:00:00Z</datestamp></header>"+
			`</ListIdentifiers></OAI-PMH>`)
		return true
	})
	_, err := e.harvester().Reconcile(context.Background(), harvest.ReconcileOptions{})
	if err == nil || !strings.Contains(err.Error(), "1 listed headers could not be read") {
		t.Fatalf("got %v", err)
	}
	if ctr, _ := peek(e.db).Counter("demo", "oai_dc"); ctr.Live != before.Live || ctr.Deleted != before.Deleted {
		t.Fatalf("records were deleted: %+v, before %+v", ctr, before)
	}
}
