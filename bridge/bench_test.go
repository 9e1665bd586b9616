package bridge

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/config"
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
					h, err := NewHarvester(cfg, cfg.Repositories[0], db, HarvesterOptions{})
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
								}
							}
						}
					}()
					runtime.GC()
					b.StartTimer()
					start := time.Now()
					res, err := h.Harvest(context.Background(), HarvestOptions{})
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
