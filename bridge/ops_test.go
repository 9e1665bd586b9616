package bridge

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/bridge/harvest"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/store"
)

const testToken = "s3cret-admin-token-0123456789"

// gatedUpstream serves a synthetic repository and lets a test hold list
// pages after the first, fail Identify, or fail every other request.
type gatedUpstream struct {
	up       http.Handler
	hold     atomic.Bool   // hold ListRecords pages with a resumptionToken
	held     chan struct{} // a held request arrived
	release  chan struct{} // closed: held requests go on
	failID   atomic.Bool   // Identify answers 500
	flaky    atomic.Int32  // the next n requests answer 503
	requests atomic.Int64
}

func (g *gatedUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.requests.Add(1)
	if g.flaky.Load() > 0 {
		g.flaky.Add(-1)
		w.Header().Set("Retry-After", "0")
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	q := r.URL.Query()
	if g.failID.Load() && q.Get("verb") == "Identify" {
		http.Error(w, "internal trouble at db7.internal:5432", http.StatusInternalServerError)
		return
	}
	if g.hold.Load() && q.Get("verb") == "ListRecords" && q.Get("resumptionToken") != "" {
		select {
		case g.held <- struct{}{}:
		default:
		}
		select {
		case <-g.release:
		case <-r.Context().Done():
			return
		}
	}
	g.up.ServeHTTP(w, r)
}

// opsEnv is a served source with a scheduler, metrics and the admin API.
type opsEnv struct {
	t       *testing.T
	gate    *gatedUpstream
	cfg     *config.Config
	db      *store.DB
	sched   *harvest.Scheduler
	metrics *Metrics
	srv     *Server
	ts      *httptest.Server
}

func newOpsEnv(t *testing.T, extra string, o oaiserver.Options) *opsEnv {
	t.Helper()
	e := &opsEnv{t: t, gate: &gatedUpstream{up: oaiserver.New(o), held: make(chan struct{}, 1), release: make(chan struct{})}}
	up := httptest.NewServer(e.gate)
	t.Cleanup(up.Close)
	var handler atomic.Value
	e.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handler.Load().(http.Handler).ServeHTTP(w, r)
	}))
	t.Cleanup(e.ts.Close)
	y := fmt.Sprintf(`base_url: %s
defaults:
  delay: 0s
  max_retries: 1
  backoff_base: 1ms
  backoff_max: 2ms
%s
repositories:
  - name: demo
    base_url: %s/oai
    metadata_prefixes: [oai_dc]
    schedule: "@every 1h"
`, e.ts.URL, extra, up.URL)
	cfg, err := config.ParseAndValidate(strings.NewReader(y))
	if err != nil {
		t.Fatal(err)
	}
	e.cfg = cfg
	if e.db, err = store.Open(store.Options{InMemory: true, ChangeListLimit: 1000, ChangeListPeriod: time.Hour}); err != nil {
		t.Fatal(err)
	}
	e.metrics = NewMetrics()
	if e.sched, err = harvest.NewScheduler(cfg, e.db, harvest.Options{Observer: e.metrics}); err != nil {
		t.Fatal(err)
	}
	e.srv = mustServer(t, cfg, e.db, ServerOptions{Scheduler: e.sched, Metrics: e.metrics, DumpDir: t.TempDir()})
	e.metrics.Watch(cfg, e.db, e.sched, nil)
	handler.Store(e.srv.Handler())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		e.sched.Stop(ctx)
		e.db.Close()
	})
	return e
}

// do sends a request with the given token ("" for none) and returns the
// status and body.
func (e *opsEnv) do(method, path, token string) (int, string) {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.ts.URL+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (e *opsEnv) status(path, token string) Status {
	e.t.Helper()
	code, body := e.do(http.MethodGet, path, token)
	var st Status
	if code != 200 || json.Unmarshal([]byte(body), &st) != nil {
		e.t.Fatalf("%s: %d %s", path, code, body)
	}
	return st
}

// waitFor polls the admin status until ok accepts the repository's report.
func (e *opsEnv) waitFor(what string, ok func(RepoReport) bool) RepoReport {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := e.status("/admin/status", testToken)
		if ok(st.Repositories[0]) {
			return st.Repositories[0]
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s: %+v", what, st.Repositories[0])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestOperations drives the admin API, the status and the metrics through a
// running, a cancelled, a full and a failed harvest.
func TestOperations(t *testing.T) {
	e := newOpsEnv(t, "admin:\n  token: "+testToken+"\nstatus:\n  hide_errors: true", oaiserver.Options{Records: 250, PageSize: 100,
		Hostile: func(i int) oaiserver.Hostility {
			if i == 7 {
				return oaiserver.HostileMalformed
			}
			return oaiserver.HostileNone
		}})
	e.gate.hold.Store(true)
	e.sched.Start() // harvests at once; page 2 is held
	<-e.gate.held

	// A running harvest: pages, records of completeListSize, rate.
	rr := e.waitFor("page 1 committed", func(r RepoReport) bool { return r.Running != nil && r.Running.Pages == 1 })
	if a := rr.Running; a.Kind != harvest.KindHarvest || a.Records != 100 || a.Total != 250 || a.Prefix != "oai_dc" || rr.NextHarvest.IsZero() {
		t.Fatalf("running: %+v next %v", a, rr.NextHarvest)
	}
	_, home := e.do(http.MethodGet, "/", "")
	for _, want := range []string{"<b>harvest running</b>", "100 records of 250 (40.0 %)", "<th>last success</th><td>never</td>"} {
		if !strings.Contains(home, want) {
			t.Errorf("home page lacks %q:\n%s", want, home)
		}
	}

	// Authentication.
	for _, c := range []struct {
		method, path, token string
		code                int
	}{
		{"GET", "/admin/status", "", 401},
		{"GET", "/admin/status", "wrong-token-0123456789", 401},
		{"GET", "/admin/status", testToken + "x", 401},
		{"POST", "/admin/repos/demo/harvest", "", 401},
		{"GET", "/admin/backup", "nope", 401},
		{"GET", "/admin/nothing", testToken, 404},
		{"GET", "/admin/status", testToken, 200},
		{"GET", "/admin/repos/demo/harvest", testToken, 405},
		{"POST", "/admin/repos/demo/harvest", testToken, 409}, // busy
		{"POST", "/admin/repos/nope/harvest", testToken, 404},
		{"GET", "/admin/repos/nope", testToken, 404},
		{"POST", "/admin/repos/nope/cancel", testToken, 404},
	} {
		code, body := e.do(c.method, c.path, c.token)
		if code != c.code {
			t.Errorf("%s %s token %q: %d %s, want %d", c.method, c.path, c.token, code, body, c.code)
		}
		if code == 401 && !strings.Contains(body, "Bearer") {
			t.Errorf("401 body %s", body)
		}
	}
	_, body := e.do("POST", "/admin/repos/demo/harvest", testToken)
	var busy AdminRun
	if json.Unmarshal([]byte(body), &busy); busy.Running == nil || busy.Running.Kind != harvest.KindHarvest {
		t.Errorf("409 does not say what runs: %s", body)
	}

	// Cancel: the run stops after its committed page; it is neither a
	// success nor a failure, and the next run resumes.
	if code, body := e.do("POST", "/admin/repos/demo/cancel", testToken); code != 200 || !strings.Contains(body, `"cancelled": true`) {
		t.Fatalf("cancel: %d %s", code, body)
	}
	rr = e.waitFor("idle", func(r RepoReport) bool { return r.Running == nil })
	if rr.LastSuccess != nil || rr.LastFailure != nil {
		t.Fatalf("an interrupted run was recorded: %+v %+v", rr.LastSuccess, rr.LastFailure)
	}
	if r := rr.Formats[0].Resume; r == nil || r.Page != 2 || r.Records != 100 {
		t.Fatalf("resume point %+v", r)
	}
	if _, home := e.do(http.MethodGet, "/", ""); !strings.Contains(home, "<code>oai_dc</code> resumes at page 2 (100 records kept)") {
		t.Errorf("home page does not say where the list resumes:\n%s", home)
	}
	if code, _ := e.do("POST", "/admin/repos/demo/cancel", testToken); code != 409 {
		t.Errorf("cancel with nothing running: %d", code)
	}

	// A full harvest through the API, with one retried request.
	e.gate.hold.Store(false)
	close(e.gate.release)
	e.gate.flaky.Store(1)
	if code, body := e.do("POST", "/admin/repos/demo/harvest?full=1", testToken); code != 202 || !strings.Contains(body, `"kind": "full-harvest"`) {
		t.Fatalf("trigger: %d %s", code, body)
	}
	rr = e.waitFor("full harvest done", func(r RepoReport) bool { return r.Running == nil && r.LastSuccess != nil })
	ok := rr.LastSuccess
	if ok.Kind != harvest.KindFullHarvest || ok.Records != 250 || ok.Quarantined != 1 || ok.Created == 0 || ok.Pages != 3 || ok.DurationSeconds <= 0 {
		t.Fatalf("last success %+v", ok)
	}
	f := rr.Formats[0]
	if f.Live+f.Tombstones != 249 || f.Quarantined != 1 || f.Events != uint64(f.Live+f.Tombstones) || len(f.EventsPerDay) != chartDays ||
		f.EventsPerDay[chartDays-1].Created != int64(f.Events) {
		t.Fatalf("format %+v", f)
	}

	// A failed run keeps the last success; the public status hides the
	// error text (status.hide_errors), the admin status does not.
	e.gate.failID.Store(true)
	if code, _ := e.do("POST", "/admin/repos/demo/harvest", testToken); code != 202 {
		t.Fatal("trigger failed")
	}
	rr = e.waitFor("failure", func(r RepoReport) bool { return r.Running == nil && r.LastFailure != nil })
	if !strings.Contains(rr.LastFailure.Error, "db7.internal") || rr.LastSuccess == nil || rr.LastSuccess.Kind != harvest.KindFullHarvest {
		t.Fatalf("failure %+v success %+v", rr.LastFailure, rr.LastSuccess)
	}
	pub := e.status("/status.json", "")
	if got := pub.Repositories[0].LastFailure.Error; got != hiddenError {
		t.Errorf("public status shows the error: %q", got)
	}
	_, home = e.do(http.MethodGet, "/", "")
	if strings.Contains(home, "db7.internal") || !strings.Contains(home, "details hidden") || !strings.Contains(home, "<th>last success</th><td>20") {
		t.Errorf("home page after a failure:\n%s", home)
	}
	if !strings.Contains(home, `<svg width="240" height="40"`) || !strings.Contains(home, `created, 0 updated, 0 deleted</title><rect`) {
		t.Errorf("no events chart:\n%s", home)
	}

	// Metrics: every documented family is present with its type and labels.
	e.checkMetrics()

	// Health: live and ready; draining makes /readyz fail, not /healthz.
	if code, body := e.do("GET", "/healthz", ""); code != 200 || body != "ok\n" {
		t.Errorf("healthz %d %q", code, body)
	}
	if code, body := e.do("GET", "/readyz", ""); code != 200 || !strings.HasPrefix(body, "ready") {
		t.Errorf("readyz %d %q", code, body)
	}
	e.srv.Drain()
	if code, _ := e.do("GET", "/readyz", ""); code != 503 {
		t.Errorf("readyz while draining: %d", code)
	}
	if code, _ := e.do("GET", "/healthz", ""); code != 200 {
		t.Errorf("healthz while draining: %d", code)
	}
}

// checkMetrics scrapes /metrics and compares the rsbridge_* families with
// testdata/metrics.txt ("name type label,label"), the documented interface.
func (e *opsEnv) checkMetrics() {
	t := e.t
	code, body := e.do("GET", "/metrics", "")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	types := map[string]string{}
	labels := map[string][]string{}
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if f, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, typ, _ := strings.Cut(f, " ")
			types[name] = typ
			continue
		}
		if strings.HasPrefix(line, "#") || !strings.HasPrefix(line, "rsbridge_") {
			continue
		}
		end := strings.IndexAny(line, "{ ")
		if end < 0 {
			continue
		}
		name, rest := line[:end], ""
		if line[end] == '{' {
			rest = line[end+1:]
		}
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(name, suffix); ok && types[base] == "histogram" {
				name = base
			}
		}
		if _, seen := labels[name]; seen || rest == "" {
			if !seen {
				labels[name] = nil
			}
			continue
		}
		set, _, _ := strings.Cut(rest, "}")
		var ls []string
		for _, kv := range strings.Split(set, ",") {
			if k, _, ok := strings.Cut(kv, "="); ok && k != "le" {
				ls = append(ls, k)
			}
		}
		labels[name] = ls
	}
	var got []string
	for name := range labels {
		got = append(got, fmt.Sprintf("%s %s %s", name, types[name], strings.Join(labels[name], ",")))
	}
	slices.Sort(got)
	want, err := os.ReadFile(filepath.Join("testdata", "metrics.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if g := strings.Join(got, "\n") + "\n"; g != string(want) {
		if os.Getenv("UPDATE_GOLDEN") != "" {
			os.WriteFile(filepath.Join("testdata", "metrics.txt"), []byte(g), 0o644)
		}
		t.Errorf("metric families changed (docs/operations.md documents them; UPDATE_GOLDEN=1 rewrites the list):\n%s\nwant\n%s", g, want)
	}
	// Every family is documented for operators.
	doc, err := os.ReadFile(filepath.Join("..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(want)), "\n") {
		if name, _, _ := strings.Cut(line, " "); !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("docs/operations.md does not document %s", name)
		}
	}
	for _, must := range []string{
		`rsbridge_runs_total{kind="harvest",outcome="interrupted",repository="demo"} 1`,
		`rsbridge_runs_total{kind="full-harvest",outcome="success",repository="demo"} 1`,
		`rsbridge_runs_total{kind="harvest",outcome="failure",repository="demo"} 1`,
		`rsbridge_errors_total{kind="http_status",repository="demo"} 1`,
		`rsbridge_upstream_retries_total{reason="http_status",repository="demo"}`,
		`rsbridge_quarantined_records_total{prefix="oai_dc",repository="demo"}`,
		`rsbridge_records{prefix="oai_dc",repository="demo",state="live"}`,
		`rsbridge_http_requests_total{code="401",route="/admin/status"}`,
		`rsbridge_http_requests_total{code="200",route="/"}`,
	} {
		if !strings.Contains(body, must) {
			t.Errorf("/metrics lacks %s", must)
		}
	}
}

// TestAdminAbsentWithoutToken: no token configured, no admin API; with
// admin.listen the admin API and /metrics move off the public address.
func TestAdminAbsentWithoutToken(t *testing.T) {
	e := newOpsEnv(t, "", oaiserver.Options{Records: 5})
	for _, p := range []string{"/admin/status", "/admin/backup", "/admin/repos/demo"} {
		if code, _ := e.do("GET", p, testToken); code != 404 {
			t.Errorf("%s without admin.token: %d", p, code)
		}
	}
	if code, _ := e.do("GET", "/metrics", ""); code != 200 {
		t.Errorf("/metrics: %d", code)
	}

	e = newOpsEnv(t, "admin:\n  token: "+testToken+"\n  listen: 127.0.0.1:0", oaiserver.Options{Records: 5})
	for _, p := range []string{"/admin/status", "/metrics"} {
		if code, _ := e.do("GET", p, testToken); code != 404 {
			t.Errorf("%s on the public address with admin.listen: %d", p, code)
		}
	}
	admin := httptest.NewServer(e.srv.AdminHandler())
	defer admin.Close()
	for p, want := range map[string]int{"/metrics": 200, "/healthz": 200, "/admin/status": 401, "/": 404} {
		resp, err := http.Get(admin.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("admin listener %s: %d, want %d", p, resp.StatusCode, want)
		}
	}
}

// TestBackupRestoreServesSameLists: a backup taken through the admin API
// while the server runs, restored into a new store, serves the same lists.
func TestBackupRestoreServesSameLists(t *testing.T) {
	e := newOpsEnv(t, "admin:\n  token: "+testToken, oaiserver.Options{Records: 300, PageSize: 50, SetCount: 3, DeletedEvery: 10})
	if code, _ := e.do("POST", "/admin/repos/demo/harvest", testToken); code != 202 {
		t.Fatal("trigger")
	}
	e.waitFor("harvest", func(r RepoReport) bool { return r.LastSuccess != nil })

	code, backup := e.do("GET", "/admin/backup", testToken)
	if code != 200 || len(backup) < 1000 {
		t.Fatalf("backup: %d, %d bytes", code, len(backup))
	}
	dir := filepath.Join(t.TempDir(), "restored")
	if err := store.Restore(context.Background(), store.Options{Dir: dir, ChangeListLimit: 1000, ChangeListPeriod: time.Hour, MinFree: 1}, strings.NewReader(backup)); err != nil {
		t.Fatal(err)
	}
	db2, err := store.Open(store.Options{Dir: dir, ChangeListLimit: 1000, ChangeListPeriod: time.Hour, MinFree: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	restored := httptest.NewServer(mustServer(t, e.cfg, db2, ServerOptions{DumpDir: t.TempDir()}).Handler())
	defer restored.Close()
	servedAt := regexp.MustCompile(`\b(at|completed)="[^"]*"`)
	sets, err := e.srv.src.Sets(context.Background())
	if err != nil || len(sets) != 5 { // all records, s0, s0:sub, s1, s2
		t.Fatalf("%d sets, %v", len(sets), err)
	}
	for _, rs := range sets {
		for _, doc := range []string{rs.CapabilityList(), rs.ResourceList(), rs.ChangeListIndex()} {
			path := strings.TrimPrefix(doc, e.ts.URL)
			_, a := e.do("GET", path, "")
			resp, err := http.Get(restored.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			// Resource Lists are stamped with the time they are served.
			norm := func(s string) string { return servedAt.ReplaceAllString(s, `$1="…"`) }
			if resp.StatusCode != 200 || norm(a) != norm(string(b)) || !strings.Contains(a, "<loc>") {
				t.Errorf("%s differs after restore (%d):\n%q\n---\n%q", path, resp.StatusCode, a, b)
			}
		}
	}
}

// TestRobotsSelection: server.robots chooses which Resource Lists robots.txt
// names.
func TestRobotsSelection(t *testing.T) {
	for _, c := range []struct {
		robots string
		lines  int
	}{{"all-records", 1}, {"all", 6}, {"none", 0}} {
		t.Run(c.robots, func(t *testing.T) {
			e := newOpsEnv(t, "server:\n  robots: "+c.robots, oaiserver.Options{Records: 20, SetCount: 4})
			e.sched.Trigger("demo", harvest.KindHarvest, false)
			e.waitForIdleHarvest()
			_, body := e.do("GET", "/robots.txt", "")
			if strings.Count(body, "Sitemap: ") != c.lines || !strings.HasPrefix(body, "User-agent: *\nAllow: /\n") {
				t.Errorf("robots %s:\n%s", c.robots, body)
			}
		})
	}
}

// waitForIdleHarvest waits for a harvest to finish without the admin API.
func (e *opsEnv) waitForIdleHarvest() {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var info store.RepoInfo
		e.db.View(context.Background(), func(s *store.Snap) error {
			var err error
			info, err = s.RepoInfo("demo")
			return err
		})
		if e.sched.Activity("demo") == nil && info.LastSuccess != nil {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatal("harvest did not finish")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTriggerRaces: concurrent triggers start one run; the others are busy.
func TestTriggerRaces(t *testing.T) {
	e := newOpsEnv(t, "", oaiserver.Options{Records: 150, PageSize: 50})
	e.gate.hold.Store(true)
	var wg sync.WaitGroup
	var started, busy atomic.Int32
	for range 8 {
		wg.Go(func() {
			switch err := e.sched.Trigger("demo", harvest.KindHarvest, false); {
			case err == nil:
				started.Add(1)
			case err != nil && strings.Contains(err.Error(), "running"):
				busy.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if started.Load() != 1 || busy.Load() != 7 {
		t.Fatalf("started %d, busy %d", started.Load(), busy.Load())
	}
	<-e.gate.held
	if a := e.sched.Activity("demo"); a == nil || a.Kind != harvest.KindHarvest {
		t.Fatalf("activity %+v", a)
	}
	close(e.gate.release)
	e.waitForIdleHarvest()
	if err := e.sched.Trigger("demo", "sideways", false); err == nil || !strings.Contains(err.Error(), "unknown run kind") {
		t.Errorf("bad kind: %v", err)
	}
}

// TestBearerScheme: the Authorization scheme is case-insensitive (issue
// 21: "bearer TOKEN" was refused); anything else is refused.
func TestBearerScheme(t *testing.T) {
	for _, c := range []struct {
		header string
		ok     bool
	}{
		{"Bearer tok", true}, {"bearer tok", true}, {"BEARER  tok ", true}, {"  Bearer tok", true},
		{"Basic tok", false}, {"Bearertok", false}, {"Bearer", false}, {"", false}, {"tok", false},
	} {
		got, ok := bearer(c.header)
		if ok != c.ok || ok && got != "tok" {
			t.Errorf("bearer(%q) = %q, %v", c.header, got, ok)
		}
	}
}
