package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/bridge/harvest"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/oaipmh"
	"github.com/rsbridge/rsbridge/store"
)

// scaleRepos is the consortium size the status and the metrics are built
// for: 700 repositories of two formats each.
const scaleRepos = 700

// scaleHeld are the repositories whose harvests the scale fixture starts
// and holds: the first scheduler.concurrency (8) of them run, the rest wait.
func scaleHeld(i int) bool { return i%50 == 1 }

// scaleState is the state the fixture gives repository i in the store:
// every 25th never harvested, every 10th (3, 13, …) failing, every 10th
// (7, 17, …) failed once and then succeeded, the rest ok.
func scaleState(i int) string {
	switch {
	case i%25 == 0:
		return stateNever
	case i%10 == 3:
		return stateFailing
	}
	return stateOK
}

// scaleFixture is a served store of n repositories × 2 formats with their
// runs recorded straight in the store, and a scheduler over them that is
// never started: the held repositories' harvests wait at heldUpstream, an
// in-process transport that answers nothing until the scheduler stops, so
// no request leaves the process.
type scaleFixture struct {
	cfg     *config.Config
	db      *store.DB
	sched   *harvest.Scheduler
	metrics *Metrics
	srv     *Server
	ts      *httptest.Server
}

// newScaleFixture builds the fixture; dir "" keeps the store in memory.
func newScaleFixture(tb testing.TB, n int, dir string, hold bool) *scaleFixture {
	tb.Helper()
	f := &scaleFixture{cfg: scaleConfig(n)}
	f.db = openStore(tb, store.Options{InMemory: dir == "", Dir: dir, MinFree: 1})
	if err := seedScale(f.db, f.cfg, time.Now().UTC()); err != nil {
		tb.Fatal(err)
	}
	up := &heldUpstream{arrived: make(chan string, n)}
	var err error
	f.metrics = NewMetrics()
	f.sched, err = harvest.NewScheduler(f.cfg, f.db, harvest.Options{Observer: f.metrics,
		ClientOptions: func(o *oaipmh.Options) { o.Transport = up }})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := f.sched.Stop(ctx); err != nil {
			tb.Error(err)
		}
	})
	f.metrics.Watch(f.cfg, f.db, f.sched, nil)
	f.srv = mustServer(tb, f.cfg, f.db, ServerOptions{Scheduler: f.sched, Metrics: f.metrics, DumpDir: tb.TempDir()})
	f.ts = httptest.NewServer(f.srv.Handler())
	tb.Cleanup(f.ts.Close)
	if hold {
		f.holdRuns(tb, up)
	}
	return f
}

// scaleConfig configures n repositories of two formats, seven to an
// upstream host (oaiN.test: never resolved, never asked).
func scaleConfig(n int) *config.Config {
	cfg := config.Default()
	cfg.BaseURL = "http://rs.test"
	cfg.Admin.Token = testToken
	for i := range n {
		cfg.Repositories = append(cfg.Repositories, config.Repository{Name: fmt.Sprintf("repo-%03d", i),
			BaseURL: fmt.Sprintf("http://oai%d.test/repo-%03d/oai", i/7, i), MetadataPrefixes: []string{"oai_dc", "jpcoar_2.0"}})
	}
	cfg.SetDefaults()
	return cfg
}

// seedScale writes ten records (with their events) per format, the runs
// scaleState asks for and a quality report of jpcoar_2.0.
func seedScale(db *store.DB, cfg *config.Config, now time.Time) error {
	for i, repo := range cfg.Repositories {
		for _, p := range repo.MetadataPrefixes {
			if err := seedFormat(db, repo.Name, p, now); err != nil {
				return err
			}
		}
		q := store.Quality{Version: "1", Checked: 10, Records: map[string]int64{"record-error": 1, "warning": 2},
			Codes: map[string]int64{"title-missing": 1, "niitype-unknown": 2, fmt.Sprintf("code-%d", i%40): 1}}
		issues := map[string][]store.QualityIssue{repo.Name + ":1": {{Level: "record-error", Code: "title-missing"}}}
		if err := db.PutQuality(repo.Name, "jpcoar_2.0", issues, q); err != nil {
			return err
		}
		if err := seedRuns(db, repo.Name, scaleState(i), i%10 == 7, now); err != nil {
			return err
		}
	}
	return nil
}

func seedFormat(db *store.DB, repo, prefix string, now time.Time) error {
	b, err := db.NewBatch(repo, prefix)
	if err != nil {
		return err
	}
	meta := []byte(`<x xmlns="urn:x">record</x>`)
	for j := range 10 {
		id := fmt.Sprintf("oai:%s:%d", repo, j)
		rec := &store.Record{Identifier: id, Datestamp: now, Length: int64(len(meta)), MD5: strings.Repeat("a", 32),
			SHA256: strings.Repeat("b", 64), Modified: now, FirstSeen: now}
		if err := b.Apply(rec, meta, &store.Event{Identifier: id, Change: store.Created, SHA256: rec.SHA256, Length: rec.Length}); err != nil {
			b.Discard()
			return err
		}
	}
	return b.Commit()
}

// seedRuns records a repository's last success and failure.
func seedRuns(db *store.DB, repo, state string, recovered bool, now time.Time) error {
	if state == stateNever {
		return nil
	}
	run := func(ago time.Duration, msg string) *store.RunRecord {
		return &store.RunRecord{Kind: harvest.KindHarvest, Started: now.Add(-ago - time.Minute), Ended: now.Add(-ago), Records: 20, Created: 20, Error: msg}
	}
	return db.UpdateRepoInfo(repo, func(ri *store.RepoInfo) {
		ri.RepositoryName = "Repository " + repo
		switch {
		case state == stateFailing:
			ri.LastSuccess, ri.LastFailure = run(3*time.Hour, ""), run(time.Hour, "Identify: HTTP 503")
		case recovered:
			ri.LastSuccess, ri.LastFailure = run(time.Hour, ""), run(3*time.Hour, "Identify: HTTP 503")
		default:
			ri.LastSuccess = run(time.Hour, "")
		}
	})
}

// heldUpstream is an upstream that never answers: every request waits
// until its context ends (the scheduler stops), so the runs it holds stay
// running.
type heldUpstream struct{ arrived chan string }

func (h *heldUpstream) RoundTrip(r *http.Request) (*http.Response, error) {
	select {
	case h.arrived <- r.URL.Host:
	default:
	}
	<-r.Context().Done()
	return nil, fmt.Errorf("held upstream: %w", r.Context().Err())
}

// holdRuns starts the held repositories' harvests and waits until the
// first scheduler.concurrency of them are at the upstream: those run, the
// others wait.
func (f *scaleFixture) holdRuns(tb testing.TB, up *heldUpstream) {
	tb.Helper()
	var names []string
	for i, repo := range f.cfg.Repositories {
		if scaleHeld(i) {
			names = append(names, repo.Name)
		}
	}
	queued, busy, err := f.sched.TriggerAll(names, harvest.KindHarvest, false)
	if err != nil || len(queued) != len(names) || len(busy) != 0 {
		tb.Fatalf("trigger: %v queued %d busy %v", err, len(queued), busy)
	}
	for range min(len(names), f.cfg.Scheduler.Concurrency) {
		select {
		case <-up.arrived:
		case <-time.After(30 * time.Second):
			tb.Fatal("held runs did not start")
		}
	}
}

// get fetches a path of the served status (with the admin token for
// /admin/ paths) and returns the status code and body.
func (f *scaleFixture) get(tb testing.TB, method, path string) (int, []byte) {
	tb.Helper()
	req, err := http.NewRequest(method, f.ts.URL+path, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if strings.HasPrefix(path, "/admin/") {
		req.Header.Set("Authorization", "Bearer "+testToken)
	}
	resp, err := http.DefaultClient.Do(req)
	return readBody(tb, resp, err)
}

// status fetches and decodes a status.json page.
func (f *scaleFixture) status(t *testing.T, query string) Status {
	t.Helper()
	code, b := f.get(t, http.MethodGet, "/status.json"+query)
	var st Status
	if code != http.StatusOK || json.Unmarshal(b, &st) != nil {
		t.Fatalf("/status.json%s: %d %.300s", query, code, b)
	}
	return st
}

func repoNames(reports []RepoReport) []string {
	var out []string
	for _, r := range reports {
		out = append(out, r.Name)
	}
	return out
}

// TestStatusAtScale: with 700 repositories the status starts with a
// summary of all of them, lists the failing ones first, filters and pages
// the rest.
func TestStatusAtScale(t *testing.T) {
	f := newScaleFixture(t, scaleRepos, "", true)
	st := f.status(t, "")
	want := StatusSummary{Repositories: 700, Failing: 70, Running: 8, Waiting: 6, Never: 28, OK: 588, LiveRecords: 700 * 2 * 10}
	got := st.Summary
	got.Queue = nil
	if got != want {
		t.Errorf("summary %+v, want %+v", got, want)
	}
	if q := st.Summary.Queue; q == nil || q.Concurrency != 8 || q.PerHost != 2 || len(q.Running) != 8 || q.Waiting != 6 || len(q.FirstWaiting) != 6 ||
		q.FirstWaiting[0].Repository != "repo-401" || q.FirstWaiting[0].Host != "oai57.test" {
		t.Errorf("queue %+v", q)
	}
	if st.Page != 1 || st.PerPage != 50 || st.Matching != 700 || st.Pages != 14 || len(st.Repositories) != 50 {
		t.Fatalf("page %d per_page %d matching %d pages %d: %d shown", st.Page, st.PerPage, st.Matching, st.Pages, len(st.Repositories))
	}
	if r := st.Repositories[0]; r.Name != "repo-003" || r.State != stateFailing || len(r.Formats) != 2 || r.Formats[0].Live != 10 ||
		r.Formats[1].Quality == nil || r.Host != "oai0.test" || r.LastFailure == nil {
		t.Errorf("first repository %+v", r)
	}
	checkOrder(t, f)
	checkFilters(t, f)
	checkHome(t, f)
	if code, b := f.get(t, http.MethodGet, "/admin/repos/repo-013"); code != 200 || !strings.Contains(string(b), `"state": "failing"`) ||
		!strings.Contains(string(b), `"prefix": "jpcoar_2.0"`) {
		t.Errorf("/admin/repos/repo-013: %d %.300s", code, b)
	}
	if code, b := f.get(t, http.MethodGet, "/admin/status?state=waiting&per_page=2"); code != 200 || !strings.Contains(string(b), `"matching": 6`) {
		t.Errorf("/admin/status?state=waiting: %d %.300s", code, b)
	}
	checkBulkHarvest(t, f)
}

// checkOrder: the whole list, two pages of 500, is failing, running,
// waiting, never, ok, and in configuration order within each.
func checkOrder(t *testing.T, f *scaleFixture) {
	t.Helper()
	st := f.status(t, "?per_page=1000") // lowered to 500
	if st.PerPage != 500 || st.Pages != 2 || len(st.Repositories) != 500 {
		t.Fatalf("per_page=1000: per_page %d, %d pages, %d shown", st.PerPage, st.Pages, len(st.Repositories))
	}
	all := append(st.Repositories, f.status(t, "?per_page=500&page=2").Repositories...)
	if len(all) != 700 {
		t.Fatalf("%d repositories on two pages", len(all))
	}
	sorted := slices.IsSortedFunc(all, func(a, b RepoReport) int {
		if d := stateRank(a.State) - stateRank(b.State); d != 0 {
			return d
		}
		return strings.Compare(a.Name, b.Name)
	})
	if !sorted {
		t.Errorf("list order: %v", repoNames(all[:80]))
	}
	for _, r := range all {
		want := scaleState(mustIndex(t, r.Name))
		if r.State != want && !(r.Running != nil && want == stateOK) {
			t.Errorf("%s: state %s, want %s (running %+v)", r.Name, r.State, want, r.Running)
		}
	}
}

func mustIndex(t *testing.T, name string) int {
	var i int
	if _, err := fmt.Sscanf(name, "repo-%03d", &i); err != nil {
		t.Fatal(err)
	}
	return i
}

// checkFilters: state, host, q and the refusals.
func checkFilters(t *testing.T, f *scaleFixture) {
	t.Helper()
	for q, n := range map[string]int{"?state=failing": 70, "?state=running": 8, "?state=waiting": 6, "?state=never": 28, "?state=ok": 588,
		"?host=oai0.test": 7, "?host=OAI0.test&state=failing": 1, "?q=repo-06": 10, "?q=REPO-06&state=never": 0} {
		st := f.status(t, q)
		if st.Matching != n || len(st.Repositories) != min(n, 50) {
			t.Errorf("%s: %d matching, %d shown, want %d", q, st.Matching, len(st.Repositories), n)
		}
	}
	st := f.status(t, "?state=waiting")
	for i, r := range st.Repositories {
		if r.Running == nil || !r.Running.Waiting || r.Running.Position != i+1 {
			t.Errorf("waiting %s: %+v", r.Name, r.Running)
		}
	}
	if st := f.status(t, "?page=15"); st.Matching != 700 || st.Repositories == nil || len(st.Repositories) != 0 {
		t.Errorf("past the last page: %d matching, %v", st.Matching, st.Repositories)
	}
	for _, q := range []string{"?state=broken", "?page=0", "?page=x", "?per_page=-1"} {
		if code, b := f.get(t, http.MethodGet, "/status.json"+q); code != http.StatusBadRequest {
			t.Errorf("%s: %d %s", q, code, b)
		}
	}
}

// checkHome: the HTML page has the summary, the filters, the page links
// and the detail of the repositories on the page only.
func checkHome(t *testing.T, f *scaleFixture) {
	t.Helper()
	code, b := f.get(t, http.MethodGet, "/")
	home := string(b)
	for _, want := range []string{"700 repositories: <span class=\"err\"><b>70 failing</b></span>", "8 running, 6 waiting for a slot, 28 never harvested, 588 ok; 14,000 live records",
		"Queue: 8 of 8 runs going (at most 2 per host)", "6 waiting, the first: repo-401 (harvest on oai57.test",
		`<a href="?state=failing">failing (70)</a>`, `<a href="?page=2" rel="next">next page</a>`, "Page 1 of 14 (700 matching, 50 per page)",
		`<h2 id="repo-repo-003">repo-003: Repository repo-003</h2>`, `<td><a href="?host=oai0.test">oai0.test</a></td>`} {
		if !strings.Contains(home, want) {
			t.Errorf("home page lacks %q", want)
		}
	}
	if code != 200 || strings.Count(home, `<h2 id="repo-`) != 50 || strings.Contains(home, `id="repo-repo-001"`) {
		t.Errorf("home page: %d, %d repositories in detail", code, strings.Count(home, `<h2 id="repo-`))
	}
	_, b = f.get(t, http.MethodGet, "/?state=waiting&host=oai57.test")
	for _, want := range []string{"<b>harvest waiting</b> for a slot since", "no. 1 in line", `<a href="?state=waiting">clear the host and name filters</a>`,
		`<a href="?host=oai57.test&amp;state=failing">failing</a>`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("filtered home page lacks %q:\n%s", want, b)
		}
	}
	_, b = f.get(t, http.MethodGet, "/?state=ok&page=3&per_page=20")
	for _, want := range []string{`<a href="?page=2&amp;per_page=20&amp;state=ok" rel="prev">`, `<a href="?page=4&amp;per_page=20&amp;state=ok" rel="next">`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("page 3 lacks %q", want)
		}
	}
}

// checkBulkHarvest: POST /admin/harvest by state and by host queues the
// repositories selected and names the busy ones.
func checkBulkHarvest(t *testing.T, f *scaleFixture) {
	t.Helper()
	bulk := func(query string, wantCode int) AdminBulk {
		t.Helper()
		code, b := f.get(t, http.MethodPost, "/admin/harvest"+query)
		var out AdminBulk
		if code != wantCode || (code < 400 && json.Unmarshal(b, &out) != nil) {
			t.Fatalf("POST /admin/harvest%s: %d %s, want %d", query, code, b, wantCode)
		}
		return out
	}
	bulk("", http.StatusBadRequest)
	bulk("?q=repo", http.StatusBadRequest)
	bulk("?state=sideways", http.StatusBadRequest)
	if out := bulk("?host=nowhere.test", http.StatusOK); out.Matched != 0 || out.Queued == nil || len(out.Queued) != 0 {
		t.Errorf("no match: %+v", out)
	}
	out := bulk("?state=failing", http.StatusAccepted)
	if out.Kind != harvest.KindHarvest || out.Matched != 70 || len(out.Queued) != 70 || len(out.Busy) != 0 || out.Queued[0] != "repo-003" {
		t.Errorf("failing: %+v", out)
	}
	// Still failing (their runs wait), now busy.
	if out := bulk("?state=failing", http.StatusAccepted); out.Matched != 70 || len(out.Queued) != 0 || len(out.Busy) != 70 {
		t.Errorf("failing again: matched %d queued %d busy %d", out.Matched, len(out.Queued), len(out.Busy))
	}
	out = bulk("?host=oai0.test&full=1", http.StatusAccepted)
	if out.Kind != harvest.KindFullHarvest || out.Matched != 7 || !slices.Equal(out.Busy, []string{"repo-003", "repo-001"}) ||
		!slices.Equal(out.Queued, []string{"repo-000", "repo-002", "repo-004", "repo-005", "repo-006"}) {
		t.Errorf("host oai0.test: %+v", out)
	}
	st := f.status(t, "?per_page=1")
	if q := st.Summary.Queue; q.Waiting != 6+70+5 || len(q.FirstWaiting) != queueShown {
		t.Errorf("queue after the bulk harvests: %d waiting", q.Waiting)
	}
	_, m := f.get(t, http.MethodGet, "/metrics")
	for _, want := range []string{"rsbridge_scheduler_waiting 81\n", "rsbridge_scheduler_running 8\n", "rsbridge_scheduler_concurrency 8\n",
		`rsbridge_repositories{state="failing"} 70` + "\n", `rsbridge_repositories{state="never"} 27` + "\n"} {
		if !strings.Contains(string(m), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// BenchmarkStatus700 serves the status of 700 repositories × 2 formats
// (on disk; 8 harvests running and 6 waiting) at its default page of 50,
// as HTML and JSON, and one filtered page. The aim is 100 ms or less.
func BenchmarkStatus700(b *testing.B) {
	f := newScaleFixture(b, scaleRepos, b.TempDir(), true)
	for _, c := range []struct{ name, path string }{
		{"home", "/"},
		{"status.json", "/status.json"},
		{"status.json-summary-only", "/status.json?per_page=1"},
		{"status.json-failing-500", "/status.json?state=failing&per_page=500"},
		{"admin-repo", "/admin/repos/repo-003"},
		{"metrics", "/metrics"},
	} {
		b.Run(c.name, func(b *testing.B) {
			var bytes int
			for b.Loop() {
				code, body := f.get(b, http.MethodGet, c.path)
				if code != http.StatusOK {
					b.Fatalf("%s: %d", c.path, code)
				}
				bytes = len(body)
			}
			b.ReportMetric(float64(bytes)/1024, "KiB")
		})
	}
}
