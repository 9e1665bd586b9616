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
