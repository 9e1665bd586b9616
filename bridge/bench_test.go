package bridge

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
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

// BenchmarkHarvest harvests N oai_dc records of about 2 KB in pages of 100 from a
// local upstream into an on-disk store, with the default durability (group
// commit: fsync every second and at the end), without any fsync, and with an
// fsync on every page,
// and reports records/s, the largest live heap after any GC during the harvest
// (what memory the process really needs) and the peak in-use heap (which also
// counts garbage not yet collected). Run:
//
//	go test -run '^$' -bench BenchmarkHarvest -benchtime 1x ./bridge/
//
// RSBRIDGE_BENCH_RECORDS=400000 adds a larger size.
func BenchmarkHarvest(b *testing.B) {
	defer runtimeDefaults()() // the memory limit and GOMAXPROCS the binary runs with
	sizes := []int{10000, 100000}
	if os.Getenv("RSBRIDGE_BENCH_SMALL") != "" {
		sizes = []int{20000}
	}
	if v, err := strconv.Atoi(os.Getenv("RSBRIDGE_BENCH_RECORDS")); err == nil && v > 0 {
		sizes = append(sizes, v)
	}
	modes := []struct {
		name     string
		each     bool
		interval time.Duration
	}{{"default", false, time.Second}, {"sync=off", false, 0}, {"sync=each-page", true, 0}}
	for _, n := range sizes {
		for _, mode := range modes {
			b.Run(fmt.Sprintf("records=%d/%s", n, mode.name), func(b *testing.B) {
				up := oaiserver.New(oaiserver.Options{Records: n, PageSize: 100, RecordBytes: 2048})
				srv := httptest.NewServer(up)
				defer srv.Close()
				cfg, err := config.Parse(strings.NewReader(fmt.Sprintf("defaults:\n  delay: 0s\nrepositories:\n  - name: bench\n    base_url: %s/oai\n", srv.URL)))
				if err != nil {
					b.Fatal(err)
				}
				var total time.Duration
				var peak, peakLive uint64
				for i := 0; i < b.N; i++ {
					db, err := store.Open(store.Options{Dir: b.TempDir(), SyncWrites: mode.each, SyncInterval: mode.interval, ChangeListLimit: 50000, ChangeListPeriod: 24 * time.Hour})
					if err != nil {
						b.Fatal(err)
					}
					h, err := harvest.New(cfg, cfg.Repositories[0], db, harvest.Options{})
					if err != nil {
						b.Fatal(err)
					}
					stop := make(chan struct{})
					var wg sync.WaitGroup
					var p, live uint64
					wg.Add(1)
					go func() { // sample the heap while the harvest runs
						defer wg.Done()
						var ms runtime.MemStats
						sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
						t := time.NewTicker(50 * time.Millisecond)
						defer t.Stop()
						for {
							select {
							case <-stop:
								return
							case <-t.C:
								runtime.ReadMemStats(&ms)
								if ms.HeapInuse > p {
									p = ms.HeapInuse
								}
								metrics.Read(sample)
								if v := sample[0].Value.Uint64(); v > live {
									live = v
									if path := os.Getenv("RSBRIDGE_BENCH_HEAP_PROFILE"); path != "" && v > 64<<20 {
										// The heap at its live peak, for finding what holds it.
										if f, err := os.Create(path); err == nil {
											pprof.WriteHeapProfile(f)
											f.Close()
										}
									}
								}
							}
						}
					}()
					runtime.GC()
					b.StartTimer()
					start := time.Now()
					res, err := h.Harvest(context.Background(), harvest.HarvestOptions{})
					total += time.Since(start)
					b.StopTimer()
					close(stop)
					wg.Wait()
					if err != nil || res[0].Counts.Records != int64(n) {
						b.Fatalf("%v %+v", err, res)
					}
					db.Close()
					peak = max(peak, p)
					peakLive = max(peakLive, live)
				}
				b.ReportMetric(float64(n*b.N)/total.Seconds(), "records/s")
				b.ReportMetric(float64(peak)/(1<<20), "peak-inuse-MiB")
				b.ReportMetric(float64(peakLive)/(1<<20), "max-live-MiB")
			})
		}
	}
}

// BenchmarkHarvestSlowUpstream harvests from an upstream that takes 20 ms
// per page (a typical repository answering from its database) and compares
// the harvest's time with a bare client paging the same list: with the
// pipeline, applying and committing a page overlaps the wait for the next.
//
//	go test -run '^$' -bench HarvestSlowUpstream -benchtime 1x ./bridge/
func BenchmarkHarvestSlowUpstream(b *testing.B) {
	defer runtimeDefaults()() // the memory limit and GOMAXPROCS the binary runs with
	const n, perPage = 20000, 20 * time.Millisecond
	// The upstream replays recorded responses: a real repository builds its
	// pages on another machine, so its work must not share these two cores.
	up := oaiserver.New(oaiserver.Options{Records: n, PageSize: 100, RecordBytes: 2048})
	var mu sync.Mutex
	recorded := map[string][]byte{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		body, ok := recorded[r.URL.RawQuery]
		mu.Unlock()
		if !ok {
			rec := httptest.NewRecorder()
			up.ServeHTTP(rec, r)
			body = rec.Body.Bytes()
			mu.Lock()
			recorded[r.URL.RawQuery] = body
			mu.Unlock()
		} else if r.URL.Query().Get("verb") == "ListRecords" {
			time.Sleep(perPage)
		}
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		w.Write(body)
	}))
	defer srv.Close()
	cfg, err := config.Parse(strings.NewReader(fmt.Sprintf("defaults:\n  delay: 0s\nrepositories:\n  - name: bench\n    base_url: %s/oai\n", srv.URL)))
	if err != nil {
		b.Fatal(err)
	}
	page := func() time.Duration { // one bare paging of the list
		client, err := oaipmh.NewClient(oaipmh.Options{Repository: "bench", BaseURL: srv.URL + "/oai"})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		q := oaipmh.Query{MetadataPrefix: "oai_dc"}
		records := 0
		for {
			page, err := client.ListRecords(context.Background(), q, func(*oaipmh.Record) error { records++; return nil })
			if err != nil {
				b.Fatal(err)
			}
			if page.Done() {
				break
			}
			q = oaipmh.Query{Token: page.Token.Value}
		}
		if records != n {
			b.Fatalf("paged %d records", records)
		}
		return time.Since(start)
	}
	page() // records the responses
	for b.Loop() {
		bare := page()

		db, _, harvest := timedHarvest(b, cfg, n)
		db.Close()
		b.ReportMetric(bare.Seconds(), "bare-paging-s")
		b.ReportMetric(harvest.Seconds(), "harvest-s")
		b.ReportMetric(harvest.Seconds()/bare.Seconds(), "ratio")
	}
}

// timedHarvest harvests the configuration's first repository into a new
// on-disk store with group commit, checks it read n records, and returns
// the store (open), the results and the harvest's wall time.
func timedHarvest(b *testing.B, cfg *config.Config, n int64) (*store.DB, []harvest.Result, time.Duration) {
	b.Helper()
	db, err := store.Open(store.Options{Dir: b.TempDir(), SyncInterval: time.Second, ChangeListLimit: 50000, ChangeListPeriod: 24 * time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	h, err := harvest.New(cfg, cfg.Repositories[0], db, harvest.Options{})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	res, err := h.Harvest(context.Background(), harvest.HarvestOptions{})
	took := time.Since(start)
	if err != nil || res[0].Counts.Records != n {
		b.Fatalf("%v %+v", err, res)
	}
	return db, res, took
}
