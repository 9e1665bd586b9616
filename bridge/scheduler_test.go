package bridge

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/store"
)

// TestScheduler: every repository is harvested at start and on its schedule; a
// repository that keeps failing does not hold up the others; one repository's
// runs never overlap, even when a run outlasts the schedule; Stop cancels the
// running harvest and waits for it.
func TestScheduler(t *testing.T) {
	up := oaiserver.New(oaiserver.Options{Records: 40, PageSize: 10})
	var inflight, maxInflight atomic.Int32
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inflight.Add(1)
		defer inflight.Add(-1)
		for {
			m := maxInflight.Load()
			if n <= m || maxInflight.CompareAndSwap(m, n) {
				break
			}
		}
		if r.URL.Query().Get("verb") == "ListRecords" {
			select { // each page takes longer than the 1 s schedule
			case <-time.After(600 * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
		up.ServeHTTP(w, r)
	}))
	defer slow.Close()
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }))
	defer broken.Close()
	y := fmt.Sprintf(`defaults:
  delay: 0s
  max_retries: 0
repositories:
  - name: broken
    base_url: %s/oai
    schedule: "@every 1s"
    reconcile: "off"
  - name: good
    base_url: %s/oai
    schedule: "@every 1s"
    reconcile: "off"
`, broken.URL, slow.URL)
	cfg, err := config.Parse(strings.NewReader(y))
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := NewScheduler(cfg, db, HarvesterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	live := func() int64 { c, _ := db.Counter("good", "oai_dc"); return c.Live }
	waitFor("the first harvest", func() bool { return live() == 40 })
	ri, _ := db.RepoInfo("broken")
	if ri.LastHarvestOK || !strings.Contains(ri.LastError, "HTTP 500") {
		t.Errorf("broken repository: %+v", ri)
	}
	// A change upstream is picked up by a later tick.
	up.Add(time.Now().Add(time.Second))
	waitFor("a scheduled harvest", func() bool { return live() == 41 })
	if m := maxInflight.Load(); m != 1 {
		t.Errorf("%d requests to one repository at once: runs overlapped", m)
	}
	// Stop while a page is in flight: it returns promptly.
	waitFor("a harvest in flight", func() bool { return inflight.Load() > 0 })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Stop took %v", d)
	}
}
