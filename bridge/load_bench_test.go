package bridge

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/bridge/harvest"
	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/store"
)

// load runs clients goroutines that GET urls (round robin) for d, and
// returns requests/s and latency percentiles.
func load(b *testing.B, hc *http.Client, urls []string, clients int, d time.Duration) (rps float64, p50, p99 time.Duration) {
	b.Helper()
	var mu sync.Mutex
	var lat []time.Duration
	var n atomic.Int64
	var failed atomic.Int64
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	start := time.Now()
	for c := range clients {
		wg.Go(func() {
			var mine []time.Duration
			buf := make([]byte, 1<<20) // a client reading big documents in big reads
			for i := c; time.Now().Before(deadline); i++ {
				t0 := time.Now()
				resp, err := hc.Get(urls[i%len(urls)])
				if err != nil {
					failed.Add(1)
					continue
				}
				io.CopyBuffer(discard{}, resp.Body, buf)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					failed.Add(1)
					continue
				}
				mine = append(mine, time.Since(t0))
				n.Add(1)
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	if f := failed.Load(); f > 0 {
		b.Fatalf("%d requests failed", f)
	}
	if len(lat) == 0 {
		b.Fatal("no request completed")
	}
	slices.Sort(lat)
	return float64(n.Load()) / time.Since(start).Seconds(), lat[len(lat)/2], lat[len(lat)*99/100]
}

// discard is io.Discard without its ReadFrom (which reads 8 KB at a time).
type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }

// servingStore builds an on-disk store of n records in one format, with
// events (so Change Lists exist), and a server over it with the document
// cache on.
func servingStore(b *testing.B, n int, pacer *harvest.Pacer) (*store.DB, *config.Config, *httptest.Server) {
	b.Helper()
	db, cfg, dumpDir := dumpBenchStore(b, n)
	srv := httptest.NewUnstartedServer(nil)
	cfg.BaseURL = "http://" + srv.Listener.Addr().String()
	srv.Config.Handler = mustServer(b, cfg, db, ServerOptions{DumpDir: dumpDir, CacheDir: b.TempDir(), Pacer: pacer}).Handler()
	srv.Start()
	b.Cleanup(srv.Close)
	return db, cfg, srv
}

// BenchmarkServing measures, on a 100,000-record store
// (RSBRIDGE_BENCH_RECORDS to change it) with 8 clients for 5 s each:
// the Resource List Index, a 50,000-entry Resource List page and a closed
// 50,000-entry Change List (both served from the document cache), and
// resource GETs.
//
//	go test -run '^$' -bench 'BenchmarkServing$' -benchtime 1x -timeout 30m ./bridge/
func BenchmarkServing(b *testing.B) {
	n := 100000
	if v, err := strconv.Atoi(os.Getenv("RSBRIDGE_BENCH_RECORDS")); err == nil && v > 0 {
		n = v
	}
	_, _, srv := servingStore(b, n, nil)
	hc := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 16}}
	gz := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}} // asks for gzip
	resp, err := hc.Get(srv.URL + "/bench/oai_dc/all/resourcelist.xml")
	if err != nil {
		b.Fatal(err)
	}
	idx, err := rsync.Parse(resp.Body)
	resp.Body.Close()
	if err != nil || !idx.Index {
		b.Fatalf("index: %v", err)
	}
	resp, err = hc.Get(srv.URL + "/bench/oai_dc/all/changelist.xml")
	if err != nil {
		b.Fatal(err)
	}
	cli, err := rsync.Parse(resp.Body)
	resp.Body.Close()
	if err != nil || len(cli.Entries) < 2 {
		b.Fatalf("change list index: %v %d", err, len(cli.Entries))
	}
	var resources []string
	for i := 0; i < n; i += n / 1000 {
		resources = append(resources, source.ResourceURL(srv.URL, "bench", "oai_dc", fmt.Sprintf("oai:bench.example:%08d", i)))
	}
	cases := []struct {
		name string
		hc   *http.Client
		urls []string
	}{
		{"resourcelist-index", hc, []string{srv.URL + "/bench/oai_dc/all/resourcelist.xml"}},
		{"resourcelist-page", hc, []string{idx.Entries[0].Loc}},
		{"resourcelist-page-gzip", gz, []string{idx.Entries[0].Loc}},
		{"closed-changelist", hc, []string{cli.Entries[0].Loc}},
		{"resource", hc, resources},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				load(b, c.hc, c.urls, 8, time.Second) // warm: the first request renders
				rps, p50, p99 := load(b, c.hc, c.urls, 8, 5*time.Second)
				b.ReportMetric(rps, "req/s")
				b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
			}
		})
	}
}

// BenchmarkServingDuringHarvest measures resource GETs (8 clients) on a
// 100,000-record store while the same process harvests 100,000 records into
// it from the in-process synthetic upstream, against the same server idle.
//
//	go test -run '^$' -bench ServingDuringHarvest -benchtime 1x -timeout 30m ./bridge/
func BenchmarkServingDuringHarvest(b *testing.B) {
	defer runtimeDefaults()() // the memory limit and GOMAXPROCS the binary runs with
	n := 100000
	if v, err := strconv.Atoi(os.Getenv("RSBRIDGE_BENCH_RECORDS")); err == nil && v > 0 {
		n = v
	}
	// RSBRIDGE_BENCH_HARVEST_SHARE sets server.harvest_share (default 25).
	share := config.DefaultHarvestShare
	if v, err := strconv.Atoi(os.Getenv("RSBRIDGE_BENCH_HARVEST_SHARE")); err == nil {
		share = v
	}
	pacer := harvest.NewPacer(share)
	db, cfg, srv := servingStore(b, n, pacer)
	up := httptest.NewServer(oaiserver.New(oaiserver.Options{Records: n, PageSize: 100, RecordBytes: 2048}))
	defer up.Close()
	delay := time.Duration(0)
	cfg.Defaults.Delay = &delay
	cfg.Repositories = append(cfg.Repositories, config.Repository{Name: "up", BaseURL: up.URL + "/oai", MetadataPrefixes: []string{"oai_dc"}})
	cfg.SetDefaults()
	h, err := harvest.New(cfg, cfg.Repositories[1], db, harvest.Options{Pacer: pacer})
	if err != nil {
		b.Fatal(err)
	}
	hc := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 16}}
	var resources []string
	for i := 0; i < n; i += n / 1000 {
		resources = append(resources, source.ResourceURL(srv.URL, "bench", "oai_dc", fmt.Sprintf("oai:bench.example:%08d", i)))
	}
	for b.Loop() {
		load(b, hc, resources, 8, time.Second)
		idleRPS, _, idleP99 := load(b, hc, resources, 8, 5*time.Second)
		done := make(chan error, 1)
		started := time.Now()
		go func() {
			_, err := h.Harvest(context.Background(), harvest.HarvestOptions{})
			done <- err
		}()
		time.Sleep(500 * time.Millisecond) // the harvest is under way
		busyRPS, _, busyP99 := load(b, hc, resources, 8, 5*time.Second)
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		took := time.Since(started)
		b.ReportMetric(idleRPS, "idle-req/s")
		b.ReportMetric(busyRPS, "harvesting-req/s")
		b.ReportMetric(busyRPS/idleRPS, "throughput-ratio")
		b.ReportMetric(float64(idleP99.Microseconds())/1000, "idle-p99-ms")
		b.ReportMetric(float64(busyP99.Microseconds())/1000, "harvesting-p99-ms")
		b.ReportMetric(float64(busyP99)/float64(idleP99), "p99-ratio")
		b.ReportMetric(float64(n)/took.Seconds(), "harvest-records/s")
	}
}
