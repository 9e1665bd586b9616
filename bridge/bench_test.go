package bridge

import (
	"context"
	"fmt"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/store"
)

// BenchmarkHarvest harvests N oai_dc records of about 2 KB in pages of 100 from a
// local upstream into an on-disk store with fsync on every commit (the default),
// and reports records/s and the peak Go heap seen while harvesting. Run:
//
//	go test -run '^$' -bench BenchmarkHarvest -benchtime 1x ./bridge/
func BenchmarkHarvest(b *testing.B) {
	for _, n := range []int{10000, 100000, 200000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			up := oaiserver.New(oaiserver.Options{Records: n, PageSize: 100, RecordBytes: 2048})
			srv := httptest.NewServer(up)
			defer srv.Close()
			cfg, err := config.Parse(strings.NewReader(fmt.Sprintf("defaults:\n  delay: 0s\nrepositories:\n  - name: bench\n    base_url: %s/oai\n", srv.URL)))
			if err != nil {
				b.Fatal(err)
			}
			var total time.Duration
			var peak uint64
			for i := 0; i < b.N; i++ {
				db, err := store.Open(store.Options{Dir: b.TempDir(), SyncWrites: true})
				if err != nil {
					b.Fatal(err)
				}
				h, err := NewHarvester(cfg, cfg.Repositories[0], db, HarvesterOptions{})
				if err != nil {
					b.Fatal(err)
				}
				stop := make(chan struct{})
				var wg sync.WaitGroup
				var p uint64
				wg.Add(1)
				go func() { // sample the heap while the harvest runs
					defer wg.Done()
					var ms runtime.MemStats
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
				if p > peak {
					peak = p
				}
			}
			b.ReportMetric(float64(n*b.N)/total.Seconds(), "records/s")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}
