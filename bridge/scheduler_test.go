package bridge

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rsbridge/rsbridge/bridge/harvest"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/oaipmh"
	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/store"
)

// handlerTransport answers requests by calling a handler in the caller's
// goroutine, so a test's upstream lives inside its synctest bubble.
type handlerTransport map[string]http.Handler

func (ht handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	h, ok := ht[r.URL.Host]
	if !ok {
		return nil, fmt.Errorf("no upstream %s", r.URL.Host)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	return rec.Result(), nil
}

// TestScheduler, in a synctest bubble (virtual time): every repository is
// harvested at start and on its schedule; a repository that keeps failing does
// not hold up the others; one repository's runs never overlap, even when a run
// outlasts the schedule; Stop cancels the running harvest and waits for it.
func TestScheduler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := openStore(t, store.Options{InMemory: true}) // inside: Badger's goroutines share its WaitGroups
		up := oaiserver.New(oaiserver.Options{Records: 40, PageSize: 10})
		var inflight, maxInflight atomic.Int32
		slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n := inflight.Add(1)
			defer inflight.Add(-1)
			for {
				m := maxInflight.Load()
				if n <= m || maxInflight.CompareAndSwap(m, n) {
					break
				}
			}
			if r.URL.Query().Get("verb") == "ListRecords" {
				select { // each page takes 600 ms; a whole list outlasts the 1 s schedule
				case <-time.After(600 * time.Millisecond):
				case <-r.Context().Done():
					return
				}
			}
			up.ServeHTTP(w, r)
		})
		broken := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) })
		cfg, err := config.Parse(strings.NewReader(`defaults:
  delay: 0s
  max_retries: 0
scheduler:
  jitter: 0s
repositories:
  - name: broken
    base_url: http://broken.test/oai
    schedule: "@every 1s"
    reconcile: "off"
  - name: good
    base_url: http://good.test/oai
    schedule: "@every 1s"
    reconcile: "off"
`))
		if err == nil {
			cfg.MinInterval = time.Second // a fake clock: seconds are cheap here
			err = cfg.Validate()
		}
		if err != nil {
			t.Fatal(err)
		}
		transport := handlerTransport{"broken.test": broken, "good.test": slow}
		s, err := harvest.NewScheduler(cfg, db, harvest.Options{ClientOptions: func(o *oaipmh.Options) { o.Transport = transport }})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		s.Start()
		defer s.Stop(context.Background()) // on failure too: a bubble must end with no goroutines
		live := func() int64 { c, _ := peek(db).Counter("good", "oai_dc"); return c.Live }

		// Four pages of 600 ms: the first harvest is done after 2.4 s.
		time.Sleep(2500 * time.Millisecond)
		synctest.Wait()
		if n := live(); n != 40 {
			t.Fatalf("after the first harvest: %d live records, want 40", n)
		}
		ri, _ := peek(db).RepoInfo("broken")
		if ri.LastHarvestOK || !strings.Contains(ri.LastError, "HTTP 500") {
			t.Errorf("broken repository: %+v", ri)
		}

		// A change upstream is picked up by the next tick (at 3 s). The
		// synthetic records are all dated at the start, inside the incremental
		// list's one granule of overlap, so that list is five pages again.
		up.Add(start.Add(2600 * time.Millisecond))
		time.Sleep(3500 * time.Millisecond) // 6.0 s
		synctest.Wait()
		if n := live(); n != 41 {
			t.Fatalf("after a scheduled harvest: %d live records, want 41", n)
		}
		if m := maxInflight.Load(); m != 1 {
			t.Errorf("%d requests to one repository at once: runs overlapped", m)
		}

		// Stop while a page is in flight (the tick at 7 s starts a run): it
		// returns at once, in virtual time.
		time.Sleep(1300 * time.Millisecond) // 7.3 s
		synctest.Wait()
		if inflight.Load() == 0 {
			t.Fatal("expected a page in flight")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		stopAt := time.Now()
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(stopAt); d > 0 {
			t.Errorf("Stop took %v of virtual time; the harvest must stop at once", d)
		}
	})
}

// TestSchedulerQueue, in a synctest bubble: six repositories, four of them
// behind one host, with two slots and one per host. Requests to one host
// never overlap, two repositories run at once, the rest wait in line with
// their place shown, a waiting repository is not queued twice, a cancelled
// waiting run leaves the line, and every other repository is harvested.
func TestSchedulerQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := openStore(t, store.Options{InMemory: true})
		var inflight [3]atomic.Int32
		var overlap atomic.Bool
		upstream := func(host int) http.Handler {
			farm := oaiserver.NewFarm()
			for i := range 6 {
				farm.Add(fmt.Sprintf("r%d", i), oaiserver.New(oaiserver.Options{Records: 20, PageSize: 10}), 0)
			}
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if inflight[host].Add(1) > 1 {
					overlap.Store(true)
				}
				defer inflight[host].Add(-1)
				select { // every request takes a second
				case <-time.After(time.Second):
				case <-r.Context().Done():
					return
				}
				farm.ServeHTTP(w, r)
			})
		}
		var yaml strings.Builder
		yaml.WriteString("defaults:\n  delay: 0s\nscheduler:\n  concurrency: 2\n  per_host: 1\nrepositories:\n")
		for i := range 6 {
			host := "farm.test"
			if i >= 4 {
				host = fmt.Sprintf("own%d.test", i)
			}
			fmt.Fprintf(&yaml, "  - name: r%d\n    base_url: http://%s/r%d/oai\n    schedule: \"@every 24h\"\n    reconcile: \"off\"\n", i, host, i)
		}
		s := startScheduler(t, db, yaml.String(), handlerTransport{"farm.test": upstream(0), "own4.test": upstream(1), "own5.test": upstream(2)})
		defer s.Stop(context.Background())
		synctest.Wait()
		q := s.Queue()
		if len(q.Running) != 2 || len(q.Waiting) != 4 || q.Running[0].Repository != "r0" || q.Running[1].Repository != "r4" {
			t.Fatalf("at start: %+v (want r0 and r4 running: r1-r3 wait for farm.test)", q)
		}
		if a := s.Activity("r2"); a == nil || !a.Waiting || a.Position != 2 {
			t.Fatalf("r2: %+v, want waiting second in line", a)
		}
		if err := s.Trigger("r2", harvest.KindHarvest, false); err == nil {
			t.Fatal("a waiting repository was queued twice")
		}
		if ok, _ := s.Cancel("r3"); !ok {
			t.Fatal("cancelling a waiting run")
		}
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		if overlap.Load() {
			t.Error("two requests to one host at once")
		}
		for i := range 6 {
			ri, _ := peek(db).RepoInfo(fmt.Sprintf("r%d", i))
			if i == 3 {
				if ri.LastSuccess != nil {
					t.Error("r3 ran after its run was cancelled")
				}
				continue
			}
			if ri.LastSuccess == nil {
				t.Errorf("r%d not harvested: %+v", i, ri)
			}
		}
		if q := s.Queue(); len(q.Running) != 0 || len(q.Waiting) != 0 {
			t.Errorf("queue after the runs: %+v", q)
		}
	})
}

// TestSchedulerHostGroups: repositories with host names of their own under
// one of scheduler.host_groups count as one upstream host: with per_host 1,
// one of them runs at a time while a repository elsewhere takes the other
// slot, and the status shows the group's domain as their host.
func TestSchedulerHostGroups(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := openStore(t, store.Options{InMemory: true})
		var inflight atomic.Int32
		var overlap atomic.Bool
		farm := oaiserver.NewFarm()
		for i := range 3 {
			farm.Add(fmt.Sprintf("r%d", i), oaiserver.New(oaiserver.Options{Records: 20, PageSize: 10}), 0)
		}
		slow := func(group bool) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if group {
					if inflight.Add(1) > 1 {
						overlap.Store(true)
					}
					defer inflight.Add(-1)
				}
				select { // every request takes a second
				case <-time.After(time.Second):
				case <-r.Context().Done():
					return
				}
				farm.ServeHTTP(w, r)
			})
		}
		src := "defaults:\n  delay: 0s\nscheduler:\n  concurrency: 2\n  per_host: 1\n  host_groups: [\"*.grp.test\"]\nrepositories:\n"
		for i, host := range []string{"a.grp.test", "B.Grp.Test", "elsewhere.test"} {
			src += fmt.Sprintf("  - name: r%d\n    base_url: http://%s/r%d/oai\n    schedule: \"@every 24h\"\n    reconcile: \"off\"\n", i, host, i)
		}
		s := startScheduler(t, db, src, handlerTransport{"a.grp.test": slow(true), "B.Grp.Test": slow(true), "elsewhere.test": slow(false)})
		defer s.Stop(context.Background())
		synctest.Wait()
		q := s.Queue()
		if len(q.Running) != 2 || len(q.Waiting) != 1 || q.Running[0].Repository != "r0" || q.Running[1].Repository != "r2" {
			t.Fatalf("at start: %+v (want r0 and r2 running, r1 waiting for grp.test)", q)
		}
		for repo, want := range map[string]string{"r0": "grp.test", "r1": "grp.test", "r2": "elsewhere.test"} {
			if got := s.Host(repo); got != want {
				t.Errorf("Host(%s) = %q, want %q", repo, got, want)
			}
		}
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		if overlap.Load() {
			t.Error("two requests to one host group at once")
		}
		for i := range 3 {
			if ri, _ := peek(db).RepoInfo(fmt.Sprintf("r%d", i)); ri.LastSuccess == nil {
				t.Errorf("r%d not harvested: %+v", i, ri)
			}
		}
	})
}

// startScheduler starts a scheduler on the configuration src, its
// upstreams served by transport; the caller stops it.
func startScheduler(t *testing.T, db *store.DB, src string, transport handlerTransport) *harvest.Scheduler {
	t.Helper()
	cfg, err := config.ParseAndValidate(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	s, err := harvest.NewScheduler(cfg, db, harvest.Options{ClientOptions: func(o *oaipmh.Options) { o.Transport = transport }})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	return s
}
