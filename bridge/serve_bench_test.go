package bridge

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/store"
)

// BenchmarkResourceListPages builds an on-disk store of 1,000,000 records (set
// RSBRIDGE_BENCH_STORE to change it) written straight through store batches,
// then serves the all-records Resource List Index and walks every 50,000-entry
// page as a client would. It reports the slowest and mean page time and the
// server's memory during the walk: the largest live heap after a GC, the peak
// in-use heap and the process's peak anonymous RSS. Run:
//
//	go test -run '^$' -bench BenchmarkResourceListPages -benchtime 1x -timeout 30m ./bridge/
func BenchmarkResourceListPages(b *testing.B) {
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("RSBRIDGE_BENCH_STORE")); err == nil && v > 0 {
		n = v
	}
	b.StopTimer()
	dir := b.TempDir()
	db := openStore(b, store.Options{Dir: dir})
	started := time.Now()
	// Both formats hold every record, so every entry gets an alternate link.
	meta := []byte(`<oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>` + strings.Repeat("x", 200) + `</dc:title></oai_dc:dc>`)
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	for _, prefix := range []string{"oai_dc", "jpcoar_2.0"} {
		if err := buildFormat(db, prefix, n, meta, now); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("store of %d records built in %v", n, time.Since(started).Round(time.Second))

	cfg, err := config.Parse(strings.NewReader("base_url: http://bench\nrepositories:\n  - name: bench\n    base_url: https://repo.example/oai\n    metadata_prefixes: [oai_dc, jpcoar_2.0]\n"))
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(mustServer(b, cfg, db, ServerOptions{}).Handler())
	defer srv.Close()
	// Like the reference client: no Accept-Encoding (Go's client would ask for gzip).
	hc := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	get := func(u string) (int64, time.Duration) {
		start := time.Now()
		resp, err := hc.Get(strings.Replace(u, "http://bench", srv.URL, 1))
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		nb, err := io.Copy(io.Discard, resp.Body)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("GET %s: %d %v", u, resp.StatusCode, err)
		}
		return nb, time.Since(start)
	}
	// Hand back what building the store used, so the figures are the server's.
	debug.FreeOSMemory()
	for i := 0; i < b.N; i++ {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var live, inuse uint64
		var anon, file int
		wg.Add(1)
		go func() {
			defer wg.Done()
			sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
			var ms runtime.MemStats
			t := time.NewTicker(20 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					metrics.Read(sample)
					live = max(live, sample[0].Value.Uint64())
					runtime.ReadMemStats(&ms)
					inuse = max(inuse, ms.HeapInuse)
					a, f := rss()
					anon, file = max(anon, a), max(file, f)
				}
			}
		}()
		b.StartTimer()
		idxStart := time.Now()
		resp, err := hc.Get(srv.URL + "/bench/oai_dc/all/resourcelist.xml")
		if err != nil {
			b.Fatal(err)
		}
		idx, err := rsync.Parse(resp.Body)
		resp.Body.Close()
		if err != nil || !idx.Index {
			b.Fatalf("index: %v", err)
		}
		b.ReportMetric(float64(time.Since(idxStart).Milliseconds()), "index-ms")
		var slowest, total time.Duration
		var bytes int64
		for _, e := range idx.Entries {
			nb, d := get(e.Loc)
			bytes += nb
			total += d
			slowest = max(slowest, d)
		}
		b.StopTimer()
		close(stop)
		wg.Wait()
		b.ReportMetric(float64(len(idx.Entries)), "pages")
		b.ReportMetric(float64(slowest.Milliseconds()), "slowest-page-ms")
		b.ReportMetric(float64(total.Milliseconds())/float64(len(idx.Entries)), "mean-page-ms")
		b.ReportMetric(float64(bytes)/float64(len(idx.Entries))/(1<<20), "MiB/page")
		b.ReportMetric(float64(live)/(1<<20), "max-live-MiB")
		b.ReportMetric(float64(inuse)/(1<<20), "peak-inuse-MiB")
		b.ReportMetric(float64(anon)/1024, "max-RssAnon-MiB")
		b.ReportMetric(float64(file)/1024, "max-RssFile-MiB")
	}
	_ = context.Background
}

// buildFormat writes n synthetic records of one format straight through store
// batches (no events: the benchmark is about Resource Lists).
func buildFormat(db *store.DB, prefix string, n int, meta []byte, now time.Time) error {
	for i := 0; i < n; {
		batch, err := db.NewBatch("bench", prefix)
		if err != nil {
			return err
		}
		for j := 0; j < 1000 && i < n; j, i = j+1, i+1 {
			rec := &store.Record{Identifier: fmt.Sprintf("oai:bench.example:%08d", i), Datestamp: now, Sets: []string{fmt.Sprintf("s%d", i%4)},
				Length: int64(len(meta)), MD5: "0123456789abcdef0123456789abcdef", SHA256: strings.Repeat("ab", 32),
				Modified: now, FirstSeen: now, Landing: fmt.Sprintf("https://bench.example/records/%d", i)}
			if err := batch.Apply(rec, meta, nil); err != nil {
				return err
			}
		}
		if err := batch.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// rss reads the process's resident anonymous and file-backed memory in KiB
// (Linux; zeros elsewhere). Badger memory-maps its tables and value log, so
// file-backed pages grow with the data read; anonymous memory is the heap.
func rss() (anon, file int) {
	st, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(st), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "RssAnon:":
			anon, _ = strconv.Atoi(f[1])
		case "RssFile:":
			file, _ = strconv.Atoi(f[1])
		}
	}
	return anon, file
}
